// A block of 16 x 16 threads makes a 16 x 16 tile of outputs of one output channel: per input channel it stages the
// 18 x 18 input patch and the channel's 9 weights in shared memory, then every thread does its 9 FMAs there.
// @kerncast launch conv2d_tile1 grid(ceil_div(W - 2, 16), ceil_div(H - 2, 16), B * Cout) block(16, 16) args(x, w, y, B, Cin, Cout, H, W)

extern "C" __global__ void __launch_bounds__(256) conv2d_tile1(const float* __restrict__ x, const float* __restrict__ w,
                                                              float* __restrict__ y, int B, int Cin, int Cout, int H,
                                                              int W) {
    __shared__ float patch[18][19];
    __shared__ float f[9];
    const int Ho = H - 2, Wo = W - 2;
    const int n = blockIdx.z / Cout, k = blockIdx.z % Cout;
    const int i0 = blockIdx.y * 16, j0 = blockIdx.x * 16;
    const int tid = threadIdx.y * 16 + threadIdx.x;
    float s = 0.0f;
    for (int c = 0; c < Cin; ++c) {
        const float* p = x + ((size_t)n * Cin + c) * H * W;
        for (int e = tid; e < 18 * 18; e += 256) {
            const int r = i0 + e / 18, q = j0 + e % 18;
            patch[e / 18][e % 18] = (r < H && q < W) ? p[(size_t)r * W + q] : 0.0f;
        }
        if (tid < 9) f[tid] = w[((size_t)k * Cin + c) * 9 + tid];
        __syncthreads();
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b) s = fmaf(f[a * 3 + b], patch[threadIdx.y + a][threadIdx.x + b], s);
        __syncthreads();
    }
    const int i = i0 + threadIdx.y, j = j0 + threadIdx.x;
    if (i < Ho && j < Wo) y[(((size_t)n * Cout + k) * Ho + i) * Wo + j] = s;
}
