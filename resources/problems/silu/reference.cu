// One thread per element.
// @kerncast launch silu grid(ceil_div(N, 256)) block(256) args(x, y, N)

extern "C" __global__ void silu(const float* x, float* y, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = x[i] / (1.0f + expf(-x[i]));
}
