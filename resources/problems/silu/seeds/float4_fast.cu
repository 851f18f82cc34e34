// 16-byte loads and stores with the fast exponential and division. The last N % 4 elements are done by the first
// thread past the vectors.
// @kerncast launch silu_float4 grid(ceil_div(ceil_div(N, 4), 256)) block(256) args(x, y, N)

__device__ __forceinline__ float silu_fast(float v) { return __fdividef(v, 1.0f + __expf(-v)); }

extern "C" __global__ void silu_float4(const float* __restrict__ x, float* __restrict__ y, int N) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int nvec = N / 4;
    if (v < nvec) {
        float4 t = reinterpret_cast<const float4*>(x)[v];
        t.x = silu_fast(t.x);
        t.y = silu_fast(t.y);
        t.z = silu_fast(t.z);
        t.w = silu_fast(t.w);
        reinterpret_cast<float4*>(y)[v] = t;
    } else if (v == nvec) {
        for (int i = nvec * 4; i < N; ++i) y[i] = silu_fast(x[i]);
    }
}
