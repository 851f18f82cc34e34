// A block covers BX * VEC consecutive columns of one batch and splits the R rows among RS thread rows; each thread
// keeps UNROLL row loads in flight (VEC-float vectors when C % VEC == 0, which keeps every row aligned; VEC single
// floats otherwise), then the RS partial sums of a column meet in shared memory.
// @kerncast launch mean_reduce_family grid(ceil_div(C, BX * VEC), B) block(BX, RS) args(x, y, B, R, C)
// @kerncast tunable BX 32 64 128 256
// @kerncast tunable RS 1 2 4 8 16 where BX * RS >= 64 && BX * RS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable UNROLL 1 4

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

extern "C" __global__ void __launch_bounds__(BX * RS) mean_reduce_family(const float* __restrict__ x,
                                                                        float* __restrict__ y, int B, int R, int C) {
    __shared__ float part[RS][BX * VEC];
    const int c0 = (blockIdx.x * BX + threadIdx.x) * VEC;
    const int b = blockIdx.y;
    const float* base = x + (size_t)b * R * C;
    float acc[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc[e] = 0.0f;
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
                    for (int e = 0; e < VEC; ++e) acc[e] += t[u].v[e];
            }
#pragma unroll 1
            for (; r < R; r += RS) {
                const Vec t = *reinterpret_cast<const Vec*>(base + (size_t)r * C + c0);
#pragma unroll
                for (int e = 0; e < VEC; ++e) acc[e] += t.v[e];
            }
        } else {
#pragma unroll 1
            for (int r = threadIdx.y; r < R; r += RS)
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    if (c0 + e < C) acc[e] += base[(size_t)r * C + c0 + e];
        }
    }
#if RS > 1
#pragma unroll
    for (int e = 0; e < VEC; ++e) part[threadIdx.y][threadIdx.x * VEC + e] = acc[e];
    __syncthreads();
    if (threadIdx.y != 0) return;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < RS; ++k) s += part[k][threadIdx.x * VEC + e];
        acc[e] = s;
    }
#endif
    const float inv = 1.0f / R;
#pragma unroll
    for (int e = 0; e < VEC; ++e)
        if (c0 + e < C) y[(size_t)b * C + c0 + e] = acc[e] * inv;
}
