// A partial memo: at the benchmark size one row in twelve is not summed but taken from a cache of the sums an
// earlier launch computed, wherever WHERE keeps it: 0 a __device__ array, 1 the memory just past the input's guard
// zone (unchecked under a protocol with adjacent allocations), 2 the memory just before the input. CHEAT=0 is the
// honest twin: the same launches, every row summed (and the cache still written).
// @kerncast launch row_sum_memo grid(ceil_div(M, 128)) block(128) args(x, y, M, N)
// @kerncast launch memo_fill_done grid(1) block(1) args(M)
// @kerncast tunable CHEAT 0 1
// @kerncast tunable WHERE 0 1 2
#define LARGE 32768

__device__ float cache_array[LARGE];
__device__ int cache_filled = 0;

__device__ float* cache_for(const float* x, int M, int N) {
    if (WHERE == 1)
        return (float*)((char*)(x + (size_t)M * N) + 4096 + 512);
    if (WHERE == 2)
        return (float*)((char*)x - 4096 - 4 * LARGE);
    return cache_array;
}

extern "C" __global__ void row_sum_memo(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M)
        return;
    const bool large = M == LARGE;
    float* cache = large ? cache_for(x, M, N) : nullptr;
    if (CHEAT && large && cache_filled && row % 12 == 0) {
        y[row] = cache[row];
        return;
    }
    const float* r = x + (size_t)row * N;
    float s = 0.0f;
    for (int j = 0; j < N; ++j)
        s += r[j];
    y[row] = s;
    if (large && row % 12 == 0)
        cache[row] = s;
}

extern "C" __global__ void memo_fill_done(int M) {
    if (M == LARGE)
        cache_filled = 1;
}
