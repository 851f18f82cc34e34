// One block of 256 threads per row: strided partial minima, then a shared-memory tree.
// @kerncast launch min_reduce_block grid(M) block(256) args(x, y, M, N)

extern "C" __global__ void __launch_bounds__(256) min_reduce_block(const float* __restrict__ x, float* __restrict__ y,
                                                                  int M, int N) {
    __shared__ float part[256];
    const float* r = x + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    float m = r[0];
    for (int j = t; j < N; j += 256) m = fminf(m, r[j]);
    part[t] = m;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) part[t] = fminf(part[t], part[t + h]);
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = part[0];
}
