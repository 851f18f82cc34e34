#pragma once
// Forecast quality metrics with exact definitions (ARCHITECTURE §6). The true bin comes from the
// measured speedup with the active scheme; the predicted bin is the argmax (ties to the lower bin); confidence is
// the largest probability.

#include "core/bins.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kerncast {

// One forecast with its measured outcome.
struct ScoredForecast {
    std::array<double, kBinCount> probabilities{};  // index 0 is bin 1; normalised
    double true_speedup = 0;                        // measured, > 0
    std::string pack;                               // problem or pair-set pack: top10_recovery ranks within it
    int true_bin = 0;  // 1..8: the label to score against (a pair file's own true_bin); 0: the scheme's bin of S
};

struct ReliabilityBucket {
    double lower = 0, upper = 0;  // (lower, upper]; bucket 0 also holds confidence 0
    int64_t count = 0;
    double accuracy = 0;         // 0 when empty
    double mean_confidence = 0;  // 0 when empty
};

struct RiskCoveragePoint {
    double threshold = 0;  // confidence t: the selected set is {c >= t}
    double coverage = 0;
    double risk = 0;
};

struct ForecastMetrics {
    int64_t n = 0;
    double accuracy = 0;
    double off_by_one = 0;
    double brier = 0;
    double crps = 0;
    double nll = 0;
    double ece = 0;
    double aurc = 0;
    double kendall_tau_b = 0;
    double top10_recovery = 0;  // mean over packs

    // Trivial baselines on the same set, so that a forecaster that only repeats the common bin shows no skill.
    // Climatology forecasts every item with the set's own true-bin frequencies; the majority bin is its argmax.
    double majority_accuracy = 0;  // share of the set in its most frequent true bin
    double brier_climatology = 0;
    double crps_climatology = 0;
    // 1 - score / climatology's score: > 0 beats climatology, 0 matches it, < 0 is worse. NaN (JSON null) when the
    // climatology is itself perfect (every outcome in one bin), where no forecaster can be told apart from it.
    double brier_skill = 0;
    double crps_skill = 0;
    std::map<std::string, double> top10_recovery_per_pack;
    std::vector<ReliabilityBucket> reliability;  // 10 buckets
    std::vector<RiskCoveragePoint> risk_coverage;
};

// Throws kerncast::Error when a speedup is not positive and finite or probabilities are not a distribution.
// An empty input gives n = 0 and zeros.
ForecastMetrics compute_metrics(const std::vector<ScoredForecast>& forecasts, const BinScheme& scheme);

// {"n":..., "metrics": {accuracy, off_by_one, brier, crps, nll, ece, aurc, kendall_tau_b, top10_recovery,
//  majority_accuracy, brier_climatology, brier_skill, crps_climatology, crps_skill}, "per_pack_top10": {pack: ...}}
// A skill score that is not defined is written as null.
nlohmann::json metrics_json(const ForecastMetrics& metrics);

// The tables behind the summary, for reports: an array of {lower, upper, count, accuracy, mean_confidence} (all 10
// buckets, empty ones included) and an array of {threshold, coverage, risk} from the highest threshold down.
nlohmann::json reliability_json(const ForecastMetrics& metrics);
nlohmann::json risk_coverage_json(const ForecastMetrics& metrics);
// The same tables as CSV with a header line; numbers with 12 significant digits.
std::string reliability_csv(const ForecastMetrics& metrics);
std::string risk_coverage_csv(const ForecastMetrics& metrics);

// The reliability bucket (0..9) of a confidence: bucket k holds (k/10, (k+1)/10] with the edges the doubles k/10.0
// compared exactly; bucket 0 also holds 0 and bucket 9 anything above 1 (sums may exceed 1 by the tolerance).
int reliability_bucket_of(double confidence);

// Kendall's tau-b between two paired samples (ties corrected in both), O(n log n). 0 when fewer than two pairs or
// when either side is constant. Throws kerncast::Error when the sizes differ or a value is not finite.
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

// The ranked probability score (CRPS over the 8 ordered bins) of one distribution against a true bin 1..8: the mean
// over the 7 inner edges of (F(b) - 1[b >= truth])^2.
double ranked_probability_score(const std::array<double, kBinCount>& p, int truth);
// The Brier score of one distribution against a true bin 1..8: sum over bins of (p_b - 1[b == truth])^2.
double brier_score(const std::array<double, kBinCount>& p, int truth);
// 1 - score / baseline; NaN when the baseline is 0 (a perfect baseline leaves nothing to beat).
double skill_score(double score, double baseline);
// A skill score for reports: signed with three decimals ("+0.412", "-0.111"), or "n/a" when it is not defined (NaN,
// or null in metrics_json).
std::string skill_text(double skill);
std::string skill_text(const nlohmann::json& skill);

}  // namespace kerncast
