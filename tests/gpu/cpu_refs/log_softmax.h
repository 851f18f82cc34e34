#pragma once
// fp64 CPU reference of resources/problems/log_softmax: row-wise log-softmax of an M x N matrix.

#include "core/expr.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_log_softmax(const std::map<std::string, std::vector<double>>& in,
                                                                  const kerncast::Bindings& sizes,
                                                                  const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> y(m * n);
    for (size_t i = 0; i < m; ++i) {
        const double* r = x.data() + i * n;
        const double mx = *std::max_element(r, r + n);
        double s = 0.0;
        for (size_t j = 0; j < n; ++j)
            s += std::exp(r[j] - mx);
        const double shift = mx + std::log(s);
        for (size_t j = 0; j < n; ++j)
            y[i * n + j] = r[j] - shift;
    }
    return {{"y", y}};
}
