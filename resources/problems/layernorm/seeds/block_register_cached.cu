// One block of 512 threads per row. When N % 4 == 0 and N <= 8192 the row is read once as float4 and kept in
// registers (four float4 per thread) for the mean, the variance about it and the output; otherwise the row is read
// three times. Warp shuffles, then one shared slot per warp.
// @kerncast launch layernorm_cached grid(M) block(512) args(x, w, b, y, eps, M, N)

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

extern "C" __global__ void __launch_bounds__(512) layernorm_cached(const float* __restrict__ x,
                                                                  const float* __restrict__ w,
                                                                  const float* __restrict__ b,
                                                                  float* __restrict__ y, float eps, int M, int N) {
    __shared__ float slots[16];
    const float* r = x + (size_t)blockIdx.x * N;
    float* o = y + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    if ((N & 3) == 0 && N <= 8192) {
        const float4* rv = reinterpret_cast<const float4*>(r);
        float4 c[4];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 512 + t;
            if (i < N / 4) {
                c[k] = rv[i];
                s += (c[k].x + c[k].y) + (c[k].z + c[k].w);
            }
        }
        const float mean = block_sum(s, slots) / N;
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k * 512 + t < N / 4) {
                const float a = c[k].x - mean, bb = c[k].y - mean, cc = c[k].z - mean, d = c[k].w - mean;
                ss += a * a + bb * bb + cc * cc + d * d;
            }
        const float rstd = rsqrtf(block_sum(ss, slots) / N + eps);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int i = k * 512 + t;
            if (i < N / 4) {
                const float4 g = reinterpret_cast<const float4*>(w)[i];
                const float4 h = reinterpret_cast<const float4*>(b)[i];
                reinterpret_cast<float4*>(o)[i] =
                    make_float4((c[k].x - mean) * rstd * g.x + h.x, (c[k].y - mean) * rstd * g.y + h.y,
                                (c[k].z - mean) * rstd * g.z + h.z, (c[k].w - mean) * rstd * g.w + h.w);
            }
        }
    } else {
        float s = 0.0f;
        for (int j = t; j < N; j += 512) s += r[j];
        const float mean = block_sum(s, slots) / N;
        float ss = 0.0f;
        for (int j = t; j < N; j += 512) ss += (r[j] - mean) * (r[j] - mean);
        const float rstd = rsqrtf(block_sum(ss, slots) / N + eps);
        for (int j = t; j < N; j += 512) o[j] = (r[j] - mean) * rstd * w[j] + b[j];
    }
}
