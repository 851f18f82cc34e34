#pragma once
// fp64 CPU reference of resources/problems/saxpy: y = a * x + y.

#include "core/expr.h"

#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_saxpy(const std::map<std::string, std::vector<double>>& in,
                                                            const kerncast::Bindings& sizes,
                                                            const std::map<std::string, double>& scalars) {
    const auto n = static_cast<size_t>(sizes.at("N"));
    const double a = scalars.at("a");
    const auto& x = in.at("x");
    std::vector<double> y = in.at("y");
    for (size_t i = 0; i < n; ++i)
        y[i] = a * x[i] + y[i];
    return {{"y", y}};
}
