// One block of 256 threads per (batch, channel) plane: the scale and shift once per block, then a float4 loop over
// the plane (when H * W % 4 == 0; single floats otherwise).
// @kerncast launch batchnorm_plane grid(B * C) block(256) args(x, mean, var, w, b, y, eps, B, C, H, W)

extern "C" __global__ void __launch_bounds__(256) batchnorm_plane(const float* __restrict__ x,
                                                                 const float* __restrict__ mean,
                                                                 const float* __restrict__ var,
                                                                 const float* __restrict__ w,
                                                                 const float* __restrict__ b, float* __restrict__ y,
                                                                 float eps, int B, int C, int H, int W) {
    const int c = blockIdx.x % C;
    const float scale = w[c] * rsqrtf(var[c] + eps);
    const float shift = b[c] - mean[c] * scale;
    const int hw = H * W;
    const float* xp = x + (size_t)blockIdx.x * hw;
    float* yp = y + (size_t)blockIdx.x * hw;
    if ((hw & 3) == 0) {
        for (int v = threadIdx.x; v < hw / 4; v += 256) {
            float4 t = reinterpret_cast<const float4*>(xp)[v];
            t.x = fmaf(t.x, scale, shift);
            t.y = fmaf(t.y, scale, shift);
            t.z = fmaf(t.z, scale, shift);
            t.w = fmaf(t.w, scale, shift);
            reinterpret_cast<float4*>(yp)[v] = t;
        }
    } else {
        for (int i = threadIdx.x; i < hw; i += 256) yp[i] = fmaf(xp[i], scale, shift);
    }
}
