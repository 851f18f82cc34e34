// Separable: the first launch takes the horizontal maximum of three (stride 2) for every input row into a scratch
// buffer of B * C * H * Wo floats, the second the vertical maximum of three of those (stride 2). One thread per
// element in both.
// @kerncast scratch rows f32 (B * C * H * ((W - 1) / 2 + 1))
// @kerncast launch maxpool2d_rows grid(ceil_div(B * C * H * ((W - 1) / 2 + 1), 256)) block(256) args(x, rows, B, C, H, W)
// @kerncast launch maxpool2d_cols grid(ceil_div(B * C * ((H - 1) / 2 + 1) * ((W - 1) / 2 + 1), 256)) block(256) args(rows, y, B, C, H, W)

extern "C" __global__ void maxpool2d_rows(const float* __restrict__ x, float* __restrict__ rows, int B, int C, int H,
                                          int W) {
    const int Wo = (W - 1) / 2 + 1;
    const size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (size_t)B * C * H * Wo) return;
    const int j = (int)(o % Wo);
    const float* row = x + (o / Wo) * W;
    float m = row[2 * j];
    if (2 * j - 1 >= 0) m = fmaxf(m, row[2 * j - 1]);
    if (2 * j + 1 < W) m = fmaxf(m, row[2 * j + 1]);
    rows[o] = m;
}

extern "C" __global__ void maxpool2d_cols(const float* __restrict__ rows, float* __restrict__ y, int B, int C, int H,
                                          int W) {
    const int Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1;
    const size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (size_t)B * C * Ho * Wo) return;
    const int j = (int)(o % Wo);
    const int i = (int)((o / Wo) % Ho);
    const float* p = rows + (o / ((size_t)Ho * Wo)) * H * Wo + j;
    float m = p[(size_t)(2 * i) * Wo];
    if (2 * i - 1 >= 0) m = fmaxf(m, p[(size_t)(2 * i - 1) * Wo]);
    if (2 * i + 1 < H) m = fmaxf(m, p[(size_t)(2 * i + 1) * Wo]);
    y[o] = m;
}
