// One thread per element, log1p(exp(x)) as PyTorch writes it.
// @kerncast launch softplus grid(ceil_div(N, 256)) block(256) args(x, y, N)

extern "C" __global__ void softplus(const float* x, float* y, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = x[i] > 20.0f ? x[i] : log1pf(expf(x[i]));
}
