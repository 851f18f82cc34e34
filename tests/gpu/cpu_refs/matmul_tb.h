#pragma once
// fp64 CPU reference of resources/problems/matmul_tb: C = A * B^T with B stored N x K.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_matmul_tb(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto k = static_cast<size_t>(sizes.at("K"));
    const auto& a = in.at("A");
    const auto& b = in.at("B");
    std::vector<double> c(m * n);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            double s = 0.0;
            for (size_t l = 0; l < k; ++l)
                s += a[i * k + l] * b[j * k + l];
            c[i * n + j] = s;
        }
    return {{"C", c}};
}
