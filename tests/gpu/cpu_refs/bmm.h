#pragma once
// fp64 CPU reference of resources/problems/bmm: C[i] = A[i] * B[i] for every batch i.

#include "core/expr.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

inline std::map<std::string, std::vector<double>> cpu_bmm(const std::map<std::string, std::vector<double>>& in,
                                                          const kerncast::Bindings& sizes,
                                                          const std::map<std::string, double>& /*scalars*/) {
    const auto batch = static_cast<size_t>(sizes.at("BATCH"));
    const auto m = static_cast<size_t>(sizes.at("M"));
    const auto n = static_cast<size_t>(sizes.at("N"));
    const auto k = static_cast<size_t>(sizes.at("K"));
    const auto& a = in.at("A");
    const auto& b = in.at("B");
    std::vector<double> c(batch * m * n, 0.0);
    for (size_t z = 0; z < batch; ++z)
        for (size_t i = 0; i < m; ++i)
            for (size_t l = 0; l < k; ++l) {
                const double av = a[(z * m + i) * k + l];
                for (size_t j = 0; j < n; ++j)
                    c[(z * m + i) * n + j] += av * b[(z * k + l) * n + j];
            }
    return {{"C", c}};
}
