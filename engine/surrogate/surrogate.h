#pragma once
// Surrogates (ARCHITECTURE §6): forecast a candidate's speedup over its anchor (its measured parent, else the
// reference) as a distribution over the 8 bins of a scheme. The LLM forecaster asks an OpenAI-compatible endpoint; the
// local forecaster is a learned model that needs no LLM (the embedded default). The search runner, `kerncast-cli
// forecast` and `kerncast-cli evaluate` see only this interface.

#include "core/bins.h"
#include "core/forecast.h"
#include "core/run_store.h"
#include "core/static_report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// One evaluated kernel launch of a candidate's plan at the benchmark case.
struct LaunchShape {
    std::string kernel;
    int64_t grid[3] = {1, 1, 1};
    int64_t block[3] = {1, 1, 1};
    int64_t dynamic_smem = 0;
    int64_t cluster[3] = {1, 1, 1};  // thread-block cluster
    int tensor_maps = 0;             // tensormap(...) arguments (TMA copies)
};

// The program a candidate is forecast against (ARCHITECTURE §4): its measured parent when it has one, else the
// reference. The forecast target is S = t_anchor / t_candidate.
struct ForecastAnchor {
    int64_t candidate_id = 0;  // the anchor's candidate id in a run; 0 for the reference (or outside a run)
    bool is_reference = true;  // the problem's reference program
    std::string label;         // "reference", "family BLOCK=256 ITEMS=4", "seed:float4.cu", ...
    std::string source;        // its program text (the reference's when is_reference; "" when unknown)
    std::map<std::string, int64_t> tunables;
    std::vector<StaticReport> static_report;
    std::vector<LaunchShape> launches;  // its plan at the benchmark case
    double speedup = 1;                 // its measured speedup over the reference (1 for the reference itself)
    std::optional<double> time_us;      // its measured time on this device, if known
};

// Everything a surrogate may be told about one candidate. What is unknown stays empty (an imported pair has code
// and hardware but no static report); a surrogate uses what it has.
struct ForecastQuery {
    std::string pack;  // the group ranked together: the problem name, or an imported pair's pack
    std::string problem_name;
    std::string problem_description;
    std::string reference_source;
    std::string candidate_source;
    std::map<std::string, int64_t> tunables;  // the candidate's tunable values (-D defines)
    std::vector<StaticReport> static_report;  // of the candidate, one per kernel
    std::vector<StaticReport> reference_static_report;
    std::vector<LaunchShape> launches;  // the candidate's plan at the benchmark case
    double problem_bytes = 0;           // roofline numbers of the benchmark case (problem.json expressions)
    double problem_flops = 0;
    std::optional<double> reference_time_us;  // measured reference time on this device, if known
    std::optional<double> parent_speedup;     // the parent's measured speedup, if it has one
    ForecastAnchor anchor;                    // what the forecast is against (the reference unless a measured parent)
    std::string hardware;                     // e.g. "NVIDIA H200 (cc 9.0, 132 SMs)"
    nlohmann::json hardware_table = nlohmann::json::object();  // peak numbers for the prompt's hardware table
};

struct ForecastResult {
    std::optional<Forecast> forecast;  // empty when the surrogate could not forecast this query
    std::string error;                 // why, readable (HTTP status, parse failure, timeout...)
    // Predict-or-defer: the surrogate declined to forecast and asks for a measurement (an abstention, not a
    // failure); error holds its reason.
    bool deferred = false;
    int truncated = 0;           // answers cut by the token limit
    std::vector<LlmCall> calls;  // LLM surrogates: every request made for this query (kind "forecast")
};

// A measured example a learning surrogate may learn from: one program (the query's candidate) and its measured
// speedup over the reference. A learner that forecasts against anchors makes its pairs from these (two programs
// of one pack measured on one device give S = speedup_candidate / speedup_anchor).
struct LabelledExample {
    ForecastQuery query;
    double speedup = 0;  // measured t_reference / t_candidate, > 0
};

class Surrogate {
public:
    virtual ~Surrogate() = default;
    // e.g. "local-xgb" or "llm:qwen2.5-coder-32b"; stored with every forecast.
    virtual std::string id() const = 0;
    // One result per query, in order. A failure of one query is that result's error, never an exception; only
    // a misconfiguration that fails every query (no endpoint, no model) may throw kerncast::Error.
    virtual std::vector<ForecastResult> forecast(const std::vector<ForecastQuery>& queries) = 0;
    // New measurements. A learning surrogate retrains (it may batch); others ignore them.
    virtual void learn(const std::vector<LabelledExample>& examples) { (void)examples; }
    // Whether learn() changes later forecasts (then forecasting a candidate again can be worth it).
    virtual bool learns() const { return false; }
    // What a resumed run needs to put a learning surrogate back as it was at a checkpoint, once it has learned the
    // same examples in the same order again (for the local surrogate: how many examples its model was trained on);
    // null when there is nothing to keep.
    virtual nlohmann::json checkpointState() const { return nullptr; }
    virtual void restoreState(const nlohmann::json& state) { (void)state; }
};

}  // namespace kerncast
