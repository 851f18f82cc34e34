// No shared memory: a thread makes 4 consecutive output rows of one column for 4 output channels, walking the 6
// input rows it needs once per input channel (3 values each, through the read-only cache) and reading the 4
// channels' 9 weights as broadcasts.
// @kerncast launch conv2d_r4k4 grid(ceil_div(W - 2, 64), ceil_div(H - 2, 16), B * ceil_div(Cout, 4)) block(64, 4) args(x, w, y, B, Cin, Cout, H, W)

extern "C" __global__ void __launch_bounds__(256) conv2d_r4k4(const float* __restrict__ x, const float* __restrict__ w,
                                                             float* __restrict__ y, int B, int Cin, int Cout, int H,
                                                             int W) {
    const int Ho = H - 2, Wo = W - 2;
    const int kt = (Cout + 3) / 4;
    const int n = blockIdx.z / kt, k0 = (blockIdx.z % kt) * 4;
    const int j = blockIdx.x * 64 + threadIdx.x;
    const int i0 = (blockIdx.y * 4 + threadIdx.y) * 4;
    if (j >= Wo || i0 >= Ho) return;
    float acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[r][k] = 0.0f;
    for (int c = 0; c < Cin; ++c) {
        const float* p = x + (((size_t)n * Cin + c) * H + i0) * W + j;
        float v[6][3];
#pragma unroll
        for (int r = 0; r < 6; ++r)
#pragma unroll
            for (int b = 0; b < 3; ++b) v[r][b] = (i0 + r < H) ? __ldg(p + (size_t)r * W + b) : 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (k0 + k >= Cout) break;
            const float* f = w + ((size_t)(k0 + k) * Cin + c) * 9;
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int b = 0; b < 3; ++b) {
                    const float fw = __ldg(f + a * 3 + b);
#pragma unroll
                    for (int r = 0; r < 4; ++r) acc[r][k] = fmaf(fw, v[r + a][b], acc[r][k]);
                }
        }
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        if (i0 + r >= Ho) break;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k0 + k < Cout) y[(((size_t)n * Cout + k0 + k) * Ho + i0 + r) * Wo + j] = acc[r][k];
    }
}
