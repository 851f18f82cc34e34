// Separable: the first launch sums every three consecutive input rows (those of one output row) into a scratch
// row of W floats, one thread per column; the second sums three consecutive columns of that and divides by 9.
// @kerncast scratch rows f32 (B * C * ((H - 3) / 3 + 1) * W)
// @kerncast launch avgpool2d_vsum grid(ceil_div(B * C * ((H - 3) / 3 + 1) * W, 256)) block(256) args(x, rows, B, C, H, W)
// @kerncast launch avgpool2d_hsum grid(ceil_div(B * C * ((H - 3) / 3 + 1) * ((W - 3) / 3 + 1), 256)) block(256) args(rows, y, B, C, H, W)

extern "C" __global__ void avgpool2d_vsum(const float* __restrict__ x, float* __restrict__ rows, int B, int C, int H,
                                          int W) {
    const int Ho = (H - 3) / 3 + 1;
    const size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (size_t)B * C * Ho * W) return;
    const int c = (int)(o % W);
    const int i = (int)((o / W) % Ho);
    const float* p = x + (o / ((size_t)Ho * W)) * H * W + (size_t)(3 * i) * W + c;
    rows[o] = p[0] + p[W] + p[2 * (size_t)W];
}

extern "C" __global__ void avgpool2d_hsum(const float* __restrict__ rows, float* __restrict__ y, int B, int C, int H,
                                          int W) {
    const int Ho = (H - 3) / 3 + 1, Wo = (W - 3) / 3 + 1;
    const size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (size_t)B * C * Ho * Wo) return;
    const int j = (int)(o % Wo);
    const float* p = rows + (o / Wo) * W + 3 * j;
    y[o] = (p[0] + p[1] + p[2]) * (1.0f / 9.0f);
}
