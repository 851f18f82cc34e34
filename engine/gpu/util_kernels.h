#pragma once
// Kerncast's own kernels, compiled with NVRTC once per GpuSession for the device's architecture: the input
// generator, the L2 flush, the verification counters and the ceilings' bandwidth and FMA tests.

#include <vector>

namespace kerncast {

// The kernels' CUDA source (engine/gpu/util_kernels.cpp documents each).
extern const char* const kUtilSource;

// kerncast_fma's work per thread: independent FMA chains, each unrolled this many times per iteration.
inline constexpr int kFmaChains = 8, kFmaUnroll = 8;

// Cubin for the exact architecture when NVRTC knows it; otherwise PTX for the newest one it knows, which the
// driver compiles for a newer GPU. Throws Error with NVRTC's log when the source does not compile.
std::vector<char> compile_util(int cc_major, int cc_minor);

}  // namespace kerncast
