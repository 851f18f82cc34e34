#pragma once
// fp64 CPU reference of resources/problems/mse_loss: loss = mean of (p - t)^2.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_mse_loss(const std::map<std::string, std::vector<double>>& in,
                                                               const kerncast::Bindings& sizes,
                                                               const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& p = in.at("p");
    const auto& t = in.at("t");
    double s = 0.0;
    for (size_t i = 0; i < n; ++i)
        s += (p[i] - t[i]) * (p[i] - t[i]);
    return {{"loss", {s / static_cast<double>(n)}}};
}
