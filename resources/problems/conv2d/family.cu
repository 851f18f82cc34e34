// Implicit GEMM: the convolution as the product of the weights (Cout x Cin*9, row-major as stored) and the unfolded
// input (Cin*9 x (H-2)*(W-2) per image, never stored: row r = (c, a, b) and column q = (i, j) read
// x[n, c, i + a, j + b]). A block computes a BM x BN tile of one image's output (BM output channels, BN consecutive
// output pixels), BK deep, with the register-blocked core of the sgemm family: each of the (BM/TM)*(BN/TN) threads
// computes TM x TN outputs as outer products read from shared memory with float4 loads, its rows and columns in
// groups of 4 spaced so that a warp's reads are conflict-free and its float4 stores of y are coalesced. The weights
// are read with float4 loads (scalars when Cin*9 is not a multiple of 4); the input is gathered with scalar loads,
// consecutive threads taking consecutive pixels of one input row-tap; its offset is worked out at each load from
// a table of the block's pixels in shared memory (GATHER = 0), or kept in registers and advanced
// by BK rows a tile (GATHER = 1: fewer instructions, more registers), or read from a second table in shared memory
// that holds each unfolded row's offset c * H * W + a * W + b (GATHER = 2: the launch's dynamic shared memory,
// 36 bytes per input channel, written once per block). The next tile's loads go into registers
// while this one is multiplied, then into the other of two shared-memory buffers: one barrier per BK step.
// OCC = 2 asks for two 256-thread blocks per SM (128 registers).
// @kerncast launch conv2d_igemm grid(ceil_div((H - 2) * (W - 2), BN), ceil_div(Cout, BM), B) block((BM / TM) * (BN / TN)) smem((GATHER / 2) * 4 * 9 * Cin) args(x, w, y, B, Cin, Cout, H, W)
// @kerncast tunable BM 64 128
// @kerncast tunable BN 64 128 256
// @kerncast tunable BK 8 16 32
// @kerncast tunable TM 4 8
// @kerncast tunable TN 4 8 16 where (BM / TM) * (BN / TN) >= 64 && (BM / TM) * (BN / TN) <= 512 && TM * TN <= 128 && (BM * BK) % (4 * (BM / TM) * (BN / TN)) == 0 && (BK * BN) % ((BM / TM) * (BN / TN)) == 0 && 2 * BK * (BM + 4 + BN) * 4 + 4 * BN <= 49152 && (BM + BN) * BK <= 32 * (BM / TM) * (BN / TN)
// @kerncast tunable GATHER 0 1 2
// @kerncast tunable OCC 1 2 where OCC == 1 || ((BM / TM) * (BN / TN) == 256 && (BK <= 8 || TM * TN <= 32))

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
#ifndef GATHER
#define GATHER 0  // 0: offsets computed at each load; 1: kept in registers, advanced each tile; 2: a table of rows
#endif
#ifndef OCC
#define OCC 1  // blocks per SM asked of the register allocator (__launch_bounds__ min blocks)
#endif

#define THREADS ((BM / TM) * (BN / TN))
#define LA ((BM * BK) / (4 * THREADS))  // float4 loads of weights per thread per tile
#define LB ((BK * BN) / THREADS)        // scalar loads of input per thread per tile
#define SA ((BM * 4) / TM)              // distance between a thread's row groups
#define SB ((BN * 4) / TN)              // distance between a thread's column groups
#define APAD 4

extern "C" __global__ void __launch_bounds__(THREADS, OCC)
conv2d_igemm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int B, int Cin, int Cout,
             int H, int W)
{
    __shared__ __align__(16) float As[2][BK][BM + APAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    __shared__ int pix[BN];  // offset of output pixel bn + n's window corner in an input channel; -1 past the end
#if GATHER == 1
    __shared__ int tapOff[9];  // offset of tap (a, b) from the window corner: a * W + b
#endif

    const int M = Cout, K = Cin * 9, Wo = W - 2, P = (H - 2) * Wo;
    const int tid = threadIdx.x;
    const int tRow = tid / (BN / TN);
    const int tCol = tid % (BN / TN);
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, img = blockIdx.z;
    const bool vecA = (K % 4) == 0;
    const bool vecC = (P % 4) == 0;
    const float* xi = x + (size_t)img * Cin * H * W;
    const int plane = H * W;  // offsets within one image in int: an image of fewer than 2^31 inputs

    for (int n = tid; n < BN; n += THREADS) {
        const int q = bn + n;
        pix[n] = q < P ? (q / Wo) * W + q % Wo : -1;
    }
#if GATHER == 1
    if (tid < 9)
        tapOff[tid] = (tid / 3) * W + tid % 3;
#elif GATHER == 2
    extern __shared__ int rowOff[];  // the launch's dynamic shared memory: Cin * 9 offsets
    for (int r = tid; r < K; r += THREADS)
        rowOff[r] = (r / 9) * plane + ((r % 9) / 3) * W + r % 3;
#endif
    __syncthreads();

#if GATHER == 1
    // The thread's input loads: load l takes the row of channel rowAt[l] >> 6 and tap rowAt[l] & 63 of the unfolded
    // input (advanced by BK rows after each tile) at the pixel whose offset col[l] holds (one register for all loads
    // where the block's threads cover a whole number of tile rows).
    constexpr int COLS = THREADS % BN == 0 ? 1 : LB;
    int rowAt[LB], col[COLS];
#pragma unroll
    for (int l = 0; l < LB; ++l) {
        const int r = (tid + l * THREADS) / BN;
        rowAt[l] = (r / 9) * 64 + r % 9;
    }
#pragma unroll
    for (int l = 0; l < COLS; ++l)
        col[l] = pix[(tid + l * THREADS) % BN];
#endif

    float4 ra[LA];
    float rb[LB];
    auto loadTile = [&](int k0) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            const int gr = bm + r, gc = k0 + c;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gr < M) {
                const float* p = w + (size_t)gr * K + gc;
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
#if GATHER == 1
            const int c = rowAt[l] >> 6, off = col[l % COLS];
            rb[l] = (c < Cin && off >= 0) ? __ldg(xi + c * plane + tapOff[rowAt[l] & 63] + off) : 0.0f;
            rowAt[l] += BK;  // the next tile's row: BK further
            while ((rowAt[l] & 63) >= 9)
                rowAt[l] += 64 - 9;
#elif GATHER == 2
            const int idx = tid + l * THREADS;
            const int r = k0 + idx / BN;
            const int off = pix[idx % BN];
            rb[l] = (r < K && off >= 0) ? __ldg(xi + rowOff[r] + off) : 0.0f;
#else
            const int idx = tid + l * THREADS;
            const int r = k0 + idx / BN, n = idx % BN;
            const int c = r / 9, tap = r % 9;
            const int off = pix[n];
            rb[l] = (r < K && off >= 0) ? __ldg(xi + c * (size_t)plane + (tap / 3) * W + tap % 3 + off) : 0.0f;
#endif
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
            Bs[buf][idx / BN][idx % BN] = rb[l];
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

    float* yi = y + (size_t)img * Cout * P;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = bm + (i / 4) * SA + tRow * 4 + (i % 4);
        if (gr >= M) continue;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const int gc = bn + g * SB + tCol * 4;
            float* p = yi + (size_t)gr * P + gc;
            if (vecC && gc < P) {
                *reinterpret_cast<float4*>(p) =
                    make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (gc + j < P) p[j] = acc[i][g * 4 + j];
            }
        }
    }
}
