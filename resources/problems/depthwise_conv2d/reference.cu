// One thread per output element, the 3 x 3 window of its channel.
// @kerncast launch depthwise_conv2d grid(ceil_div(W - 2, 16), ceil_div(H - 2, 16), B * C) block(16, 16) args(x, w, y, B, C, H, W)

extern "C" __global__ void depthwise_conv2d(const float* x, const float* w, float* y, int B, int C, int H, int W) {
    const int Ho = H - 2, Wo = W - 2;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= Ho || j >= Wo) return;
    const int c = blockIdx.z % C;
    const float* p = x + (size_t)blockIdx.z * H * W;
    float s = 0.0f;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) s += w[c * 9 + a * 3 + b] * p[(size_t)(i + a) * W + j + b];
    y[(size_t)blockIdx.z * Ho * Wo + (size_t)i * Wo + j] = s;
}
