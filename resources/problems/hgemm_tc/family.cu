// Hopper GEMM: TMA copies into a STAGES-deep ring of shared memory, warpgroup MMA (wgmma m64nBNk16, f16 inputs, f32
// accumulators) by CONSUMERS warpgroups while one producer warpgroup keeps the ring full (warp specialisation; the
// producer hands its registers to the consumers with setmaxnreg). A block computes a BM x BN tile of C,
// BM = CONSUMERS * MI * 64, each consumer owning MI x 64 rows; tiles are visited in groups of 8 block-rows so that
// neighbouring blocks share A and B in L2. A is read K-major, B (row-major K x N) N-major with wgmma's transpose, both
// through 128-byte-swizzled tiles 64 halves of K deep. The copy engine zero-fills what lies past M, N and K, but it
// needs 16-byte row strides: when K or N is not a multiple of 8, a first launch pads A and B into scratch buffers with
// such rows, and the product reads those instead.
// @kerncast target sm_90a
// @kerncast scratch Ap f16 (max(1, min(1, K % 8 + N % 8) * M * ceil_div(K, 8) * 8))
// @kerncast scratch Bp f16 (max(1, min(1, K % 8 + N % 8) * K * ceil_div(N, 8) * 8))
// @kerncast launch hgemm_pad grid(ceil_div(M * ceil_div(K, 8) * 8 + K * ceil_div(N, 8) * 8, 256)) block(256) when(K % 8 != 0 || N % 8 != 0) args(A, B, Ap, Bp, M, N, K)
// @kerncast launch hgemm_wgmma grid(ceil_div(N, BN) * ceil_div(M, CONSUMERS * MI * 64)) block(128 * (CONSUMERS + 1)) smem(STAGES * (CONSUMERS * MI * 64 + BN) * 128 + 1280) when(K % 8 == 0 && N % 8 == 0) args(tensormap(A, shape(K, M), box(64, CONSUMERS * MI * 64), swizzle(128)), tensormap(B, shape(N, K), box(64, 64), swizzle(128)), C, M, N, K)
// @kerncast launch hgemm_wgmma grid(ceil_div(N, BN) * ceil_div(M, CONSUMERS * MI * 64)) block(128 * (CONSUMERS + 1)) smem(STAGES * (CONSUMERS * MI * 64 + BN) * 128 + 1280) when(K % 8 != 0 || N % 8 != 0) args(tensormap(Ap, shape(ceil_div(K, 8) * 8, M), box(64, CONSUMERS * MI * 64), swizzle(128)), tensormap(Bp, shape(ceil_div(N, 8) * 8, K), box(64, 64), swizzle(128)), C, M, N, K)
// @kerncast tunable CONSUMERS 1 2
// @kerncast tunable MI 1 2
// @kerncast tunable BN 64 128 256 where MI * BN <= 256
// @kerncast tunable STAGES 2 3 4 5 6 where STAGES * (CONSUMERS * MI * 64 + BN) * 128 + 1280 <= 232448

#include <cuda_fp16.h>

#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef MI
#define MI 1
#endif
#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif

#define BM (CONSUMERS * MI * 64)
#define TRANS_B 1  // B is N-major
#define BK 64
#define A_TILE (BM * BK)  // halves per stage
#define B_TILE (BN * BK)
#define THREADS (128 * (CONSUMERS + 1))

struct __align__(64) TensorMap { unsigned long long opaque[16]; };

// Copies A into Ap (M x Kp) and B into Bp (K x Np), Kp and Np the sizes rounded up to 8, zeros in the padding.
extern "C" __global__ void __launch_bounds__(256) hgemm_pad(const __half* __restrict__ A, const __half* __restrict__ B,
                                                            __half* __restrict__ Ap, __half* __restrict__ Bp, int M,
                                                            int N, int K)
{
    const size_t Kp = (K + 7) / 8 * 8, Np = (N + 7) / 8 * 8;
    const size_t a_count = (size_t)M * Kp, count = a_count + (size_t)K * Np;
    const __half zero = __float2half(0.0f);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        if (i < a_count) {
            const size_t row = i / Kp, k = i % Kp;
            Ap[i] = k < (size_t)K ? A[row * K + k] : zero;
        } else {
            const size_t j = i - a_count, k = j / Np, n = j % Np;
            Bp[j] = n < (size_t)N ? B[k * N + n] : zero;
        }
    }
}

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
__device__ __forceinline__ void tma_load(void* dst, const TensorMap* map, unsigned long long* bar, int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(smem_u32(bar))
                 : "memory");
}

// A shared-memory matrix descriptor for the K-major A tile in the 128-byte swizzle: rows of 128 bytes, 8-row groups
// 1024 bytes apart.
__device__ __forceinline__ unsigned long long smem_desc(const __half* p)
{
    const unsigned long long addr = smem_u32(p);
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// The same for the N-major B tile: 64-column slabs of 64 rows (8 KiB) side by side along N, 8-row groups 1024 bytes
// apart along K.
__device__ __forceinline__ unsigned long long smem_desc_mn(const __half* p)
{
    const unsigned long long addr = smem_u32(p);
    return ((addr & 0x3FFFF) >> 4) | ((8192ull >> 4) << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_n64(float* d, unsigned long long a, unsigned long long b)
{
    asm volatile(
        "{\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, 1, 1, 1, 0, %34;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "n"(TRANS_B));
}

__device__ __forceinline__ void wgmma_n128(float* d, unsigned long long a, unsigned long long b)
{
    asm volatile(
        "{\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, 1, 1, 1, 0, %66;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "n"(TRANS_B));
}

__device__ __forceinline__ void wgmma_n256(float* d, unsigned long long a, unsigned long long b)
{
    asm volatile(
        "{\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, 1, 1, 1, 0, %130;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "n"(TRANS_B));
}


__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long a, unsigned long long b)
{
#if BN == 64
    wgmma_n64(d, a, b);
#elif BN == 128
    wgmma_n128(d, a, b);
#else
    wgmma_n256(d, a, b);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
hgemm_wgmma(const __grid_constant__ TensorMap mapA, const __grid_constant__ TensorMap mapB, float* __restrict__ C, int M,
            int N, int K)
{
    extern __shared__ unsigned char smem_raw[];
    // The swizzled tiles want 1024-byte alignment, more than dynamic shared memory promises.
    unsigned char* base = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    __half* sA = reinterpret_cast<__half*>(base);
    __half* sB = sA + STAGES * A_TILE;
    unsigned long long* full = reinterpret_cast<unsigned long long*>(sB + STAGES * B_TILE);
    unsigned long long* empty = full + STAGES;

    const int k_tiles = (K + BK - 1) / BK;
    // Grouped order: 8 block-rows at a time sweep the block-columns.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int group = 8 * tiles_n, first_m = (blockIdx.x / group) * 8;
    const int group_m = min(tiles_m - first_m, 8);
    const int tile_m = first_m + (blockIdx.x % group) % group_m, tile_n = (blockIdx.x % group) / group_m;
    const int m0 = tile_m * BM, n0 = tile_n * BN;

    const int wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], CONSUMERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
#if CONSUMERS == 2
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
#endif
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES)
                    bar_wait(&empty[s], ((kt / STAGES) - 1) & 1);
                bar_expect_tx(&full[s], (A_TILE + B_TILE) * 2);
                tma_load(sA + s * A_TILE, &mapA, &full[s], kt * BK, m0);
                for (int j = 0; j < BN / 64; ++j)
                    tma_load(sB + s * B_TILE + j * 64 * BK, &mapB, &full[s], n0 + 64 * j, kt * BK);
            }
        }
        return;
    }
#if CONSUMERS == 2
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
#endif
    const int consumer = wg - 1;
    float acc[MI][BN / 2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j)
            acc[mi][j] = 0.0f;

    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        bar_wait(&full[s], (kt / STAGES) & 1);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            const __half* a = sA + s * A_TILE + (consumer * MI + mi) * 64 * BK;
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk)
                wgmma_tile(acc[mi], smem_desc(a + kk * 16), smem_desc_mn(sB + s * B_TILE + kk * 16 * 64));
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // Keep this stage's products in flight; the previous stage's are done once at most one group is pending.
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        if (kt > 0 && threadIdx.x % 128 == 0)
            bar_arrive(&empty[(kt - 1) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    // The accumulator layout of m64nN: warp w of the warpgroup holds rows 16w..16w+15; lane l holds rows l/4 and
    // l/4 + 8 of them, columns 8j + 2(l%4) and the next.
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const bool pairs = (N % 2) == 0;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
        const int row_base = m0 + (consumer * MI + mi) * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const int col = n0 + 8 * j + 2 * (lane % 4);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row_base + 8 * h;
                if (row >= M)
                    continue;
                float* out = C + (size_t)row * N + col;
                const float v0 = acc[mi][4 * j + 2 * h], v1 = acc[mi][4 * j + 2 * h + 1];
                if (pairs && col + 1 < N) {
                    *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
                } else {
                    if (col < N)
                        out[0] = v0;
                    if (col + 1 < N)
                        out[1] = v1;
                }
            }
        }
    }
}
