// Straightforward attention in two passes over the keys, for ROWS = 16 query rows of one batch and head per block of
// 128 threads. The keys come in chunks of 64, staged in shared memory as fp32 (rows padded by 4 floats) and shared
// by the block's rows. Pass 1 computes each chunk's scaled scores and keeps every row's running maximum and sum of
// exponentials; pass 2 computes the scores again, their exponentials against the final maximum, and accumulates
// those times V (staged the same way); the output is that sum over the sum of exponentials. A thread computes the
// scores of one key for 8 rows (float4 loads of the key, the rows' float4 loads shared by the warp), and in pass 2
// one output dimension for all 16 rows (D a multiple of 4). fp32 throughout, bf16 output. CAUSAL 1 lets row i see keys 0..i only.
// @kerncast launch attention_reference grid(ceil_div(S, 16), B * H) block(128) smem(4 * (16 * D + 64 * (D + 4) + 64 * 16 + 32)) args(Q, K, V, O, S, D)

#include <cuda_bf16.h>

#ifndef CAUSAL
#define CAUSAL 0
#endif
#define ROWS 16
#define CHUNK 64
#define NEG_INF (-__int_as_float(0x7f800000))

extern "C" __global__ void __launch_bounds__(128)
attention_reference(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
                    const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int S, int D)
{
    extern __shared__ __align__(16) float shared[];
    const int LD = D + 4;                  // padded row of a staged key or value
    float* q = shared;                     // ROWS x D
    float* kv = q + ROWS * D;              // CHUNK x LD
    float* p = kv + CHUNK * LD;            // CHUNK x ROWS: scores, then exponentials
    float* mrow = p + CHUNK * ROWS;        // ROWS: running maximum
    float* lrow = mrow + ROWS;             // ROWS: running sum of exponentials
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int i0 = blockIdx.x * ROWS;
    const size_t base = (size_t)blockIdx.y * S * D;
    const float scale = rsqrtf((float)D);

    for (int e = t; e < ROWS * D; e += blockDim.x) {
        const int r = e / D, d = e % D;
        q[e] = i0 + r < S ? __bfloat162float(Q[base + (size_t)(i0 + r) * D + d]) : 0.0f;
    }
    if (t < ROWS) {
        mrow[t] = NEG_INF;
        lrow[t] = 0.0f;
    }
    // Keys past the block's last row are masked for every row when causal: the loops stop there.
    const int keys = CAUSAL ? min(S, i0 + ROWS) : S;

    auto stage = [&](const __nv_bfloat16* src, int j0) {
        for (int e = t; e < CHUNK * D; e += blockDim.x) {
            const int j = e / D, d = e % D;
            kv[j * LD + d] = j0 + j < S ? __bfloat162float(src[base + (size_t)(j0 + j) * D + d]) : 0.0f;
        }
    };
    // Scores of key j0 + (t % 64) for rows r0 .. r0 + 7 (r0 = 8 * (t / 64)) into p, masked ones as -inf.
    auto scores = [&](int j0) {
        const int j = t % CHUNK, r0 = (t / CHUNK) * 8;
        float s[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
        for (int d = 0; d < D; d += 4) {
            const float4 k = *reinterpret_cast<const float4*>(&kv[j * LD + d]);
#pragma unroll
            for (int r = 0; r < 8; ++r) {
                const float4 a = *reinterpret_cast<const float4*>(&q[(r0 + r) * D + d]);
                s[r] += a.x * k.x + a.y * k.y + a.z * k.z + a.w * k.w;
            }
        }
#pragma unroll
        for (int r = 0; r < 8; ++r) {
            const bool masked = j0 + j >= S || (CAUSAL && j0 + j > i0 + r0 + r);
            p[j * ROWS + r0 + r] = masked ? NEG_INF : s[r] * scale;
        }
    };

    // Pass 1: every row's maximum and sum of exponentials, chunk by chunk (warp w keeps rows 4w .. 4w + 3).
    for (int j0 = 0; j0 < keys; j0 += CHUNK) {
        __syncthreads();
        stage(K, j0);
        __syncthreads();
        scores(j0);
        __syncthreads();
        for (int r = warp * 4; r < warp * 4 + 4; ++r) {
            const float a = p[lane * ROWS + r], b = p[(lane + 32) * ROWS + r];
            float m = fmaxf(a, b);
            for (int o = 16; o > 0; o /= 2)
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
            const float mOld = mrow[r], mNew = fmaxf(mOld, m);
            float l = 0.0f;
            if (mNew != NEG_INF)
                l = (a == NEG_INF ? 0.0f : __expf(a - mNew)) + (b == NEG_INF ? 0.0f : __expf(b - mNew));
            for (int o = 16; o > 0; o /= 2)
                l += __shfl_xor_sync(0xffffffffu, l, o);
            __syncwarp();
            if (lane == 0) {
                lrow[r] = (mOld == NEG_INF ? 0.0f : lrow[r] * __expf(mOld - mNew)) + l;
                mrow[r] = mNew;
            }
        }
    }

    // Pass 2: the exponentials against the final maxima, times V; thread t owns output dimension t (and t + 128...).
    for (int d0 = 0; d0 < D; d0 += blockDim.x) {
        const int d = d0 + t;
        float acc[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            acc[r] = 0.0f;
        for (int j0 = 0; j0 < keys; j0 += CHUNK) {
            __syncthreads();
            stage(K, j0);
            __syncthreads();
            scores(j0);
            __syncthreads();
            for (int e = t; e < CHUNK * ROWS; e += blockDim.x) {
                const float s = p[e];
                p[e] = s == NEG_INF ? 0.0f : __expf(s - mrow[e % ROWS]);
            }
            stage(V, j0);
            __syncthreads();
            if (d < D) {
                for (int j = 0; j < CHUNK; ++j) {
                    const float v = kv[j * LD + d];
#pragma unroll
                    for (int r = 0; r < ROWS; r += 4) {
                        const float4 e = *reinterpret_cast<const float4*>(&p[j * ROWS + r]);
                        acc[r] += e.x * v;
                        acc[r + 1] += e.y * v;
                        acc[r + 2] += e.z * v;
                        acc[r + 3] += e.w * v;
                    }
                }
            }
        }
        if (d < D)
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                if (i0 + r < S)
                    O[base + (size_t)(i0 + r) * D + d] = __float2bfloat16(acc[r] / lrow[r]);
    }
}
