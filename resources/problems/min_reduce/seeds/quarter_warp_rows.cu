// Eight lanes per row, four rows per warp, 32 rows per block of 256: short rows keep every lane busy. Each lane
// keeps two float4 loads in flight (when N % 4 == 0; else one float at a time), then three shuffle steps within its
// group of eight.
// @kerncast launch min_reduce_octets grid(ceil_div(M, 32)) block(256) args(x, y, M, N)

#define POS_INF __int_as_float(0x7f800000)

extern "C" __global__ void __launch_bounds__(256) min_reduce_octets(const float* __restrict__ x, float* __restrict__ y,
                                                                   int M, int N) {
    const int row = blockIdx.x * 32 + threadIdx.x / 8;
    const int sub = threadIdx.x & 7;
    float m0 = POS_INF, m1 = POS_INF;
    if (row < M) {
        const float* r = x + (size_t)row * N;
        if ((N & 3) == 0) {
            const float4* r4 = reinterpret_cast<const float4*>(r);
            const int nv = N / 4;
            int v = sub;
            for (; v + 8 < nv; v += 16) {
                const float4 a = r4[v], b = r4[v + 8];
                m0 = fminf(m0, fminf(fminf(a.x, a.y), fminf(a.z, a.w)));
                m1 = fminf(m1, fminf(fminf(b.x, b.y), fminf(b.z, b.w)));
            }
            if (v < nv) {
                const float4 a = r4[v];
                m0 = fminf(m0, fminf(fminf(a.x, a.y), fminf(a.z, a.w)));
            }
        } else {
            for (int j = sub; j < N; j += 8) m0 = fminf(m0, r[j]);
        }
    }
    float m = fminf(m0, m1);
    // Groups of eight lanes are aligned within the warp, so xor offsets below 8 stay inside a group.
#pragma unroll
    for (int off = 4; off > 0; off >>= 1) m = fminf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (sub == 0 && row < M) y[row] = m;
}
