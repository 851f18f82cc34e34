#include "core/fast_p.h"

#include <cmath>

namespace kerncast {

const std::vector<double>& fast_p_thresholds() {
    static const std::vector<double> thresholds{0.0, 1.0, 1.5, 2.0};
    return thresholds;
}

double fast_p(const std::vector<std::optional<double>>& speedups, double p) {
    if (speedups.empty())
        return 0;
    size_t fast = 0;
    for (const auto& s : speedups)
        if (s && std::isfinite(*s) && *s > p)
            ++fast;
    return static_cast<double>(fast) / static_cast<double>(speedups.size());
}

nlohmann::json fast_p_json(const std::vector<std::optional<double>>& speedups) {
    nlohmann::json shares = nlohmann::json::array();
    for (double p : fast_p_thresholds())
        shares.push_back(fast_p(speedups, p));
    return {{"p", fast_p_thresholds()}, {"n", speedups.size()}, {"fast_p", shares}};
}

}  // namespace kerncast
