// 16-byte loads and stores; softplus as max(x, 0) + log1p(exp(-|x|)), which never overflows. The last N % 4
// elements are done by the first thread past the vectors.
// @kerncast launch softplus_float4 grid(ceil_div(ceil_div(N, 4), 256)) block(256) args(x, y, N)

__device__ __forceinline__ float softplus_stable(float v) {
    return v > 20.0f ? v : fmaxf(v, 0.0f) + log1pf(expf(-fabsf(v)));
}

extern "C" __global__ void softplus_float4(const float* __restrict__ x, float* __restrict__ y, int N) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int nvec = N / 4;
    if (v < nvec) {
        float4 t = reinterpret_cast<const float4*>(x)[v];
        t.x = softplus_stable(t.x);
        t.y = softplus_stable(t.y);
        t.z = softplus_stable(t.z);
        t.w = softplus_stable(t.w);
        reinterpret_cast<float4*>(y)[v] = t;
    } else if (v == nvec) {
        for (int i = nvec * 4; i < N; ++i) y[i] = softplus_stable(x[i]);
    }
}
