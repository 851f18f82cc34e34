// Batched: grid z is the batch, each block offsets A, B and C to its batch's matrices.
// Register-blocked Batched SGEMM family. A BM x BN block tile, BK deep; each of the (BM/TM)*(BN/TN) threads computes TM x TN
// outputs as outer products read from shared memory with float4 loads. A thread's rows (and columns) are TM/4
// (TN/4) groups of 4 spaced BM*4/TM (BN*4/TN) apart, so a warp's float4 reads of shared memory are conflict-free
// and its float4 stores of C are coalesced. Global tiles are read with float4 loads (when K, resp. N, is a multiple
// of 4; bounds-checked scalars otherwise, zero-filled past the edges) into registers while the previous tile is
// multiplied, and stored into the other of two shared-memory buffers: one barrier per BK step. A is stored
// transposed (As[k][m], rows padded by 4 floats). Both buffers are dynamic shared memory (the launch's smem), so
// that BK = 16 fits the 256 x 128 tiles: 48 KiB is the most a static array may take. OCC = 2 asks for two
// 256-thread blocks per SM (128 registers). WT = 1 gives each warp a tile of its own: its lanes stand 4 x 8 (rows x
// columns of threads) instead of one row of the block's threads, as in the sgemm family.
// @kerncast launch bmm_family grid(ceil_div(N, BN), ceil_div(M, BM), BATCH) block((BM / TM) * (BN / TN)) smem(2 * BK * (BM + 4 + BN) * 4) args(A, B, C, M, N, K)
// @kerncast tunable BM 32 64 128 256
// @kerncast tunable BN 32 64 128 256
// @kerncast tunable BK 4 8 16 32
// @kerncast tunable TM 4 8 16
// @kerncast tunable TN 4 8 16 where (BM / TM) * (BN / TN) >= 64 && (BM / TM) * (BN / TN) <= 1024 && (BM * BK) % (4 * (BM / TM) * (BN / TN)) == 0 && (BK * BN) % (4 * (BM / TM) * (BN / TN)) == 0 && 2 * BK * (BM + 4 + BN) * 4 <= 101376 && TM * TN <= 128 && (BM + BN) * BK <= 32 * (BM / TM) * (BN / TN)
// @kerncast tunable OCC 1 2 where OCC == 1 || ((BM / TM) * (BN / TN) == 256 && (BK <= 8 || TM * TN <= 32))
// @kerncast tunable WT 0 1 where WT == 0 || ((BN / TN) % 8 == 0 && (BM / TM) % 4 == 0)

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef OCC
#define OCC 1  // blocks per SM asked of the register allocator (__launch_bounds__ min blocks)
#endif

#define THREADS ((BM / TM) * (BN / TN))
#ifndef WT
#define WT 0
#endif
#define LA ((BM * BK) / (4 * THREADS))  // float4 loads of A per thread per tile
#define LB ((BK * BN) / (4 * THREADS))  // float4 loads of B per thread per tile
#define SA ((BM * 4) / TM)              // distance between a thread's row groups
#define SB ((BN * 4) / TN)              // distance between a thread's column groups
#define APAD 4

extern "C" __global__ void __launch_bounds__(THREADS, OCC)
bmm_family(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    A += (size_t)blockIdx.z * M * K;  // this block's batch
    B += (size_t)blockIdx.z * K * N;
    C += (size_t)blockIdx.z * M * N;
    extern __shared__ __align__(16) float smem[];
    float (*As)[BK][BM + APAD] = reinterpret_cast<float (*)[BK][BM + APAD]>(smem);
    float (*Bs)[BK][BN] = reinterpret_cast<float (*)[BK][BN]>(smem + 2 * BK * (BM + APAD));

    const int tid = threadIdx.x;
#if WT
    // warp tiles: a warp's lanes stand 4 x 8 (the family's condition: 8 divides a block row of threads, 4 a column)
    const int lane = tid % 32, warp = tid / 32;
    const int tRow = (warp / ((BN / TN) / 8)) * 4 + lane / 8;
    const int tCol = (warp % ((BN / TN) / 8)) * 8 + lane % 8;
#else
    const int tRow = tid / (BN / TN);
    const int tCol = tid % (BN / TN);
#endif
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const bool vecA = (K % 4) == 0;
    const bool vecB = (N % 4) == 0;

    float4 ra[LA], rb[LB];

    auto loadTile = [&](int k0) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            const int gr = bm + r, gc = k0 + c;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gr < M) {
                const float* p = A + (size_t)gr * K + gc;
                if (vecA) {
                    if (gc < K) v = __ldg(reinterpret_cast<const float4*>(p));
                } else {
                    if (gc < K) v.x = __ldg(p);
                    if (gc + 1 < K) v.y = __ldg(p + 1);
                    if (gc + 2 < K) v.z = __ldg(p + 2);
                    if (gc + 3 < K) v.w = __ldg(p + 3);
                }
            }
            ra[l] = v;
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            const int gr = k0 + r, gc = bn + c;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gr < K) {
                const float* p = B + (size_t)gr * N + gc;
                if (vecB) {
                    if (gc < N) v = __ldg(reinterpret_cast<const float4*>(p));
                } else {
                    if (gc < N) v.x = __ldg(p);
                    if (gc + 1 < N) v.y = __ldg(p + 1);
                    if (gc + 2 < N) v.z = __ldg(p + 2);
                    if (gc + 3 < N) v.w = __ldg(p + 3);
                }
            }
            rb[l] = v;
        }
    };
    auto storeTile = [&](int buf) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            As[buf][c + 0][r] = ra[l].x;
            As[buf][c + 1][r] = ra[l].y;
            As[buf][c + 2][r] = ra[l].z;
            As[buf][c + 3][r] = ra[l].w;
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][r][c]) = rb[l];
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    const int nTiles = (K + BK - 1) / BK;
    loadTile(0);
    storeTile(0);
    __syncthreads();

    for (int t = 0; t < nTiles; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < nTiles;
        if (more) loadTile((t + 1) * BK);
#pragma unroll 8
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int g = 0; g < TM / 4; ++g) {
                float4 v = *reinterpret_cast<const float4*>(&As[buf][k][g * SA + tRow * 4]);
                a[g * 4 + 0] = v.x; a[g * 4 + 1] = v.y; a[g * 4 + 2] = v.z; a[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int g = 0; g < TN / 4; ++g) {
                float4 v = *reinterpret_cast<const float4*>(&Bs[buf][k][g * SB + tCol * 4]);
                b[g * 4 + 0] = v.x; b[g * 4 + 1] = v.y; b[g * 4 + 2] = v.z; b[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) storeTile(buf ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = bm + (i / 4) * SA + tRow * 4 + (i % 4);
        if (gr >= M) continue;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const int gc = bn + g * SB + tCol * 4;
            float* p = C + (size_t)gr * N + gc;
            if (vecB && gc < N) {
                *reinterpret_cast<float4*>(p) =
                    make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (gc + j < N) p[j] = acc[i][g * 4 + j];
            }
        }
    }
}
