#pragma once
// fp64 CPU reference of resources/problems/groupnorm: GroupNorm over NCHW, statistics per (sample, group), per-channel
// affine.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_groupnorm(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& scalars) {
    const auto bn = static_cast<size_t>(sizes.at("B"));
    const auto c_count = static_cast<size_t>(sizes.at("C"));
    const auto g_count = static_cast<size_t>(sizes.at("G"));
    const auto hw = static_cast<size_t>(sizes.at("H") * sizes.at("W"));
    const size_t cpg = c_count / g_count, len = cpg * hw;
    const double eps = scalars.at("eps");
    const auto& x = in.at("x");
    std::vector<double> y(bn * c_count * hw);
    for (size_t grp = 0; grp < bn * g_count; ++grp) {
        const double* r = x.data() + grp * len;
        double s = 0.0;
        for (size_t j = 0; j < len; ++j)
            s += r[j];
        const double mean = s / static_cast<double>(len);
        double ss = 0.0;
        for (size_t j = 0; j < len; ++j)
            ss += (r[j] - mean) * (r[j] - mean);
        const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(len) + eps);
        for (size_t j = 0; j < len; ++j) {
            const size_t c = (grp % g_count) * cpg + j / hw;
            y[grp * len + j] = (r[j] - mean) * rstd * in.at("w")[c] + in.at("b")[c];
        }
    }
    return {{"y", y}};
}
