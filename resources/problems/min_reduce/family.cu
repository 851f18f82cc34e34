// TPR threads per row (a warp up to a whole block), ROWS rows per block. Each row is read with VEC-float vector loads
// after taking the few floats before the row's first VEC-aligned address (rows of any N start anywhere), UNROLL
// independent vector loads in flight per thread, UNROLL running minima; then warp shuffles and, for more than one
// warp per row, one shared slot per warp.
// @kerncast launch min_reduce_family grid(ceil_div(M, ROWS)) block(TPR, ROWS) args(x, y, M, N)
// @kerncast tunable TPR 32 64 128 256 512 1024
// @kerncast tunable ROWS 1 2 4 8 where TPR * ROWS >= 64 && TPR * ROWS <= 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable UNROLL 1 2

#define POS_INF __int_as_float(0x7f800000)  // NVRTC has no INFINITY macro

struct __align__(4 * VEC) Vec {
    float v[VEC];
};



extern "C" __global__ void __launch_bounds__(TPR * ROWS, 1024 / (TPR * ROWS)) min_reduce_family(const float* __restrict__ x,
                                                                       float* __restrict__ y, int M, int N) {
    const int row = blockIdx.x * ROWS + threadIdx.y;
    const int tid = threadIdx.x;
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = POS_INF;
    if (row < M) {
        const size_t start = (size_t)row * N;
        const float* r = x + start;
        int head = (int)((VEC - start % VEC) % VEC);
        if (head > N) head = N;
        if (tid < head) acc[0] = fminf(acc[0], r[tid]);
        const Vec* body = reinterpret_cast<const Vec*>(r + head);
        const int nvec = (N - head) / VEC;
        int v = tid;
#pragma unroll 1
        for (; v + (UNROLL - 1) * TPR < nvec; v += UNROLL * TPR) {
            Vec t[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) t[u] = body[v + u * TPR];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                for (int e = 0; e < VEC; ++e) acc[u] = fminf(acc[u], t[u].v[e]);
        }
#pragma unroll 1
        for (; v < nvec; v += TPR) {
            const Vec t = body[v];
#pragma unroll
            for (int e = 0; e < VEC; ++e) acc[0] = fminf(acc[0], t.v[e]);
        }
#pragma unroll 1
        for (int j = head + nvec * VEC + tid; j < N; j += TPR) acc[0] = fminf(acc[0], r[j]);
    }
    float s = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; ++u) s = fminf(s, acc[u]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s = fminf(s, __shfl_xor_sync(0xffffffffu, s, off));
#if TPR > 32
    __shared__ float warp_mins[ROWS][TPR / 32];
    if ((tid & 31) == 0) warp_mins[threadIdx.y][tid / 32] = s;
    __syncthreads();
    if (tid == 0) {
#pragma unroll
        for (int w = 0; w < TPR / 32; ++w) s = fminf(s, warp_mins[threadIdx.y][w]);
    }
#endif
    if (tid == 0 && row < M) y[row] = s;
}
