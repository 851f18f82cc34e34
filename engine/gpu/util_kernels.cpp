#include "engine/gpu/util_kernels.h"

#include "core/error.h"

#include <nvrtc.h>

#include <algorithm>
#include <string>

namespace kerncast {

// Utility kernels, compiled once per session for the device's architecture. Element types follow DType's order
// (f32 f16 bf16 f64 i32 u8); distributions: 0 uniform [a, b), 1 normal (mean a, std b), 2 randint [a, b).
const char* const kUtilSource = R"CUDA(
typedef unsigned long long u64;
typedef unsigned int u32;

__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
__device__ __forceinline__ u64 draw(u64 key, u64 i) { return mix64(key + (i + 1) * 0x9e3779b97f4a7c15ULL); }
__device__ __forceinline__ double unit(u64 r) { return (double)(r >> 11) * (1.0 / 9007199254740992.0); }

__device__ __forceinline__ unsigned short to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ unsigned short to_bf16(float f) {
    u32 x = __float_as_uint(f);
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; inputs are never NaN
    return (unsigned short)(x >> 16);
}

// One generated input value. Not inlined, so that kerncast_fill and kerncast_check_fill run the same machine code
// and agree to the bit.
__device__ __noinline__ double gen_value(int dist, u64 key, u64 i, double a, double b) {
    const u64 r = draw(key, i);
    if (dist == 0)
        return __dadd_rn(a, __dmul_rn(b - a, unit(r)));  // no FMA contraction: hosts can reproduce it
    if (dist == 1) {  // Box-Muller in single precision: inputs are regenerated for every timed run, so it must be cheap
        const float u1 = (float)((unsigned)(r >> 40) + 1u) * (1.0f / 16777216.0f);  // (0, 1]: log is finite
        const float u2 = (float)(unsigned)(draw(key ^ 0x5851f42d4c957f2dULL, i) >> 40) * (1.0f / 16777216.0f);
        return a + b * (double)(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
    }
    const u64 span = (u64)(b - a);
    return a + (double)__umul64hi(r, span);
}
// The bits an element of this dtype holds for a value, and the bits an element holds now.
__device__ __forceinline__ u64 value_bits(int dtype, double v) {
    switch (dtype) {
    case 0: return __float_as_uint((float)v);
    case 1: return to_half((float)v);
    case 2: return to_bf16((float)v);
    case 3: return (u64)__double_as_longlong(v);
    case 4: return (u32)(int)v;
    default: return (unsigned char)v;
    }
}
__device__ __forceinline__ u64 element_bits(const void* p, int dtype, u64 i) {
    switch (dtype) {
    case 0: case 4: return ((const u32*)p)[i];
    case 1: case 2: return ((const unsigned short*)p)[i];
    case 3: return ((const u64*)p)[i];
    default: return ((const unsigned char*)p)[i];
    }
}

extern "C" __global__ void kerncast_fill(void* dst, int dtype, int dist, u64 n, u64 key, double a, double b) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const u64 bits = value_bits(dtype, gen_value(dist, key, i, a, b));
        switch (dtype) {
        case 0: case 4: ((u32*)dst)[i] = (u32)bits; break;
        case 1: case 2: ((unsigned short*)dst)[i] = (unsigned short)bits; break;
        case 3: ((u64*)dst)[i] = bits; break;
        default: ((unsigned char*)dst)[i] = (unsigned char)bits; break;
        }
    }
}

// ---- Verification on the device (large cases): the same rules as engine/gpu/verifier.cpp, counted with atomics.
// Copying gigabytes back and widening them to double costs seconds per check; these kernels cost milliseconds.
// A failure found here is re-checked on the host, which words the reason.
__device__ __forceinline__ double load_value(const void* p, int dtype, u64 i) {
    switch (dtype) {
    case 0: return (double)((const float*)p)[i];
    case 1: { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(((const unsigned short*)p)[i])); return (double)f; }
    case 2: return (double)__uint_as_float(((u32)((const unsigned short*)p)[i]) << 16);
    case 3: return ((const double*)p)[i];
    case 4: return (double)((const int*)p)[i];
    default: return (double)((const unsigned char*)p)[i];
    }
}
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_max(double v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// counters[0]: reference elements that are not finite; sums[0]: the reference's sum of squares.
extern "C" __global__ void kerncast_check_ref(const void* want, int dtype, u64 n, u64* counters, double* sums) {
    u64 nonfinite = 0;
    double sq = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const double b = load_value(want, dtype, i);
        if (isfinite(b)) sq += b * b; else ++nonfinite;
    }
    nonfinite = warp_sum(nonfinite);
    sq = warp_sum(sq);
    if ((threadIdx.x & 31) == 0) {
        if (nonfinite) atomicAdd(counters, nonfinite);
        atomicAdd(sums, sq);
    }
}

// counters[1]: candidate elements not finite (poison included) or, for integers, outside the tolerance;
// counters[2]: candidate elements over the tolerance; counters[3]/[4]: elements differing from element 0 in the
// candidate/the reference (constant outputs); maxbits[0]/[1]: max |a-b| and max |a-b|/|b| as ordered bits.
// With `scale`, atol is multiplied by the reference's RMS over its finite elements, from counters[0] and
// counters[6] as kerncast_check_ref left them earlier on the same stream.
extern "C" __global__ void kerncast_check_out(const void* got, const void* want, int dtype, u64 n, double atol,
                                              double rtol, int scale, u64* counters) {
    unsigned long long* maxbits = (unsigned long long*)(counters + 7);
    if (scale) {
        const u64 finite = n - counters[0];
        atol *= finite ? sqrt(__longlong_as_double((long long)counters[6]) / (double)finite) : 0.0;
    }
    u64 nonfinite = 0, bad = 0, got_varies = 0, want_varies = 0;
    double max_abs = 0, max_rel = 0;
    const double got0 = load_value(got, dtype, 0), want0 = load_value(want, dtype, 0);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const double a = load_value(got, dtype, i), b = load_value(want, dtype, i);
        if (!isfinite(a)) { ++nonfinite; continue; }
        if (dtype >= 4) {  // integers: the poison value where the reference has another value is unwritten
            const double poison = dtype == 4 ? -1.0 : 255.0;
            if (a == poison && b != poison) { ++nonfinite; continue; }
        }
        got_varies += !(a == got0);
        want_varies += !(b == want0);
        const double diff = fabs(a - b);
        max_abs = fmax(max_abs, diff);
        if (b != 0) max_rel = fmax(max_rel, diff / fabs(b));
        bad += diff > atol + rtol * fabs(b);
    }
    nonfinite = warp_sum(nonfinite);
    bad = warp_sum(bad);
    got_varies = warp_sum(got_varies);
    want_varies = warp_sum(want_varies);
    max_abs = warp_max(max_abs);
    max_rel = warp_max(max_rel);
    if ((threadIdx.x & 31) == 0) {
        if (nonfinite) atomicAdd(counters + 1, nonfinite);
        if (bad) atomicAdd(counters + 2, bad);
        if (got_varies) atomicAdd(counters + 3, got_varies);
        if (want_varies) atomicAdd(counters + 4, want_varies);
        atomicMax(maxbits, (unsigned long long)__double_as_longlong(max_abs));  // non-negative: bit order = value order
        atomicMax(maxbits + 1, (unsigned long long)__double_as_longlong(max_rel));
    }
}

// counters[5]: elements of an input that no longer hold what kerncast_fill wrote from the same key: the input was
// modified. Needs no snapshot.
extern "C" __global__ void kerncast_check_fill(const void* p, int dtype, int dist, u64 n, u64 key, double a, double b,
                                               u64* counters) {
    u64 changed = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        changed += element_bits(p, dtype, i) != value_bits(dtype, gen_value(dist, key, i, a, b));
    changed = warp_sum(changed);
    if ((threadIdx.x & 31) == 0 && changed) atomicAdd(counters + 5, changed);
}

// *counter: bytes of the guard regions (blockIdx.y picks one: table[2y] its address, table[2y+1] its length) that no
// longer hold the guard byte 0xA5.
extern "C" __global__ void kerncast_check_guards(const u64* table, u64* counter) {
    const unsigned char* p = (const unsigned char*)table[2 * blockIdx.y];
    const u64 n = table[2 * blockIdx.y + 1];
    u64 changed = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        changed += p[i] != 0xA5;
    changed = warp_sum(changed);
    if ((threadIdx.x & 31) == 0 && changed) atomicAdd(counter, changed);
}

extern "C" __global__ void kerncast_flush(uint4* p, u64 n, u32 v) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        p[i] = make_uint4(v, v ^ (u32)i, v, (u32)i);
}

// Four independent 16-byte loads in flight per thread: a single load per iteration leaves ~10% of the DRAM
// bandwidth unused on Hopper, and the ceiling must be at least as fast as the best honest kernel.
extern "C" __global__ void kerncast_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a; dst[i + stride] = b; dst[i + 2 * stride] = c; dst[i + 3 * stride] = d;
    }
    for (; i < n; i += stride)
        dst[i] = src[i];
}

// Reads only, 4 independent 16-byte loads in flight: HBM reads run faster than a copy's mixed traffic, and
// read-heavy kernels reach that rate, so the bandwidth ceiling is the faster of the two.
extern "C" __global__ void kerncast_read(const uint4* __restrict__ src, u32* sink, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    u32 acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        const uint4 a = src[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9e3779b9u)  // keeps the loads; practically never true
        sink[0] = acc;
}

extern "C" __global__ void kerncast_fma(float* out, int iters, float seed) {
    float a0 = seed + threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6,
          a7 = a0 + 7;
    const float m = 0.9999999f, c = 1e-7f;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
            a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
        }
    }
    const float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    if (s == 1234.5f)  // practically never: keeps the chains alive without a store per thread
        out[0] = s;
}
)CUDA";

namespace {

std::string nvrtc_log(nvrtcProgram prog) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    if (size)
        nvrtcGetProgramLog(prog, log.data());
    return log;
}

}  // namespace

std::vector<char> compile_util(int cc_major, int cc_minor) {
    const int cc = cc_major * 10 + cc_minor;
    int count = 0;
    nvrtcGetNumSupportedArchs(&count);
    std::vector<int> archs(static_cast<size_t>(std::max(count, 0)));
    if (count)
        nvrtcGetSupportedArchs(archs.data());
    const bool exact = std::find(archs.begin(), archs.end(), cc) != archs.end();
    const int target = exact || archs.empty() ? cc : archs.back();
    const std::string arch = (exact ? "-arch=sm_" : "-arch=compute_") + std::to_string(target);

    nvrtcProgram prog = nullptr;
    if (nvrtcCreateProgram(&prog, kUtilSource, "kerncast_util.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        throw Error("NVRTC could not create the utility program");
    const char* opts[] = {arch.c_str(), "-std=c++17"};
    const nvrtcResult rc = nvrtcCompileProgram(prog, 2, opts);
    if (rc != NVRTC_SUCCESS) {
        const std::string log = nvrtc_log(prog);
        nvrtcDestroyProgram(&prog);
        throw Error("NVRTC could not compile Kerncast's utility kernels for " + arch + ": " + log);
    }
    std::vector<char> image;
    size_t size = 0;
    if (exact) {
        nvrtcGetCUBINSize(prog, &size);
        image.resize(size);
        nvrtcGetCUBIN(prog, image.data());
    } else {
        nvrtcGetPTXSize(prog, &size);
        image.resize(size);
        nvrtcGetPTX(prog, image.data());
    }
    nvrtcDestroyProgram(&prog);
    return image;
}

}  // namespace kerncast
