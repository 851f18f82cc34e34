// Two launches. The first cuts each row into 16 segments and writes each segment's sum to scratch (one warp per
// segment); the second gives each segment a warp that starts from the sum of the segments to its right and scans
// its segment from the right end in chunks of 32 floats with shuffles. Sixteen times more warps than rows keep the
// GPU busy however few rows there are.
// @kerncast scratch seg f32 (M * 16)
// @kerncast launch cumsum_reverse_segsum grid(ceil_div(M * 16, 8)) block(256) args(x, seg, M, N)
// @kerncast launch cumsum_reverse_segscan grid(ceil_div(M * 16, 8)) block(256) args(x, seg, y, M, N)

extern "C" __global__ void __launch_bounds__(256) cumsum_reverse_segsum(const float* __restrict__ x,
                                                                       float* __restrict__ seg, int M, int N) {
    const int s = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (s >= M * 16) return;
    const int row = s / 16, k = s % 16;
    const int per = (N + 15) / 16;
    const int j0 = k * per, j1 = min(N, j0 + per);
    const float* r = x + (size_t)row * N;
    float sum = 0.0f;
    for (int j = j0 + lane; j < j1; j += 32) sum += r[j];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) seg[s] = sum;
}

extern "C" __global__ void __launch_bounds__(256) cumsum_reverse_segscan(const float* __restrict__ x,
                                                                        const float* __restrict__ seg,
                                                                        float* __restrict__ y, int M, int N) {
    const int s = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (s >= M * 16) return;
    const int row = s / 16, k = s % 16;
    const int per = (N + 15) / 16;
    const int j0 = k * per, j1 = min(N, j0 + per);
    float carry = 0.0f;
    for (int q = k + 1; q < 16; ++q) carry += seg[row * 16 + q];
    const float* r = x + (size_t)row * N;
    float* o = y + (size_t)row * N;
    if (j1 <= j0) return;
    for (int end = j1; end > j0; end -= 32) {
        const int j = end - 32 + lane;  // lane 31 holds the rightmost float of the chunk
        float v = j >= j0 ? r[j] : 0.0f;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float u = __shfl_down_sync(0xffffffffu, v, off);
            if (lane + off < 32) v += u;
        }
        if (j >= j0) o[j] = v + carry;
        carry += __shfl_sync(0xffffffffu, v, 0);
    }
}
