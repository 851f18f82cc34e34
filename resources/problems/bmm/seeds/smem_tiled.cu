// Batched: grid z is the batch, each block offsets A, B and C to its batch's matrices.
// Shared-memory tiled Batched SGEMM: 32x32 tiles of A and B are staged in shared memory, one output per thread.
// Out-of-range elements of the tiles are zero-filled, so any M, N, K works.
// @kerncast launch bmm_smem grid(ceil_div(N, 32), ceil_div(M, 32), BATCH) block(32, 32) args(A, B, C, M, N, K)

#define T 32

extern "C" __global__ void bmm_smem(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                      int M, int N, int K)
{
    A += (size_t)blockIdx.z * M * K;  // this block's batch
    B += (size_t)blockIdx.z * K * N;
    C += (size_t)blockIdx.z * M * N;
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty;
    const int col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
