// A block of 32 x 8 threads makes a 32 x 8 tile of outputs: it first stages the 17 x 65 input tile the tile's
// windows cover in shared memory (coalesced, padding as -inf), then each thread takes its 3 x 3 window there.
// @kerncast launch maxpool2d_smem grid(ceil_div((W - 1) / 2 + 1, 32), ceil_div((H - 1) / 2 + 1, 8), B * C) block(32, 8) args(x, y, B, C, H, W)

#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void __launch_bounds__(256) maxpool2d_smem(const float* __restrict__ x, float* __restrict__ y,
                                                                int B, int C, int H, int W) {
    __shared__ float tile[17][66];
    const int Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1;
    const float* p = x + (size_t)blockIdx.z * H * W;
    const int r0 = 2 * (blockIdx.y * 8) - 1, c0 = 2 * (blockIdx.x * 32) - 1;
    for (int k = threadIdx.y * 32 + threadIdx.x; k < 17 * 65; k += 256) {
        const int tr = k / 65, tc = k % 65;
        const int r = r0 + tr, c = c0 + tc;
        tile[tr][tc] = (r >= 0 && r < H && c >= 0 && c < W) ? p[(size_t)r * W + c] : NEG_INF;
    }
    __syncthreads();
    const int i = blockIdx.y * 8 + threadIdx.y, j = blockIdx.x * 32 + threadIdx.x;
    if (i >= Ho || j >= Wo) return;
    float m = NEG_INF;
#pragma unroll
    for (int dy = 0; dy < 3; ++dy)
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) m = fmaxf(m, tile[2 * threadIdx.y + dy][2 * threadIdx.x + dx]);
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = m;
}
