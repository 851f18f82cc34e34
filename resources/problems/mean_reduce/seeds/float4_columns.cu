// One thread per four consecutive columns (float4 when C % 4 == 0, single floats otherwise), four rows' loads in
// flight per step.
// @kerncast launch mean_reduce_float4 grid(ceil_div(C, 512), B) block(128) args(x, y, B, R, C)

extern "C" __global__ void __launch_bounds__(128) mean_reduce_float4(const float* __restrict__ x,
                                                                    float* __restrict__ y, int B, int R, int C) {
    const int c0 = (blockIdx.x * 128 + threadIdx.x) * 4;
    const int b = blockIdx.y;
    if (c0 >= C) return;
    const float* base = x + (size_t)b * R * C + c0;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    if ((C & 3) == 0) {
        int r = 0;
        for (; r + 3 < R; r += 4) {
            const float4 a = *reinterpret_cast<const float4*>(base + (size_t)r * C);
            const float4 p = *reinterpret_cast<const float4*>(base + (size_t)(r + 1) * C);
            const float4 q = *reinterpret_cast<const float4*>(base + (size_t)(r + 2) * C);
            const float4 u = *reinterpret_cast<const float4*>(base + (size_t)(r + 3) * C);
            s.x += (a.x + p.x) + (q.x + u.x);
            s.y += (a.y + p.y) + (q.y + u.y);
            s.z += (a.z + p.z) + (q.z + u.z);
            s.w += (a.w + p.w) + (q.w + u.w);
        }
        for (; r < R; ++r) {
            const float4 a = *reinterpret_cast<const float4*>(base + (size_t)r * C);
            s.x += a.x;
            s.y += a.y;
            s.z += a.z;
            s.w += a.w;
        }
    } else {
        for (int r = 0; r < R; ++r) {
            const float* p = base + (size_t)r * C;
            s.x += p[0];
            if (c0 + 1 < C) s.y += p[1];
            if (c0 + 2 < C) s.z += p[2];
            if (c0 + 3 < C) s.w += p[3];
        }
    }
    float* o = y + (size_t)b * C + c0;
    o[0] = s.x / R;
    if (c0 + 1 < C) o[1] = s.y / R;
    if (c0 + 2 < C) o[2] = s.z / R;
    if (c0 + 3 < C) o[3] = s.w / R;
}
