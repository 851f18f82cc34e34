#pragma once
// fp64 CPU reference of resources/problems/kl_div: loss = (1/M) * sum of t * (log t - log p) (kl_div with reduction
// 'batchmean').

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_kl_div(const std::map<std::string, std::vector<double>>& in,
                                                             const kerncast::Bindings& sizes,
                                                             const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& p = in.at("p");
    const auto& t = in.at("t");
    double s = 0.0;
    for (size_t i = 0; i < m * n; ++i)
        s += t[i] * (std::log(t[i]) - std::log(p[i]));
    return {{"loss", {s / static_cast<double>(m)}}};
}
