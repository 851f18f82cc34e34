#pragma once
// fp64 CPU reference of resources/problems/softplus: y = log(1 + exp(x)), or x where x > 20 (PyTorch's threshold).

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_softplus(const std::map<std::string, std::vector<double>>& in,
                                                               const kerncast::Bindings& sizes,
                                                               const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i)
        y[i] = x[i] > 20.0 ? x[i] : std::log1p(std::exp(x[i]));
    return {{"y", y}};
}
