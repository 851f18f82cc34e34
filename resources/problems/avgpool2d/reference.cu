// One thread per output element, the sum of its 3 x 3 window divided by 9.
// @kerncast launch avgpool2d grid(ceil_div((W - 3) / 3 + 1, 16), ceil_div((H - 3) / 3 + 1, 16), B * C) block(16, 16) args(x, y, B, C, H, W)

extern "C" __global__ void avgpool2d(const float* x, float* y, int B, int C, int H, int W) {
    const int Ho = (H - 3) / 3 + 1, Wo = (W - 3) / 3 + 1;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= Ho || j >= Wo) return;
    const float* p = x + (size_t)blockIdx.z * H * W;
    float s = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) s += p[(size_t)(3 * i + dy) * W + 3 * j + dx];
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = s / 9.0f;
}
