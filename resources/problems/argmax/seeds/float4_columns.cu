// One thread per four consecutive columns (float4 when C % 4 == 0, single floats otherwise), two rows' loads in
// flight per step; the first maximum of each column is kept.
// @kerncast launch argmax_float4 grid(ceil_div(C, 512), B) block(128) args(x, y, B, R, C)

#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ void take(float& best, int& at, float v, int r) {
    if (v > best) {
        best = v;
        at = r;
    }
}

extern "C" __global__ void __launch_bounds__(128) argmax_float4(const float* __restrict__ x, int* __restrict__ y,
                                                               int B, int R, int C) {
    const int c0 = (blockIdx.x * 128 + threadIdx.x) * 4;
    const int b = blockIdx.y;
    if (c0 >= C) return;
    const float* base = x + (size_t)b * R * C + c0;
    float bx = NEG_INF, by = NEG_INF, bz = NEG_INF, bw = NEG_INF;
    int ix = 0, iy = 0, iz = 0, iw = 0;
    if ((C & 3) == 0) {
        int r = 0;
        for (; r + 1 < R; r += 2) {
            const float4 a = *reinterpret_cast<const float4*>(base + (size_t)r * C);
            const float4 p = *reinterpret_cast<const float4*>(base + (size_t)(r + 1) * C);
            take(bx, ix, a.x, r); take(by, iy, a.y, r); take(bz, iz, a.z, r); take(bw, iw, a.w, r);
            take(bx, ix, p.x, r + 1); take(by, iy, p.y, r + 1); take(bz, iz, p.z, r + 1); take(bw, iw, p.w, r + 1);
        }
        if (r < R) {
            const float4 a = *reinterpret_cast<const float4*>(base + (size_t)r * C);
            take(bx, ix, a.x, r); take(by, iy, a.y, r); take(bz, iz, a.z, r); take(bw, iw, a.w, r);
        }
    } else {
        for (int r = 0; r < R; ++r) {
            const float* p = base + (size_t)r * C;
            take(bx, ix, p[0], r);
            if (c0 + 1 < C) take(by, iy, p[1], r);
            if (c0 + 2 < C) take(bz, iz, p[2], r);
            if (c0 + 3 < C) take(bw, iw, p[3], r);
        }
    }
    int* o = y + (size_t)b * C + c0;
    o[0] = ix;
    if (c0 + 1 < C) o[1] = iy;
    if (c0 + 2 < C) o[2] = iz;
    if (c0 + 3 < C) o[3] = iw;
}
