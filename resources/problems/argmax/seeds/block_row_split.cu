// Blocks of 32 x 8 threads: 32 consecutive columns, the R rows split among 8 thread rows (row k takes rows k, k + 8,
// ...); the 8 candidates of a column meet in shared memory, the larger value winning and the smaller row on ties.
// @kerncast launch argmax_split grid(ceil_div(C, 32), B) block(32, 8) args(x, y, B, R, C)

#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void __launch_bounds__(256) argmax_split(const float* __restrict__ x, int* __restrict__ y,
                                                              int B, int R, int C) {
    __shared__ float pv[8][33];
    __shared__ int pi[8][33];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int b = blockIdx.y;
    float best = NEG_INF;
    int at = 0x7fffffff;
    if (c < C)
        for (int r = threadIdx.y; r < R; r += 8) {
            const float v = x[((size_t)b * R + r) * C + c];
            if (v > best) {
                best = v;
                at = r;
            }
        }
    pv[threadIdx.y][threadIdx.x] = best;
    pi[threadIdx.y][threadIdx.x] = at;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int k = 1; k < 8; ++k) {
            const float v = pv[k][threadIdx.x];
            const int i = pi[k][threadIdx.x];
            if (v > best || (v == best && i < at)) {
                best = v;
                at = i;
            }
        }
        y[(size_t)b * C + c] = at;
    }
}
