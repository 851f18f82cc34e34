#pragma once
// fp64 CPU reference of resources/problems/layernorm: row-wise (x - mean) / sqrt(var + eps) * w + b, biased variance.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_layernorm(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& scalars) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const double eps = scalars.at("eps");
    const auto& x = in.at("x");
    const auto& w = in.at("w");
    const auto& b = in.at("b");
    std::vector<double> y(m * n);
    for (size_t i = 0; i < m; ++i) {
        const double* r = x.data() + i * n;
        double s = 0.0;
        for (size_t j = 0; j < n; ++j)
            s += r[j];
        const double mean = s / static_cast<double>(n);
        double ss = 0.0;
        for (size_t j = 0; j < n; ++j)
            ss += (r[j] - mean) * (r[j] - mean);
        const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
        for (size_t j = 0; j < n; ++j)
            y[i * n + j] = (r[j] - mean) * rstd * w[j] + b[j];
    }
    return {{"y", y}};
}
