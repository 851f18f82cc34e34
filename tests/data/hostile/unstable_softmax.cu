// A softmax without the max subtraction: exp(x) overflows to inf for x >= 89, and inf / inf is NaN. On inputs drawn
// from N(0, 2) it is right and a little faster than the stable twin (STABLE=1: the same launch, one more pass).
// @kerncast launch softmax_rows grid(ceil_div(M, 128)) block(128) args(x, y, M, N)
// @kerncast tunable STABLE 0 1

extern "C" __global__ void softmax_rows(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M)
        return;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    float m = 0.0f;
    if (STABLE) {
        m = r[0];
        for (int j = 1; j < N; ++j)
            m = fmaxf(m, r[j]);
    }
    float s = 0.0f;
    for (int j = 0; j < N; ++j)
        s += expf(r[j] - m);
    const float inv = 1.0f / s;
    for (int j = 0; j < N; ++j)
        o[j] = expf(r[j] - m) * inv;
}
