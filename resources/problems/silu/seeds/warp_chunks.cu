// Each warp owns a chunk of 2048 consecutive floats and walks it in 16 float4 steps (512 bytes per warp access),
// with the loads of four steps in flight; the reciprocal is the correctly rounded __frcp_rn. Chunks that run past N
// (only the last) go one float at a time.
// @kerncast launch silu_warp_chunks grid(ceil_div(N, 16384)) block(256) args(x, y, N)

__device__ __forceinline__ float silu_rcp(float v) { return v * __frcp_rn(1.0f + __expf(-v)); }

extern "C" __global__ void __launch_bounds__(256) silu_warp_chunks(const float* __restrict__ x,
                                                                  float* __restrict__ y, int N) {
    const int lane = threadIdx.x & 31;
    const size_t chunk = ((size_t)blockIdx.x * 8 + threadIdx.x / 32) * 2048;
    if (chunk >= (size_t)N) return;
    if (chunk + 2048 <= (size_t)N) {
        const float4* xv = reinterpret_cast<const float4*>(x + chunk);
        float4* yv = reinterpret_cast<float4*>(y + chunk);
        for (int s = 0; s < 16; s += 4) {
            float4 t[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) t[k] = xv[(s + k) * 32 + lane];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                t[k].x = silu_rcp(t[k].x);
                t[k].y = silu_rcp(t[k].y);
                t[k].z = silu_rcp(t[k].z);
                t[k].w = silu_rcp(t[k].w);
                yv[(s + k) * 32 + lane] = t[k];
            }
        }
    } else {
        for (size_t i = chunk + lane; i < (size_t)N; i += 32) y[i] = silu_rcp(x[i]);
    }
}
