// A fixed grid (8 blocks of 256 per SM on a 132-SM H100) walks the output as one flat array; each output finds
// its plane, row and column with divisions and takes its clipped window.
// @kerncast launch maxpool2d_flat grid(1056) block(256) args(x, y, B, C, H, W)

#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void maxpool2d_flat(const float* __restrict__ x, float* __restrict__ y, int B, int C, int H,
                                          int W) {
    const int Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1;
    const size_t n = (size_t)B * C * Ho * Wo;
    for (size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (size_t)gridDim.x * blockDim.x) {
        const int j = (int)(o % Wo);
        const int i = (int)((o / Wo) % Ho);
        const size_t plane = o / ((size_t)Ho * Wo);
        const float* p = x + plane * H * W;
        float m = NEG_INF;
        for (int r = max(2 * i - 1, 0); r <= min(2 * i + 1, H - 1); ++r)
            for (int c = max(2 * j - 1, 0); c <= min(2 * j + 1, W - 1); ++c) m = fmaxf(m, p[(size_t)r * W + c]);
        y[o] = m;
    }
}
