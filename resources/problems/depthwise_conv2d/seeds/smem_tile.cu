// A block of 32 x 8 threads makes a 32 x 8 tile of outputs from a 34 x 10 input tile staged in shared memory; the
// filter is staged beside it.
// @kerncast launch depthwise_smem grid(ceil_div(W - 2, 32), ceil_div(H - 2, 8), B * C) block(32, 8) args(x, w, y, B, C, H, W)

extern "C" __global__ void __launch_bounds__(256) depthwise_smem(const float* __restrict__ x,
                                                                const float* __restrict__ w, float* __restrict__ y,
                                                                int B, int C, int H, int W) {
    __shared__ float tile[10][35];
    __shared__ float k[9];
    const int Ho = H - 2, Wo = W - 2;
    const float* p = x + (size_t)blockIdx.z * H * W;
    const int r0 = blockIdx.y * 8, c0 = blockIdx.x * 32;
    const int tid = threadIdx.y * 32 + threadIdx.x;
    if (tid < 9) k[tid] = w[(blockIdx.z % C) * 9 + tid];
    for (int t = tid; t < 10 * 34; t += 256) {
        const int tr = t / 34, tc = t % 34;
        const int r = r0 + tr, c = c0 + tc;
        tile[tr][tc] = (r < H && c < W) ? p[(size_t)r * W + c] : 0.0f;
    }
    __syncthreads();
    const int i = r0 + threadIdx.y, j = c0 + threadIdx.x;
    if (i >= Ho || j >= Wo) return;
    float s = 0.0f;
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int b = 0; b < 3; ++b) s = fmaf(k[a * 3 + b], tile[threadIdx.y + a][threadIdx.x + b], s);
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = s;
}
