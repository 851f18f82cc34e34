// Three launches with fp64 accumulation: clear a double in scratch; a fixed grid (4 blocks of 256 per SM on a
// 132-SM H100) sums the terms t * (log t - log p) per thread in double, reduces each block in shared memory and adds
// the block's sum with one double atomicAdd; one thread divides by M (the batch) and rounds to float.
// @kerncast scratch acc f64 (1)
// @kerncast launch kl_dclear grid(1) block(32) args(acc)
// @kerncast launch kl_dsum grid(528) block(256) args(p, t, acc, M, N)
// @kerncast launch kl_dfinish grid(1) block(32) args(acc, loss, M, N)

extern "C" __global__ void kl_dclear(double* acc) {
    if (threadIdx.x == 0) acc[0] = 0.0;
}

extern "C" __global__ void __launch_bounds__(256) kl_dsum(const float* __restrict__ p, const float* __restrict__ t,
                                                          double* __restrict__ acc, int M, int Ncols) {
    const int N = M * Ncols;  // elements
    __shared__ double red[256];
    double s = 0.0;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < N; i += gridDim.x * 256) {
        const double q = t[i];
        s += q * (log(q) - log((double)p[i]));
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(acc, red[0]);
}

extern "C" __global__ void kl_dfinish(const double* acc, float* loss, int M, int Ncols) {
    if (threadIdx.x == 0) loss[0] = (float)(acc[0] / M);
}
