#pragma once
// fp64 CPU reference of resources/problems/min_reduce: y[i] = min over j of x[i, j].

#include "core/expr.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_min_reduce(const std::map<std::string, std::vector<double>>& in,
                                                                 const kerncast::Bindings& sizes,
                                                                 const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(m);
    for (size_t i = 0; i < m; ++i)
        y[i] = *std::min_element(x.begin() + i * n, x.begin() + (i + 1) * n);
    return {{"y", y}};
}
