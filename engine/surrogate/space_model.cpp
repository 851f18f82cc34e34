#include "engine/surrogate/space_model.h"

#include "core/error.h"
#include "engine/surrogate/boosters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace kerncast {

namespace {

// P(X <= x) for X ~ Normal(mu, sd).
double normal_cdf(double x, double mu, double sd) { return 0.5 * std::erfc(-(x - mu) / (sd * std::sqrt(2.0))); }

}  // namespace

SpaceModel::SpaceModel(std::vector<std::string> tunables, SpaceModelOptions options)
    : m_tunables(std::move(tunables)), m_options(options) {
    if (m_options.members < 2)
        throw Error("the space model needs at least 2 members for a spread");
}

std::vector<float> SpaceModel::rows(const std::vector<Configuration>& configs) const {
    std::vector<float> out;
    out.reserve(configs.size() * m_tunables.size());
    for (const Configuration& c : configs)
        for (const std::string& name : m_tunables) {
            const auto it = c.find(name);
            out.push_back(it == c.end() ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(it->second));
        }
    return out;
}

void SpaceModel::fit(const std::vector<Configuration>& configs, const std::vector<double>& log_speedups) {
    if (configs.size() != log_speedups.size())
        throw Error("the space model needs one log speedup per configuration");
    m_members.clear();
    double slowest = std::numeric_limits<double>::infinity();
    for (double y : log_speedups)
        if (std::isfinite(y))
            slowest = std::min(slowest, y);
    if (!std::isfinite(slowest) || configs.size() < 2)
        return;
    std::vector<float> labels;
    for (double y : log_speedups)
        labels.push_back(static_cast<float>(std::isfinite(y) ? y : slowest - m_options.failure_penalty));
    const std::vector<float> data = rows(configs);
    const size_t cols = m_tunables.size(), n = configs.size();
    quiet_xgboost();
    std::mt19937_64 rng(m_options.seed * 0x9E3779B97F4A7C15ULL + n);
    for (int k = 0; k < m_options.members; ++k) {
        // A bootstrap sample as weights: how many times each configuration was drawn.
        std::vector<float> weights(n, 0.0F);
        std::uniform_int_distribution<size_t> pick(0, n - 1);
        for (size_t i = 0; i < n; ++i)
            weights[pick(rng)] += 1.0F;
        Booster b = train_squared_error_booster(data, labels, weights, cols,
                                                m_options.seed * 7919ULL + static_cast<uint64_t>(k), m_options.rounds,
                                                {{"max_depth", std::to_string(m_options.max_depth)},
                                                 {"eta", std::to_string(m_options.eta)},
                                                 {"min_child_weight", "1"},
                                                 {"lambda", "1"}});
        m_members.push_back(std::move(b));
    }
}

std::vector<SpaceModel::Prediction> SpaceModel::predict(const std::vector<Configuration>& configs) const {
    std::vector<Prediction> out(configs.size());
    if (!fitted() || configs.empty())
        return out;
    const std::vector<float> data = rows(configs);
    std::vector<std::vector<float>> said;
    for (const Booster& member : m_members)
        said.push_back(predict_rows(member, data, configs.size(), m_tunables.size()));
    const double k = static_cast<double>(said.size());
    for (size_t i = 0; i < configs.size(); ++i) {
        double sum = 0, sq = 0;
        for (const auto& s : said) {
            sum += s[i];
            sq += static_cast<double>(s[i]) * s[i];
        }
        const double mean = sum / k;
        const double var = std::max(0.0, sq / k - mean * mean);
        out[i] = {mean, std::sqrt(var + m_options.sigma_floor * m_options.sigma_floor)};
    }
    return out;
}

double expected_improvement(double mean, double sigma, double best) {
    if (!(sigma > 0))
        return std::max(0.0, mean - best);
    const double z = (mean - best) / sigma;
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
    const double cdf = normal_cdf(z, 0.0, 1.0);
    return (mean - best) * cdf + sigma * pdf;
}

std::array<double, kBinCount> space_bin_probabilities(const BinScheme& scheme, double mean, double sigma) {
    const double sd = std::max(sigma, 1e-6);
    const auto cdf = [&](double edge) { return normal_cdf(std::log(edge), mean, sd); };
    std::array<double, kBinCount> p{};
    double below = 0;
    for (size_t b = 0; b + 1 < kBinCount; ++b) {
        const double upto = cdf(scheme.edges()[b]);
        p[b] = upto - below;
        below = upto;
    }
    p[kBinCount - 1] = 1 - below;
    for (double& v : p)
        v = (1 - kSpaceFloor * kBinCount) * std::max(v, 0.0) + kSpaceFloor;
    return p;
}

}  // namespace kerncast
