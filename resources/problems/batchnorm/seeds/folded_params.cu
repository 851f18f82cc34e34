// Two launches: the first folds each channel's statistics and affine parameters into a scale and a shift (a
// scratch buffer of 2 * C floats), the second applies them with float4 accesses over a 2-D grid of (plane tile,
// plane), two float4 per thread.
// @kerncast scratch folded f32 (2 * C)
// @kerncast launch batchnorm_fold grid(ceil_div(C, 64)) block(64) args(mean, var, w, b, folded, eps, C)
// @kerncast launch batchnorm_apply grid(ceil_div(H * W, 2048), B * C) block(256) args(x, folded, y, C, H, W)

extern "C" __global__ void batchnorm_fold(const float* __restrict__ mean, const float* __restrict__ var,
                                          const float* __restrict__ w, const float* __restrict__ b,
                                          float* __restrict__ folded, float eps, int C) {
    const int c = blockIdx.x * 64 + threadIdx.x;
    if (c >= C) return;
    const float scale = w[c] / sqrtf(var[c] + eps);
    folded[2 * c] = scale;
    folded[2 * c + 1] = b[c] - mean[c] * scale;
}

extern "C" __global__ void __launch_bounds__(256) batchnorm_apply(const float* __restrict__ x,
                                                                 const float* __restrict__ folded,
                                                                 float* __restrict__ y, int C, int H, int W) {
    const int plane = blockIdx.y;
    const int c = plane % C;
    const float scale = folded[2 * c], shift = folded[2 * c + 1];
    const int hw = H * W;
    const float* xp = x + (size_t)plane * hw;
    float* yp = y + (size_t)plane * hw;
    const int tile = blockIdx.x * 2048;
    if ((hw & 3) == 0 && tile + 2048 <= hw) {
        const float4* xv = reinterpret_cast<const float4*>(xp + tile);
        float4* yv = reinterpret_cast<float4*>(yp + tile);
        float4 a = xv[threadIdx.x], p = xv[256 + threadIdx.x];
        a.x = fmaf(a.x, scale, shift); a.y = fmaf(a.y, scale, shift); a.z = fmaf(a.z, scale, shift); a.w = fmaf(a.w, scale, shift);
        p.x = fmaf(p.x, scale, shift); p.y = fmaf(p.y, scale, shift); p.z = fmaf(p.z, scale, shift); p.w = fmaf(p.w, scale, shift);
        yv[threadIdx.x] = a;
        yv[256 + threadIdx.x] = p;
    } else {
        const int end = min(tile + 2048, hw);
        for (int i = tile + threadIdx.x; i < end; i += 256) yp[i] = fmaf(xp[i], scale, shift);
    }
}
