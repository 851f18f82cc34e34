// One thread per row: the mean, the variance about it, then the normalised, scaled and shifted outputs.
// @kerncast launch layernorm grid(ceil_div(M, 128)) block(128) args(x, w, b, y, eps, M, N)

extern "C" __global__ void layernorm(const float* x, const float* w, const float* b, float* y, float eps, int M,
                                     int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    float s = 0.0f;
    for (int j = 0; j < N; ++j) s += r[j];
    const float mean = s / N;
    float ss = 0.0f;
    for (int j = 0; j < N; ++j) ss += (r[j] - mean) * (r[j] - mean);
    const float rstd = 1.0f / sqrtf(ss / N + eps);
    for (int j = 0; j < N; ++j) o[j] = (r[j] - mean) * rstd * w[j] + b[j];
}
