#pragma once
// CPU reference of resources/problems/histogram: counts of the byte values 0..255.

#include "core/expr.h"

#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_histogram(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto& x = in.at("x");
    std::vector<double> counts(256, 0.0);
    for (size_t i = 0; i < n; ++i)
        counts.at(static_cast<size_t>(x[i])) += 1.0;
    return {{"counts", counts}};
}
