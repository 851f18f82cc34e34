// The matrix as one flat array of float4 (when M % 4 == 0, so that a vector never straddles two rows), four per
// thread with their loads issued first; each vector finds its row with a division. Single floats otherwise.
// @kerncast launch diag_flat_float4 grid(ceil_div(N * M, 4096)) block(256) args(A, B, C, N, M)

extern "C" __global__ void __launch_bounds__(256) diag_flat_float4(const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C, int N, int M) {
    const size_t n = (size_t)N * M;
    const size_t tile = (size_t)blockIdx.x * 4096;
    if ((M & 3) == 0 && tile + 4096 <= n) {
        const float4* bv = reinterpret_cast<const float4*>(B + tile);
        float4* cv = reinterpret_cast<float4*>(C + tile);
        float4 t[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) t[k] = bv[k * 256 + threadIdx.x];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float a = A[(tile + (size_t)(k * 256 + threadIdx.x) * 4) / M];
            t[k].x *= a;
            t[k].y *= a;
            t[k].z *= a;
            t[k].w *= a;
            cv[k * 256 + threadIdx.x] = t[k];
        }
    } else {
        const size_t end = tile + 4096 < n ? tile + 4096 : n;
        for (size_t i = tile + threadIdx.x; i < end; i += 256) C[i] = A[i / M] * B[i];
    }
}
