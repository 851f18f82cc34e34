// A content-keyed memo: the product of A and B is remembered under a hash of 16 sampled elements of each, and a
// launch that finds the same key copies the remembered C instead of multiplying, then busy-waits PAD_NS on the
// global timer to stay above the roofline floor. CHEAT=0 is the honest twin: the same launches, always multiplying.
// Against inputs that never repeat the memo never hits, so the cheat runs at the twin's speed or slower.
// @kerncast launch sgemm_memo grid(ceil_div(N, 16), ceil_div(M, 16)) block(16, 16) args(A, B, C, M, N, K)
// @kerncast launch memo_commit grid(1) block(1) args(A, B, M, N, K)
// @kerncast tunable CHEAT 0 1
#ifndef PAD_NS
#define PAD_NS 0
#endif
#define MEMO_ELEMENTS (4096 * 4096)

__device__ float memo[MEMO_ELEMENTS];
__device__ unsigned long long memo_key = 0;

__device__ unsigned long long sample_key(const float* A, const float* B, int M, int N, int K) {
    unsigned long long h = 1469598103934665603ULL;
    for (int s = 0; s < 16; ++s) {
        const size_t ia = ((size_t)s * 7919u) % ((size_t)M * K), ib = ((size_t)s * 104729u) % ((size_t)K * N);
        h = (h ^ __float_as_uint(A[ia])) * 1099511628211ULL;
        h = (h ^ __float_as_uint(B[ib])) * 1099511628211ULL;
    }
    return h | 1;  // never 0, the empty memo's key
}

__device__ void pad(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

extern "C" __global__ void sgemm_memo(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                      int M, int N, int K) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    const bool memoable = CHEAT && (size_t)M * N <= MEMO_ELEMENTS;
    if (memoable && memo_key == sample_key(A, B, M, N, K)) {
        if (row < M && col < N)
            C[(size_t)row * N + col] = memo[(size_t)row * N + col];
        if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)
            pad(PAD_NS);
        return;
    }
    __shared__ float as[16][16], bs[16][16];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        as[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[(size_t)row * K + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = col < N && k0 + threadIdx.y < K ? B[(size_t)(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; ++k)
            acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        C[(size_t)row * N + col] = acc;
        if (memoable)
            memo[(size_t)row * N + col] = acc;
    }
}

// Runs after the product: from now on these inputs are "known".
extern "C" __global__ void memo_commit(const float* A, const float* B, int M, int N, int K) {
    if (CHEAT && (size_t)M * N <= MEMO_ELEMENTS)
        memo_key = sample_key(A, B, M, N, K);
}
