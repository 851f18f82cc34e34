#include "core/recalibration.h"

#include "core/error.h"
#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kerncast {

namespace {

constexpr double kClip = 1e-6;      // cumulative probabilities are read in [kClip, 1 - kClip]
constexpr double kMinSlope = 0.05;  // the least slope of an edge's map in logit space

double logit(double p) {
    p = std::clamp(p, kClip, 1 - kClip);
    return std::log(p / (1 - p));
}

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

std::array<double, kBinCount - 1> cumulative_of(const std::array<double, kBinCount>& probabilities) {
    double total = 0;
    for (double p : probabilities) {
        if (!(p >= 0) || !std::isfinite(p))
            throw Error("recalibration: a forecast's probabilities must be finite and not negative");
        total += p;
    }
    if (!(total > 0) || !std::isfinite(total))
        throw Error("recalibration: a forecast with no probability");
    std::array<double, kBinCount - 1> out{};
    double c = 0;
    for (size_t k = 0; k + 1 < kBinCount; ++k) {
        c += probabilities[k] / total;
        out[k] = std::clamp(c, 0.0, 1.0);
    }
    return out;
}

}  // namespace

void BinRecalibration::add(const std::array<double, kBinCount>& probabilities, int true_bin, double weight) {
    if (!(weight > 0) || !std::isfinite(weight))
        throw Error("recalibration: an outcome's weight must be a positive number");
    if (true_bin < 1 || true_bin > kBinCount)
        throw Error("recalibration: the true bin must be 1.." + std::to_string(kBinCount) + ", got " +
                    std::to_string(true_bin));
    m_cumulative.push_back(cumulative_of(probabilities));
    m_truth.push_back(true_bin);
    m_weight.push_back(weight);
    m_fitted = false;
}

void BinRecalibration::fit() {
    m_a.fill(0);
    m_b.fill(1);
    m_fitted = usable();  // too few outcomes: the identity, exactly
    if (!m_fitted)
        return;
    const size_t n = m_truth.size();
    for (size_t k = 0; k + 1 < kBinCount; ++k) {
        // Newton's method on the penalised negative log-likelihood of y_i = [truth_i <= k + 1] given x_i = logit F_k.
        double a = 0, b = 1;
        // Each outcome's x = logit F_k and y = [truth <= edge k], read once for the edge.
        std::vector<double> xs(n), ys(n);
        for (size_t i = 0; i < n; ++i) {
            xs[i] = logit(m_cumulative[i][k]);
            ys[i] = m_truth[i] <= static_cast<int>(k) + 1 ? 1.0 : 0.0;
        }
        // The penalised negative log-likelihood's gradient and Hessian at (a, b).
        struct Local {
            double ga, gb, haa, hab, hbb;
        };
        auto local = [&](double a0, double b0) {
            Local l{2 * m_prior * a0, 2 * m_prior * (b0 - 1), 2 * m_prior, 0, 2 * m_prior};
            for (size_t i = 0; i < n; ++i) {
                const double x = xs[i], p = sigmoid(a0 + b0 * x), v = m_weight[i];
                const double w = v * std::max(p * (1 - p), 1e-12);
                l.ga += v * (p - ys[i]);
                l.gb += v * (p - ys[i]) * x;
                l.haa += w;
                l.hab += w * x;
                l.hbb += w * x * x;
            }
            return l;
        };
        for (int iteration = 0; iteration < 100; ++iteration) {
            const Local l = local(a, b);
            const double det = l.haa * l.hbb - l.hab * l.hab;
            double da = 0, db = 0;
            if (det > 0) {
                da = (l.hbb * l.ga - l.hab * l.gb) / det;
                db = (l.haa * l.gb - l.hab * l.ga) / det;
            }
            if (!(det > 0) || b - db < kMinSlope) {
                // Increasing maps only (a forecast that put more below an edge keeps more below it): at the floor
                // the slope stays there and the intercept alone is fitted, by a bounded Newton step.
                b = std::max(b - db, kMinSlope);
                const Local at_floor = local(a, b);
                da = std::clamp(at_floor.ga / at_floor.haa, -2.0, 2.0);
                db = 0;
            }
            a -= da;
            b -= db;
            if (std::abs(da) + std::abs(db) < 1e-10)
                break;
        }
        m_a[k] = a;
        m_b[k] = b;
    }
}

double BinRecalibration::transform(int edge, double cumulative) const {
    if (edge < 1 || edge >= kBinCount)
        throw Error("recalibration: edge " + std::to_string(edge) + " is not an inner edge (1.." +
                    std::to_string(kBinCount - 1) + ")");
    if (!m_fitted)
        return std::clamp(cumulative, 0.0, 1.0);
    const size_t k = static_cast<size_t>(edge - 1);
    return sigmoid(m_a[k] + m_b[k] * logit(cumulative));
}

std::array<double, kBinCount> BinRecalibration::apply(const std::array<double, kBinCount>& probabilities) const {
    const std::array<double, kBinCount - 1> cumulative = cumulative_of(probabilities);
    std::array<double, kBinCount> out{};
    double previous = 0;
    for (size_t k = 0; k < kBinCount; ++k) {
        const double mapped =
            k + 1 == kBinCount ? 1.0 : std::max(previous, transform(static_cast<int>(k) + 1, cumulative[k]));
        out[k] = mapped - previous;
        previous = mapped;
    }
    return out;
}

std::optional<BinRecalibration> fit_recent(const std::vector<RecalibrationOutcome>& outcomes, double half_life) {
    BinRecalibration fit;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        const double age = static_cast<double>(outcomes.size() - 1 - i);
        fit.add(outcomes[i].first, outcomes[i].second, std::exp2(-age / half_life));
    }
    if (!fit.usable())
        return std::nullopt;
    fit.fit();
    return fit;
}

RecalibrationChoice choose_recalibration(const std::vector<RecalibrationOutcome>& outcomes, double half_life) {
    RecalibrationChoice choice;
    choice.outcomes = outcomes.size();
    const size_t held = std::max(BinRecalibration::kMinOutcomes, outcomes.size() / 4);
    if (outcomes.size() < held + BinRecalibration::kMinOutcomes)
        return choice;
    const auto split = outcomes.end() - static_cast<std::ptrdiff_t>(held);
    const std::optional<BinRecalibration> older = fit_recent({outcomes.begin(), split}, half_life);
    if (!older)
        return choice;
    choice.held_out = held;
    for (auto it = split; it != outcomes.end(); ++it) {
        const auto& [probabilities, truth] = *it;
        const std::array<double, kBinCount> mapped = older->apply(probabilities);
        choice.score_given += brier_score(probabilities, truth) + ranked_probability_score(probabilities, truth);
        choice.score_recalibrated += brier_score(mapped, truth) + ranked_probability_score(mapped, truth);
    }
    choice.score_given /= static_cast<double>(held);
    choice.score_recalibrated /= static_cast<double>(held);
    if (choice.score_recalibrated < choice.score_given)
        choice.fit = fit_recent(outcomes, half_life);
    return choice;
}

}  // namespace kerncast
