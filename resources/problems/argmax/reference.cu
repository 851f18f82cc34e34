// One thread per output column (b, c), a plain loop down the R rows keeping the first maximum; a warp reads
// consecutive columns.
// @kerncast launch argmax grid(ceil_div(C, 128), B) block(128) args(x, y, B, R, C)

extern "C" __global__ void argmax(const float* x, int* y, int B, int R, int C) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (c >= C) return;
    const float* p = x + (size_t)b * R * C + c;
    float best = p[0];
    int at = 0;
    for (int r = 1; r < R; ++r) {
        const float v = p[(size_t)r * C];
        if (v > best) {
            best = v;
            at = r;
        }
    }
    y[(size_t)b * C + c] = at;
}
