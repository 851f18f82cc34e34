// Blocks of BX x BY threads over one plane (grid z); a thread computes XT consecutive outputs of RY consecutive
// output rows. It walks the RY + 2 input rows its outputs need once, each as XT + 2 values (an aligned XT-float
// vector and two more when W % XT == 0, single floats otherwise), and adds every row to the (up to three) output
// rows it contributes to, so each input value is loaded once per thread; the nine weights stay in registers.
// Outputs go out as one XT-float vector when W - 2 is a multiple of XT (then every output row starts aligned).
// @kerncast launch depthwise_conv2d_family grid(ceil_div(W - 2, BX * XT), ceil_div(H - 2, BY * RY), B * C) block(BX, BY) args(x, w, y, B, C, H, W)
// @kerncast tunable BX 32 64 128
// @kerncast tunable BY 1 2 4 where BX * BY >= 64 && BX * BY <= 256
// @kerncast tunable XT 2 4 8
// @kerncast tunable RY 4 8 16

struct __align__(XT >= 4 ? 16 : 4 * XT) Row {
    float v[XT];
};  // XT input or output floats

extern "C" __global__ void __launch_bounds__(BX * BY) depthwise_conv2d_family(const float* __restrict__ x,
                                                                             const float* __restrict__ w,
                                                                             float* __restrict__ y, int B, int C,
                                                                             int H, int W) {
    const int Ho = H - 2, Wo = W - 2;
    const int j0 = (blockIdx.x * BX + threadIdx.x) * XT;
    const int i0 = (blockIdx.y * BY + threadIdx.y) * RY;
    if (j0 >= Wo || i0 >= Ho) return;
    const int c = blockIdx.z % C;
    float k[9];
#pragma unroll
    for (int t = 0; t < 9; ++t) k[t] = __ldg(w + c * 9 + t);
    const float* p = x + (size_t)blockIdx.z * H * W;
    float* q = y + (size_t)blockIdx.z * Ho * Wo;
    const bool vec_in = W % XT == 0 && j0 + XT + 2 <= W;
    const int ncols = min(XT + 2, W - j0);  // input columns this thread may read
    float acc[RY][XT];
#pragma unroll
    for (int r = 0; r < RY; ++r)
#pragma unroll
        for (int t = 0; t < XT; ++t) acc[r][t] = 0.0f;
#pragma unroll
    for (int r = 0; r < RY + 2; ++r) {
        if (i0 + r >= H) break;
        const float* row = p + (size_t)(i0 + r) * W + j0;
        float v[XT + 2];
        if (vec_in) {
            const Row a = *reinterpret_cast<const Row*>(row);
#pragma unroll
            for (int t = 0; t < XT; ++t) v[t] = a.v[t];
            v[XT] = __ldg(row + XT);
            v[XT + 1] = __ldg(row + XT + 1);
        } else {
#pragma unroll
            for (int t = 0; t < XT + 2; ++t) v[t] = t < ncols ? __ldg(row + t) : 0.0f;
        }
#pragma unroll
        for (int a = 0; a < 3; ++a) {
            const int o = r - a;  // the output row (of this thread's RY) that uses input row r as its row a
            if (o < 0 || o >= RY) continue;
#pragma unroll
            for (int t = 0; t < XT; ++t)
                acc[o][t] = fmaf(k[a * 3 + 2], v[t + 2], fmaf(k[a * 3 + 1], v[t + 1], fmaf(k[a * 3], v[t], acc[o][t])));
        }
    }
    const bool vec_out = Wo % XT == 0;  // j0 is a multiple of XT, and so is every row's start
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        if (i0 + r >= Ho) break;
        float* o = q + (size_t)(i0 + r) * Wo + j0;
        if (vec_out) {
            Row out;
#pragma unroll
            for (int t = 0; t < XT; ++t) out.v[t] = acc[r][t];
            *reinterpret_cast<Row*>(o) = out;
        } else {
#pragma unroll
            for (int t = 0; t < XT; ++t)
                if (j0 + t < Wo) o[t] = acc[r][t];
        }
    }
}
