// Each block covers a tile of BLOCK * ITEMS vectors of VEC floats, all loads issued before the first use; the one
// partial tile at the end goes element by element. FAST = 1 writes softplus as max(x, 0) + log1p(exp(-|x|)) with
// the fast exponential (never overflows, one MUFU.EX2), FAST = 0 calls expf and log1pf as the reference does.
// @kerncast launch softplus_family grid(ceil_div(N, BLOCK * VEC * ITEMS)) block(BLOCK) args(x, y, N)
// @kerncast tunable BLOCK 128 256 512 1024
// @kerncast tunable VEC 1 2 4
// @kerncast tunable ITEMS 1 2 4 8 where VEC * ITEMS <= 16
// @kerncast tunable FAST 0 1 where FAST == 1 || BLOCK == 256

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

__device__ __forceinline__ float softplus_one(float v) {
#if FAST
    return v > 20.0f ? v : fmaxf(v, 0.0f) + log1pf(__expf(-fabsf(v)));
#else
    return v > 20.0f ? v : log1pf(expf(v));
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK) softplus_family(const float* __restrict__ x,
                                                                   float* __restrict__ y, int N) {
    constexpr int TILE = BLOCK * VEC * ITEMS;
    const size_t tile = (size_t)blockIdx.x * TILE;
    if (tile + TILE <= (size_t)N) {
        const Vec* xv = reinterpret_cast<const Vec*>(x + tile);
        Vec* yv = reinterpret_cast<Vec*>(y + tile);
        Vec t[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) t[k] = xv[k * BLOCK + threadIdx.x];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
#pragma unroll
            for (int e = 0; e < VEC; ++e) t[k].v[e] = softplus_one(t[k].v[e]);
            yv[k * BLOCK + threadIdx.x] = t[k];
        }
    } else {
        for (size_t i = tile + threadIdx.x; i < (size_t)N; i += BLOCK) y[i] = softplus_one(x[i]);
    }
}
