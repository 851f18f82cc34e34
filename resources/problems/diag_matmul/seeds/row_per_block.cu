// One block of 256 threads per row: the scale once, then a float4 loop along the row (when M % 4 == 0; single
// floats otherwise).
// @kerncast launch diag_row_block grid(N) block(256) args(A, B, C, N, M)

extern "C" __global__ void __launch_bounds__(256) diag_row_block(const float* __restrict__ A,
                                                                const float* __restrict__ B, float* __restrict__ C,
                                                                int N, int M) {
    const float a = A[blockIdx.x];
    const float* br = B + (size_t)blockIdx.x * M;
    float* cr = C + (size_t)blockIdx.x * M;
    if ((M & 3) == 0) {
        for (int v = threadIdx.x; v < M / 4; v += 256) {
            float4 t = reinterpret_cast<const float4*>(br)[v];
            t.x *= a;
            t.y *= a;
            t.z *= a;
            t.w *= a;
            reinterpret_cast<float4*>(cr)[v] = t;
        }
    } else {
        for (int j = threadIdx.x; j < M; j += 256) cr[j] = a * br[j];
    }
}
