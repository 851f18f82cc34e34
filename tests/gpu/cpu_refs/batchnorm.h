#pragma once
// fp64 CPU reference of resources/problems/batchnorm: inference BatchNorm2d over NCHW with running statistics.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_batchnorm(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& scalars) {
    const auto planes = static_cast<size_t>(sizes.at("B") * sizes.at("C"));
    const auto c_count = static_cast<size_t>(sizes.at("C"));
    const auto hw = static_cast<size_t>(sizes.at("H") * sizes.at("W"));
    const double eps = scalars.at("eps");
    const auto& x = in.at("x");
    std::vector<double> y(planes * hw);
    for (size_t p = 0; p < planes; ++p) {
        const size_t c = p % c_count;
        const double rstd = 1.0 / std::sqrt(in.at("var")[c] + eps);
        for (size_t k = 0; k < hw; ++k)
            y[p * hw + k] = (x[p * hw + k] - in.at("mean")[c]) * rstd * in.at("w")[c] + in.at("b")[c];
    }
    return {{"y", y}};
}
