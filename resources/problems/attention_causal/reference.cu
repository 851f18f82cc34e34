// Straightforward attention: one block of 4 warps per query row of one batch and head. The warps take the keys in
// turn, their lanes splitting the D dimensions, and keep the scaled scores in shared memory; the block then takes the
// row's maximum and the sum of exponentials, and each thread accumulates output dimensions over every key. fp32
// throughout, bf16 output. CAUSAL 1 lets row i see keys 0..i only.
// @kerncast launch attention_naive grid(S, B * H) block(128) smem(4 * (S + D + 8)) args(Q, K, V, O, S, D)

#include <cuda_bf16.h>

#define CAUSAL 1  // row i sees keys 0..i
#define NEG_INF (-__int_as_float(0x7f800000))

extern "C" __global__ void attention_naive(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
                                           const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int S,
                                           int D)
{
    extern __shared__ float shared[];
    float* q = shared;          // D
    float* red = shared + D;    // 8
    float* p = shared + D + 8;  // S
    const int i = blockIdx.x, t = threadIdx.x, warp = t / 32, lane = t % 32;
    const size_t base = (size_t)blockIdx.y * S * D;
    for (int d = t; d < D; d += blockDim.x)
        q[d] = __bfloat162float(Q[base + (size_t)i * D + d]);
    __syncthreads();
    const float scale = rsqrtf((float)D);
    const int keys = CAUSAL ? i + 1 : S;
    float m = NEG_INF;
    for (int j = warp; j < keys; j += 4) {
        float s = 0.0f;
        for (int d = lane; d < D; d += 32)
            s += q[d] * __bfloat162float(K[base + (size_t)j * D + d]);
        for (int o = 16; o > 0; o /= 2)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        s *= scale;
        if (lane == 0)
            p[j] = s;
        m = fmaxf(m, s);
    }
    if (lane == 0)
        red[warp] = m;
    __syncthreads();
    m = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
    __syncthreads();
    float l = 0.0f;
    for (int j = t; j < keys; j += blockDim.x) {
        const float e = __expf(p[j] - m);
        p[j] = e;
        l += e;
    }
    for (int o = 16; o > 0; o /= 2)
        l += __shfl_xor_sync(0xffffffffu, l, o);
    if (lane == 0)
        red[4 + warp] = l;
    __syncthreads();
    l = red[4] + red[5] + red[6] + red[7];
    for (int d = t; d < D; d += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < keys; ++j)
            acc += p[j] * __bfloat162float(V[base + (size_t)j * D + d]);
        O[base + (size_t)i * D + d] = __float2bfloat16(acc / l);
    }
}
