#pragma once
// fp64 CPU reference of resources/problems/bgemm_gelu: Y (M x N) = gelu_tanh(X (M x K) * W (K x N) + b (N)), all bf16
// and row-major. The inputs arrive as the exact values of the bf16 numbers, so the products are exact in fp64; the
// kernel rounds Y to bf16, which the problem's tolerance allows for.

#include "core/expr.h"
#include "tests/gpu/cpu_refs/sgemm.h"

#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_bgemm_gelu(const std::map<std::string, std::vector<double>>& in,
                                                                 const kerncast::Bindings& sizes,
                                                                 const std::map<std::string, double>& /*scalars*/) {
    const auto M = static_cast<size_t>(sizes.at("M"));
    const auto N = static_cast<size_t>(sizes.at("N"));
    const auto K = static_cast<size_t>(sizes.at("K"));
    std::vector<double> y = cpu_matmul_rowmajor(in.at("X"), in.at("W"), M, N, K);
    const std::vector<double>& b = in.at("b");
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j) {
            const double x = y[i * N + j] + b[j];
            y[i * N + j] = 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        }
    return {{"Y", y}};
}
