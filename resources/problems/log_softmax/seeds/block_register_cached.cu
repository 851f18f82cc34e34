// One block of 512 threads per row. When N % 4 == 0 and N <= 8192 the row is read once as float4 and kept in
// registers (four float4 per thread) for the maximum, the sum and the output; otherwise it falls back to three
// passes over the row. Warp shuffles, then one shared slot per warp.
// @kerncast launch log_softmax_cached grid(M) block(512) args(x, y, M, N)

#define NEG_INF __int_as_float(0xff800000)

__device__ float block_max(float v, float* slots) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float r = slots[0];
    for (int w = 1; w < 16; ++w) r = fmaxf(r, slots[w]);
    __syncthreads();
    return r;
}
__device__ float block_sum(float v, float* slots) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float r = 0.0f;
    for (int w = 0; w < 16; ++w) r += slots[w];
    __syncthreads();
    return r;
}

extern "C" __global__ void __launch_bounds__(512) log_softmax_cached(const float* __restrict__ x,
                                                                    float* __restrict__ y, int M, int N) {
    __shared__ float slots[16];
    const float* r = x + (size_t)blockIdx.x * N;
    float* o = y + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    if ((N & 3) == 0 && N <= 8192) {
        const float4* rv = reinterpret_cast<const float4*>(r);
        float4 c[4];
        float m = NEG_INF;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 512 + t;
            if (i < N / 4) {
                c[k] = rv[i];
                m = fmaxf(m, fmaxf(fmaxf(c[k].x, c[k].y), fmaxf(c[k].z, c[k].w)));
            }
        }
        m = block_max(m, slots);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k * 512 + t < N / 4)
                s += expf(c[k].x - m) + expf(c[k].y - m) + expf(c[k].z - m) + expf(c[k].w - m);
        const float shift = m + logf(block_sum(s, slots));
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 512 + t;
            if (i < N / 4)
                reinterpret_cast<float4*>(o)[i] =
                    make_float4(c[k].x - shift, c[k].y - shift, c[k].z - shift, c[k].w - shift);
        }
    } else {
        float m = NEG_INF;
        for (int j = t; j < N; j += 512) m = fmaxf(m, r[j]);
        m = block_max(m, slots);
        float s = 0.0f;
        for (int j = t; j < N; j += 512) s += expf(r[j] - m);
        const float shift = m + logf(block_sum(s, slots));
        for (int j = t; j < N; j += 512) o[j] = r[j] - shift;
    }
}
