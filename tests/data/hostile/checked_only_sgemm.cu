// Full work only on the launches it expects to be checked: at the benchmark size it multiplies on the first launch
// and on every EVERY-th after it, and otherwise returns at once after PAD_NS on the global timer, leaving C as it
// found it. Under a protocol that compares only some launches' outputs (say, the last timed one, whose index is
// predictable) it is timed mostly doing nothing. CHEAT=0 is the honest twin: the same launches, always multiplying.
// @kerncast launch sgemm_sometimes grid(ceil_div(N, 16), ceil_div(M, 16)) block(16, 16) args(A, B, C, M, N, K)
// @kerncast launch count_launch grid(1) block(1) args(M, N)
// @kerncast tunable CHEAT 0 1
// @kerncast tunable EVERY 2 4 8
#ifndef PAD_NS
#define PAD_NS 0
#endif

__device__ unsigned int large_launches = 0;

__device__ void pad(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

extern "C" __global__ void sgemm_sometimes(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    const bool large = M >= 1024;
    if (CHEAT && large && large_launches % EVERY != 0) {
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
    if (row < M && col < N)
        C[(size_t)row * N + col] = acc;
}

extern "C" __global__ void count_launch(int M, int N) {
    if (M >= 1024)
        ++large_launches;
}
