// One block of 1024 threads per (sample, group). When the group is at most 16384 floats and H * W % 4 == 0 it is
// read once as float4 and kept in registers (four float4 per thread) for the mean, the variance about it and the
// output; otherwise the group is read three times. Warp shuffles, then one shared slot per warp.
// @kerncast launch groupnorm_cached grid(B * G) block(1024) args(x, w, b, y, eps, B, C, G, H, W)

__device__ float block_sum(float v, float* slots) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float r = 0.0f;
    for (int k = 0; k < 32; ++k) r += slots[k];
    __syncthreads();
    return r;
}

extern "C" __global__ void __launch_bounds__(1024) groupnorm_cached(const float* __restrict__ x,
                                                                   const float* __restrict__ w,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ y, float eps, int B, int C,
                                                                   int G, int H, int W) {
    __shared__ float slots[32];
    const int cpg = C / G, hw = H * W, len = cpg * hw;
    const int g = blockIdx.x % G;
    const float* r = x + (size_t)blockIdx.x * len;
    float* o = y + (size_t)blockIdx.x * len;
    const int t = threadIdx.x;
    if ((hw & 3) == 0 && len <= 16384) {
        const float4* rv = reinterpret_cast<const float4*>(r);
        float4 c[4];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 1024 + t;
            if (i < len / 4) {
                c[k] = rv[i];
                s += (c[k].x + c[k].y) + (c[k].z + c[k].w);
            }
        }
        const float mean = block_sum(s, slots) / len;
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k * 1024 + t < len / 4) {
                const float a = c[k].x - mean, p = c[k].y - mean, q = c[k].z - mean, d = c[k].w - mean;
                ss += a * a + p * p + q * q + d * d;
            }
        const float rstd = rsqrtf(block_sum(ss, slots) / len + eps);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 1024 + t;
            if (i < len / 4) {
                const int ch = g * cpg + (i * 4) / hw;
                const float scale = w[ch] * rstd, shift = b[ch] - mean * scale;
                reinterpret_cast<float4*>(o)[i] = make_float4(fmaf(c[k].x, scale, shift), fmaf(c[k].y, scale, shift),
                                                              fmaf(c[k].z, scale, shift), fmaf(c[k].w, scale, shift));
            }
        }
    } else {
        float s = 0.0f;
        for (int j = t; j < len; j += 1024) s += r[j];
        const float mean = block_sum(s, slots) / len;
        float ss = 0.0f;
        for (int j = t; j < len; j += 1024) ss += (r[j] - mean) * (r[j] - mean);
        const float rstd = rsqrtf(block_sum(ss, slots) / len + eps);
        for (int j = t; j < len; j += 1024) {
            const int ch = g * cpg + j / hw;
            o[j] = (r[j] - mean) * rstd * w[ch] + b[ch];
        }
    }
}
