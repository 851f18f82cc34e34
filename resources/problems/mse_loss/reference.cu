// Two launches: each block of 256 threads (one element per thread) writes the sum of its squared differences to
// scratch, then one block of 1024 threads adds the partial sums and divides by N.
// @kerncast scratch part f32 (ceil_div(N, 256))
// @kerncast launch mse_partial grid(ceil_div(N, 256)) block(256) args(p, t, part, N)
// @kerncast launch mse_final grid(1) block(1024) args(part, loss, N)

extern "C" __global__ void mse_partial(const float* p, const float* t, float* part, int N) {
    __shared__ float red[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    const float d = i < N ? p[i] - t[i] : 0.0f;
    red[threadIdx.x] = d * d;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

extern "C" __global__ void mse_final(const float* part, float* loss, int N) {
    __shared__ float red[1024];
    const int nparts = (N + 255) / 256;
    float s = 0.0f;
    for (int i = threadIdx.x; i < nparts; i += 1024) s += part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 512; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) loss[0] = red[0] / N;
}
