#pragma once
// fp64 CPU reference of resources/problems/attention and attention_causal: for each batch and head,
// O = softmax(Q K^T / sqrt(D) [+ causal mask]) V, with Q, K, V and O of shape B x H x S x D, row-major.

#include "core/expr.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

inline std::vector<double> cpu_attention_of(const std::map<std::string, std::vector<double>>& in,
                                            const kerncast::Bindings& sizes, bool causal) {
    const auto heads = static_cast<size_t>(sizes.at("B") * sizes.at("H"));
    const auto S = static_cast<size_t>(sizes.at("S"));
    const auto D = static_cast<size_t>(sizes.at("D"));
    const std::vector<double>& q = in.at("Q");
    const std::vector<double>& k = in.at("K");
    const std::vector<double>& v = in.at("V");
    std::vector<double> o(heads * S * D, 0.0), p(S);
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    for (size_t h = 0; h < heads; ++h) {
        const size_t base = h * S * D;
        for (size_t i = 0; i < S; ++i) {
            const size_t keys = causal ? i + 1 : S;
            double m = -INFINITY, l = 0;
            for (size_t j = 0; j < keys; ++j) {
                double s = 0;
                for (size_t d = 0; d < D; ++d)
                    s += q[base + i * D + d] * k[base + j * D + d];
                p[j] = s * scale;
                m = std::max(m, p[j]);
            }
            for (size_t j = 0; j < keys; ++j)
                l += (p[j] = std::exp(p[j] - m));
            for (size_t j = 0; j < keys; ++j)
                for (size_t d = 0; d < D; ++d)
                    o[base + i * D + d] += p[j] / l * v[base + j * D + d];
        }
    }
    return o;
}

inline std::map<std::string, std::vector<double>> cpu_attention(const std::map<std::string, std::vector<double>>& in,
                                                                const kerncast::Bindings& sizes,
                                                                const std::map<std::string, double>& /*scalars*/) {
    return {{"O", cpu_attention_of(in, sizes, false)}};
}

inline std::map<std::string, std::vector<double>> cpu_attention_causal(
    const std::map<std::string, std::vector<double>>& in, const kerncast::Bindings& sizes,
    const std::map<std::string, double>& /*scalars*/) {
    return {{"O", cpu_attention_of(in, sizes, true)}};
}
