#pragma once
// fp64 CPU reference of resources/problems/transpose: y (N x M) = x (M x N) transposed.

#include "core/expr.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_transpose(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    const auto M = static_cast<size_t>(sizes.at("M"));
    const auto N = static_cast<size_t>(sizes.at("N"));
    const auto& a = in.at("x");
    std::vector<double> out(M * N);
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j)
            out[j * M + i] = a[i * N + j];
    return {{"y", out}};
}
