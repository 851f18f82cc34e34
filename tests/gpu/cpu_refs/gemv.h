#pragma once
// fp64 CPU reference of resources/problems/gemv: y (M) = A (M x N, row-major) * x (N).

#include "core/expr.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_gemv(const std::map<std::string, std::vector<double>>& in,
                                                           const kerncast::Bindings& sizes,
                                                           const std::map<std::string, double>& /*scalars*/) {
    const auto M = static_cast<size_t>(sizes.at("M"));
    const auto N = static_cast<size_t>(sizes.at("N"));
    const auto& A = in.at("A");
    const auto& x = in.at("x");
    std::vector<double> y(M, 0.0);
    for (size_t i = 0; i < M; ++i) {
        double s = 0.0;
        for (size_t j = 0; j < N; ++j)
            s += A[i * N + j] * x[j];
        y[i] = s;
    }
    return {{"y", y}};
}
