#pragma once
// fp64 CPU reference of resources/problems/mean_reduce: y[b, c] = mean over r of x[b, r, c].

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_mean_reduce(const std::map<std::string, std::vector<double>>& in,
                                                                  const kerncast::Bindings& sizes,
                                                                  const std::map<std::string, double>& /*scalars*/) {
    const auto bn = static_cast<size_t>(sizes.at("B"));
    const auto rn = static_cast<size_t>(sizes.at("R"));
    const auto cn = static_cast<size_t>(sizes.at("C"));
    const auto& x = in.at("x");
    std::vector<double> y(bn * cn, 0.0);
    for (size_t b = 0; b < bn; ++b)
        for (size_t r = 0; r < rn; ++r)
            for (size_t c = 0; c < cn; ++c)
                y[b * cn + c] += x[(b * rn + r) * cn + c];
    for (double& v : y)
        v /= static_cast<double>(rn);
    return {{"y", y}};
}
