// Shared-memory tiled C = A * B^T with 64-wide tiles of B: a block of 16 x 16 threads makes a 16 x 64 tile of C,
// each thread four outputs 16 columns apart, so every A value read from shared memory feeds four FMAs. Both tiles
// are staged along K (coalesced), 16 deep; out-of-range elements are zero-filled.
// @kerncast launch matmul_tb_4cols grid(ceil_div(N, 64), ceil_div(M, 16)) block(16, 16) args(A, B, C, M, N, K)

extern "C" __global__ void __launch_bounds__(256) matmul_tb_4cols(const float* __restrict__ A,
                                                                 const float* __restrict__ B, float* __restrict__ C,
                                                                 int M, int N, int K)
{
    __shared__ float As[16][17];  // As[m][k]
    __shared__ float Bs[64][17];  // Bs[n][k]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 16 + ty;
    const int col0 = blockIdx.x * 64;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int n = col0 + q * 16 + ty;
            Bs[q * 16 + ty][tx] = (n < N && k0 + tx < K) ? B[(size_t)n * K + k0 + tx] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const float a = As[ty][k];
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[q] = fmaf(a, Bs[q * 16 + tx][k], acc[q]);
        }
        __syncthreads();
    }
    if (row >= M) return;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int col = col0 + q * 16 + tx;
        if (col < N) C[(size_t)row * N + col] = acc[q];
    }
}
