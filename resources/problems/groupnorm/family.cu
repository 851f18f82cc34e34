// A group (C / G consecutive channels of one sample, L = (C / G) * H * W contiguous floats) is a row: TPR threads per
// group (a warp up to a whole block), ROWS groups per block. When the group fits in the threads' registers (ITEMS
// vectors of VEC floats each) it is read once and kept there for the mean, the variance (two passes over the
// registers, so no cancellation) and the output; larger groups take one pass for the sum and the sum of squares
// (variance = E[x^2] - mean^2) and a second read for the output. A vector never straddles two channels when
// H * W % VEC == 0 (which also keeps every group aligned); otherwise the group goes one float at a time.
// @kerncast launch groupnorm_family grid(ceil_div(B * G, ROWS)) block(TPR, ROWS) args(x, w, b, y, eps, B, C, G, H, W)
// @kerncast tunable TPR 64 128 256 512 1024
// @kerncast tunable ROWS 1 2 where TPR * ROWS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable ITEMS 2 4 8 16 where VEC * ITEMS <= 32

template <int V>
struct __align__(4 * V) Vec {
    float v[V];
};

// Sum over the TPR threads of one row; every thread of the row gets it. Every thread of the block calls it once
// (rows past M included), so the barrier matches.
__device__ __forceinline__ float row_sum(float v, float (*slots)[TPR / 32]) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
#if TPR > 32
    if ((threadIdx.x & 31) == 0) slots[threadIdx.y][threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int w = 0; w < TPR / 32; ++w) v += slots[threadIdx.y][w];
    __syncthreads();  // the slots are reused by the next reduction
#endif
    return v;
}

template <int V>
__device__ __forceinline__ void groupnorm_row(const float* __restrict__ r, const float* __restrict__ w,
                                              const float* __restrict__ b, float* __restrict__ o, float eps, int N,
                                              int hw, bool valid, float (*slots)[TPR / 32]) {
    // w and b point at the group's first channel; vector i lies in channel (i * V) / hw of the group.
    const Vec<V>* rv = reinterpret_cast<const Vec<V>*>(r);
    Vec<V>* ov = reinterpret_cast<Vec<V>*>(o);
    const int nvec = valid ? N / V : 0;
    const int tid = threadIdx.x;
    float mean, rstd;
    if (N / V <= ITEMS * TPR) {  // depends on N only: the same branch for every row of the block
        Vec<V> c[ITEMS];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
                c[k] = rv[i];
#pragma unroll
                for (int e = 0; e < V; ++e) s += c[k].v[e];
            }
        }
        mean = row_sum(s, slots) / N;
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k * TPR + tid < nvec)
#pragma unroll
                for (int e = 0; e < V; ++e) ss += (c[k].v[e] - mean) * (c[k].v[e] - mean);
        rstd = rsqrtf(row_sum(ss, slots) / N + eps);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
                const int ch = (i * V) / hw;
                const float g = w[ch] * rstd, h = b[ch] - mean * g;
#pragma unroll
                for (int e = 0; e < V; ++e) c[k].v[e] = fmaf(c[k].v[e], g, h);
                ov[i] = c[k];
            }
        }
    } else {
        float s = 0.0f, ss = 0.0f;
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            const Vec<V> t = rv[i];
#pragma unroll
            for (int e = 0; e < V; ++e) {
                s += t.v[e];
                ss += t.v[e] * t.v[e];
            }
        }
        mean = row_sum(s, slots) / N;
        rstd = rsqrtf(fmaxf(row_sum(ss, slots) / N - mean * mean, 0.0f) + eps);
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            Vec<V> t = rv[i];
            const int ch = (i * V) / hw;
            const float g = w[ch] * rstd, h = b[ch] - mean * g;
#pragma unroll
            for (int e = 0; e < V; ++e) t.v[e] = fmaf(t.v[e], g, h);
            ov[i] = t;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TPR * ROWS, 1024 / (TPR * ROWS)) groupnorm_family(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
    float eps, int B, int C, int G, int H, int W) {
    __shared__ float slots[ROWS][TPR / 32];
    const int group = blockIdx.x * ROWS + threadIdx.y;
    const bool valid = group < B * G;
    const int cpg = C / G, hw = H * W, len = cpg * hw;
    const int g = valid ? group % G : 0;
    const size_t start = (size_t)(valid ? group : 0) * len;
    if (hw % VEC == 0)
        groupnorm_row<VEC>(x + start, w + g * cpg, b + g * cpg, y + start, eps, len, hw, valid, slots);
    else
        groupnorm_row<1>(x + start, w + g * cpg, b + g * cpg, y + start, eps, len, hw, valid, slots);
}
