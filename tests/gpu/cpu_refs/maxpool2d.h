#pragma once
// fp64 CPU reference of resources/problems/maxpool2d: 3 x 3 max pooling, stride 2, padding 1, over NCHW.

#include "core/expr.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_maxpool2d(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    const auto planes = static_cast<size_t>(sizes.at("B") * sizes.at("C"));
    const auto h = static_cast<long>(sizes.at("H"));
    const auto w = static_cast<long>(sizes.at("W"));
    const long ho = (h - 1) / 2 + 1, wo = (w - 1) / 2 + 1;
    const auto& x = in.at("x");
    std::vector<double> y(planes * static_cast<size_t>(ho * wo));
    for (size_t p = 0; p < planes; ++p)
        for (long i = 0; i < ho; ++i)
            for (long j = 0; j < wo; ++j) {
                double m = -std::numeric_limits<double>::infinity();
                for (long r = 2 * i - 1; r <= 2 * i + 1; ++r)
                    for (long c = 2 * j - 1; c <= 2 * j + 1; ++c)
                        if (r >= 0 && r < h && c >= 0 && c < w)
                            m = std::max(m, x[p * h * w + r * w + c]);
                y[p * ho * wo + i * wo + j] = m;
            }
    return {{"y", y}};
}
