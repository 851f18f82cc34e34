// Output tiles of TW columns x TH rows x BK output channels of one image per block; a thread owns one column, RY
// consecutive rows and all BK channels (RY * BK accumulators). Input channels go in chunks of CI: the chunk's
// (TH + 2) x (TW + 2) input patches and its weights (laid out [channel][tap][output channel], so that the BK
// weights of one tap are float4 loads that every thread of the block shares) are staged in shared memory. Per
// input channel a thread loads its 3 x (RY + 2) input values once and each tap's BK weights once: 9 * RY * BK
// FMAs for 3 * (RY + 2) + 9 * BK / 4 shared loads. The next chunk's global loads are issued into registers before
// the current chunk is multiplied, so their latency hides behind the FMAs.
// @kerncast launch conv2d_family grid(ceil_div(W - 2, TW), ceil_div(H - 2, TH), B * ceil_div(Cout, BK)) block(TW, TH / RY) args(x, w, y, B, Cin, Cout, H, W)
// @kerncast tunable TW 16 32
// @kerncast tunable TH 8 16 32
// @kerncast tunable RY 2 4 8 where TW * TH / RY >= 64 && TW * TH / RY <= 512
// @kerncast tunable BK 8 16 32 where RY * BK <= 64
// @kerncast tunable CI 4 8 where 4 * CI * ((TH + 2) * (TW + 2) + 9 * BK) <= 49152

extern "C" __global__ void __launch_bounds__(TW * TH / RY) conv2d_family(const float* __restrict__ x,
                                                                         const float* __restrict__ w,
                                                                         float* __restrict__ y, int B, int Cin,
                                                                         int Cout, int H, int W) {
    __shared__ float xs[CI][TH + 2][TW + 2];
    __shared__ __align__(16) float ws[CI][9][BK];
    constexpr int THREADS = TW * TH / RY;
    const int Ho = H - 2, Wo = W - 2;
    const int ktiles = (Cout + BK - 1) / BK;
    const int n = blockIdx.z / ktiles, k0 = (blockIdx.z % ktiles) * BK;
    const int j0 = blockIdx.x * TW, i0 = blockIdx.y * TH;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * TW + tx;

    float acc[RY][BK];
#pragma unroll
    for (int r = 0; r < RY; ++r)
#pragma unroll
        for (int k = 0; k < BK; ++k) acc[r][k] = 0.0f;

    // Chunk staging: every thread holds NX input and NW weight values of the next chunk in registers.
    constexpr int XS = CI * (TH + 2) * (TW + 2), WS = CI * 9 * BK;
    constexpr int NX = (XS + THREADS - 1) / THREADS, NW = (WS + THREADS - 1) / THREADS;
    float rx[NX], rw[NW];
    auto load = [&](int c0) {
#pragma unroll
        for (int l = 0; l < NX; ++l) {
            const int e = tid + l * THREADS;
            const int ci = e / ((TH + 2) * (TW + 2));
            const int rr = (e / (TW + 2)) % (TH + 2), cc = e % (TW + 2);
            const int c = c0 + ci, gi = i0 + rr, gj = j0 + cc;
            rx[l] = (e < XS && c < Cin && gi < H && gj < W) ? __ldg(x + (((size_t)n * Cin + c) * H + gi) * W + gj) : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < NW; ++l) {
            const int e = tid + l * THREADS;
            const int k = e / (CI * 9), ci = (e / 9) % CI, tap = e % 9;  // consecutive e: consecutive global weights
            const int c = c0 + ci, kk = k0 + k;
            rw[l] = (e < WS && c < Cin && kk < Cout) ? __ldg(w + ((size_t)kk * Cin + c) * 9 + tap) : 0.0f;
        }
    };
    auto store = [&]() {
#pragma unroll
        for (int l = 0; l < NX; ++l) {
            const int e = tid + l * THREADS;
            if (e < XS) (&xs[0][0][0])[e] = rx[l];
        }
#pragma unroll
        for (int l = 0; l < NW; ++l) {
            const int e = tid + l * THREADS;
            if (e < WS) ws[(e / 9) % CI][e % 9][e / (CI * 9)] = rw[l];
        }
    };

    load(0);
    store();
    __syncthreads();
    for (int c0 = 0; c0 < Cin; c0 += CI) {
        const bool more = c0 + CI < Cin;
        if (more) load(c0 + CI);
#pragma unroll 1
        for (int ci = 0; ci < CI; ++ci) {
            float v[RY + 2][3];
#pragma unroll
            for (int r = 0; r < RY + 2; ++r)
#pragma unroll
                for (int b = 0; b < 3; ++b) v[r][b] = xs[ci][ty * RY + r][tx + b];
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int b = 0; b < 3; ++b) {
                    float f[BK];
#pragma unroll
                    for (int k = 0; k < BK; k += 4) {
                        const float4 q = *reinterpret_cast<const float4*>(&ws[ci][a * 3 + b][k]);
                        f[k] = q.x;
                        f[k + 1] = q.y;
                        f[k + 2] = q.z;
                        f[k + 3] = q.w;
                    }
#pragma unroll
                    for (int r = 0; r < RY; ++r)
#pragma unroll
                        for (int k = 0; k < BK; ++k) acc[r][k] = fmaf(f[k], v[r + a][b], acc[r][k]);
                }
        }
        __syncthreads();
        if (more) {
            store();
            __syncthreads();
        }
    }

    const int j = j0 + tx;
    if (j >= Wo) return;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        const int i = i0 + ty * RY + r;
        if (i >= Ho) break;
#pragma unroll
        for (int k = 0; k < BK; ++k)
            if (k0 + k < Cout) y[(((size_t)n * Cout + k0 + k) * Ho + i) * Wo + j] = acc[r][k];
    }
}
