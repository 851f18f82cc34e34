// Naive bf16 GEMM with a bias and GELU: one thread per element of Y, a plain loop over K accumulating in fp32 on the
// CUDA cores (no tensor cores), then gelu(acc + b) rounded to bf16.
// @kerncast launch bgemm_gelu_naive grid(ceil_div(N, 16), ceil_div(M, 16)) block(16, 16) args(X, W, b, Y, M, N, K)

#include <cuda_bf16.h>

__device__ float gelu_tanh(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }

extern "C" __global__ void bgemm_gelu_naive(const __nv_bfloat16* __restrict__ X, const __nv_bfloat16* __restrict__ W,
                                            const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ Y, int M,
                                            int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += __bfloat162float(X[(size_t)row * K + k]) * __bfloat162float(W[(size_t)k * N + col]);
    Y[(size_t)row * N + col] = __float2bfloat16(gelu_tanh(acc + __bfloat162float(b[col])));
}
