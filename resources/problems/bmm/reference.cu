// Naive batched SGEMM: one thread per element of C (grid z is the batch), a plain loop over K. Threads of a warp
// share a row of A (broadcast) and read consecutive elements of B.
// @kerncast launch bmm_naive grid(ceil_div(N, 16), ceil_div(M, 16), BATCH) block(16, 16) args(A, B, C, M, N, K)

extern "C" __global__ void bmm_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                     int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const size_t z = blockIdx.z;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(z * M + row) * K + k] * B[(z * K + k) * N + col];
    C[(z * M + row) * N + col] = acc;
}
