// C = A * B^T: sgemm's family (sgemm/family.cu) in the arrangement of the vendor libraries' SIMT kernels, with a
// choice of how B, read along K, reaches shared memory (XPOSE). A BM x BN block tile, BK deep, is split among warps
// of WM x WN; a warp's 32 lanes stand 4 x 8 (interleaved by pairs of rows), each computing (WM / 4) x (WN / 8)
// outputs as outer products of fragments read from shared memory with float4 loads (a lane's rows and columns are
// groups of 4 spaced 16 and 32 apart, so a warp's reads are conflict-free). STAGES tiles are in flight: cp.async
// copies tile t + STAGES - 1 straight into shared memory while tile t is multiplied, so the registers go to the
// accumulators and two sets of fragments (the next k's are read while this k's are multiplied; the barrier before
// a tile's last k lets the next tile's first reads overlap it). A is read along K and stored transposed (As[k][m],
// rows padded by 4 floats), 4 bytes a copy.
// XPOSE 0: B too is stored transposed (Bs[k][n]), 4 bytes a copy, so B's tile takes four times sgemm's copy
// instructions. XPOSE 1: a first launch writes B^T (K x N) into the scratch buffer Bt, through 64 x 64 tiles in
// shared memory (reads and writes coalesced, 8 bytes a thread; one pass over B, 8 * N * K bytes of DRAM traffic),
// and the product then runs as sgemm's with Bt, B's copies 16 bytes at a time when N % 4 == 0. On an H200 at 4096^3
// (64 x 256 x 8, 2 x 4 warps) XPOSE 1 measures 2804 us, sgemm's kernel alone 2775; XPOSE 0 2955 at 128 x 256 x 8.
//
// On an H200 every issue slot a main loop spends on anything but an FFMA costs time (one warp instruction a cycle
// per scheduler, FFMAs included), so the loop holds little else:
// - K's remainder is the first tile (which starts at K % BK - BK when BK does not divide K): only the prologue's
//   copies test k, filling zeros below 0; every later tile lies whole inside K.
// - A copy in the main loop tests only whether its row (column) exists, a predicate fixed for the block: a row past
//   the edge is not copied, so its slot keeps old values, which reach only outputs that are never stored.
// - The last STAGES - 1 tiles run in a second loop that copies nothing, so no copy asks whether its tile exists.
// - Shared memory is addressed from one stage offset that turns round the ring, global memory from pointers that
//   step BK along K, and the copies are spread over the first BK - 1 steps of k.
// ORDER picks the order of a k step's outer product: 0 columns outer, rows in serpentine order; 1 rows outer,
// columns in serpentine order. The two give the register allocator different operand pairs to place, and on an
// H200 the second stalls less (sgemm: 2793 against 2835 us at 128 x 256 x 8, 4096^3).
// @kerncast scratch Bt f32 (max(1, XPOSE * K * N))
// @kerncast launch matmul_tb_transpose grid(ceil_div(K, 64), ceil_div(N, 64)) block(32, 8) when(XPOSE == 1) args(B, Bt, N, K)
// @kerncast launch matmul_tb_family grid(ceil_div(N, BN), ceil_div(M, BM)) block((BM / WM) * (BN / WN) * 32) smem(STAGES * 4 * BK * (BM + BN + 8)) args(A, B, Bt, C, M, N, K)
// @kerncast tunable BM 64 128 256
// @kerncast tunable BN 64 128 256
// @kerncast tunable BK 8 16
// @kerncast tunable WM 32 64
// @kerncast tunable WN 32 64 where BM % WM == 0 && BN % WN == 0 && (BM / WM) * (BN / WN) >= 4 && (BM / WM) * (BN / WN) <= 8 && (BM * BK) % ((BM / WM) * (BN / WN) * 32) == 0 && (BN * BK) % ((BM / WM) * (BN / WN) * 128) == 0
// @kerncast tunable STAGES 3 4 where STAGES * 4 * BK * (BM + BN + 8) <= 232448
// @kerncast tunable ORDER 0 1
// @kerncast tunable XPOSE 0 1

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef ORDER
#define ORDER 1
#endif
#ifndef XPOSE
#define XPOSE 1
#endif

#define TB (XPOSE == 0)                   // B's tile is copied along K (sgemm's family: 0, always)

#define LR 4                              // lanes along M in a warp
#define LC 8                              // lanes along N
#define TM (WM / LR)                      // a lane's rows
#define TN (WN / LC)                      // a lane's columns
#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define LDA (BM + 4)                      // As[k][m], rows padded
#define LDB (BN + 4)                      // Bs[k][n], rows padded
#define A_STAGE (BK * LDA)
#define STAGE (BK * (LDA + LDB))          // one stage: A's tile, then B's
#define NA ((BM * BK) / THREADS)          // 4-byte copies of A per thread per tile
#define AROWS (THREADS / BK)              // rows of A (of B when TB = 1) one round of copies covers
#if TB
#define NB ((BN * BK) / THREADS)          // 4-byte copies of B per thread per tile
#else
#define NB16 ((BK * BN / 4) / THREADS)    // 16-byte copies of B per thread per tile (N % 4 == 0)
#define BROWS16 (THREADS / (BN / 4))
#define NB4 ((BK * BN) / THREADS)         // 4-byte copies of B per thread per tile (otherwise)
#endif

__device__ __forceinline__ void cp_async4(unsigned dst, const float* src, bool fill)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src, bool fill)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <bool VEC>
__device__ __forceinline__ void gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                     int M, int N, int K)
{
    extern __shared__ __align__(16) float smem[];
    const unsigned sBase = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int lr = (lane / (2 * LC)) * 2 + lane % 2, lc = (lane % (2 * LC)) / 2;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int nTiles = (K + BK - 1) / BK;
    const int kStart = (K % BK) ? K % BK - BK : 0;

    // copies along K (A, and B when TB = 1): thread (ar, ac) copies rows ar + l * AROWS at k = ac
    const int ar = tid / BK, ac = tid % BK;
    const float* gA = A + (long long)(bm + ar) * K + kStart + ac;
    const long long strideA = (long long)AROWS * K;
#if TB
    const float* gB = B + (long long)(bn + ar) * K + kStart + ac;
    constexpr int NCOPY = NA + NB;
#else
    const int br = VEC ? tid / (BN / 4) : 0, bc = VEC ? (tid % (BN / 4)) * 4 : 0;
    const float* gB = VEC ? B + (long long)(kStart + br) * N + bn + bc : B + (long long)kStart * N + bn;
    const long long strideB = VEC ? (long long)BROWS16 * N : 0;
    constexpr int NCOPY = NA + (VEC ? NB16 : NB4);
#endif

    // Copy c of a tile whose first k is k0 into the stage at shared address stageAddr, from pointers a and b at that
    // tile. checked (the prologue): every predicate, zeros filled where one fails; otherwise rows (columns) only.
    auto copy = [&](int c, unsigned stageAddr, const float* a, const float* b, int k0, bool checked, bool live) {
        if (c < NA) {
            const int r = ar + c * AROWS;
            const bool row = bm + r < M;
            const bool ok = live && row && k0 + ac >= 0;
            const unsigned dst = stageAddr + 4 * (ac * LDA + r);
            if (checked)
                cp_async4(dst, ok ? a + c * strideA : A, ok);
            else if (row)
                cp_async4(dst, a + c * strideA, true);
            return;
        }
        const int l = c - NA;
#if TB
        const int r = ar + l * AROWS;
        const bool col = bn + r < N;
        const bool ok = live && col && k0 + ac >= 0;
        const unsigned dst = stageAddr + 4 * (A_STAGE + ac * LDB + r);
        if (checked)
            cp_async4(dst, ok ? b + l * strideA : B, ok);
        else if (col)
            cp_async4(dst, b + l * strideA, true);
#else
        if (VEC) {
            const int r = br + l * BROWS16;
            const bool col = bn + bc < N;
            const bool ok = live && col && k0 + r >= 0;
            const unsigned dst = stageAddr + 4 * (A_STAGE + r * LDB + bc);
            if (checked)
                cp_async16(dst, ok ? b + l * strideB : B, ok);
            else if (col)
                cp_async16(dst, b + l * strideB, true);
        } else {
            const int idx = tid + l * THREADS, r = idx / BN, cc = idx % BN;
            const bool col = bn + cc < N;
            const bool ok = live && col && k0 + r >= 0;
            const unsigned dst = stageAddr + 4 * (A_STAGE + r * LDB + cc);
            const float* src = b + (long long)r * N + cc;
            if (checked)
                cp_async4(dst, ok ? src : B, ok);
            else if (col)
                cp_async4(dst, src, true);
        }
#endif
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float a[2][TM], b[2][TN];
    const float* fragA = smem + wm0 + lr * 4;
    const float* fragB = smem + A_STAGE + wn0 + lc * 4;
    auto loadFrag = [&](int stage, int k, int f) {
#pragma unroll
        for (int g = 0; g < TM / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(fragA + stage + k * LDA + g * LR * 4);
            a[f][g * 4 + 0] = v.x; a[f][g * 4 + 1] = v.y; a[f][g * 4 + 2] = v.z; a[f][g * 4 + 3] = v.w;
        }
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(fragB + stage + k * LDB + g * LC * 4);
            b[f][g * 4 + 0] = v.x; b[f][g * 4 + 1] = v.y; b[f][g * 4 + 2] = v.z; b[f][g * 4 + 3] = v.w;
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
#if TB
        const float* bs = gB + s * BK;
#else
        const float* bs = gB + (long long)(s * BK) * N;
#endif
#pragma unroll
        for (int c = 0; c < NCOPY; ++c)
            copy(c, sBase + 4 * s * STAGE, gA + s * BK, bs, kStart + s * BK, true, s < nTiles);
        cp_async_commit();
    }
    gA += (STAGES - 1) * BK;
#if TB
    gB += (STAGES - 1) * BK;
#else
    gB += (long long)((STAGES - 1) * BK) * N;
#endif
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    loadFrag(0, 0, 0);

    int rd = 0, wr = (STAGES - 1) * STAGE;  // float offsets of the stage read and of the stage written
    auto tile = [&](bool copies) {
        const int next = rd + STAGE == STAGES * STAGE ? 0 : rd + STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k == BK - 1) {
                // tile t + 1 has arrived, and every thread is past its last read of this stage (copies overwrite it
                // next)
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                loadFrag(next, 0, (k + 1) & 1);  // past the last tile: read, never used
            } else {
                loadFrag(rd, k + 1, (k + 1) & 1);
            }
#pragma unroll
            for (int o = 0; o < TN; ++o)
#pragma unroll
                for (int q = 0; q < TM; ++q) {
#if ORDER == 0
                    const int j = o, i = (j & 1) ? TM - 1 - q : q;
#else
                    const int n = o * TM + q, i = n / TN, j = (i & 1) ? TN - 1 - n % TN : n % TN;
#endif
                    acc[i][j] = fmaf(a[k & 1][i], b[k & 1][j], acc[i][j]);
                }
            if (copies) {
#pragma unroll
                for (int c = 0; c < NCOPY; ++c)
                    if (c * (BK - 1) / NCOPY == k) copy(c, sBase + 4 * wr, gA, gB, 0, false, true);
            }
            if (k == BK - 2) cp_async_commit();  // one group a tile, empty in the second loop
        }
        wr = rd;
        rd = next;
        gA += BK;
#if TB
        gB += BK;
#else
        gB += (long long)BK * N;
#endif
    };
    const int tCopying = nTiles > STAGES - 1 ? nTiles - (STAGES - 1) : 0;
    int t = 0;
    for (; t < tCopying; ++t) tile(true);
    for (; t < nTiles; ++t) tile(false);
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = bm + wm0 + (i / 4) * LR * 4 + lr * 4 + (i % 4);
        if (gr >= M) continue;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const int gc = bn + wn0 + g * LC * 4 + lc * 4;
            float* p = C + (long long)gr * N + gc;
            if (VEC && gc < N) {
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

// Bt[k][n] = B[n][k]: a block moves a 64 x 64 tile through shared memory, 8 bytes a thread a copy.
extern "C" __global__ void __launch_bounds__(256)
matmul_tb_transpose(const float* __restrict__ B, float* __restrict__ Bt, int N, int K)
{
    __shared__ float t[64][65];
    const int k0 = blockIdx.x * 64, n0 = blockIdx.y * 64, x = threadIdx.x;
    const bool kv = (K % 2 == 0) && k0 + 64 <= K, nv = (N % 2 == 0) && n0 + 64 <= N;
#pragma unroll
    for (int i = threadIdx.y; i < 64; i += 8) {
        const int n = n0 + i, k = k0 + 2 * x;
        if (n >= N) continue;
        const float* p = B + (long long)n * K + k;
        if (kv) {
            const float2 v = *reinterpret_cast<const float2*>(p);
            t[i][2 * x] = v.x; t[i][2 * x + 1] = v.y;
        } else {
            if (k < K) t[i][2 * x] = p[0];
            if (k + 1 < K) t[i][2 * x + 1] = p[1];
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = threadIdx.y; i < 64; i += 8) {
        const int k = k0 + i, n = n0 + 2 * x;
        if (k >= K) continue;
        float* p = Bt + (long long)k * N + n;
        if (nv) {
            *reinterpret_cast<float2*>(p) = make_float2(t[2 * x][i], t[2 * x + 1][i]);
        } else {
            if (n < N) p[0] = t[2 * x][i];
            if (n + 1 < N) p[1] = t[2 * x + 1][i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_tb_family(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ Bt,
                 float* __restrict__ C, int M, int N, int K)
{
    const float* b = XPOSE ? Bt : B;
    if (N % 4 == 0)
        gemm<true>(A, b, C, M, N, K);
    else
        gemm<false>(A, b, C, M, N, K);
}
