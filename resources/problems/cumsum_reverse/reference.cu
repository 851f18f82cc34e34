// One thread per row, walking it from the right end with a running sum.
// @kerncast launch cumsum_reverse grid(ceil_div(M, 128)) block(128) args(x, y, M, N)

extern "C" __global__ void cumsum_reverse(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    float s = 0.0f;
    for (int j = N - 1; j >= 0; --j) {
        s += r[j];
        o[j] = s;
    }
}
