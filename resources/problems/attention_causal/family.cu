// FlashAttention-style forward for Hopper (the FlashAttention-3 layout). A work item is BR = 64 * CONSUMERS query
// rows of one batch and head. One producer warpgroup copies the item's Q tile and the K and V tiles of BC keys into a
// STAGES-deep ring of shared memory with TMA (128-byte swizzle); each consumer warpgroup owns 64 query rows, computes
// their scores S = Q K^T with wgmma from shared memory, keeps the online softmax in registers (running maximum and sum
// per row, earlier outputs rescaled when a maximum grows), and adds P V with wgmma taking P from its registers as bf16
// (the scores' accumulator layout is the A operand's) and V N-major from shared memory. The output rows stay in fp32
// registers until the end. The consumers take the producer's registers (setmaxnreg). A block takes ITEMS items in
// turn, so the next item's tiles load while it finishes one. SCHEDULE 1 computes the scores of the next tile while
// P V of the current one runs; 0 waits for each product, leaving the overlap to the two warpgroups. CAUSAL 1 stops at
// an item's last row, masks keys past each row, and takes the items with the most keys first. The maps are three
// dimensional (D, S, B * H), so the copy engine fills rows past S with zeros. D must be 128.
// @kerncast target sm_90a
// @kerncast launch attention_wgmma grid(ceil_div(ceil_div(S, 64 * CONSUMERS) * B * H, ITEMS)) block(128 * (CONSUMERS + 1)) smem(CONSUMERS * 16384 + STAGES * BC * 512 + 1280) when(D == 128) args(tensormap(Q, shape(D, S, B * H), box(64, 64 * CONSUMERS, 1), swizzle(128)), tensormap(K, shape(D, S, B * H), box(64, BC, 1), swizzle(128)), tensormap(V, shape(D, S, B * H), box(64, BC, 1), swizzle(128)), O, S, B, H)
// @kerncast tunable CONSUMERS 1 2
// @kerncast tunable BC 64 128
// @kerncast tunable ITEMS 1 2 4
// @kerncast tunable SCHEDULE 0 1
// @kerncast tunable STAGES 2 3

#include <cuda_bf16.h>

#define CAUSAL 1  // row i sees keys 0..i

#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef BC
#define BC 128
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef SCHEDULE
#define SCHEDULE 0
#endif
#ifndef STAGES
#define STAGES 2
#endif

#define HD 128  // head dimension
#define BR (64 * CONSUMERS)
#define THREADS (128 * (CONSUMERS + 1))
#define KV_TILE (BC * HD)  // bf16 per K or V tile
#define NEG_INF (-__int_as_float(0x7f800000))

struct __align__(64) TensorMap { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void bar_init(unsigned long long* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void bar_expect_tx(unsigned long long* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned long long* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TensorMap* map, unsigned long long* bar, int x, int y, int z)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
                 ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(z),
                 "r"(smem_u32(bar))
                 : "memory");
}

// Descriptor of a K-major tile in the 128-byte swizzle (rows of 64 bf16, 8-row groups 1024 bytes apart): Q as A and
// K as B of the scores.
__device__ __forceinline__ unsigned long long desc_k_major(const __nv_bfloat16* p)
{
    const unsigned long long addr = smem_u32(p);
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// Descriptor of the V tile as the N-major B of P V: two slabs of BC keys x 64 columns, BC * 128 bytes apart along N,
// 8-key groups 1024 bytes apart along K.
__device__ __forceinline__ unsigned long long desc_v(const __nv_bfloat16* p)
{
    const unsigned long long addr = smem_u32(p);
    return ((addr & 0x3FFFF) >> 4) | ((unsigned long long)(BC * 128 >> 4) << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
}

__device__ __forceinline__ void wgmma_qk_n64(float* d, unsigned long long a, unsigned long long b, int accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_qk_n128(float* d, unsigned long long a, unsigned long long b, int accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_pv_n128(float* d, const unsigned* a, unsigned long long b)
{
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}


__device__ __forceinline__ void wgmma_qk(float* d, unsigned long long a, unsigned long long b, int accumulate)
{
#if BC == 64
    wgmma_qk_n64(d, a, b, accumulate);
#else
    wgmma_qk_n128(d, a, b, accumulate);
#endif
}

// 2^x by the special function unit, flushing results below the normal range to zero (exp2f would scale them).
__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Keeps the compiler from moving reads of wgmma's registers before the wait that completes them, and from reusing
// an operand's registers while the product still reads them.
template <int N>
__device__ __forceinline__ void pin(float* r)
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin(unsigned* r)
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+r"(r[i])::"memory");
}

// One consumer warpgroup's state: its 64 query rows' outputs, running maxima and sums, and the scores or
// probabilities of the tile in hand.
struct Rows {
    float o[HD / 2];
    float sc[BC / 2];
    unsigned p[BC / 16][4];
    float row_max[2], row_sum[2];
};

// S = Q K^T for one K tile, issued and left in flight.
__device__ __forceinline__ void issue_qk(Rows& r, const __nv_bfloat16* q_tile, const __nv_bfloat16* k_tile)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk)
        wgmma_qk(r.sc, desc_k_major(q_tile + (kk / 4) * BR * 64 + (kk % 4) * 16),
                 desc_k_major(k_tile + (kk / 4) * BC * 64 + (kk % 4) * 16), kk > 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// O += P V for one V tile, issued and left in flight.
__device__ __forceinline__ void issue_pv(Rows& r, const __nv_bfloat16* v_tile)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk)
        wgmma_pv_n128(r.o, r.p[kk], desc_v(v_tile + kk * 16 * 64));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// The online softmax of one tile of scores: masks keys past S (and past each row when causal), raises the running
// maxima, turns the scores into exp2 of the scaled difference in place and adds them to the running sums; returns
// by how much the earlier outputs of each row must shrink.
__device__ __forceinline__ void softmax(Rows& r, int k0, int row0, int c0, int S, bool mask, float* correction)
{
    const float scale = 0.08838834764831845f * 1.4426950408889634f;  // 1 / sqrt(128), in powers of two
    if (mask) {
#pragma unroll
        for (int j = 0; j < BC / 8; ++j)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int col = k0 + 8 * j + c0 + (i & 1), row = row0 + 8 * (i >> 1);
                if (col >= S || (CAUSAL && col > row))
                    r.sc[4 * j + i] = NEG_INF;
            }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float m = NEG_INF;
#pragma unroll
        for (int j = 0; j < BC / 8; ++j)
            m = fmaxf(m, fmaxf(r.sc[4 * j + 2 * h], r.sc[4 * j + 2 * h + 1]));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
        m = fmaxf(r.row_max[h], m * scale);  // the scale is positive, so it commutes with the maximum
        const float m_use = m == NEG_INF ? 0.0f : m;  // a row that has seen no key yet
        correction[h] = fast_exp2(r.row_max[h] - m_use);
        r.row_max[h] = m;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < BC / 8; ++j) {
            r.sc[4 * j + 2 * h] = fast_exp2(fmaf(r.sc[4 * j + 2 * h], scale, -m_use));
            r.sc[4 * j + 2 * h + 1] = fast_exp2(fmaf(r.sc[4 * j + 2 * h + 1], scale, -m_use));
            sum += r.sc[4 * j + 2 * h] + r.sc[4 * j + 2 * h + 1];
        }
        r.row_sum[h] = r.row_sum[h] * correction[h] + sum;
    }
}

// Skipped where no row of the warp raised its maximum, as most tiles after the first few do not.
__device__ __forceinline__ void rescale(Rows& r, const float* correction)
{
    if (!__any_sync(0xffffffffu, correction[0] != 1.0f || correction[1] != 1.0f))
        return;
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) {
        r.o[4 * j] *= correction[0];
        r.o[4 * j + 1] *= correction[0];
        r.o[4 * j + 2] *= correction[1];
        r.o[4 * j + 3] *= correction[1];
    }
}

// P as the A operand of P V: for keys 16kk..16kk+15 the registers are the scores' columns 2kk and 2kk + 1.
__device__ __forceinline__ void pack(Rows& r)
{
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
        r.p[kk][0] = pack_bf16(r.sc[8 * kk], r.sc[8 * kk + 1]);
        r.p[kk][1] = pack_bf16(r.sc[8 * kk + 2], r.sc[8 * kk + 3]);
        r.p[kk][2] = pack_bf16(r.sc[8 * kk + 4], r.sc[8 * kk + 5]);
        r.p[kk][3] = pack_bf16(r.sc[8 * kk + 6], r.sc[8 * kk + 7]);
    }
}

// Work item i of a launch is a block of BR query rows of one batch and head. Non-causal items go head by head, so
// that the blocks running at once share K and V in L2; causal items go by query block, the ones with the most keys
// first, so that items of similar length run side by side.
__device__ __forceinline__ void item_coords(int item, int n_qblocks, int n_heads, int* q_block, int* bh)
{
#if CAUSAL
    *q_block = n_qblocks - 1 - item / n_heads;
    *bh = item % n_heads;
#else
    *q_block = item % n_qblocks;
    *bh = item / n_qblocks;
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
attention_wgmma(const __grid_constant__ TensorMap mapQ, const __grid_constant__ TensorMap mapK,
                const __grid_constant__ TensorMap mapV, __nv_bfloat16* __restrict__ O, int S, int B, int H)
{
    const int n_heads = B * H;
    extern __shared__ unsigned char smem_raw[];
    // The swizzled tiles want 1024-byte alignment, more than dynamic shared memory promises.
    unsigned char* base = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(base);  // two slabs of BR rows x 64 columns
    __nv_bfloat16* sK = sQ + BR * HD;                             // STAGES tiles, each two slabs of BC x 64
    __nv_bfloat16* sV = sK + STAGES * KV_TILE;
    unsigned long long* full_k = reinterpret_cast<unsigned long long*>(sV + STAGES * KV_TILE);
    unsigned long long* full_v = full_k + STAGES;
    unsigned long long* empty = full_v + STAGES;
    unsigned long long* q_ready = empty + STAGES;
    unsigned long long* q_free = q_ready + 1;

    // A block takes the items blockIdx.x, blockIdx.x + gridDim.x, ...: ITEMS of them where the grid is that much
    // smaller, so the next item's tiles load while this one finishes. Tiles are counted across items (g), which gives
    // each ring slot's phase.
    const int n_qblocks = (S + BR - 1) / BR, n_items = n_qblocks * n_heads;
    const auto tiles_of = [&](int q0) { return ((CAUSAL ? min(S, q0 + BR) : S) + BC - 1) / BC; };

    const int wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full_k[s], 1);
            bar_init(&full_v[s], 1);
            bar_init(&empty[s], CONSUMERS);
        }
        bar_init(q_ready, 1);
        bar_init(q_free, CONSUMERS);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
#if CONSUMERS == 2
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
#endif
        if (threadIdx.x == 0) {
            int g = 0, round = 0;
            for (int item = blockIdx.x; item < n_items; item += gridDim.x, ++round) {
                int q_block, bh;
                item_coords(item, n_qblocks, n_heads, &q_block, &bh);
                const int q0 = q_block * BR, n_tiles = tiles_of(q0);
                if (round > 0)
                    bar_wait(q_free, (round - 1) & 1);
                bar_expect_tx(q_ready, BR * HD * 2);
                tma_load(sQ, &mapQ, q_ready, 0, q0, bh);
                tma_load(sQ + BR * 64, &mapQ, q_ready, 64, q0, bh);
                for (int t = 0; t < n_tiles; ++t, ++g) {
                    const int s = g % STAGES;
                    if (g >= STAGES)
                        bar_wait(&empty[s], ((g / STAGES) - 1) & 1);
                    bar_expect_tx(&full_k[s], KV_TILE * 2);
                    tma_load(sK + s * KV_TILE, &mapK, &full_k[s], 0, t * BC, bh);
                    tma_load(sK + s * KV_TILE + BC * 64, &mapK, &full_k[s], 64, t * BC, bh);
                    bar_expect_tx(&full_v[s], KV_TILE * 2);
                    tma_load(sV + s * KV_TILE, &mapV, &full_v[s], 0, t * BC, bh);
                    tma_load(sV + s * KV_TILE + BC * 64, &mapV, &full_v[s], 64, t * BC, bh);
                }
            }
        }
        return;
    }
#if CONSUMERS == 2
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
#endif

    const int consumer = wg - 1;
    const int t128 = threadIdx.x % 128, warp = t128 / 32, lane = t128 % 32;
    const int c0 = 2 * (lane % 4);  // this thread's columns of the accumulators: 8j + c0 and the next
    const __nv_bfloat16* q_tile = sQ + consumer * 64 * 64;
    Rows r;
    float correction[2];
    int g0 = 0, round = 0;
    for (int item = blockIdx.x; item < n_items; item += gridDim.x, ++round) {
        int q_block, bh;
        item_coords(item, n_qblocks, n_heads, &q_block, &bh);
        const int q0 = q_block * BR, n_tiles = tiles_of(q0);
        // This thread's rows: row0 and row0 + 8.
        const int row0 = q0 + consumer * 64 + warp * 16 + lane / 4;
        const int wg_first = q0 + consumer * 64, wg_last = wg_first + 63;
        // The tiles this warpgroup needs: causal rows see no key past their own.
        const int n_mine = CAUSAL ? min(n_tiles, wg_last / BC + 1) : n_tiles;
        const auto stage = [&](int t) { return (g0 + t) % STAGES; };
        const auto phase = [&](int t) { return (unsigned)((g0 + t) / STAGES) & 1; };
        const auto needs_mask = [&](int k0) { return k0 + BC > S || (CAUSAL && k0 + BC - 1 > wg_first); };
        // Once the last scores are in, the producer may load the next item's Q.
        const auto q_done = [&]() {
            if (t128 == 0)
                bar_arrive(q_free);
        };
#pragma unroll
        for (int i = 0; i < HD / 2; ++i)
            r.o[i] = 0.0f;
        r.row_max[0] = r.row_max[1] = NEG_INF;
        r.row_sum[0] = r.row_sum[1] = 0.0f;

        bar_wait(q_ready, round & 1);
#if SCHEDULE == 1
        // The scores of tile t are computed while P V of tile t - 1 runs on the tensor cores.
        bar_wait(&full_k[stage(0)], phase(0));
        issue_qk(r, q_tile, sK + stage(0) * KV_TILE);
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        pin<BC / 2>(r.sc);
        if (n_mine == 1)
            q_done();
        softmax(r, 0, row0, c0, S, needs_mask(0), correction);
        pack(r);
        for (int t = 1; t < n_mine; ++t) {
            const int s = stage(t), prev = stage(t - 1);
            bar_wait(&full_k[s], phase(t));
            issue_qk(r, q_tile, sK + s * KV_TILE);
            bar_wait(&full_v[prev], phase(t - 1));
            issue_pv(r, sV + prev * KV_TILE);
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            pin<BC / 2>(r.sc);
            if (t == n_mine - 1)
                q_done();
            softmax(r, t * BC, row0, c0, S, needs_mask(t * BC), correction);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            pin<HD / 2>(r.o);
            pin<BC / 4>(&r.p[0][0]);
            if (t128 == 0)
                bar_arrive(&empty[prev]);
            rescale(r, correction);
            pack(r);
        }
        {
            const int last = stage(n_mine - 1);
            bar_wait(&full_v[last], phase(n_mine - 1));
            issue_pv(r, sV + last * KV_TILE);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            pin<HD / 2>(r.o);
            pin<BC / 4>(&r.p[0][0]);
            if (t128 == 0)
                bar_arrive(&empty[last]);
        }
#else
        for (int t = 0; t < n_mine; ++t) {
            const int s = stage(t);
            bar_wait(&full_k[s], phase(t));
            issue_qk(r, q_tile, sK + s * KV_TILE);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            pin<BC / 2>(r.sc);
            if (t == n_mine - 1)
                q_done();
            softmax(r, t * BC, row0, c0, S, needs_mask(t * BC), correction);
            rescale(r, correction);
            pack(r);
            bar_wait(&full_v[s], phase(t));
            issue_pv(r, sV + s * KV_TILE);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            pin<HD / 2>(r.o);
            pin<BC / 4>(&r.p[0][0]);
            if (t128 == 0)
                bar_arrive(&empty[s]);
        }
#endif
        // The producer waits for every consumer on every tile, also those past this warpgroup's rows.
        if (t128 == 0)
            for (int t = n_mine; t < n_tiles; ++t)
                bar_arrive(&empty[stage(t)]);
        g0 += n_tiles;

        // The row sums are spread over the four lanes that share a row.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            r.row_sum[h] += __shfl_xor_sync(0xffffffffu, r.row_sum[h], 1);
            r.row_sum[h] += __shfl_xor_sync(0xffffffffu, r.row_sum[h], 2);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h;
            if (row >= S)
                continue;
            const float inv = 1.0f / r.row_sum[h];
            __nv_bfloat16* out = O + ((size_t)bh * S + row) * HD + c0;
#pragma unroll
            for (int j = 0; j < HD / 8; ++j)
                *reinterpret_cast<unsigned*>(out + 8 * j) =
                    pack_bf16(r.o[4 * j + 2 * h] * inv, r.o[4 * j + 2 * h + 1] * inv);
        }
    }
}
