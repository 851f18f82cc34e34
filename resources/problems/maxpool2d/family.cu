// Blocks of BX x BY threads over one plane (grid z); a thread computes XT consecutive outputs of RY consecutive
// output rows. For each output row it takes the column maxima of the 3 input rows over its 2 * XT + 1 input
// columns once (neighbouring outputs share a column), then the outputs from those. Interior threads skip the
// bounds checks and, when W % (2 * XT) == 0, read the 2 * XT columns from 2 * j0 on as one aligned vector (plus the
// one before); outputs go out as one XT-float vector when (W - 1) / 2 + 1 is a multiple of XT.
// @kerncast launch maxpool2d_family grid(ceil_div((W - 1) / 2 + 1, BX * XT), ceil_div((H - 1) / 2 + 1, BY * RY), B * C) block(BX, BY) args(x, y, B, C, H, W)
// @kerncast tunable BX 16 32 64 128
// @kerncast tunable BY 1 2 4 8 where BX * BY >= 64 && BX * BY <= 512
// @kerncast tunable XT 1 2 4
// @kerncast tunable RY 1 2 4

#define NEG_INF __int_as_float(0xff800000)

struct __align__(2 * XT >= 4 ? 16 : 8) In {  // 2 * XT input columns
    float v[2 * XT];
};
struct __align__(XT >= 4 ? 16 : 4 * XT) Out {
    float v[XT];
};

extern "C" __global__ void __launch_bounds__(BX * BY) maxpool2d_family(const float* __restrict__ x,
                                                                      float* __restrict__ y, int B, int C, int H,
                                                                      int W) {
    const int Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1;
    const int j0 = (blockIdx.x * BX + threadIdx.x) * XT;
    const int i0 = (blockIdx.y * BY + threadIdx.y) * RY;
    if (j0 >= Wo || i0 >= Ho) return;
    const float* p = x + (size_t)blockIdx.z * H * W;
    float* q = y + (size_t)blockIdx.z * Ho * Wo;
    const int c0 = 2 * j0 - 1;  // first input column
    const bool inner_cols = c0 >= 0 && c0 + 2 * XT < W;
    const bool vec_cols = inner_cols && W % (2 * XT) == 0;  // row + 2 * j0 is then 8 * XT-byte aligned
    const bool vec_out = Wo % XT == 0;                        // and so is every output group
#pragma unroll
    for (int ry = 0; ry < RY; ++ry) {
        const int i = i0 + ry;
        if (i >= Ho) break;
        float colmax[2 * XT + 1];
#pragma unroll
        for (int k = 0; k < 2 * XT + 1; ++k) colmax[k] = NEG_INF;
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy) {
            const int r = 2 * i + dy;
            if (r < 0 || r >= H) continue;
            const float* row = p + (size_t)r * W;
            if (vec_cols) {
                const In a = *reinterpret_cast<const In*>(row + c0 + 1);
                colmax[0] = fmaxf(colmax[0], __ldg(row + c0));
#pragma unroll
                for (int k = 0; k < 2 * XT; ++k) colmax[k + 1] = fmaxf(colmax[k + 1], a.v[k]);
            } else if (inner_cols) {
#pragma unroll
                for (int k = 0; k < 2 * XT + 1; ++k) colmax[k] = fmaxf(colmax[k], __ldg(row + c0 + k));
            } else {
#pragma unroll
                for (int k = 0; k < 2 * XT + 1; ++k)
                    if (c0 + k >= 0 && c0 + k < W) colmax[k] = fmaxf(colmax[k], __ldg(row + c0 + k));
            }
        }
        Out o;
#pragma unroll
        for (int t = 0; t < XT; ++t) o.v[t] = fmaxf(fmaxf(colmax[2 * t], colmax[2 * t + 1]), colmax[2 * t + 2]);
        if (vec_out) {
            *reinterpret_cast<Out*>(q + (size_t)i * Wo + j0) = o;
        } else {
#pragma unroll
            for (int t = 0; t < XT; ++t)
                if (j0 + t < Wo) q[(size_t)i * Wo + j0 + t] = o.v[t];
        }
    }
}
