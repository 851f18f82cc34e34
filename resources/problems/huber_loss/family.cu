// Two launches. GRID blocks of BLOCK threads walk the arrays with a grid-stride loop of VEC-float vector loads
// (when N % VEC == 0; the remainder, and every element otherwise, one at a time), UNROLL vectors of each input in
// flight per thread and UNROLL accumulators; a warp-shuffle and shared-slot reduction writes one partial sum per
// block to scratch. Then one block of 1024 threads adds the GRID partial sums and divides by N.
// @kerncast scratch part f32 (4096)
// @kerncast launch huber_family_partial grid(GRID) block(BLOCK) args(p, t, part, N)
// @kerncast launch huber_family_final grid(1) block(1024) args(part, loss, N)
// @kerncast tunable BLOCK 64 128 256 512 1024
// @kerncast tunable VEC 1 4
// @kerncast tunable UNROLL 1 4
// @kerncast tunable GRID 264 1056 2112

struct __align__(4 * VEC) Vec {
    float v[VEC];
};

// Smooth L1 with beta 1, as torch.nn.functional.smooth_l1_loss.
__device__ __forceinline__ float term(float a, float b) {
    const float d = a - b, m = fabsf(d);
    return m < 1.0f ? 0.5f * d * d : m - 0.5f;
}

extern "C" __global__ void __launch_bounds__(BLOCK) huber_family_partial(const float* __restrict__ p,
                                                                      const float* __restrict__ t,
                                                                      float* __restrict__ part, int N) {
    __shared__ float slots[BLOCK / 32];
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
    const int stride = GRID * BLOCK;
    int tail = 0;  // first element of the scalar loop
    if (N % VEC == 0) {
        const Vec* pv = reinterpret_cast<const Vec*>(p);
        const Vec* tv = reinterpret_cast<const Vec*>(t);
        const int nvec = N / VEC;
        int i = blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll 1
        for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
            Vec a[UNROLL], b[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                a[u] = pv[i + u * stride];
                b[u] = tv[i + u * stride];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                for (int e = 0; e < VEC; ++e) acc[u] += term(a[u].v[e], b[u].v[e]);
        }
#pragma unroll 1
        for (; i < nvec; i += stride) {
            const Vec a = pv[i], b = tv[i];
#pragma unroll
            for (int e = 0; e < VEC; ++e) acc[0] += term(a.v[e], b.v[e]);
        }
        tail = nvec * VEC;
    }
#pragma unroll 1
    for (int i = tail + blockIdx.x * BLOCK + threadIdx.x; i < N; i += stride) acc[0] += term(p[i], t[i]);
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) s += acc[u];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
#pragma unroll
        for (int w = 0; w < BLOCK / 32; ++w) b += slots[w];
        part[blockIdx.x] = b;
    }
}

extern "C" __global__ void __launch_bounds__(1024) huber_family_final(const float* __restrict__ part,
                                                                   float* __restrict__ loss, int N) {
    __shared__ float slots[32];
    float s = 0.0f;
    for (int i = threadIdx.x; i < GRID; i += 1024) s += part[i];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
        for (int w = 0; w < 32; ++w) b += slots[w];
        loss[0] = b / N;
    }
}
