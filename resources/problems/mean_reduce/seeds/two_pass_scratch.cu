// Two launches: the R rows are cut into 16 slabs and each thread sums one column of one slab into a scratch buffer
// (so there are 16x more threads than columns), then one thread per column adds its 16 partial sums.
// @kerncast scratch part f32 (16 * B * C)
// @kerncast launch mean_reduce_slabs grid(ceil_div(C, 256), B, 16) block(256) args(x, part, B, R, C)
// @kerncast launch mean_reduce_finish grid(ceil_div(C, 256), B) block(256) args(part, y, B, R, C)

extern "C" __global__ void __launch_bounds__(256) mean_reduce_slabs(const float* __restrict__ x,
                                                                   float* __restrict__ part, int B, int R, int C) {
    const int c = blockIdx.x * 256 + threadIdx.x;
    const int b = blockIdx.y, slab = blockIdx.z;
    if (c >= C) return;
    const int per = (R + 15) / 16;
    const int r0 = slab * per, r1 = min(R, r0 + per);
    float s = 0.0f;
    for (int r = r0; r < r1; ++r) s += x[((size_t)b * R + r) * C + c];
    part[((size_t)slab * B + b) * C + c] = s;
}

extern "C" __global__ void __launch_bounds__(256) mean_reduce_finish(const float* __restrict__ part,
                                                                    float* __restrict__ y, int B, int R, int C) {
    const int c = blockIdx.x * 256 + threadIdx.x;
    const int b = blockIdx.y;
    if (c >= C) return;
    float s = 0.0f;
    for (int k = 0; k < 16; ++k) s += part[((size_t)k * B + b) * C + c];
    y[(size_t)b * C + c] = s / R;
}
