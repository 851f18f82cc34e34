// Parametric saxpy: BLOCK threads per block, each thread handles ITEMS consecutive elements.
// @kerncast launch saxpy_family grid(ceil_div(N, BLOCK * ITEMS)) block(BLOCK) args(x, y, a, N)
// @kerncast tunable BLOCK 64 128 256 512 1024
// @kerncast tunable ITEMS 1 2 4 8   where BLOCK * ITEMS <= 2048

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK) saxpy_family(const float* __restrict__ x, float* __restrict__ y,
                                                                 float a, int n) {
    const int base = (blockIdx.x * BLOCK + threadIdx.x);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = base + k * gridDim.x * BLOCK;
        if (i < n)
            y[i] = a * x[i] + y[i];
    }
}
