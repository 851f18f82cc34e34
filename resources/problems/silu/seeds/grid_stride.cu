// A fixed grid (8 blocks of 256 per SM on a 132-SM H100) walks the array with a grid-stride loop.
// @kerncast launch silu_grid_stride grid(min(ceil_div(N, 256), 1056)) block(256) args(x, y, N)

extern "C" __global__ void silu_grid_stride(const float* __restrict__ x, float* __restrict__ y, int N) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)N; i += stride) {
        const float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
}
