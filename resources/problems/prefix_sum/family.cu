// Single-pass scan family with decoupled look-back. Each block of BLOCK threads takes the next tile of
// TILE = BLOCK * ITEMS elements (dynamic tile numbers from an atomic counter, so tiles start in order). The tile is
// loaded with coalesced striped loads into shared memory, read back as ITEMS consecutive elements per thread
// (PAD = 1 adds one int per 32 against bank conflicts), scanned in registers, then across the block with warp
// shuffles; warp 0 publishes the tile's aggregate and looks back over its predecessors 32 at a time. The result
// goes back through shared memory for coalesced stores. x is read once and y written once. A first launch clears
// the tile status words and the counter.
// DIRECT = 1 skips the shared-memory transposes: each thread loads its ITEMS consecutive elements straight into
// registers as int4 vectors and stores its results the same way (ITEMS a multiple of 4; the L1 cache merges the
// half-used sectors of neighbouring threads), so a tile costs two barriers fewer.
// @kerncast scratch status f64 (ceil_div(N, BLOCK * ITEMS))
// @kerncast scratch counter i32 (1)
// @kerncast launch scan_init grid(ceil_div(ceil_div(N, BLOCK * ITEMS), 256)) block(256) args(status, counter, N)
// @kerncast launch scan_family grid(ceil_div(N, BLOCK * ITEMS)) block(BLOCK) args(x, y, status, counter, N)
// @kerncast tunable BLOCK 128 256 512 1024
// @kerncast tunable ITEMS 1 2 3 4 5 6 7 8 9 11 12 13 15 16 where BLOCK * ITEMS <= 11264
// @kerncast tunable PAD 0 1
// @kerncast tunable DIRECT 0 1 where DIRECT == 0 || (ITEMS % 4 == 0 && PAD == 0)

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef PAD
#define PAD 1
#endif
#ifndef DIRECT
#define DIRECT 0
#endif
#define TILE (BLOCK * ITEMS)
#define SIDX(i) ((i) + (PAD ? (i) / 32 : 0))

// Inclusive scan inside a warp (shuffles).
__device__ __forceinline__ int warp_inclusive(int v)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
        int t = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += t;
    }
    return v;
}

// Exclusive scan over the block (NT threads, a multiple of 32); *total gets the block's sum. warp_sums holds NT/32
// ints. Ends with a barrier, so warp_sums can be reused right after.
template <int NT>
__device__ __forceinline__ int block_exclusive(int v, int* warp_sums, int* total)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int inc = warp_inclusive(v);
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        int s = lane < NT / 32 ? warp_sums[lane] : 0;
        s = warp_inclusive(s);
        if (lane < NT / 32) warp_sums[lane] = s;
    }
    __syncthreads();
    const int before = warp > 0 ? warp_sums[warp - 1] : 0;
    *total = warp_sums[NT / 32 - 1];
    __syncthreads();
    return before + inc - v;
}

#define FLAG_AGGREGATE 1ull
#define FLAG_PREFIX 2ull

// Tile status words: flag in the high 32 bits (0 = not yet published), the value in the low 32 bits; one 64-bit
// store publishes both at once.
__device__ __forceinline__ void publish(double* status, int tile, unsigned long long flag, int value)
{
    unsigned long long w = (flag << 32) | static_cast<unsigned int>(value);
    atomicExch(reinterpret_cast<unsigned long long*>(status) + tile, w);
}
__device__ __forceinline__ unsigned long long read_status(const double* status, int tile)
{
    return *(reinterpret_cast<const volatile unsigned long long*>(status) + tile);
}

// Called by warp 0 of the block that owns `tile` (tiles are numbered in the order blocks start, so every
// predecessor is running or done). Publishes the tile's aggregate, looks back over predecessors 32 at a time until
// one with an inclusive prefix, publishes this tile's inclusive prefix, and returns the exclusive prefix.
__device__ __forceinline__ int look_back(double* status, int tile, int aggregate)
{
    const int lane = threadIdx.x % 32;
    if (tile == 0) {
        if (lane == 0) publish(status, 0, FLAG_PREFIX, aggregate);
        return 0;
    }
    if (lane == 0) publish(status, tile, FLAG_AGGREGATE, aggregate);
    int prefix = 0;
    int look = tile - 1;
    while (true) {
        const int idx = look - lane;
        unsigned long long w = idx >= 0 ? read_status(status, idx) : (FLAG_PREFIX << 32);
        const unsigned flag = static_cast<unsigned>(w >> 32);
        if (__any_sync(0xffffffffu, flag == 0)) continue;  // a predecessor has not published yet: read again
        const unsigned pmask = __ballot_sync(0xffffffffu, flag == FLAG_PREFIX);
        int value = static_cast<int>(static_cast<unsigned>(w));
        if (pmask) {
            const int first = __ffs(pmask) - 1;  // the nearest predecessor with an inclusive prefix
            if (lane > first) value = 0;
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) value += __shfl_xor_sync(0xffffffffu, value, off);
        prefix += value;
        if (pmask) break;
        look -= 32;
    }
    if (lane == 0) publish(status, tile, FLAG_PREFIX, prefix + aggregate);
    return prefix;
}

extern "C" __global__ void scan_init(double* status, int* counter, int N)
{
    const int tiles = (N + TILE - 1) / TILE;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < tiles) reinterpret_cast<unsigned long long*>(status)[i] = 0ull;
    if (i == 0) *counter = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK) scan_family(const int* __restrict__ x, int* __restrict__ y,
                                                                double* status, int* counter, int N)
{
#if DIRECT
    __shared__ int warp_sums[BLOCK / 32];
    __shared__ int s_tile, s_prefix;
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1);
    __syncthreads();
    const int tile = s_tile;
    const int base = tile * TILE;  // TILE * number of tiles <= N + TILE < 2^31
    const bool full = base + TILE <= N;
    const int mine = base + threadIdx.x * ITEMS;
    int v[ITEMS];
    if (full) {
#pragma unroll
        for (int k = 0; k < ITEMS / 4; ++k) {
            const int4 q = __ldcs(reinterpret_cast<const int4*>(x + mine) + k);
            v[4 * k] = q.x;
            v[4 * k + 1] = q.y;
            v[4 * k + 2] = q.z;
            v[4 * k + 3] = q.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) v[k] = mine + k < N ? x[mine + k] : 0;
    }
#pragma unroll
    for (int k = 1; k < ITEMS; ++k) v[k] += v[k - 1];

    int total;
    const int before = block_exclusive<BLOCK>(v[ITEMS - 1], warp_sums, &total);  // ends with a barrier
    if (threadIdx.x < 32) {
        const int p = look_back(status, tile, total);
        if (threadIdx.x == 0) s_prefix = p;
    }
    __syncthreads();
    const int offset = before + s_prefix;
    if (full) {
#pragma unroll
        for (int k = 0; k < ITEMS / 4; ++k) {
            const int4 q = make_int4(v[4 * k] + offset, v[4 * k + 1] + offset, v[4 * k + 2] + offset,
                                     v[4 * k + 3] + offset);
            __stcs(reinterpret_cast<int4*>(y + mine) + k, q);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (mine + k < N) y[mine + k] = v[k] + offset;
    }
#else
    __shared__ int s_data[SIDX(TILE)];
    __shared__ int warp_sums[BLOCK / 32];
    __shared__ int s_tile, s_prefix;
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1);
    __syncthreads();
    const int tile = s_tile;
    const int base = tile * TILE;  // TILE * number of tiles <= N + TILE < 2^31
    const bool full = base + TILE <= N;

    // Striped, coalesced loads into shared memory.
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int idx = k * BLOCK + threadIdx.x;
        s_data[SIDX(idx)] = (full || base + idx < N) ? __ldcs(x + base + idx) : 0;
    }
    __syncthreads();
    int v[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) v[k] = s_data[SIDX(threadIdx.x * ITEMS + k)];
#pragma unroll
    for (int k = 1; k < ITEMS; ++k) v[k] += v[k - 1];

    int total;
    const int before = block_exclusive<BLOCK>(v[ITEMS - 1], warp_sums, &total);  // ends with a barrier
    if (threadIdx.x < 32) {
        const int p = look_back(status, tile, total);
        if (threadIdx.x == 0) s_prefix = p;
    }
    const int mine = threadIdx.x * ITEMS;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s_data[SIDX(mine + k)] = v[k] + before;  // s_data reads finished before the barrier
    __syncthreads();
    const int prefix = s_prefix;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int idx = k * BLOCK + threadIdx.x;
        if (full || base + idx < N) __stcs(y + base + idx, s_data[SIDX(idx)] + prefix);
    }
#endif
}
