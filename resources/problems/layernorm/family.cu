// TPR threads per row (a warp up to a whole block), ROWS rows per block. When the row fits in the threads'
// registers (ITEMS vectors of VEC floats each) it is read once and kept there for the mean, the variance (two
// passes over the registers, so no cancellation) and the output; longer rows take one pass for the sum and the sum
// of squares (variance = E[x^2] - mean^2) and a second read for the output. Vector loads of x, w, b and y need
// every row aligned, so rows with N % VEC != 0 go one float at a time.
// @kerncast launch layernorm_family grid(ceil_div(M, ROWS)) block(TPR, ROWS) args(x, w, b, y, eps, M, N)
// @kerncast tunable TPR 32 64 128 256 512 1024
// @kerncast tunable ROWS 1 2 4 8 where TPR * ROWS >= 64 && TPR * ROWS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable ITEMS 2 8

template <int W>
struct __align__(4 * W) Vec {
    float v[W];
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

template <int W>
__device__ __forceinline__ void layernorm_row(const float* __restrict__ r, const float* __restrict__ w,
                                              const float* __restrict__ b, float* __restrict__ o, float eps, int N,
                                              bool valid, float (*slots)[TPR / 32]) {
    const Vec<W>* rv = reinterpret_cast<const Vec<W>*>(r);
    const Vec<W>* wv = reinterpret_cast<const Vec<W>*>(w);
    const Vec<W>* bv = reinterpret_cast<const Vec<W>*>(b);
    Vec<W>* ov = reinterpret_cast<Vec<W>*>(o);
    const int nvec = valid ? N / W : 0;
    const int tid = threadIdx.x;
    float mean, rstd;
    if (N / W <= ITEMS * TPR) {  // depends on N only: the same branch for every row of the block
        Vec<W> c[ITEMS];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
                c[k] = rv[i];
#pragma unroll
                for (int e = 0; e < W; ++e) s += c[k].v[e];
            }
        }
        mean = row_sum(s, slots) / N;
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k * TPR + tid < nvec)
#pragma unroll
                for (int e = 0; e < W; ++e) ss += (c[k].v[e] - mean) * (c[k].v[e] - mean);
        rstd = rsqrtf(row_sum(ss, slots) / N + eps);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
                const Vec<W> g = wv[i], h = bv[i];
#pragma unroll
                for (int e = 0; e < W; ++e) c[k].v[e] = (c[k].v[e] - mean) * rstd * g.v[e] + h.v[e];
                ov[i] = c[k];
            }
        }
    } else {
        float s = 0.0f, ss = 0.0f;
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            const Vec<W> t = rv[i];
#pragma unroll
            for (int e = 0; e < W; ++e) {
                s += t.v[e];
                ss += t.v[e] * t.v[e];
            }
        }
        mean = row_sum(s, slots) / N;
        rstd = rsqrtf(fmaxf(row_sum(ss, slots) / N - mean * mean, 0.0f) + eps);
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            Vec<W> t = rv[i];
            const Vec<W> g = wv[i], h = bv[i];
#pragma unroll
            for (int e = 0; e < W; ++e) t.v[e] = (t.v[e] - mean) * rstd * g.v[e] + h.v[e];
            ov[i] = t;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TPR * ROWS, 1024 / (TPR * ROWS)) layernorm_family(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
    float eps, int M, int N) {
    __shared__ float slots[ROWS][TPR / 32];
    const int row = blockIdx.x * ROWS + threadIdx.y;
    const bool valid = row < M;
    const size_t start = (size_t)(valid ? row : 0) * N;
    if (N % VEC == 0)
        layernorm_row<VEC>(x + start, w, b, y + start, eps, N, valid, slots);
    else
        layernorm_row<1>(x + start, w, b, y + start, eps, N, valid, slots);
}
