// One warp per 16x16 tile of Y with wmma (16x16x16, bf16 inputs, f32 accumulators). Each warp stages its 16x16 pieces
// of X and W in its own shared memory (bounds-checked, zero-filled), so any M, N, K works; the sums go through shared
// memory, where the bias and GELU are applied before a bounds-checked bf16 store. Block = 4 warps covering 32x32 of Y.
// @kerncast launch bgemm_warp_tile grid(ceil_div(N, 32), ceil_div(M, 32)) block(128) args(X, W, b, Y, M, N, K)

#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

__device__ float gelu_tanh(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }

extern "C" __global__ void __launch_bounds__(128)
bgemm_warp_tile(const __nv_bfloat16* __restrict__ X, const __nv_bfloat16* __restrict__ W,
                const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ Y, int M, int N, int K)
{
    __shared__ __align__(32) __nv_bfloat16 sA[4][16 * 16];
    __shared__ __align__(32) __nv_bfloat16 sB[4][16 * 16];
    __shared__ __align__(32) float sC[4][16 * 16];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = blockIdx.y * 32 + (warp / 2) * 16;
    const int col0 = blockIdx.x * 32 + (warp % 2) * 16;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    const __nv_bfloat16 zero = __float2bfloat16(0.0f);

    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = lane; e < 256; e += 32) {
            const int r = e / 16, c = e % 16;
            const int ar = row0 + r, ak = k0 + c;
            sA[warp][e] = (ar < M && ak < K) ? X[(size_t)ar * K + ak] : zero;
            const int bk = k0 + r, bc = col0 + c;
            sB[warp][e] = (bk < K && bc < N) ? W[(size_t)bk * N + bc] : zero;
        }
        __syncwarp();
        wmma::load_matrix_sync(fa, sA[warp], 16);
        wmma::load_matrix_sync(fb, sB[warp], 16);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(sC[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
        const int r = row0 + e / 16, c = col0 + e % 16;
        if (r < M && c < N)
            Y[(size_t)r * N + c] = __float2bfloat16(gelu_tanh(sC[warp][e] + __bfloat162float(b[c])));
    }
}
