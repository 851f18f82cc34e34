// Each block covers a tile of BLOCK * ITEMS vectors of VEC floats, all loads issued before the first use; the one
// partial tile at the end goes element by element. The logistic uses the fast exponential and division (one
// MUFU.EX2 and one MUFU.RCP per element), accurate to a few ulp.
// @kerncast launch silu_family grid(ceil_div(N, BLOCK * VEC * ITEMS)) block(BLOCK) args(x, y, N)
// @kerncast tunable BLOCK 128 256 512 1024
// @kerncast tunable VEC 1 2 4
// @kerncast tunable ITEMS 1 2 4 8 16 where VEC * ITEMS <= 32

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

__device__ __forceinline__ float silu_one(float v) { return __fdividef(v, 1.0f + __expf(-v)); }

extern "C" __global__ void __launch_bounds__(BLOCK) silu_family(const float* __restrict__ x, float* __restrict__ y,
                                                               int N) {
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
            for (int e = 0; e < VEC; ++e) t[k].v[e] = silu_one(t[k].v[e]);
            yv[k * BLOCK + threadIdx.x] = t[k];
        }
    } else {
        for (size_t i = tile + threadIdx.x; i < (size_t)N; i += BLOCK) y[i] = silu_one(x[i]);
    }
}
