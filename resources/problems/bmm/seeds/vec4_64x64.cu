// Batched: grid z is the batch, each block offsets A, B and C to its batch's matrices.
// Batched SGEMM with float4 global loads: a 64x64 block tile, BK = 16, 256 threads, each computing a 4x4 sub-tile
// (4 consecutive rows, 4 consecutive columns, read from shared memory as float4). Single shared-memory buffer, two
// barriers per BK step. float4 loads need K % 4 == 0 (A) and N % 4 == 0 (B, C); otherwise bounds-checked scalars.
// @kerncast launch bmm_vec4 grid(ceil_div(N, 64), ceil_div(M, 64), BATCH) block(256) args(A, B, C, M, N, K)

#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void __launch_bounds__(256) bmm_vec4(const float* __restrict__ A, const float* __restrict__ B,
                                                             float* __restrict__ C, int M, int N, int K)
{
    A += (size_t)blockIdx.z * M * K;  // this block's batch
    B += (size_t)blockIdx.z * K * N;
    C += (size_t)blockIdx.z * M * N;
    __shared__ __align__(16) float As[BK][BM + 4];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tRow = tid / 16, tCol = tid % 16;  // 16 x 16 threads, 4x4 outputs each
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const bool vecA = (K % 4) == 0, vecB = (N % 4) == 0;

    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        {   // A: 64 rows x 16 k = 256 float4, one per thread
            const int r = tid / 4, c = (tid % 4) * 4;
            const int gr = bm + r, gc = k0 + c;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gr < M) {
                const float* p = A + (size_t)gr * K + gc;
                if (vecA) {
                    if (gc < K) v = *reinterpret_cast<const float4*>(p);
                } else {
                    if (gc < K) v.x = p[0];
                    if (gc + 1 < K) v.y = p[1];
                    if (gc + 2 < K) v.z = p[2];
                    if (gc + 3 < K) v.w = p[3];
                }
            }
            As[c + 0][r] = v.x; As[c + 1][r] = v.y; As[c + 2][r] = v.z; As[c + 3][r] = v.w;
        }
        {   // B: 16 k x 64 columns = 256 float4, one per thread
            const int r = tid / 16, c = (tid % 16) * 4;
            const int gr = k0 + r, gc = bn + c;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gr < K) {
                const float* p = B + (size_t)gr * N + gc;
                if (vecB) {
                    if (gc < N) v = *reinterpret_cast<const float4*>(p);
                } else {
                    if (gc < N) v.x = p[0];
                    if (gc + 1 < N) v.y = p[1];
                    if (gc + 2 < N) v.z = p[2];
                    if (gc + 3 < N) v.w = p[3];
                }
            }
            *reinterpret_cast<float4*>(&Bs[r][c]) = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a = *reinterpret_cast<const float4*>(&As[k][tRow * 4]);
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][tCol * 4]);
            const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int gr = bm + tRow * 4 + i, gc = bn + tCol * 4;
        if (gr >= M) continue;
        float* p = C + (size_t)gr * N + gc;
        if (vecB && gc < N) {
            *reinterpret_cast<float4*>(p) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (gc + j < N) p[j] = acc[i][j];
        }
    }
}
