// One thread per output column (b, c), a plain loop down the R rows; a warp reads consecutive columns.
// @kerncast launch mean_reduce grid(ceil_div(C, 128), B) block(128) args(x, y, B, R, C)

extern "C" __global__ void mean_reduce(const float* x, float* y, int B, int R, int C) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (c >= C) return;
    const float* p = x + (size_t)b * R * C + c;
    float s = 0.0f;
    for (int r = 0; r < R; ++r) s += p[(size_t)r * C];
    y[(size_t)b * C + c] = s / R;
}
