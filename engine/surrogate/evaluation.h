#pragma once
// Scoring a surrogate on a labelled pair set (the GPU Forecasters eval-set schema, or our own pairs export): every
// pair with a measured speedup is forecast, the forecasts are scored (calibration, ranking, selective prediction)
// and stored with their prompts in a new run file. The CLI's `evaluate` and the workbench's "Evaluate Pair Set"
// both call evaluate_pairs(); it writes nothing to a terminal, so each caller says things its own way.

#include "core/metrics.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace kerncast {

struct EvaluationOptions {
    std::string pairs;                // the pair JSONL file
    std::string surrogate = "local";  // local | llm
    // llm: the settings file (LlmConfig::loadSettings) with these on top; empty or 0 leaves the setting.
    std::string endpoint;                           // OpenAI-compatible base URL
    std::string model;                              // model name at the endpoint
    int concurrency = 0;                            // requests in flight
    double timeout_s = 0;                           // seconds per request attempt
    nlohmann::json llm = nlohmann::json::object();  // further LlmConfig fields (profile, prices, max_tokens...)
    int samples = 1;                                // llm: requests per pair, averaged
    bool abstain = false;                           // llm: predict or defer; a deferral is an abstention, not a failure
    std::string report;                // folder for metrics.json and the reliability/risk-coverage tables; "" for none
    std::string store;                 // run file for the forecasts; "" for <pairs>.<surrogate>-eval[-N].sqlite
    std::string recordings;            // local: the recording folder it learns from; "" for the first one
    std::string resources_dir;         // problems/, recordings/, prompts/
    bool strict = false;               // stop at the first malformed line instead of skipping it
    std::string dataset = "eval-set";  // what `pairs` holds: eval-set, rl-pool, discovery-pairs or puct-events
    // What a forecast is scored against: "scheme", the bin of the pair's speedup under our scheme (gf-v2); or
    // "file", the file's own true_bin (their clamp(floor(2*log2 S)+4, 1, 8)), as the GPU Forecasters paper scores.
    std::string true_bins = "scheme";
};

struct EvaluationResult {
    // The metrics over all pairs (metrics_json) plus "per_pack", "surrogate", "failed_forecasts", "skipped_lines",
    // "failed_candidates", "store" and, with a report folder, "report": what `kerncast-cli evaluate --json` prints.
    nlohmann::json json = nlohmann::json::object();
    ForecastMetrics metrics;
    std::string surrogate_id;
    std::string store_path;
    int failed_forecasts = 0;   // pairs whose forecast failed (their lines went to the message callback)
    int deferred = 0;           // pairs the surrogate declined to forecast (abstentions; "abstain_rate" in json)
    int failed_candidates = 0;  // pairs without a speedup (failed candidates), left out
    int unlabelled = 0;         // with --true-bins file: pairs without a true_bin of their own, left out
};

// A line for the user: "<file>:<line>: skipped: ..." for a malformed pair line, "pair <id> (line N): forecast
// failed: ..." for a forecast that failed. Called on the calling thread.
using EvaluationMessageFn = std::function<void(const std::string& message)>;
// Where the evaluation is: stage is "import", "forecast" or "store"; done of total steps within the stage (for
// "forecast", the packs forecast so far, or 0 of 1 while an LLM answers them all at once).
using EvaluationProgressFn = std::function<void(const std::string& stage, size_t done, size_t total)>;

// Throws kerncast::Error when nothing can be evaluated: no pair with a measured speedup, every forecast failed, the
// LLM settings are missing, the store cannot be created or the report cannot be written.
EvaluationResult evaluate_pairs(const EvaluationOptions& options, const EvaluationMessageFn& message = {},
                                const EvaluationProgressFn& progress = {});

}  // namespace kerncast
