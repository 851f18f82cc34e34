// One block of 256 threads per row. Each thread keeps a Welford running mean and M2 over its elements; the
// partial statistics are merged with Chan's formula in a shared-memory tree, then a second read of the row (mostly
// from L2) writes the outputs.
// @kerncast launch layernorm_welford grid(M) block(256) args(x, w, b, y, eps, M, N)

extern "C" __global__ void __launch_bounds__(256) layernorm_welford(const float* __restrict__ x,
                                                                   const float* __restrict__ w,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ y, float eps, int M, int N) {
    __shared__ float sn[256], smean[256], sm2[256];
    const float* r = x + (size_t)blockIdx.x * N;
    float* o = y + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int j = t; j < N; j += 256) {
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
    const float rstd = rsqrtf(sm2[0] / N + eps);
    for (int j = t; j < N; j += 256) o[j] = (r[j] - mu) * rstd * w[j] + b[j];
}
