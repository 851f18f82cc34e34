// A block of 128 x 2 threads makes 2 output rows of 128 outputs: it stages the 6 x 384 input tile in shared memory
// with coalesced loads, then each thread sums its window there.
// @kerncast launch avgpool2d_smem grid(ceil_div((W - 3) / 3 + 1, 128), ceil_div((H - 3) / 3 + 1, 2), B * C) block(128, 2) args(x, y, B, C, H, W)

extern "C" __global__ void __launch_bounds__(256) avgpool2d_smem(const float* __restrict__ x, float* __restrict__ y,
                                                                int B, int C, int H, int W) {
    __shared__ float tile[6][385];
    const int Ho = (H - 3) / 3 + 1, Wo = (W - 3) / 3 + 1;
    const float* p = x + (size_t)blockIdx.z * H * W;
    const int r0 = 3 * (blockIdx.y * 2), c0 = 3 * (blockIdx.x * 128);
    for (int k = threadIdx.y * 128 + threadIdx.x; k < 6 * 384; k += 256) {
        const int tr = k / 384, tc = k % 384;
        const int r = r0 + tr, c = c0 + tc;
        tile[tr][tc] = (r < H && c < W) ? p[(size_t)r * W + c] : 0.0f;
    }
    __syncthreads();
    const int i = blockIdx.y * 2 + threadIdx.y, j = blockIdx.x * 128 + threadIdx.x;
    if (i >= Ho || j >= Wo) return;
    float s = 0.0f;
#pragma unroll
    for (int dy = 0; dy < 3; ++dy)
        s += tile[3 * threadIdx.y + dy][3 * threadIdx.x] + tile[3 * threadIdx.y + dy][3 * threadIdx.x + 1] +
             tile[3 * threadIdx.y + dy][3 * threadIdx.x + 2];
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = s * (1.0f / 9.0f);
}
