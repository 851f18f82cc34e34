#pragma once
// fp64 CPU reference of resources/problems/gelu: the tanh approximation of GELU.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_gelu(const std::map<std::string, std::vector<double>>& in,
                                                           const kerncast::Bindings& sizes,
                                                           const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    const double k = std::sqrt(2.0 / std::numbers::pi);
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i)
        y[i] = 0.5 * x[i] * (1.0 + std::tanh(k * (x[i] + 0.044715 * x[i] * x[i] * x[i])));
    return {{"y", y}};
}
