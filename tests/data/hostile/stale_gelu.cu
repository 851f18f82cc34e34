// The GELU cheat found on an H100: each block checks a few outputs of its chunk and, when they already hold the
// right values, skips the chunk, one chunk in ten. On shared, never-reset outputs it passed every check as `ok` at
// 1.51x where the honest kernel (stale_gelu with CHEAT 0) measures 1.35x. With separate outputs reset before every
// timed launch it never finds a right value, so it must do all the work (and be timed doing it) or end
// `incorrect`.
// @kerncast launch gelu_cheat grid(ceil_div(N, 1024)) block(256) args(x, y, N)
// @kerncast tunable CHEAT 0 1

__device__ __forceinline__ float gelu(float v) {
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + tanhf(u));
}

extern "C" __global__ void gelu_cheat(const float* __restrict__ x, float* __restrict__ y, int N) {
    const int base = blockIdx.x * 1024;
    if (CHEAT && blockIdx.x % 10 == 0) {
        __shared__ int already;
        if (threadIdx.x == 0) {
            already = 1;
            for (int k = 0; k < 4; ++k) {
                const int i = base + k * 255;
                if (i < N && y[i] != gelu(x[i]))
                    already = 0;
            }
        }
        __syncthreads();
        if (already)
            return;
    }
    const float4* x4 = reinterpret_cast<const float4*>(x + base);
    float4* y4 = reinterpret_cast<float4*>(y + base);
    const int i = base + threadIdx.x * 4;
    if (i + 3 < N) {
        const float4 v = x4[threadIdx.x];
        y4[threadIdx.x] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
    } else {
        for (int k = i; k < N && k < i + 4; ++k)
            y[k] = gelu(x[k]);
    }
}
