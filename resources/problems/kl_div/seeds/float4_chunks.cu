// Two launches: each block of 256 threads sums a chunk of 16384 consecutive elements (four float4 per thread with
// their loads issued first, when N % 4 == 0 and the chunk is whole; single floats otherwise) into scratch, then one
// block of 1024 threads adds the partial sums and divides by M (the batch).
// @kerncast scratch part f32 (ceil_div(M * N, 16384))
// @kerncast launch kl_chunks grid(ceil_div(M * N, 16384)) block(256) args(p, t, part, M, N)
// @kerncast launch kl_chunks_final grid(1) block(1024) args(part, loss, M, N)

__device__ __forceinline__ float kl_term(float p, float t) { return t * (logf(t) - logf(p)); }

extern "C" __global__ void __launch_bounds__(256) kl_chunks(const float* __restrict__ p, const float* __restrict__ t,
                                                            float* __restrict__ part, int M, int Ncols) {
    const int N = M * Ncols;  // elements
    __shared__ float slots[8];
    const size_t base = (size_t)blockIdx.x * 16384;
    float s = 0.0f;
    if ((N & 3) == 0 && base + 16384 <= (size_t)N) {
        const float4* p4 = reinterpret_cast<const float4*>(p + base);
        const float4* t4 = reinterpret_cast<const float4*>(t + base);
        for (int k0 = 0; k0 < 16; k0 += 4) {
            float4 a[4], b[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                a[k] = p4[(k0 + k) * 256 + threadIdx.x];
                b[k] = t4[(k0 + k) * 256 + threadIdx.x];
            }
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                s += (kl_term(a[k].x, b[k].x) + kl_term(a[k].y, b[k].y)) +
                     (kl_term(a[k].z, b[k].z) + kl_term(a[k].w, b[k].w));
            }
        }
    } else {
        const size_t end = base + 16384 < (size_t)N ? base + 16384 : (size_t)N;
        for (size_t i = base + threadIdx.x; i < end; i += 256) {
            s += kl_term(p[i], t[i]);
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
        for (int w = 0; w < 8; ++w) b += slots[w];
        part[blockIdx.x] = b;
    }
}

extern "C" __global__ void __launch_bounds__(1024) kl_chunks_final(const float* __restrict__ part,
                                                                   float* __restrict__ loss, int M, int Ncols) {
    const int N = M * Ncols;  // elements
    __shared__ float slots[32];
    const int nparts = (N + 16383) / 16384;
    float s = 0.0f;
    for (int i = threadIdx.x; i < nparts; i += 1024) s += part[i];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
        for (int w = 0; w < 32; ++w) b += slots[w];
        loss[0] = b / M;
    }
}
