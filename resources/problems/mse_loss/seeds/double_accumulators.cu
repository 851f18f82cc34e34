// Three launches with fp64 accumulation: clear a double in scratch; a fixed grid (4 blocks of 256 per SM on a
// 132-SM H100) sums the squared differences per thread in double, reduces each block in shared memory and adds
// the block's sum with one double atomicAdd; one thread divides by N and rounds to float.
// @kerncast scratch acc f64 (1)
// @kerncast launch mse_dclear grid(1) block(32) args(acc)
// @kerncast launch mse_dsum grid(528) block(256) args(p, t, acc, N)
// @kerncast launch mse_dfinish grid(1) block(32) args(acc, loss, N)

extern "C" __global__ void mse_dclear(double* acc) {
    if (threadIdx.x == 0) acc[0] = 0.0;
}

extern "C" __global__ void __launch_bounds__(256) mse_dsum(const float* __restrict__ p, const float* __restrict__ t,
                                                          double* __restrict__ acc, int N) {
    __shared__ double red[256];
    double s = 0.0;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < N; i += gridDim.x * 256) {
        const double d = (double)p[i] - (double)t[i];
        s += d * d;
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(acc, red[0]);
}

extern "C" __global__ void mse_dfinish(const double* acc, float* loss, int N) {
    if (threadIdx.x == 0) loss[0] = (float)(acc[0] / N);
}
