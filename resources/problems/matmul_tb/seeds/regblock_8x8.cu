// Register-blocked C = A * B^T: a 128x128 block tile with BK = 8, 256 threads, each computing an 8x8 sub-tile as an
// outer product of 8 values of A and 8 values of B per k. Both tiles are read along K with scalar loads
// (zero-filled at the edges) and stored transposed in shared memory (As[k][m], Bs[k][n]), so each thread reads its
// 8 values of each from one row.
// @kerncast launch matmul_tb_reg8x8 grid(ceil_div(N, 128), ceil_div(M, 128)) block(256) args(A, B, C, M, N, K)

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) matmul_tb_reg8x8(const float* __restrict__ A,
                                                                  const float* __restrict__ B, float* __restrict__ C,
                                                                  int M, int N, int K)
{
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    const int tid = threadIdx.x;
    const int tRow = tid / (BN / TN);
    const int tCol = tid % (BN / TN);
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Both tiles: 128 rows x 8 k = 1024 elements, 4 per thread; consecutive threads take consecutive k of a row.
#pragma unroll
        for (int l = 0; l < (BM * BK) / 256; ++l) {
            const int idx = tid + l * 256;
            const int r = idx / BK, c = idx % BK;
            As[c][r] = (bm + r < M && k0 + c < K) ? A[(size_t)(bm + r) * K + k0 + c] : 0.0f;
            Bs[c][r] = (bn + r < N && k0 + c < K) ? B[(size_t)(bn + r) * K + k0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k][tRow * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = bm + tRow * TM + i;
        if (gr >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gc = bn + tCol * TN + j;
            if (gc < N) C[(size_t)gr * N + gc] = acc[i][j];
        }
    }
}
