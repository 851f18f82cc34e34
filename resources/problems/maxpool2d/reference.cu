// One thread per output element, the 3 x 3 window clipped to the plane.
// @kerncast launch maxpool2d grid(ceil_div((W - 1) / 2 + 1, 16), ceil_div((H - 1) / 2 + 1, 16), B * C) block(16, 16) args(x, y, B, C, H, W)

#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void maxpool2d(const float* x, float* y, int B, int C, int H, int W) {
    const int Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= Ho || j >= Wo) return;
    const float* p = x + (size_t)blockIdx.z * H * W;
    float m = NEG_INF;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const int r = 2 * i + dy, c = 2 * j + dx;
            if (r >= 0 && r < H && c >= 0 && c < W) m = fmaxf(m, p[(size_t)r * W + c]);
        }
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = m;
}
