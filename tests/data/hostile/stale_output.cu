// Skips work when it believes its output already holds the answer: on the same inputs (a few elements and the
// size, remembered by the last block of each launch to finish) as its previous launch, it trusts whatever is in z.
// On shared, never-reset outputs every one of these is `ok` with an inflated speedup; with separate outputs reset
// before every timed launch, and the last timed launch checked, each must end `incorrect`.
//   SKIP 0: no work at all             SKIP 1: every tenth block         SKIP 2: the middle block only
//   TRUST 0: its own previous launch (same output buffer)   TRUST 1: whoever ran last (the reference, on shared
//   buffers): the output buffer is not part of the signature
// @kerncast launch saxpy grid(ceil_div(N, 256)) block(256) args(x, y, z, a, N)
// @kerncast tunable SKIP 0 1 2
// @kerncast tunable TRUST 0 1

__device__ unsigned long long last_signature = 0;
__device__ unsigned int blocks_done = 0;

__device__ __forceinline__ unsigned long long signature(const float* x, const float* y, const float* z, int n) {
    unsigned long long h = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)n;
    const int picks[3] = {0, n / 2, n - 1};
    for (int k = 0; k < 3; ++k) {
        h = (h ^ __float_as_uint(x[picks[k]])) * 0x100000001b3ULL;
        h = (h ^ __float_as_uint(y[picks[k]])) * 0x100000001b3ULL;
    }
    if (TRUST == 0)
        h = (h ^ (unsigned long long)z) * 0x100000001b3ULL;
    return h;
}

extern "C" __global__ void saxpy(const float* x, const float* y, float* z, float a, int n) {
    const unsigned long long sig = signature(x, y, z, n);
    // last_signature changes only once every block of this launch has passed this line (below).
    const bool trusted = n >= (1 << 20) && *(volatile unsigned long long*)&last_signature == sig;
    const bool skip = trusted && (SKIP == 0 || (SKIP == 1 && blockIdx.x % 10 == 7) ||
                                  (SKIP == 2 && blockIdx.x == gridDim.x / 2));
    if (!skip) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n)
            z[i] = a * x[i] + y[i];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            last_signature = sig;
            blocks_done = 0;
            __threadfence();
        }
    }
}
