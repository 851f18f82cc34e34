#pragma once
// fp64 CPU reference of resources/problems/cumsum_reverse: y[i, j] = sum over k >= j of x[i, k].

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_cumsum_reverse(
    const std::map<std::string, std::vector<double>>& in, const kerncast::Bindings& sizes,
    const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(m * n);
    for (size_t i = 0; i < m; ++i) {
        double s = 0.0;
        for (size_t j = n; j-- > 0;) {
            s += x[i * n + j];
            y[i * n + j] = s;
        }
    }
    return {{"y", y}};
}
