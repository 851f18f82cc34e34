// One warp per row, eight rows per block: the row is walked from its right end in chunks of 128 floats (a float4
// per lane when N % 4 == 0, single floats otherwise), each chunk scanned from the right with shuffles and added to
// the carry of the chunks already done.
// @kerncast launch cumsum_reverse_warp grid(ceil_div(M, 8)) block(32, 8) args(x, y, M, N)

extern "C" __global__ void __launch_bounds__(256) cumsum_reverse_warp(const float* __restrict__ x,
                                                                     float* __restrict__ y, int M, int N) {
    const int row = blockIdx.x * 8 + threadIdx.y;
    if (row >= M) return;  // whole warps leave together; no block barrier below
    const int lane = threadIdx.x;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    const bool vec = (N & 3) == 0;
    float carry = 0.0f;
    for (int base = ((N - 1) / 128) * 128; base >= 0; base -= 128) {
        const int j0 = base + lane * 4;
        float v[4];
        if (vec && j0 < N) {
            const float4 t = *reinterpret_cast<const float4*>(r + j0);
            v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = j0 + k < N ? r[j0 + k] : 0.0f;
        }
        v[2] += v[3];
        v[1] += v[2];
        v[0] += v[1];
        float s = v[0];
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float u = __shfl_down_sync(0xffffffffu, s, off);
            if (lane + off < 32) s += u;
        }
        const float add = carry + (s - v[0]);
        carry += __shfl_sync(0xffffffffu, s, 0);
        if (vec && j0 < N) {
            *reinterpret_cast<float4*>(o + j0) = make_float4(v[0] + add, v[1] + add, v[2] + add, v[3] + add);
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (j0 + k < N) o[j0 + k] = v[k] + add;
        }
    }
}
