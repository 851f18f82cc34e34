#pragma once
// fp64 CPU reference of resources/problems/huber_loss: loss = mean of smooth L1 (beta 1) of p - t.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_huber_loss(const std::map<std::string, std::vector<double>>& in,
                                                                 const kerncast::Bindings& sizes,
                                                                 const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& p = in.at("p");
    const auto& t = in.at("t");
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double d = p[i] - t[i];
        s += std::abs(d) < 1.0 ? 0.5 * d * d : std::abs(d) - 0.5;
    }
    return {{"loss", {s / static_cast<double>(n)}}};
}
