// A fixed grid (8 blocks of 256 per SM on a 132-SM H100) walks the output as one flat array; each output finds
// its plane, row and column with divisions and sums its window.
// @kerncast launch avgpool2d_flat grid(1056) block(256) args(x, y, B, C, H, W)

extern "C" __global__ void avgpool2d_flat(const float* __restrict__ x, float* __restrict__ y, int B, int C, int H,
                                          int W) {
    const int Ho = (H - 3) / 3 + 1, Wo = (W - 3) / 3 + 1;
    const size_t n = (size_t)B * C * Ho * Wo;
    for (size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (size_t)gridDim.x * blockDim.x) {
        const int j = (int)(o % Wo);
        const int i = (int)((o / Wo) % Ho);
        const float* p = x + (o / ((size_t)Ho * Wo)) * H * W + (size_t)(3 * i) * W + 3 * j;
        float s = 0.0f;
        for (int dy = 0; dy < 3; ++dy) s += p[(size_t)dy * W] + p[(size_t)dy * W + 1] + p[(size_t)dy * W + 2];
        y[o] = s * (1.0f / 9.0f);
    }
}
