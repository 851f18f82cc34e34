#pragma once
// Recalibration of bin forecasts against the outcomes a run has measured (ARCHITECTURE §6).
//
// A forecaster whose probabilities are systematically too optimistic or too wide scores below the climatology even
// when it ranks candidates well: on a space where nearly every child is a little slower than its parent, a forecast
// that gives 15% to "faster than the parent" where 3% come true loses to always saying 3%. A forecast over ordered
// bins is a cumulative distribution: F_k = P(outcome in bins 1..k) at each of the kBinCount - 1 inner edges. Each
// edge is recalibrated by Platt scaling (logistic regression of "the outcome fell at or below edge k" on logit F_k,
// the standard recalibration of a probability, here one per edge as in cumulative-link models): F'_k =
// sigmoid(a_k + b_k logit F_k). The maps are increasing (b_k > 0 is enforced), so a forecast that put more below an
// edge still does after; the cumulative probabilities are kept in order (a running maximum) and the bins are their
// differences.
//
// Each edge's (a_k, b_k) is fitted by penalised maximum likelihood, the penalty `prior` * (a_k^2 + (b_k - 1)^2)
// pulling it towards the identity (a = 0, b = 1): a few outcomes move a forecast a little, many as far as they show.
//
// Drift: a search's forecasts and outcomes change as it climbs (early on many children beat their parents, near the
// optimum almost none do), so an outcome can carry a weight, and the search weighs recent ones more
// (search_loop_recalibration.cpp).
//
// Selection: a selective search measures the candidates whose forecasts were unsure or optimistic, so the outcomes
// it learns from are not a random sample of its forecasts. What is estimated is P(outcome | forecast), which
// selecting on the forecast itself leaves unbiased; that is why this works from the measured candidates alone.

#include "core/bins.h"

#include <array>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace kerncast {

class BinRecalibration {
public:
    static constexpr double kDefaultPrior = 0.5;  // penalty weight towards the identity, in log-likelihood units
    static constexpr size_t kMinOutcomes = 8;     // fewer outcomes fit nothing

    // One forecast (probabilities, index 0 is bin 1), the bin (1..kBinCount) that came true and its weight in the
    // fit. Throws kerncast::Error for a bin out of range, a weight not positive, or probabilities that are negative,
    // not finite or all zero.
    void add(const std::array<double, kBinCount>& probabilities, int true_bin, double weight = 1);
    size_t size() const { return m_truth.size(); }
    bool usable() const { return size() >= kMinOutcomes; }
    void setPrior(double prior) { m_prior = prior; }

    // Fits every edge's map on the outcomes added so far (the identity until then).
    void fit();
    // Edge k's (1..kBinCount-1) map of a cumulative probability.
    double transform(int edge, double cumulative) const;
    // The forecast recalibrated: its cumulative probabilities at the inner edges mapped, kept in order, differenced.
    // Normalised.
    std::array<double, kBinCount> apply(const std::array<double, kBinCount>& probabilities) const;

private:
    std::vector<std::array<double, kBinCount - 1>> m_cumulative;  // each outcome's forecast F_1..F_7
    std::vector<int> m_truth;
    std::vector<double> m_weight;
    std::array<double, kBinCount - 1> m_a{}, m_b{};
    double m_prior = kDefaultPrior;
    bool m_fitted = false;
};

// One forecast's probabilities (index 0 is bin 1) and the bin (1..kBinCount) that came true.
using RecalibrationOutcome = std::pair<std::array<double, kBinCount>, int>;

// A recalibration fitted on `outcomes` in the order they came true, each weighing half as much as the one
// `half_life` outcomes newer (the newest weighs 1); nullopt while they are too few to fit (usable()).
std::optional<BinRecalibration> fit_recent(const std::vector<RecalibrationOutcome>& outcomes, double half_life);

// Whether to recalibrate, and with what (choose_recalibration).
struct RecalibrationChoice {
    std::optional<BinRecalibration> fit;  // fit_recent on every outcome, where the check below passed
    size_t outcomes = 0;                  // outcomes given
    size_t held_out = 0;                  // the newest, held out by the check (0: too few to check)
    // Mean Brier score plus ranked probability score of the held-out outcomes' forecasts as given, and recalibrated
    // by fit_recent on the older outcomes.
    double score_given = 0, score_recalibrated = 0;
};

// fit_recent, where it would have improved the newest outcomes' forecasts: the newest quarter of the outcomes (at
// least kMinOutcomes) is held out, fit_recent on the older ones recalibrates the held-out forecasts, and the
// recalibration is fitted on all of them only if that lowered the held-out Brier score plus ranked probability score
// below the forecasts' own. A surrogate already calibrated for the run, or one whose newest outcomes contradict the
// older ones, is shown as it forecast; until 2 * kMinOutcomes outcomes there is nothing to hold out and nothing is
// fitted. This is what a search shows (SearchConfig::recalibrate).
RecalibrationChoice choose_recalibration(const std::vector<RecalibrationOutcome>& outcomes, double half_life);

}  // namespace kerncast
