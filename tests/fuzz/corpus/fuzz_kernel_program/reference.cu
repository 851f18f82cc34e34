// Reference saxpy: one element per thread.
// @kerncast launch saxpy grid(ceil_div(N, 256)) block(256) args(x, y, a, N)

extern "C" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
