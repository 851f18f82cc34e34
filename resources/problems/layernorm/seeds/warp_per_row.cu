// One warp per row, eight rows per block, shuffles only: one pass for the sum and the sum of squares, a second
// (mostly from L1/L2) for the output. float4 for x, w, b and y when N % 4 == 0, else one float at a time.
// @kerncast launch layernorm_warp grid(ceil_div(M, 8)) block(32, 8) args(x, w, b, y, eps, M, N)

extern "C" __global__ void __launch_bounds__(256) layernorm_warp(const float* __restrict__ x,
                                                                const float* __restrict__ w,
                                                                const float* __restrict__ b, float* __restrict__ y,
                                                                float eps, int M, int N) {
    const int row = blockIdx.x * 8 + threadIdx.y;
    if (row >= M) return;  // whole warps leave together; no block barrier below
    const int lane = threadIdx.x;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    const bool vec = (N & 3) == 0;
    float s = 0.0f, ss = 0.0f;
    if (vec) {
        for (int v = lane; v < N / 4; v += 32) {
            const float4 t = reinterpret_cast<const float4*>(r)[v];
            s += (t.x + t.y) + (t.z + t.w);
            ss += t.x * t.x + t.y * t.y + t.z * t.z + t.w * t.w;
        }
    } else {
        for (int j = lane; j < N; j += 32) {
            s += r[j];
            ss += r[j] * r[j];
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, off);
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    }
    const float mean = s / N;
    const float rstd = rsqrtf(fmaxf(ss / N - mean * mean, 0.0f) + eps);
    if (vec) {
        for (int v = lane; v < N / 4; v += 32) {
            float4 t = reinterpret_cast<const float4*>(r)[v];
            const float4 g = reinterpret_cast<const float4*>(w)[v];
            const float4 h = reinterpret_cast<const float4*>(b)[v];
            t.x = (t.x - mean) * rstd * g.x + h.x;
            t.y = (t.y - mean) * rstd * g.y + h.y;
            t.z = (t.z - mean) * rstd * g.z + h.z;
            t.w = (t.w - mean) * rstd * g.w + h.w;
            reinterpret_cast<float4*>(o)[v] = t;
        }
    } else {
        for (int j = lane; j < N; j += 32) o[j] = (r[j] - mean) * rstd * w[j] + b[j];
    }
}
