#pragma once
// fp64 CPU reference of resources/problems/depthwise_conv2d: 3 x 3 depthwise cross-correlation, stride 1, no padding,
// over NCHW.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_depthwise_conv2d(
    const std::map<std::string, std::vector<double>>& in, const kerncast::Bindings& sizes,
    const std::map<std::string, double>& /*scalars*/) {
    const auto planes = static_cast<size_t>(sizes.at("B") * sizes.at("C"));
    const auto c_count = static_cast<size_t>(sizes.at("C"));
    const auto h = static_cast<size_t>(sizes.at("H"));
    const auto w = static_cast<size_t>(sizes.at("W"));
    const size_t ho = h - 2, wo = w - 2;
    const auto& x = in.at("x");
    const auto& f = in.at("w");
    std::vector<double> y(planes * ho * wo);
    for (size_t p = 0; p < planes; ++p) {
        const double* k = f.data() + (p % c_count) * 9;
        for (size_t i = 0; i < ho; ++i)
            for (size_t j = 0; j < wo; ++j) {
                double s = 0.0;
                for (size_t a = 0; a < 3; ++a)
                    for (size_t b = 0; b < 3; ++b)
                        s += k[a * 3 + b] * x[p * h * w + (i + a) * w + j + b];
                y[p * ho * wo + i * wo + j] = s;
            }
    }
    return {{"y", y}};
}
