// A block covers BX * VEC consecutive columns of one batch and splits the R rows among RS thread rows (thread row k
// takes rows k, k + RS, ...); each thread keeps UNROLL row loads in flight (VEC-float vectors when C % VEC == 0,
// which keeps every row aligned; VEC single floats otherwise) and its first maximum per column, then the RS
// candidates of a column meet in shared memory (larger value wins, the smaller row on ties).
// @kerncast launch argmax_family grid(ceil_div(C, BX * VEC), B) block(BX, RS) args(x, y, B, R, C)
// @kerncast tunable BX 32 64 128 256
// @kerncast tunable RS 1 2 4 8 16 where BX * RS >= 64 && BX * RS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable UNROLL 1 4

#define NEG_INF __int_as_float(0xff800000)  // NVRTC has no INFINITY macro

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

// A thread sees its rows in increasing order, so a strictly larger value is the only reason to move.
__device__ __forceinline__ void take(float& best, int& at, float v, int r) {
    if (v > best) {
        best = v;
        at = r;
    }
}

extern "C" __global__ void __launch_bounds__(BX * RS) argmax_family(const float* __restrict__ x,
                                                                        int* __restrict__ y, int B, int R, int C) {
    __shared__ float pval[RS][BX * VEC];
    __shared__ int pidx[RS][BX * VEC];
    const int c0 = (blockIdx.x * BX + threadIdx.x) * VEC;
    const int b = blockIdx.y;
    const float* base = x + (size_t)b * R * C;
    float best[VEC];
    int at[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        best[e] = NEG_INF;
        at[e] = 0x7fffffff;
    }
    if (c0 < C) {
        if (C % VEC == 0) {
            int r = threadIdx.y;
#pragma unroll 1
            for (; r + (UNROLL - 1) * RS < R; r += UNROLL * RS) {
                Vec t[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u)
                    t[u] = *reinterpret_cast<const Vec*>(base + (size_t)(r + u * RS) * C + c0);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                    for (int e = 0; e < VEC; ++e) take(best[e], at[e], t[u].v[e], r + u * RS);
            }
#pragma unroll 1
            for (; r < R; r += RS) {
                const Vec t = *reinterpret_cast<const Vec*>(base + (size_t)r * C + c0);
#pragma unroll
                for (int e = 0; e < VEC; ++e) take(best[e], at[e], t.v[e], r);
            }
        } else {
#pragma unroll 1
            for (int r = threadIdx.y; r < R; r += RS)
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    if (c0 + e < C) take(best[e], at[e], base[(size_t)r * C + c0 + e], r);
        }
    }
#if RS > 1
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        pval[threadIdx.y][threadIdx.x * VEC + e] = best[e];
        pidx[threadIdx.y][threadIdx.x * VEC + e] = at[e];
    }
    __syncthreads();
    if (threadIdx.y != 0) return;
#pragma unroll
    for (int e = 0; e < VEC; ++e)
#pragma unroll
        for (int k = 1; k < RS; ++k) {
            const float v = pval[k][threadIdx.x * VEC + e];
            const int i = pidx[k][threadIdx.x * VEC + e];
            if (v > best[e] || (v == best[e] && i < at[e])) {
                best[e] = v;
                at[e] = i;
            }
        }
#endif
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        if (c0 + e < C) y[(size_t)b * C + c0 + e] = at[e];
}
