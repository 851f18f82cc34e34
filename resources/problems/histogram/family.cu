// Shared-memory histograms per block, 16-byte loads with ITEMS loads in flight per thread, a grid of at most GRID
// blocks striding over the input, then one global atomicAdd per bin per block. A first launch clears the counts;
// block 0 reads the last N % 16 bytes one at a time.
//
// LAYOUT 0 keeps COPIES histograms per block (warp w adds to copy w % COPIES); every lane of a warp adds to the same
// copy, so random bytes make ~3-4 lanes hit the same shared-memory bank and each atomic waits for that many passes.
// LAYOUT 1 keeps one histogram per lane (counter of bin b for lane l at word b * 32 + l): a lane always hits its own
// bank, so a warp's atomic is served in one pass; warps still share the copies, hence atomics.
// @kerncast launch hist_clear grid(1) block(256) args(counts)
// @kerncast launch hist_family grid(min(ceil_div(N, BLOCK * 16 * ITEMS), GRID)) block(BLOCK) args(x, counts, N)
// @kerncast tunable BLOCK 128 256 512 1024
// @kerncast tunable ITEMS 1 2 4
// @kerncast tunable LAYOUT 0 1
// @kerncast tunable COPIES 1 2 4 8 where COPIES <= BLOCK / 32 && (LAYOUT == 0 || COPIES == 1)
// @kerncast tunable GRID 132 264 528 1056 2112

extern "C" __global__ void hist_clear(int* counts) { counts[threadIdx.x] = 0; }

#if LAYOUT == 0
#define KC_SLOTS (COPIES * 256)
#define KC_SLOT(copy, bin) ((copy) * 256 + (bin))
#else
#define KC_SLOTS (32 * 256)
#define KC_SLOT(lane, bin) ((bin) * 32 + (lane))
#endif

__device__ __forceinline__ void add_word(int* h, int copy, unsigned int w) {
    atomicAdd(&h[KC_SLOT(copy, w & 0xffu)], 1);
    atomicAdd(&h[KC_SLOT(copy, (w >> 8) & 0xffu)], 1);
    atomicAdd(&h[KC_SLOT(copy, (w >> 16) & 0xffu)], 1);
    atomicAdd(&h[KC_SLOT(copy, w >> 24)], 1);
}

__device__ __forceinline__ void add_vec(int* h, int copy, const uint4& a) {
    add_word(h, copy, a.x);
    add_word(h, copy, a.y);
    add_word(h, copy, a.z);
    add_word(h, copy, a.w);
}

extern "C" __global__ void __launch_bounds__(BLOCK) hist_family(const unsigned char* __restrict__ x,
                                                               int* __restrict__ counts, int N) {
    __shared__ int h[KC_SLOTS];
    for (int i = threadIdx.x; i < KC_SLOTS; i += BLOCK) h[i] = 0;
    __syncthreads();
#if LAYOUT == 0
    const int copy = (threadIdx.x / 32) % COPIES;
#else
    const int copy = threadIdx.x % 32;
#endif
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    const size_t nvec = (size_t)N / 16;
    const size_t stride = (size_t)gridDim.x * BLOCK;
    size_t v = (size_t)blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll 1
    for (; v + (ITEMS - 1) * stride < nvec; v += ITEMS * stride) {
        uint4 a[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) a[k] = xv[v + k * stride];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) add_vec(h, copy, a[k]);
    }
#pragma unroll 1
    for (; v < nvec; v += stride) add_vec(h, copy, xv[v]);
    if (blockIdx.x == 0)
        for (size_t i = nvec * 16 + threadIdx.x; i < (size_t)N; i += BLOCK) atomicAdd(&h[KC_SLOT(copy, x[i])], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += BLOCK) {
        int c = 0;
#if LAYOUT == 0
#pragma unroll
        for (int k = 0; k < COPIES; ++k) c += h[KC_SLOT(k, b)];
#else
        // Start each thread at another lane's column so that the 32 threads of a warp read 32 different banks.
#pragma unroll
        for (int k = 0; k < 32; ++k) c += h[KC_SLOT((k + b) & 31, b)];
#endif
        if (c) atomicAdd(&counts[b], c);
    }
}
