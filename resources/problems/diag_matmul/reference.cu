// One thread per element of C, a 2-D grid of 16 x 16 blocks.
// @kerncast launch diag_matmul grid(ceil_div(M, 16), ceil_div(N, 16)) block(16, 16) args(A, B, C, N, M)

extern "C" __global__ void diag_matmul(const float* A, const float* B, float* C, int N, int M) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < M) C[(size_t)i * M + j] = A[i] * B[(size_t)i * M + j];
}
