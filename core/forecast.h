#pragma once
// A surrogate's forecast of one candidate's speedup: a distribution over the 8 bins of a scheme (ARCHITECTURE §4).

#include "core/bins.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

struct Forecast {
    std::string surrogate_id;  // e.g. "local-xgb" or "llm:qwen2.5-coder-32b"
    std::string scheme_id = "gf-v2";
    std::array<double, kBinCount> probabilities{};  // renormalised to sum 1; index 0 is bin 1
    double raw_sum = 0;                             // the sum before renormalisation, kept for diagnostics
    int predicted_bin = 0;  // argmax (ties, up to a relative 1e-9, to the lower bin), 1..8; 0 when empty
    std::string reasoning;
    std::string prompt_hash;
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double latency_ms = 0;
    double cost_usd = 0;
    // A surrogate that models the natural-log speedup continuously (the local one) also gives its mean and standard
    // deviation: the bins end at 4x, so beyond the last edge only these tell two fast candidates apart.
    std::optional<double> log_mean;
    std::optional<double> log_sigma;
    // The anchor (ARCHITECTURE §4): the probabilities are of S = t_anchor / t_candidate, where the anchor is the
    // measured parent (anchor_id, its candidate id in the run) or the reference (anchor_id 0). anchor_speedup is the
    // anchor's measured speedup over the reference (1 for the reference), so the speedup over the reference is
    // anchor_speedup * S.
    int64_t anchor_id = 0;
    double anchor_speedup = 1;
    // The probabilities as the surrogate (and the space model) gave them, when the search recalibrated them against
    // the outcomes it had measured (core/recalibration.h); empty when these are the surrogate's own. The next
    // recalibration is fitted on these, never on forecasts already recalibrated.
    std::optional<std::array<double, kBinCount>> uncalibrated;

    // Builds a forecast from raw (possibly unnormalised) probabilities. Negative or non-finite values, or an
    // all-zero vector, throw kerncast::Error. Sets probabilities, raw_sum and predicted_bin.
    static Forecast fromRaw(const std::array<double, kBinCount>& raw);

    // Confidence scores.
    double maxProbability() const;
    double normalizedEntropyConfidence() const;  // 1 - H(p) / log 8
    double top2Margin() const;
    // Probability-weighted mean bin (1..8).
    double expectedBin() const;
    // Expected natural-log speedup using bin geometric midpoints. Open bins (1 and 8) use openBinMeans if given
    // (empirical mean log-speedup of measured data in that bin), else edge / sqrt(2) and edge * sqrt(2).
    double expectedLogSpeedup(const BinScheme& scheme, const std::vector<double>& openBinMeans = {}) const;
    // P(speedup > threshold): from the continuous prediction when there is one (normal in log space), else assuming
    // uniform mass in log space within each bin.
    double probabilityAbove(const BinScheme& scheme, double speedup) const;

    // The same over the reference: P(anchor_speedup * S > speedup), and the expected natural-log speedup over the
    // reference (log anchor_speedup + log_mean, or + expectedLogSpeedup without a continuous prediction). Gating
    // compares these with the best measured speedup.
    double probabilityAboveReference(const BinScheme& scheme, double speedup) const;
    double expectedLogSpeedupOverReference(const BinScheme& scheme) const;
    bool anchoredOnReference() const { return anchor_id == 0; }
};

void to_json(nlohmann::json& j, const Forecast& f);
// Forecast::uncalibrated as stored: an array of kBinCount finite, non-negative numbers; throws kerncast::Error.
std::array<double, kBinCount> uncalibrated_from_json(const nlohmann::json& u);
void from_json(const nlohmann::json& j, Forecast& f);

}  // namespace kerncast
