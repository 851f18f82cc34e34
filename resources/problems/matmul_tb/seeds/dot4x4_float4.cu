// No shared memory: a thread computes a 4x4 block of C as 16 dot products along K, reading 4 rows of A and 4 rows
// of B with float4 loads (when K % 4 == 0; scalars otherwise) through the read-only cache: 8 loads feed 64 FMAs, and
// the blocks of neighbouring threads share their rows in L1/L2.
// @kerncast launch matmul_tb_dot4 grid(ceil_div(N, 64), ceil_div(M, 64)) block(16, 16) args(A, B, C, M, N, K)

extern "C" __global__ void __launch_bounds__(256) matmul_tb_dot4(const float* __restrict__ A,
                                                                const float* __restrict__ B, float* __restrict__ C,
                                                                int M, int N, int K)
{
    const int r0 = (blockIdx.y * 16 + threadIdx.y) * 4;
    const int c0 = (blockIdx.x * 16 + threadIdx.x) * 4;
    if (r0 >= M || c0 >= N) return;
    const float* a[4];
    const float* b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        a[i] = A + (size_t)min(r0 + i, M - 1) * K;  // rows past the edge repeat the last one; never stored
        b[i] = B + (size_t)min(c0 + i, N - 1) * K;
    }
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    if ((K & 3) == 0) {
        for (int k = 0; k < K; k += 4) {
            float4 av[4], bv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                av[i] = __ldg(reinterpret_cast<const float4*>(a[i] + k));
                bv[i] = __ldg(reinterpret_cast<const float4*>(b[i] + k));
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    acc[i][j] = fmaf(av[i].x, bv[j].x, acc[i][j]);
                    acc[i][j] = fmaf(av[i].y, bv[j].y, acc[i][j]);
                    acc[i][j] = fmaf(av[i].z, bv[j].z, acc[i][j]);
                    acc[i][j] = fmaf(av[i].w, bv[j].w, acc[i][j]);
                }
        }
    } else {
        for (int k = 0; k < K; ++k) {
            float av[4], bv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                av[i] = __ldg(a[i] + k);
                bv[i] = __ldg(b[i] + k);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (r0 + i >= M) break;
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (c0 + j < N) C[(size_t)(r0 + i) * N + c0 + j] = acc[i][j];
    }
}
