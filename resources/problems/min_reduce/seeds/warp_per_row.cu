// One warp per row (8 rows per block of 256), a warp-shuffle reduction and no shared memory. Rows are read as
// float4 when N % 4 == 0 (then every row starts 16-byte aligned), else one float at a time.
// @kerncast launch min_reduce_warp grid(ceil_div(M, 8)) block(32, 8) args(x, y, M, N)

extern "C" __global__ void __launch_bounds__(256) min_reduce_warp(const float* __restrict__ x, float* __restrict__ y,
                                                                 int M, int N) {
    const int row = blockIdx.x * 8 + threadIdx.y;
    if (row >= M) return;  // whole warps leave together: no barrier below
    const int lane = threadIdx.x;
    const float* r = x + (size_t)row * N;
    float m = r[0];
    if ((N & 3) == 0) {
        const float4* r4 = reinterpret_cast<const float4*>(r);
        for (int v = lane; v < N / 4; v += 32) {
            const float4 t = r4[v];
            m = fminf(m, fminf(fminf(t.x, t.y), fminf(t.z, t.w)));
        }
    } else {
        for (int j = lane; j < N; j += 32) m = fminf(m, r[j]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) m = fminf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (lane == 0) y[row] = m;
}
