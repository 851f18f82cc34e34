// One thread per output column of a 16-row strip: it slides down the strip keeping the last three input rows'
// three values in registers, so each input value is loaded once by each of the three threads that need it (the
// neighbouring columns), and the loads of a warp are consecutive.
// @kerncast launch depthwise_strip grid(ceil_div(W - 2, 128), ceil_div(H - 2, 16), B * C) block(128) args(x, w, y, B, C, H, W)

extern "C" __global__ void __launch_bounds__(128) depthwise_strip(const float* __restrict__ x,
                                                                 const float* __restrict__ w, float* __restrict__ y,
                                                                 int B, int C, int H, int W) {
    const int Ho = H - 2, Wo = W - 2;
    const int j = blockIdx.x * 128 + threadIdx.x;
    if (j >= Wo) return;
    const int i0 = blockIdx.y * 16;
    float k[9];
#pragma unroll
    for (int t = 0; t < 9; ++t) k[t] = __ldg(w + (blockIdx.z % C) * 9 + t);
    const float* p = x + (size_t)blockIdx.z * H * W + j;
    float* q = y + (size_t)blockIdx.z * Ho * Wo + j;
    float a0 = p[(size_t)i0 * W], a1 = p[(size_t)i0 * W + 1], a2 = p[(size_t)i0 * W + 2];
    float b0 = p[(size_t)(i0 + 1) * W], b1 = p[(size_t)(i0 + 1) * W + 1], b2 = p[(size_t)(i0 + 1) * W + 2];
    const int i1 = min(i0 + 16, Ho);
    for (int i = i0; i < i1; ++i) {
        const float* r = p + (size_t)(i + 2) * W;
        const float c0 = r[0], c1 = r[1], c2 = r[2];
        float s = k[0] * a0 + k[1] * a1 + k[2] * a2;
        s = fmaf(k[3], b0, fmaf(k[4], b1, fmaf(k[5], b2, s)));
        s = fmaf(k[6], c0, fmaf(k[7], c1, fmaf(k[8], c2, s)));
        q[(size_t)i * Wo] = s;
        a0 = b0; a1 = b1; a2 = b2;
        b0 = c0; b1 = c1; b2 = c2;
    }
}
