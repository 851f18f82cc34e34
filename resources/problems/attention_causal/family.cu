// FlashAttention-style forward on the tensor cores (wmma 16x16x16, bf16 inputs, fp32 accumulators). A block takes
// BR = 16 * WARPS query rows of one batch and head and walks the keys in tiles of BC: K and V tiles go through shared
// memory (rows padded by 8 against bank conflicts), each warp computes the scores of its 16 rows (Q K^T), keeps the
// running maximum and sum of each row (online softmax: earlier partial outputs are rescaled when the maximum grows),
// and adds P V to its output rows, which stay in shared memory in fp32. So K and V are read once per block rather
// than once per query row. CAUSAL 1 stops at the block's last row and masks keys past each row. D must be 128.
// @kerncast launch attention_flash grid(ceil_div(S, 16 * WARPS), B * H) block(32 * WARPS) smem(2 * 136 * (16 * WARPS + 2 * BC) + 16 * WARPS * (4 * (BC + 4) + 2 * (BC + 8) + 4 * 132 + 8) + 128) args(Q, K, V, O, S, D)
// @kerncast tunable WARPS 4 8
// @kerncast tunable BC 32 64

#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

#define CAUSAL 1  // row i sees keys 0..i
#define NEG_INF (-__int_as_float(0x7f800000))
#ifndef WARPS
#define WARPS 4
#endif
#ifndef BC
#define BC 64
#endif

#define HD 128         // head dimension
#define BR (16 * WARPS)
#define LD (HD + 8)    // bf16 per shared row of Q, K, V
#define LDS (BC + 4)   // floats per row of scores
#define LDP (BC + 8)   // bf16 per row of probabilities
#define LDO (HD + 4)   // floats per output row

extern "C" __global__ void __launch_bounds__(32 * WARPS)
attention_flash(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
                const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int S, int D)
{
    if (D != HD)
        return;  // the outputs stay unwritten, and verification says so
    extern __shared__ unsigned char shared_raw[];
    unsigned char* base = shared_raw + ((128 - (reinterpret_cast<size_t>(shared_raw) & 127)) & 127);
    __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(base);
    __nv_bfloat16* Ks = Qs + BR * LD;
    __nv_bfloat16* Vs = Ks + BC * LD;
    float* Ss = reinterpret_cast<float*>(Vs + BC * LD);
    __nv_bfloat16* Ps = reinterpret_cast<__nv_bfloat16*>(Ss + BR * LDS);
    float* Os = reinterpret_cast<float*>(Ps + BR * LDP);
    float* alpha_s = Os + BR * LDO;
    float* l_s = alpha_s + BR;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int r0 = blockIdx.x * BR;
    const size_t head = (size_t)blockIdx.y * S * HD;
    const float scale = rsqrtf((float)HD);
    const uint4 zero = make_uint4(0, 0, 0, 0);

    // Q tile (zero rows past S) and the output rows.
    for (int c = threadIdx.x; c < BR * (HD / 8); c += blockDim.x) {
        const int r = c / (HD / 8), d = (c % (HD / 8)) * 8;
        *reinterpret_cast<uint4*>(Qs + r * LD + d) =
            r0 + r < S ? *reinterpret_cast<const uint4*>(Q + head + (size_t)(r0 + r) * HD + d) : zero;
    }
    for (int c = threadIdx.x; c < BR * HD; c += blockDim.x)
        Os[(c / HD) * LDO + c % HD] = 0.0f;

    // Two lanes per row of the warp's 16: lane / 2 is the row, lane % 2 the half of the BC columns it reads.
    const int row = warp * 16 + lane / 2, half = lane % 2;
    const int query = r0 + row;
    float m = NEG_INF, l = 0.0f;

    const int key_end = CAUSAL ? min(S, r0 + BR) : S;
    for (int c0 = 0; c0 < key_end; c0 += BC) {
        __syncthreads();
        for (int c = threadIdx.x; c < BC * (HD / 8); c += blockDim.x) {
            const int r = c / (HD / 8), d = (c % (HD / 8)) * 8;
            const bool in = c0 + r < S;
            const size_t at = head + (size_t)(c0 + r) * HD + d;
            *reinterpret_cast<uint4*>(Ks + r * LD + d) = in ? *reinterpret_cast<const uint4*>(K + at) : zero;
            *reinterpret_cast<uint4*>(Vs + r * LD + d) = in ? *reinterpret_cast<const uint4*>(V + at) : zero;
        }
        __syncthreads();

        // Scores of the warp's rows against the tile's keys.
        for (int n = 0; n < BC / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int k = 0; k < HD / 16; ++k) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
                wmma::load_matrix_sync(a, Qs + (warp * 16) * LD + k * 16, LD);
                wmma::load_matrix_sync(b, Ks + (n * 16) * LD + k * 16, LD);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Ss + (warp * 16) * LDS + n * 16, acc, LDS, wmma::mem_row_major);
        }
        __syncwarp();

        // Online softmax of each row over this tile.
        float mx = NEG_INF;
        for (int c = half * (BC / 2); c < (half + 1) * (BC / 2); ++c) {
            const int key = c0 + c;
            const bool masked = key >= S || (CAUSAL && key > query);
            const float s = masked ? NEG_INF : Ss[row * LDS + c] * scale;
            Ss[row * LDS + c] = s;
            mx = fmaxf(mx, s);
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        const float m_new = fmaxf(m, mx);
        const float m_use = m_new == NEG_INF ? 0.0f : m_new;  // a row with no key yet (past S) stays at zero
        float sum = 0.0f;
        for (int c = half * (BC / 2); c < (half + 1) * (BC / 2); ++c) {
            const float p = __expf(Ss[row * LDS + c] - m_use);
            const __nv_bfloat16 pb = __float2bfloat16(p);
            Ps[row * LDP + c] = pb;
            sum += __bfloat162float(pb);  // the sum of what P V will add
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        const float alpha = __expf(m - m_use);
        l = l * alpha + sum;
        m = m_new;
        if (half == 0)
            alpha_s[row] = alpha;
        __syncwarp();

        // Rescale the warp's output rows, then add P V.
        for (int c = lane; c < 16 * HD; c += 32) {
            const int r = warp * 16 + c / HD;
            Os[r * LDO + c % HD] *= alpha_s[r];
        }
        __syncwarp();
        for (int j = 0; j < HD / 16; ++j) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, Os + (warp * 16) * LDO + j * 16, LDO, wmma::mem_row_major);
            for (int kk = 0; kk < BC / 16; ++kk) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
                wmma::load_matrix_sync(a, Ps + (warp * 16) * LDP + kk * 16, LDP);
                wmma::load_matrix_sync(b, Vs + (kk * 16) * LD + j * 16, LD);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Os + (warp * 16) * LDO + j * 16, acc, LDO, wmma::mem_row_major);
        }
    }
    if (half == 0)
        l_s[row] = l;
    __syncwarp();
    for (int c = lane; c < 16 * (HD / 2); c += 32) {
        const int r = warp * 16 + c / (HD / 2), d = (c % (HD / 2)) * 2;
        if (r0 + r < S) {
            const float inv = 1.0f / l_s[r];
            *reinterpret_cast<__nv_bfloat162*>(O + head + (size_t)(r0 + r) * HD + d) =
                __floats2bfloat162_rn(Os[r * LDO + d] * inv, Os[r * LDO + d + 1] * inv);
        }
    }
}
