// One block of 256 threads per row, three passes over the row (the second and third mostly from L2): the maximum,
// the sum of exponentials, the outputs. Shared-memory tree reductions.
// @kerncast launch log_softmax_block grid(M) block(256) args(x, y, M, N)

extern "C" __global__ void __launch_bounds__(256) log_softmax_block(const float* __restrict__ x,
                                                                   float* __restrict__ y, int M, int N) {
    __shared__ float red[256];
    const float* r = x + (size_t)blockIdx.x * N;
    float* o = y + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    float m = r[0];
    for (int j = t; j < N; j += 256) m = fmaxf(m, r[j]);
    red[t] = m;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) red[t] = fmaxf(red[t], red[t + h]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float s = 0.0f;
    for (int j = t; j < N; j += 256) s += expf(r[j] - m);
    red[t] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h) red[t] += red[t + h];
        __syncthreads();
    }
    const float shift = m + logf(red[0]);
    for (int j = t; j < N; j += 256) o[j] = r[j] - shift;
}
