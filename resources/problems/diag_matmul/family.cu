// Blocks of TX x TY threads: TY rows, each row's scale read once; a thread covers ITEMS vectors of VEC floats of its
// row, TX vectors apart (coalesced), all loads issued before the first use. Vector accesses need every row aligned
// (M % VEC == 0); otherwise, and at a row's end, single floats with bounds checks.
// @kerncast launch diag_matmul_family grid(ceil_div(M, TX * VEC * ITEMS), ceil_div(N, TY)) block(TX, TY) args(A, B, C, N, M)
// @kerncast tunable TX 32 64 128 256
// @kerncast tunable TY 1 2 4 8 where TX * TY >= 64 && TX * TY <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable ITEMS 1 4

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

extern "C" __global__ void __launch_bounds__(TX * TY) diag_matmul_family(const float* __restrict__ A,
                                                                        const float* __restrict__ B,
                                                                        float* __restrict__ C, int N, int M) {
    const int i = blockIdx.y * TY + threadIdx.y;
    if (i >= N) return;
    const float a = A[i];
    const float* br = B + (size_t)i * M;
    float* cr = C + (size_t)i * M;
    constexpr int TILE = TX * VEC * ITEMS;
    const int tile = blockIdx.x * TILE;
    if (M % VEC == 0 && tile + TILE <= M) {
        const Vec* bv = reinterpret_cast<const Vec*>(br + tile);
        Vec* cv = reinterpret_cast<Vec*>(cr + tile);
        Vec t[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) t[k] = bv[k * TX + threadIdx.x];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
#pragma unroll
            for (int e = 0; e < VEC; ++e) t[k].v[e] *= a;
            cv[k * TX + threadIdx.x] = t[k];
        }
    } else {
        const int end = min(tile + TILE, M);
        for (int j = tile + threadIdx.x; j < end; j += TX) cr[j] = a * br[j];
    }
}
