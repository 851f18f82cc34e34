#pragma once
// fp64 CPU reference of resources/problems/silu: y = x / (1 + exp(-x)).

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_silu(const std::map<std::string, std::vector<double>>& in,
                                                           const kerncast::Bindings& sizes,
                                                           const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i)
        y[i] = x[i] / (1.0 + std::exp(-x[i]));
    return {{"y", y}};
}
