#pragma once
// fp64 CPU reference of resources/problems/diag_matmul: C[i, j] = A[i] * B[i, j].

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_diag_matmul(const std::map<std::string, std::vector<double>>& in,
                                                                  const kerncast::Bindings& sizes,
                                                                  const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto& a = in.at("A");
    const auto& b = in.at("B");
    std::vector<double> c(n * m);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < m; ++j)
            c[i * m + j] = a[i] * b[i * m + j];
    return {{"C", c}};
}
