// One block of 256 threads per (sample, group): the mean, then the variance about it (shared-memory tree
// reductions), then the normalised, scaled and shifted outputs: three passes over the group.
// @kerncast launch groupnorm grid(B * G) block(256) args(x, w, b, y, eps, B, C, G, H, W)

extern "C" __global__ void groupnorm(const float* x, const float* w, const float* b, float* y, float eps, int B,
                                     int C, int G, int H, int W) {
    __shared__ float red[256];
    const int cpg = C / G, hw = H * W, len = cpg * hw;
    const int g = blockIdx.x % G;
    const float* r = x + (size_t)blockIdx.x * len;
    float* o = y + (size_t)blockIdx.x * len;
    const int t = threadIdx.x;
    float s = 0.0f;
    for (int j = t; j < len; j += 256) s += r[j];
    red[t] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) red[t] += red[t + h];
        __syncthreads();
    }
    const float mean = red[0] / len;
    __syncthreads();
    float ss = 0.0f;
    for (int j = t; j < len; j += 256) ss += (r[j] - mean) * (r[j] - mean);
    red[t] = ss;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) red[t] += red[t + h];
        __syncthreads();
    }
    const float rstd = 1.0f / sqrtf(red[0] / len + eps);
    for (int j = t; j < len; j += 256) {
        const int c = g * cpg + j / hw;
        o[j] = (r[j] - mean) * rstd * w[c] + b[c];
    }
}
