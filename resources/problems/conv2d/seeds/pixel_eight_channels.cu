// A thread makes one output pixel for eight output channels: its 9 input values per input channel come from global
// memory (L1 serves the neighbours' overlap) and are used eight times; the block's weights for its eight channels
// and 16 input channels at a time sit in shared memory (read as broadcasts).
// @kerncast launch conv2d_pix8 grid(ceil_div(W - 2, 32), ceil_div(H - 2, 8), B * ceil_div(Cout, 8)) block(32, 8) args(x, w, y, B, Cin, Cout, H, W)

extern "C" __global__ void __launch_bounds__(256) conv2d_pix8(const float* __restrict__ x, const float* __restrict__ w,
                                                             float* __restrict__ y, int B, int Cin, int Cout, int H,
                                                             int W) {
    __shared__ float f[16][9][8];
    const int Ho = H - 2, Wo = W - 2;
    const int kt = (Cout + 7) / 8;
    const int n = blockIdx.z / kt, k0 = (blockIdx.z % kt) * 8;
    const int i = blockIdx.y * 8 + threadIdx.y, j = blockIdx.x * 32 + threadIdx.x;
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const bool live = i < Ho && j < Wo;
    float acc[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) acc[k] = 0.0f;
    for (int c0 = 0; c0 < Cin; c0 += 16) {
        for (int e = tid; e < 16 * 9 * 8; e += 256) {
            const int k = e / 144, ci = (e / 9) % 16, tap = e % 9;
            f[ci][tap][k] = (c0 + ci < Cin && k0 + k < Cout) ? w[((size_t)(k0 + k) * Cin + c0 + ci) * 9 + tap] : 0.0f;
        }
        __syncthreads();
        if (live) {
            const int cn = min(16, Cin - c0);
            for (int ci = 0; ci < cn; ++ci) {
                const float* p = x + (((size_t)n * Cin + c0 + ci) * H + i) * W + j;
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int b = 0; b < 3; ++b) {
                        const float v = __ldg(p + (size_t)a * W + b);
#pragma unroll
                        for (int k = 0; k < 8; ++k) acc[k] = fmaf(f[ci][a * 3 + b][k], v, acc[k]);
                    }
            }
        }
        __syncthreads();
    }
    if (!live) return;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (k0 + k < Cout) y[(((size_t)n * Cout + k0 + k) * Ho + i) * Wo + j] = acc[k];
}
