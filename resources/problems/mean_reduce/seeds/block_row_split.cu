// Blocks of 32 x 8 threads: 32 consecutive columns, the R rows split among 8 thread rows; the 8 partial sums of a
// column meet in shared memory.
// @kerncast launch mean_reduce_split grid(ceil_div(C, 32), B) block(32, 8) args(x, y, B, R, C)

extern "C" __global__ void __launch_bounds__(256) mean_reduce_split(const float* __restrict__ x,
                                                                   float* __restrict__ y, int B, int R, int C) {
    __shared__ float part[8][33];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int b = blockIdx.y;
    float s = 0.0f;
    if (c < C)
        for (int r = threadIdx.y; r < R; r += 8) s += x[((size_t)b * R + r) * C + c];
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float t = 0.0f;
        for (int k = 0; k < 8; ++k) t += part[k][threadIdx.x];
        y[(size_t)b * C + c] = t / R;
    }
}
