// TPR threads per row (a warp up to a whole block), ROWS rows per block. When the row fits in the threads'
// registers (ITEMS vectors of VEC floats each) it is read once and kept there for the maximum, the sum of
// exponentials and the output x - max - log(sum); longer rows take an online pass (running maximum and rescaled
// sum) and a second read for the output.
// Vector loads need every row 16-byte aligned, so rows with N % VEC != 0 are read one float at a time.
// @kerncast launch log_softmax_family grid(ceil_div(M, ROWS)) block(TPR, ROWS) args(x, y, M, N)
// @kerncast tunable TPR 32 64 128 256 512 1024
// @kerncast tunable ROWS 1 2 4 8 where TPR * ROWS >= 64 && TPR * ROWS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable ITEMS 2 8 where VEC * ITEMS <= 32

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY macro)

template <int W>
struct __align__(4 * W) Vec {
    float v[W];
};

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    const float mn = fmaxf(m, m2);
    if (mn == NEG_INF) return;  // both empty
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

// Reductions over the TPR threads of one row; every thread of the row gets the result. All threads of the block
// call them the same number of times (rows past M included), so the barriers match.
__device__ __forceinline__ float row_max(float v, float (*slots)[TPR / 32]) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
#if TPR > 32
    if ((threadIdx.x & 31) == 0) slots[threadIdx.y][threadIdx.x / 32] = v;
    __syncthreads();
    v = slots[threadIdx.y][0];
#pragma unroll
    for (int w = 1; w < TPR / 32; ++w) v = fmaxf(v, slots[threadIdx.y][w]);
    __syncthreads();
#endif
    return v;
}
__device__ __forceinline__ float row_sum(float v, float (*slots)[TPR / 32]) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
#if TPR > 32
    if ((threadIdx.x & 31) == 0) slots[threadIdx.y][threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int w = 0; w < TPR / 32; ++w) v += slots[threadIdx.y][w];
    __syncthreads();
#endif
    return v;
}

template <int W>
__device__ __forceinline__ void log_softmax_row(const float* __restrict__ r, float* __restrict__ o, int N, bool valid,
                                            float (*slots)[TPR / 32]) {
    const Vec<W>* rv = reinterpret_cast<const Vec<W>*>(r);
    Vec<W>* ov = reinterpret_cast<Vec<W>*>(o);
    const int nvec = valid ? N / W : 0;
    const int tid = threadIdx.x;
    if (N / W <= ITEMS * TPR) {  // depends on N only: the same branch for every row of the block
        Vec<W> c[ITEMS];
        float m = NEG_INF;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
                c[k] = rv[i];
#pragma unroll
                for (int e = 0; e < W; ++e) m = fmaxf(m, c[k].v[e]);
            }
        }
        m = row_max(m, slots);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if (k * TPR + tid < nvec) {
#pragma unroll
                for (int e = 0; e < W; ++e) s += expf(c[k].v[e] - m);
            }
        }
        const float shift = m + logf(row_sum(s, slots));
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * TPR + tid;
            if (i < nvec) {
#pragma unroll
                for (int e = 0; e < W; ++e) c[k].v[e] -= shift;
                ov[i] = c[k];
            }
        }
    } else {
        float m = NEG_INF, s = 0.0f;
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            const Vec<W> t = rv[i];
            float mc = t.v[0];
#pragma unroll
            for (int e = 1; e < W; ++e) mc = fmaxf(mc, t.v[e]);
            if (mc > m) {
                s *= expf(m - mc);
                m = mc;
            }
#pragma unroll
            for (int e = 0; e < W; ++e) s += expf(t.v[e] - m);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
            const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
            merge(m, s, m2, s2);
        }
        const float mr = row_max(m, slots);
        // Rescale each warp's sum to the row maximum before adding (lanes of a warp share m and s here).
        s = row_sum((tid & 31) == 0 && m != NEG_INF ? s * expf(m - mr) : 0.0f, slots);
        const float shift = mr + logf(s);
#pragma unroll 1
        for (int i = tid; i < nvec; i += TPR) {
            Vec<W> t = rv[i];
#pragma unroll
            for (int e = 0; e < W; ++e) t.v[e] -= shift;
            ov[i] = t;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TPR * ROWS, 1024 / (TPR * ROWS)) log_softmax_family(
    const float* __restrict__ x, float* __restrict__ y, int M, int N) {
    __shared__ float slots[ROWS][TPR / 32];
    const int row = blockIdx.x * ROWS + threadIdx.y;
    const bool valid = row < M;
    const size_t start = (size_t)(valid ? row : 0) * N;
    if (N % VEC == 0)
        log_softmax_row<VEC>(x + start, y + start, N, valid, slots);
    else
        log_softmax_row<1>(x + start, y + start, N, valid, slots);
}
