#pragma once
// fp64 CPU reference of resources/problems/avgpool2d: 3 x 3 average pooling, stride 3, no padding, over NCHW.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_avgpool2d(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    const auto planes = static_cast<size_t>(sizes.at("B") * sizes.at("C"));
    const auto h = static_cast<size_t>(sizes.at("H"));
    const auto w = static_cast<size_t>(sizes.at("W"));
    const size_t ho = (h - 3) / 3 + 1, wo = (w - 3) / 3 + 1;
    const auto& x = in.at("x");
    std::vector<double> y(planes * ho * wo);
    for (size_t p = 0; p < planes; ++p)
        for (size_t i = 0; i < ho; ++i)
            for (size_t j = 0; j < wo; ++j) {
                double s = 0.0;
                for (size_t a = 0; a < 3; ++a)
                    for (size_t b = 0; b < 3; ++b)
                        s += x[p * h * w + (3 * i + a) * w + 3 * j + b];
                y[p * ho * wo + i * wo + j] = s / 9.0;
            }
    return {{"y", y}};
}
