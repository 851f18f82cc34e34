// One thread per output element: the plain triple loop over input channels and the 3 x 3 window. A warp shares
// its output channel (the weights are broadcast) and reads consecutive input columns.
// @kerncast launch conv2d grid(ceil_div(W - 2, 32), ceil_div(H - 2, 8), B * Cout) block(32, 8) args(x, w, y, B, Cin, Cout, H, W)

extern "C" __global__ void conv2d(const float* x, const float* w, float* y, int B, int Cin, int Cout, int H, int W) {
    const int Ho = H - 2, Wo = W - 2;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= Ho || j >= Wo) return;
    const int n = blockIdx.z / Cout, k = blockIdx.z % Cout;
    float s = 0.0f;
    for (int c = 0; c < Cin; ++c) {
        const float* p = x + ((size_t)n * Cin + c) * H * W + (size_t)i * W + j;
        const float* f = w + ((size_t)k * Cin + c) * 9;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) s += f[a * 3 + b] * p[(size_t)a * W + b];
    }
    y[((size_t)n * Cout + k) * Ho * Wo + (size_t)i * Wo + j] = s;
}
