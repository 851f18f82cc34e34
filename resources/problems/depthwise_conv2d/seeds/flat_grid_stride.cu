// A fixed grid (8 blocks of 256 per SM on a 132-SM H100) walks the output as one flat array; each output finds
// its plane, row and column with divisions and reads its 3 x 3 window (neighbours' reads meet in L1).
// @kerncast launch depthwise_flat grid(1056) block(256) args(x, w, y, B, C, H, W)

extern "C" __global__ void depthwise_flat(const float* __restrict__ x, const float* __restrict__ w,
                                          float* __restrict__ y, int B, int C, int H, int W) {
    const int Ho = H - 2, Wo = W - 2;
    const size_t n = (size_t)B * C * Ho * Wo;
    for (size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (size_t)gridDim.x * blockDim.x) {
        const int j = (int)(o % Wo);
        const int i = (int)((o / Wo) % Ho);
        const size_t plane = o / ((size_t)Ho * Wo);
        const float* k = w + (plane % C) * 9;
        const float* p = x + plane * H * W + (size_t)i * W + j;
        float s = 0.0f;
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b) s = fmaf(k[a * 3 + b], p[(size_t)a * W + b], s);
        y[o] = s;
    }
}
