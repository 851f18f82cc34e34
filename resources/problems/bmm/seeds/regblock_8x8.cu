// Batched: grid z is the batch, each block offsets A, B and C to its batch's matrices.
// Register-blocked Batched SGEMM: a 128x128 block tile with BK = 8, 256 threads, each computing an 8x8 sub-tile as an outer
// product of 8 values of A and 8 values of B per k. Scalar global loads with zero-fill at the edges; A is stored
// transposed in shared memory so each thread reads its 8 A values from one row.
// @kerncast launch bmm_reg8x8 grid(ceil_div(N, 128), ceil_div(M, 128), BATCH) block(256) args(A, B, C, M, N, K)

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) bmm_reg8x8(const float* __restrict__ A, const float* __restrict__ B,
                                                               float* __restrict__ C, int M, int N, int K)
{
    A += (size_t)blockIdx.z * M * K;  // this block's batch
    B += (size_t)blockIdx.z * K * N;
    C += (size_t)blockIdx.z * M * N;
    __shared__ float As[BK][BM];  // transposed: As[k][m]
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tRow = tid / (BN / TN);  // 0..15
    const int tCol = tid % (BN / TN);  // 0..15
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile: BM x BK = 1024 elements, 4 per thread; consecutive threads take consecutive k of one row.
#pragma unroll
        for (int l = 0; l < (BM * BK) / 256; ++l) {
            int idx = tid + l * 256;
            int r = idx / BK, c = idx % BK;
            int gr = bm + r, gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        // B tile: BK x BN, consecutive threads take consecutive columns.
#pragma unroll
        for (int l = 0; l < (BK * BN) / 256; ++l) {
            int idx = tid + l * 256;
            int r = idx / BN, c = idx % BN;
            int gr = k0 + r, gc = bn + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
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
        int gr = bm + tRow * TM + i;
        if (gr >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int gc = bn + tCol * TN + j;
            if (gc < N) C[(size_t)gr * N + gc] = acc[i][j];
        }
    }
}
