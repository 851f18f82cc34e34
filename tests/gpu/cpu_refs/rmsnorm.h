#pragma once
// fp64 CPU reference of resources/problems/rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, row by row.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_rmsnorm(const std::map<std::string, std::vector<double>>& in,
                                                              const kerncast::Bindings& sizes,
                                                              const std::map<std::string, double>& scalars) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const double eps = scalars.at("eps");
    const auto& x = in.at("x");
    const auto& w = in.at("w");
    std::vector<double> y(m * n);
    for (size_t i = 0; i < m; ++i) {
        double ss = 0.0;
        for (size_t j = 0; j < n; ++j)
            ss += x[i * n + j] * x[i * n + j];
        const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
        for (size_t j = 0; j < n; ++j)
            y[i * n + j] = x[i * n + j] * scale * w[j];
    }
    return {{"y", y}};
}
