#pragma once
// The GPU Forecasters datasets beyond the eval set (docs/formats.md "GPU Forecasters datasets"): their RL training
// pool, discovery pairs and PUCT search-event logs (v2 and v3) read as pairs; their eval-set row schema checked;
// forecasts written in their predictions shape; and the reward components their RL training uses.
//
// Field names and rules follow their record types: an eval-set or RL row has a float aggregated_speedup and a
// true_bin (relative_bin) of 1..8, so a failed candidate is never a row; bins are clamp(floor(2*log2 S)+4, 1, 8).

#include "core/forecast.h"
#include "core/forecasters_import.h"

#include <nlohmann/json.hpp>

#include <array>
#include <iosfwd>
#include <string>
#include <vector>

namespace kerncast {

enum class ForecastersDataset {
    EvalSet,         // comparison_id, pack, anchor_code, candidate_code, hardware, aggregated_speedup, true_bin, ...
    RlTrainingPool,  // row_id, pack, anchor_code, candidate_code, aggregated_speedup, relative_bin, pair_type, ...
    DiscoveryPairs,  // pair_id, problem_id, benchmark_family, parent_code, child_code, g_speedup, true_bin, ...
    PuctEvents,      // a max-reward PUCT search's events.jsonl (v2 or v3)
};

// "eval-set", "rl-pool", "discovery-pairs", "puct-events"; throws Error for another name.
ForecastersDataset forecasters_dataset_from_string(const std::string& name);
const char* to_string(ForecastersDataset dataset);

// What is wrong with one eval-set row under their EvalSetRow schema (required fields and types, true_bin in 1..8
// and equal to their bin of aggregated_speedup); empty when the row passes.
std::vector<std::string> eval_set_row_problems(const nlohmann::json& row);

// Reads rows of an RL training pool or discovery-pair file, or a PUCT event log, as pairs (the eval set has
// import_forecasters_jsonl). Their own bin is kept in source_true_bin and ours recomputed with `scheme`; the other
// fields go to `extra`. A PUCT log gives one pair per evaluated child: anchor = its parent's code, S = the child's
// reward over its parent's (their rewards are speedups over the pack's reference); a child that failed has no S.
// Errors name the line: Skip collects them, Strict throws the first. `version` receives "v2" or "v3" for a PUCT log.
ImportResult import_forecasters_dataset(std::istream& in, const std::string& file_name, ForecastersDataset dataset,
                                        const BinScheme& scheme, ImportMode mode, std::string* version = nullptr);
ImportResult import_forecasters_dataset_file(const std::string& path, ForecastersDataset dataset,
                                             const BinScheme& scheme, ImportMode mode, std::string* version = nullptr);

// One forecast as a row of their eval-set predictions (ScoredEvalRow): comparison_id, pack, surrogate_label, repeat,
// predicted_bin, bin_probabilities [{bin, p}], reasoning, raw_probability_sum, parse_failed, parse_error,
// input_tokens, output_tokens, elapsed_s.
nlohmann::ordered_json predictions_row(const std::string& comparison_id, const std::string& pack,
                                       const Forecast& forecast, int repeat = 0);

// The reward components of their RL training for one forecast against their true bin (1..8): correctness
// 1[predicted == true], half-Brier and CRPS as they define them, the totals correctness + 1 - Brier and
// correctness + 1 - CRPS, and the distance diagnostic 1 - |predicted - true| / 8.
struct ForecastReward {
    double correctness = 0;
    double brier = 0;
    double crps = 0;
    double correctness_brier = 0;
    double correctness_crps = 0;
    double distance = 0;
};
ForecastReward forecast_reward(const std::array<double, kBinCount>& probabilities, int predicted_bin, int true_bin);

}  // namespace kerncast
