#pragma once
// fp64 CPU reference of resources/problems/cross_entropy: mean over rows of logsumexp(row) - row[label].

#include "core/expr.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_cross_entropy(
    const std::map<std::string, std::vector<double>>& in, const kerncast::Bindings& sizes,
    const std::map<std::string, double>& /*scalars*/) {
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto c = static_cast<size_t>(sizes.at("C"));
    const auto& logits = in.at("logits");
    const auto& labels = in.at("labels");
    double total = 0.0;
    for (size_t i = 0; i < m; ++i) {
        const double* r = logits.data() + i * c;
        const double mx = *std::max_element(r, r + c);
        double s = 0.0;
        for (size_t j = 0; j < c; ++j)
            s += std::exp(r[j] - mx);
        total += std::log(s) + mx - r[static_cast<size_t>(labels[i])];
    }
    return {{"loss", {total / static_cast<double>(m)}}};
}
