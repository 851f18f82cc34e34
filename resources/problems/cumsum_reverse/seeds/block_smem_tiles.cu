// One block of 256 threads per row: tiles of 256 floats from the right end are staged in shared memory and scanned
// from the right with a Hillis-Steele scan (log2(256) = 8 steps, two barriers each), then the carry is added.
// @kerncast launch cumsum_reverse_smem grid(M) block(256) args(x, y, M, N)

extern "C" __global__ void __launch_bounds__(256) cumsum_reverse_smem(const float* __restrict__ x,
                                                                     float* __restrict__ y, int M, int N) {
    __shared__ float buf[256];
    const float* r = x + (size_t)blockIdx.x * N;
    float* o = y + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    float carry = 0.0f;
    for (int base = ((N - 1) / 256) * 256; base >= 0; base -= 256) {
        const int j = base + t;
        buf[t] = j < N ? r[j] : 0.0f;
        __syncthreads();
        for (int off = 1; off < 256; off <<= 1) {
            const float u = t + off < 256 ? buf[t + off] : 0.0f;
            __syncthreads();
            buf[t] += u;
            __syncthreads();
        }
        if (j < N) o[j] = buf[t] + carry;
        carry += buf[0];
        __syncthreads();
    }
}
