#pragma once
// fp64 CPU reference of resources/problems/argmax: y[b, c] = the first r where x[b, r, c] is largest.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_argmax(const std::map<std::string, std::vector<double>>& in,
                                                             const kerncast::Bindings& sizes,
                                                             const std::map<std::string, double>& /*scalars*/) {
    const auto bn = static_cast<size_t>(sizes.at("B"));
    const auto rn = static_cast<size_t>(sizes.at("R"));
    const auto cn = static_cast<size_t>(sizes.at("C"));
    const auto& x = in.at("x");
    std::vector<double> y(bn * cn);
    for (size_t b = 0; b < bn; ++b)
        for (size_t c = 0; c < cn; ++c) {
            size_t at = 0;
            for (size_t r = 1; r < rn; ++r)
                if (x[(b * rn + r) * cn + c] > x[(b * rn + at) * cn + c])
                    at = r;
            y[b * cn + c] = static_cast<double>(at);
        }
    return {{"y", y}};
}
