// One block of 256 threads per (sample, group). Each thread keeps a Welford running mean and M2 over its elements;
// the partial statistics are merged with Chan's formula in a shared-memory tree, then a second read of the group
// (mostly from L2) writes the outputs, with each channel's scale and shift folded once per element.
// @kerncast launch groupnorm_welford grid(B * G) block(256) args(x, w, b, y, eps, B, C, G, H, W)

extern "C" __global__ void __launch_bounds__(256) groupnorm_welford(const float* __restrict__ x,
                                                                   const float* __restrict__ w,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ y, float eps, int B, int C,
                                                                   int G, int H, int W) {
    __shared__ float sn[256], smean[256], sm2[256];
    const int cpg = C / G, hw = H * W, len = cpg * hw;
    const int g = blockIdx.x % G;
    const float* r = x + (size_t)blockIdx.x * len;
    float* o = y + (size_t)blockIdx.x * len;
    const int t = threadIdx.x;
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int j = t; j < len; j += 256) {
        const float v = r[j];
        n += 1.0f;
        const float d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
    }
    sn[t] = n;
    smean[t] = mean;
    sm2[t] = m2;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) {
            const float na = sn[t], nb = sn[t + h], nn = na + nb;
            if (nn > 0.0f) {
                const float d = smean[t + h] - smean[t];
                smean[t] += d * nb / nn;
                sm2[t] += sm2[t + h] + d * d * na * nb / nn;
                sn[t] = nn;
            }
        }
        __syncthreads();
    }
    const float mu = smean[0];
    const float rstd = rsqrtf(sm2[0] / len + eps);
    for (int j = t; j < len; j += 256) {
        const int c = g * cpg + j / hw;
        const float scale = w[c] * rstd;
        o[j] = fmaf(r[j], scale, b[c] - mu * scale);
    }
}
