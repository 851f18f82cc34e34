// One warp per row, eight rows per block: one pass keeps a running maximum and a sum rescaled to it (online
// softmax), merged across the warp with shuffles; a second pass writes x - max - log(sum). float4 when N % 4 == 0.
// @kerncast launch log_softmax_warp grid(ceil_div(M, 8)) block(32, 8) args(x, y, M, N)

#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ void online_add(float& m, float& s, float v) {
    if (v > m) {
        s = s * expf(m - v) + 1.0f;
        m = v;
    } else {
        s += expf(v - m);
    }
}

extern "C" __global__ void __launch_bounds__(256) log_softmax_warp(const float* __restrict__ x,
                                                                  float* __restrict__ y, int M, int N) {
    const int row = blockIdx.x * 8 + threadIdx.y;
    if (row >= M) return;  // whole warps leave together; no block barrier below
    const int lane = threadIdx.x;
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    const bool vec = (N & 3) == 0;
    float m = NEG_INF, s = 0.0f;
    if (vec) {
        for (int v = lane; v < N / 4; v += 32) {
            const float4 t = reinterpret_cast<const float4*>(r)[v];
            online_add(m, s, t.x);
            online_add(m, s, t.y);
            online_add(m, s, t.z);
            online_add(m, s, t.w);
        }
    } else {
        for (int j = lane; j < N; j += 32) online_add(m, s, r[j]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        const float mn = fmaxf(m, m2);
        if (mn != NEG_INF) {
            s = s * expf(m - mn) + s2 * expf(m2 - mn);
            m = mn;
        }
    }
    const float shift = m + logf(s);
    if (vec) {
        for (int v = lane; v < N / 4; v += 32) {
            float4 t = reinterpret_cast<const float4*>(r)[v];
            t.x -= shift;
            t.y -= shift;
            t.z -= shift;
            t.w -= shift;
            reinterpret_cast<float4*>(o)[v] = t;
        }
    } else {
        for (int j = lane; j < N; j += 32) o[j] = r[j] - shift;
    }
}
