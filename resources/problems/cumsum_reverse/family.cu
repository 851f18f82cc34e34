// TPR threads per row (a warp up to a whole block), ROWS rows per block. A row is walked from its right end in
// tiles of TPR * ITEMS floats; a thread owns ITEMS consecutive floats of a tile (vector loads and stores when
// N % ITEMS == 0 and the tile is whole, which keeps them aligned), scans them in registers from the right, and the
// threads' totals are scanned from the right with warp shuffles and, for more than one warp per row, one shared
// slot per warp. The running sum of the tiles already done is the carry added to the next tile.
// @kerncast launch cumsum_reverse_family grid(ceil_div(M, ROWS)) block(TPR, ROWS) args(x, y, M, N)
// @kerncast tunable TPR 32 64 128 256 512 1024
// @kerncast tunable ROWS 1 2 4 where TPR * ROWS >= 64 && TPR * ROWS <= 1024
// @kerncast tunable ITEMS 1 2 4 8

struct __align__(ITEMS >= 4 ? 16 : 4 * ITEMS) Chunk {
    float v[ITEMS];
};

extern "C" __global__ void __launch_bounds__(TPR * ROWS) cumsum_reverse_family(const float* __restrict__ x,
                                                                              float* __restrict__ y, int M, int N) {
    __shared__ float slots[ROWS][TPR / 32 + 1];
    const int row = blockIdx.x * ROWS + threadIdx.y;
    const bool valid = row < M;
    const float* r = x + (size_t)(valid ? row : 0) * N;
    float* o = y + (size_t)(valid ? row : 0) * N;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid / 32;
    constexpr int TILE = TPR * ITEMS;
    const int ntiles = (N + TILE - 1) / TILE;  // the same for every row: the barriers below match
    float carry = 0.0f;
    for (int t = ntiles - 1; t >= 0; --t) {
        const int j0 = t * TILE + tid * ITEMS;
        const bool whole = N % ITEMS == 0 && (t + 1) * TILE <= N;
        Chunk c;
        if (whole && valid) {
            c = *reinterpret_cast<const Chunk*>(r + j0);
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) c.v[k] = (valid && j0 + k < N) ? r[j0 + k] : 0.0f;
        }
#pragma unroll
        for (int k = ITEMS - 2; k >= 0; --k) c.v[k] += c.v[k + 1];
        // Inclusive suffix scan of the thread totals within the warp.
        float s = c.v[0];
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float u = __shfl_down_sync(0xffffffffu, s, off);
            if (lane + off < 32) s += u;
        }
        float later = s - c.v[0];  // totals of the threads to the right within the warp
        float tile_total;
#if TPR > 32
        if (lane == 0) slots[threadIdx.y][warp] = s;
        __syncthreads();
        tile_total = 0.0f;
#pragma unroll
        for (int w = 0; w < TPR / 32; ++w) {
            const float ws = slots[threadIdx.y][w];
            tile_total += ws;
            if (w > warp) later += ws;
        }
        __syncthreads();
#else
        tile_total = __shfl_sync(0xffffffffu, s, 0);
#endif
        const float add = carry + later;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) c.v[k] += add;
        if (valid) {
            if (whole) {
                *reinterpret_cast<Chunk*>(o + j0) = c;
            } else {
#pragma unroll
                for (int k = 0; k < ITEMS; ++k)
                    if (j0 + k < N) o[j0 + k] = c.v[k];
            }
        }
        carry += tile_total;
    }
}
