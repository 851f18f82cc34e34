// One thread per row, a plain loop over the row.
// @kerncast launch min_reduce grid(ceil_div(M, 128)) block(128) args(x, y, M, N)

extern "C" __global__ void min_reduce(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M) {
        const float* r = x + (size_t)row * N;
        float m = r[0];
        for (int j = 1; j < N; ++j) m = fminf(m, r[j]);
        y[row] = m;
    }
}
