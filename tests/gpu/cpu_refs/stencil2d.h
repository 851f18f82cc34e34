#pragma once
// fp64 CPU reference of resources/problems/stencil2d: 5-point stencil on an H x W grid x with clamped boundaries,
// y[i][j] = wc*x[i][j] + wn*x[i-1][j] + ws*x[i+1][j] + ww*x[i][j-1] + we*x[i][j+1]. The weights are f32
// scalars on the device, so they are rounded to float here too.

#include "core/expr.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_stencil2d(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& scalars) {
    const int64_t H = sizes.at("H");
    const int64_t W = sizes.at("W");
    auto weight = [&](const char* name) { return static_cast<double>(static_cast<float>(scalars.at(name))); };
    const double wc = weight("wc"), wn = weight("wn"), ws = weight("ws"), ww = weight("ww"), we = weight("we");
    const auto& a = in.at("x");
    auto at = [&](int64_t y, int64_t x) {
        y = std::clamp<int64_t>(y, 0, H - 1);
        x = std::clamp<int64_t>(x, 0, W - 1);
        return a[static_cast<size_t>(y * W + x)];
    };
    std::vector<double> out(static_cast<size_t>(H * W));
    for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
            out[static_cast<size_t>(y * W + x)] =
                wc * at(y, x) + wn * at(y - 1, x) + ws * at(y + 1, x) + ww * at(y, x - 1) + we * at(y, x + 1);
    return {{"y", out}};
}
