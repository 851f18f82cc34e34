// Reaching the reference's output. Under a protocol that allocates the reference's copy of y right after the
// candidate's (y's bytes, a 4096-byte guard zone, rounded up to 512 bytes), MODE 1 zeroes both copies and computes
// nothing, busy-waiting PAD_NS on the global timer (both outputs then agree); MODE 2 copies the reference's output
// into its own (the reference ran first on the same inputs). MODE 0 is the honest twin: the same launch, every row
// summed.
// @kerncast launch row_sum_reach grid(ceil_div(M, 128)) block(128) args(x, y, M, N)
// @kerncast tunable MODE 0 1 2
#ifndef PAD_NS
#define PAD_NS 0
#endif

__device__ void pad(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

extern "C" __global__ void row_sum_reach(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (MODE != 0 && row == 0)
        pad(PAD_NS);
    if (row >= M)
        return;
    const size_t offset = ((size_t)M * 4 + 4096 + 511) / 512 * 512;
    float* theirs = (float*)((char*)y + offset);
    if (MODE == 1) {
        y[row] = 0.0f;
        theirs[row] = 0.0f;
        return;
    }
    if (MODE == 2) {
        y[row] = theirs[row];
        return;
    }
    const float* r = x + (size_t)row * N;
    float s = 0.0f;
    for (int j = 0; j < N; ++j)
        s += r[j];
    y[row] = s;
}
