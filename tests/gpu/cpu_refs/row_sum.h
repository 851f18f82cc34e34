#pragma once
// fp64 CPU reference of resources/problems/row_sum: the sum of each row of an M x N matrix.

#include "core/expr.h"

#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_row_sum(const std::map<std::string, std::vector<double>>& in,
                                                              const kerncast::Bindings& sizes,
                                                              const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(m, 0.0);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j)
            y[i] += x[i * n + j];
    return {{"y", y}};
}
