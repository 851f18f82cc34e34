// Blocks along y are the B * C planes: each block folds its channel's statistics and affine parameters into one
// scale and shift, then covers a tile of BLOCK * ITEMS vectors of VEC floats of the plane along x, all loads issued
// before the first use. Vector accesses need every plane aligned (H * W % VEC == 0); otherwise, and for the partial
// tile at a plane's end, one float at a time.
// @kerncast launch batchnorm_family grid(ceil_div(H * W, BLOCK * VEC * ITEMS), B * C) block(BLOCK) args(x, mean, var, w, b, y, eps, B, C, H, W)
// @kerncast tunable BLOCK 64 128 256 512 1024
// @kerncast tunable VEC 1 2 4
// @kerncast tunable ITEMS 1 2 4 8 16 where VEC * ITEMS <= 16

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

extern "C" __global__ void __launch_bounds__(BLOCK) batchnorm_family(
    const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ var,
    const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, float eps, int B, int C, int H,
    int W) {
    const int plane = blockIdx.y;
    const int c = plane % C;
    const float scale = w[c] * rsqrtf(var[c] + eps);
    const float shift = b[c] - mean[c] * scale;
    const int hw = H * W;
    const float* xp = x + (size_t)plane * hw;
    float* yp = y + (size_t)plane * hw;
    constexpr int TILE = BLOCK * VEC * ITEMS;
    const int tile = blockIdx.x * TILE;
    if (hw % VEC == 0 && tile + TILE <= hw) {
        const Vec* xv = reinterpret_cast<const Vec*>(xp + tile);
        Vec* yv = reinterpret_cast<Vec*>(yp + tile);
        Vec t[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) t[k] = xv[k * BLOCK + threadIdx.x];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
#pragma unroll
            for (int e = 0; e < VEC; ++e) t[k].v[e] = fmaf(t[k].v[e], scale, shift);
            yv[k * BLOCK + threadIdx.x] = t[k];
        }
    } else {
        const int end = min(tile + TILE, hw);
        for (int i = tile + threadIdx.x; i < end; i += BLOCK) yp[i] = fmaf(xp[i], scale, shift);
    }
}
