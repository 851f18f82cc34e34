// The textbook shared-memory tiled C = A * B^T: 32x32 tiles of A and of B (both rows along K, read coalesced) are
// staged in shared memory, one output per thread; the B tile is read across its rows, so its rows are padded to 33
// floats.
// Out-of-range elements are zero-filled, so any M, N, K works. (A naive one-thread-per-output loop would read B
// uncoalesced, a warp touching 32 rows at once, and be too slow to time against.)
// @kerncast launch matmul_tb_tiled grid(ceil_div(N, 32), ceil_div(M, 32)) block(32, 32) args(A, B, C, M, N, K)

#define T 32

extern "C" __global__ void matmul_tb_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T + 1];  // Bs[n][k]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty;
    const int col = blockIdx.x * T + tx;
    const int bcol = blockIdx.x * T + ty;  // the B row this thread stages
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (bcol < N && k0 + tx < K) ? B[(size_t)bcol * K + k0 + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[tx][k];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
