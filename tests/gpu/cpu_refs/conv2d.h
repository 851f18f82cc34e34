#pragma once
// fp64 CPU reference of resources/problems/conv2d: 3 x 3 cross-correlation, stride 1, no padding, NCHW, Cout x Cin x 3
// x 3 weights.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_conv2d(const std::map<std::string, std::vector<double>>& in,
                                                             const kerncast::Bindings& sizes,
                                                             const std::map<std::string, double>& /*scalars*/) {
    const auto bn = static_cast<size_t>(sizes.at("B"));
    const auto cin = static_cast<size_t>(sizes.at("Cin"));
    const auto cout = static_cast<size_t>(sizes.at("Cout"));
    const auto h = static_cast<size_t>(sizes.at("H"));
    const auto w = static_cast<size_t>(sizes.at("W"));
    const size_t ho = h - 2, wo = w - 2;
    const auto& x = in.at("x");
    const auto& f = in.at("w");
    std::vector<double> y(bn * cout * ho * wo, 0.0);
    for (size_t n = 0; n < bn; ++n)
        for (size_t k = 0; k < cout; ++k) {
            double* out = y.data() + (n * cout + k) * ho * wo;
            for (size_t c = 0; c < cin; ++c) {
                const double* p = x.data() + (n * cin + c) * h * w;
                const double* g = f.data() + (k * cin + c) * 9;
                for (size_t a = 0; a < 3; ++a)
                    for (size_t b = 0; b < 3; ++b)
                        for (size_t i = 0; i < ho; ++i)
                            for (size_t j = 0; j < wo; ++j)
                                out[i * wo + j] += g[a * 3 + b] * p[(i + a) * w + j + b];
            }
        }
    return {{"y", y}};
}
