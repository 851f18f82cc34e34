// Two launches: each block of 256 threads (one element per thread) writes the sum of its terms
// t * (log t - log p) to scratch, then one block of 1024 threads adds the partial sums and divides by M (the batch).
// @kerncast scratch part f32 (ceil_div(M * N, 256))
// @kerncast launch kl_partial grid(ceil_div(M * N, 256)) block(256) args(p, t, part, M, N)
// @kerncast launch kl_final grid(1) block(1024) args(part, loss, M, N)

extern "C" __global__ void kl_partial(const float* p, const float* t, float* part, int M, int Ncols) {
    const int N = M * Ncols;  // elements
    __shared__ float red[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    red[threadIdx.x] = i < N ? t[i] * (logf(t[i]) - logf(p[i])) : 0.0f;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

extern "C" __global__ void kl_final(const float* part, float* loss, int M, int Ncols) {
    const int N = M * Ncols;  // elements
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
    if (threadIdx.x == 0) loss[0] = red[0] / M;
}
