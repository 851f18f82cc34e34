// Two launches: the R rows are cut into 16 slabs and each thread finds the first maximum of one column within one
// slab (value and row into scratch buffers), then one thread per column picks among its 16 candidates; slabs are in
// row order, so a strictly larger value is the only reason to move.
// @kerncast scratch pval f32 (16 * B * C)
// @kerncast scratch pidx i32 (16 * B * C)
// @kerncast launch argmax_slabs grid(ceil_div(C, 256), B, 16) block(256) args(x, pval, pidx, B, R, C)
// @kerncast launch argmax_finish grid(ceil_div(C, 256), B) block(256) args(pval, pidx, y, B, R, C)

#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void __launch_bounds__(256) argmax_slabs(const float* __restrict__ x, float* __restrict__ pval,
                                                              int* __restrict__ pidx, int B, int R, int C) {
    const int c = blockIdx.x * 256 + threadIdx.x;
    const int b = blockIdx.y, slab = blockIdx.z;
    if (c >= C) return;
    const int per = (R + 15) / 16;
    const int r0 = slab * per, r1 = min(R, r0 + per);
    float best = NEG_INF;
    int at = 0x7fffffff;
    for (int r = r0; r < r1; ++r) {
        const float v = x[((size_t)b * R + r) * C + c];
        if (v > best) {
            best = v;
            at = r;
        }
    }
    pval[((size_t)slab * B + b) * C + c] = best;
    pidx[((size_t)slab * B + b) * C + c] = at;
}

extern "C" __global__ void __launch_bounds__(256) argmax_finish(const float* __restrict__ pval,
                                                               const int* __restrict__ pidx, int* __restrict__ y,
                                                               int B, int R, int C) {
    const int c = blockIdx.x * 256 + threadIdx.x;
    const int b = blockIdx.y;
    if (c >= C) return;
    float best = NEG_INF;
    int at = 0;
    for (int k = 0; k < 16; ++k) {
        const float v = pval[((size_t)k * B + b) * C + c];
        if (v > best) {
            best = v;
            at = pidx[((size_t)k * B + b) * C + c];
        }
    }
    y[(size_t)b * C + c] = at;
}
