// One thread per row: the row's maximum, the sum of exponentials, then x - max - log(sum).
// @kerncast launch log_softmax grid(ceil_div(M, 128)) block(128) args(x, y, M, N)

extern "C" __global__ void log_softmax(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    float m = r[0];
    for (int j = 1; j < N; ++j) m = fmaxf(m, r[j]);
    float s = 0.0f;
    for (int j = 0; j < N; ++j) s += expf(r[j] - m);
    const float shift = m + logf(s);
    for (int j = 0; j < N; ++j) o[j] = r[j] - shift;
}
