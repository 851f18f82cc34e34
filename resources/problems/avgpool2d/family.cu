// Blocks of BX x BY threads over one plane (grid z); a thread computes XT consecutive outputs of RY consecutive
// output rows, reading 3 * XT consecutive floats of each of the 3 input rows per output row (the warp's reads are
// contiguous), all loads of an output row issued before the sums.
// @kerncast launch avgpool2d_family grid(ceil_div((W - 3) / 3 + 1, BX * XT), ceil_div((H - 3) / 3 + 1, BY * RY), B * C) block(BX, BY) args(x, y, B, C, H, W)
// @kerncast tunable BX 16 32 64 128
// @kerncast tunable BY 1 2 4 8 where BX * BY >= 64 && BX * BY <= 512
// @kerncast tunable XT 1 2 4
// @kerncast tunable RY 1 2

extern "C" __global__ void __launch_bounds__(BX * BY) avgpool2d_family(const float* __restrict__ x,
                                                                      float* __restrict__ y, int B, int C, int H,
                                                                      int W) {
    const int Ho = (H - 3) / 3 + 1, Wo = (W - 3) / 3 + 1;
    const int j0 = (blockIdx.x * BX + threadIdx.x) * XT;
    const int i0 = (blockIdx.y * BY + threadIdx.y) * RY;
    if (j0 >= Wo || i0 >= Ho) return;
    const float* p = x + (size_t)blockIdx.z * H * W;
    float* q = y + (size_t)blockIdx.z * Ho * Wo;
    const int nt = min(XT, Wo - j0);
#pragma unroll
    for (int ry = 0; ry < RY; ++ry) {
        const int i = i0 + ry;
        if (i >= Ho) break;
        float v[3][3 * XT];
#pragma unroll
        for (int dy = 0; dy < 3; ++dy) {
            const float* row = p + (size_t)(3 * i + dy) * W + 3 * j0;
#pragma unroll
            for (int k = 0; k < 3 * XT; ++k) v[dy][k] = k < 3 * nt ? __ldg(row + k) : 0.0f;
        }
#pragma unroll
        for (int t = 0; t < XT; ++t) {
            if (t >= nt) break;
            float s = 0.0f;
#pragma unroll
            for (int dy = 0; dy < 3; ++dy) s += (v[dy][3 * t] + v[dy][3 * t + 1]) + v[dy][3 * t + 2];
            q[(size_t)i * Wo + j0 + t] = s * (1.0f / 9.0f);
        }
    }
}
