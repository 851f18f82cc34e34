// One warp per query row, one pass over the keys: each lane holds 4 of the 128 dimensions of q and of the output,
// a key's score is a shuffle reduction across the warp, and the row's maximum and sum are kept as they go (online
// softmax: the output is rescaled when the maximum grows). No shared memory; K and V rows are read with 8-byte loads
// (every query row of a head reads them again, from L2). 8 warps (8 rows) per block.
// @kerncast launch attention_warp_row grid(ceil_div(S, 8), B * H) block(256) args(Q, K, V, O, S, D)

#include <cuda_bf16.h>

#ifndef CAUSAL
#define CAUSAL 0
#endif

extern "C" __global__ void __launch_bounds__(256)
attention_warp_row(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
                   const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int S, int D)
{
    const int lane = threadIdx.x % 32, i = blockIdx.x * 8 + threadIdx.x / 32;
    if (D != 128 || i >= S)
        return;
    const size_t head = (size_t)blockIdx.y * S * 128;
    const float scale = rsqrtf(128.0f);
    float q[4], o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    {
        const uint2 raw = *reinterpret_cast<const uint2*>(Q + head + (size_t)i * 128 + lane * 4);
        const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
        q[0] = __low2float(h[0]) * scale;
        q[1] = __high2float(h[0]) * scale;
        q[2] = __low2float(h[1]) * scale;
        q[3] = __high2float(h[1]) * scale;
    }
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    const int keys = CAUSAL ? i + 1 : S;
    for (int j = 0; j < keys; ++j) {
        const uint2 kr = *reinterpret_cast<const uint2*>(K + head + (size_t)j * 128 + lane * 4);
        const __nv_bfloat162* kh = reinterpret_cast<const __nv_bfloat162*>(&kr);
        float s = q[0] * __low2float(kh[0]) + q[1] * __high2float(kh[0]) + q[2] * __low2float(kh[1]) +
                  q[3] * __high2float(kh[1]);
        for (int off = 16; off > 0; off /= 2)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        const float m_new = fmaxf(m, s);
        const float alpha = __expf(m - m_new), p = __expf(s - m_new);
        l = l * alpha + p;
        m = m_new;
        const uint2 vr = *reinterpret_cast<const uint2*>(V + head + (size_t)j * 128 + lane * 4);
        const __nv_bfloat162* vh = reinterpret_cast<const __nv_bfloat162*>(&vr);
        o[0] = o[0] * alpha + p * __low2float(vh[0]);
        o[1] = o[1] * alpha + p * __high2float(vh[0]);
        o[2] = o[2] * alpha + p * __low2float(vh[1]);
        o[3] = o[3] * alpha + p * __high2float(vh[1]);
    }
    const float inv = 1.0f / l;
    __nv_bfloat162 out[2] = {__floats2bfloat162_rn(o[0] * inv, o[1] * inv), __floats2bfloat162_rn(o[2] * inv, o[3] * inv)};
    *reinterpret_cast<uint2*>(O + head + (size_t)i * 128 + lane * 4) = *reinterpret_cast<const uint2*>(out);
}
