// Two launches. The first cuts every group into 8 slices and gives each slice a block of 256 threads, which writes
// the slice's sum and sum of squares to scratch (so there are 8x more blocks than groups); the second gives each
// (sample, channel) plane blocks of 256 threads that add the 8 partial sums of the plane's group (variance =
// E[x^2] - mean^2), fold the channel's scale and shift, and write the plane with float4 accesses (when H * W % 4 ==
// 0; single floats otherwise).
// @kerncast scratch part f32 (16 * B * G)
// @kerncast launch groupnorm_slice_stats grid(8, B * G) block(256) args(x, part, B, C, G, H, W)
// @kerncast launch groupnorm_apply grid(ceil_div(H * W, 1024), B * C) block(256) args(x, part, w, b, y, eps, B, C, G, H, W)

extern "C" __global__ void __launch_bounds__(256) groupnorm_slice_stats(const float* __restrict__ x,
                                                                       float* __restrict__ part, int B, int C, int G,
                                                                       int H, int W) {
    __shared__ float rs[8], rq[8];
    const int len = (C / G) * H * W;
    const int per = (len + 7) / 8;
    const int j0 = blockIdx.x * per, j1 = min(len, j0 + per);
    const float* r = x + (size_t)blockIdx.y * len;
    float s = 0.0f, q = 0.0f;
    for (int j = j0 + threadIdx.x; j < j1; j += 256) {
        const float v = r[j];
        s += v;
        q += v * v;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, off);
        q += __shfl_xor_sync(0xffffffffu, q, off);
    }
    if ((threadIdx.x & 31) == 0) {
        rs[threadIdx.x / 32] = s;
        rq[threadIdx.x / 32] = q;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float ts = 0.0f, tq = 0.0f;
        for (int k = 0; k < 8; ++k) {
            ts += rs[k];
            tq += rq[k];
        }
        part[((size_t)blockIdx.y * 8 + blockIdx.x) * 2] = ts;
        part[((size_t)blockIdx.y * 8 + blockIdx.x) * 2 + 1] = tq;
    }
}

extern "C" __global__ void __launch_bounds__(256) groupnorm_apply(const float* __restrict__ x,
                                                                 const float* __restrict__ part,
                                                                 const float* __restrict__ w,
                                                                 const float* __restrict__ b, float* __restrict__ y,
                                                                 float eps, int B, int C, int G, int H, int W) {
    const int plane = blockIdx.y;
    const int n = plane / C, c = plane % C;
    const int cpg = C / G, hw = H * W;
    const int group = n * G + c / cpg;
    float s = 0.0f, q = 0.0f;
    for (int k = 0; k < 8; ++k) {
        s += part[((size_t)group * 8 + k) * 2];
        q += part[((size_t)group * 8 + k) * 2 + 1];
    }
    const float len = (float)(cpg * hw);
    const float mean = s / len;
    const float rstd = rsqrtf(fmaxf(q / len - mean * mean, 0.0f) + eps);
    const float scale = w[c] * rstd, shift = b[c] - mean * scale;
    const float* xp = x + (size_t)plane * hw;
    float* yp = y + (size_t)plane * hw;
    const int tile = blockIdx.x * 1024;
    if ((hw & 3) == 0 && tile + 1024 <= hw) {
        float4 t = reinterpret_cast<const float4*>(xp + tile)[threadIdx.x];
        t.x = fmaf(t.x, scale, shift);
        t.y = fmaf(t.y, scale, shift);
        t.z = fmaf(t.z, scale, shift);
        t.w = fmaf(t.w, scale, shift);
        reinterpret_cast<float4*>(yp + tile)[threadIdx.x] = t;
    } else {
        const int end = min(tile + 1024, hw);
        for (int i = tile + threadIdx.x; i < end; i += 256) yp[i] = fmaf(xp[i], scale, shift);
    }
}
