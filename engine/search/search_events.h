#pragma once
// What the search runner reports (ARCHITECTURE §3, §7): value types passed by copy through one callback, the same for
// the CLI and the GUI. Every event carries its run id and a sequence number so that receivers can drop stale ones.
// Everything an event reports is already in the run store when the event is emitted.

#include "core/candidate.h"
#include "core/forecast.h"
#include "core/gating.h"
#include "core/measurement.h"
#include "core/metrics.h"
#include "core/run_state.h"
#include "core/static_report.h"
#include "engine/worker/pool_status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// What one kind of LLM call spent in a search (forecasts, rewrites or diffs).
struct LlmSpend {
    int64_t calls = 0;
    int64_t tokens = 0;  // prompt and completion
    double cost_usd = 0;
    int64_t duplicates = 0;  // mutations: answers that were programs already seen
};

// Counters and live calibration after an event.
struct SearchProgress {
    RunState state = RunState::Idle;
    int64_t candidates = 0;  // proposed so far
    int64_t forecasts = 0;
    int64_t measurements = 0;  // device measurements (incl. failures)
    int64_t budget_measurements = 0;
    int64_t tokens = 0;
    double cost_usd = 0;
    int64_t llm_calls = 0;      // requests to language models (forecasts and mutations)
    int64_t llm_truncated = 0;  // answers cut by the token limit
    int64_t abstained = 0;      // forecasts the surrogate declined (predict-or-defer): measurement requests
    int64_t duplicates = 0;     // proposed children identical to a candidate of the run (not forecast, not measured)
    LlmSpend llm_forecast, llm_rewrite, llm_diff;  // the tokens above, by the kind of call
    int64_t budget_tokens = 0;                     // the run's token budget (0: none)
    double budget_cost_usd = 0;                    // the run's cost budget (0: none)
    double tokensPerMeasurement() const { return measurements > 0 ? double(tokens) / double(measurements) : 0; }
    double costPerMeasurement() const { return measurements > 0 ? cost_usd / double(measurements) : 0; }
    double elapsed_s = 0;
    double best_speedup = 0;  // best measured correct speedup (0 before any)
    int64_t best_candidate = 0;
    // Calibration of the surrogate on the candidates measured so far (forecast before measurement).
    int64_t calibration_n = 0;
    double calibration_accuracy = 0;
    double calibration_ece = 0;
    double calibration_aurc = 0;
    // The same set's trivial baselines (core/metrics.h): without them a forecaster that always names the common bin
    // looks accurate. Skill scores are NaN when every outcome fell in one bin.
    double calibration_majority_accuracy = 0;
    double calibration_brier_skill = 0;
    double calibration_crps_skill = 0;

    // The same figures on the epsilon-audited candidates alone (decision Audit, measured correct, with a forecast).
    // The gate measures most candidates because their forecast was unsure or promising, so the calibration above
    // is of a biased sample; the audited ones are drawn at random from those it trusted. n 0: none audited yet.
    int64_t calibration_audited_n = 0;
    double calibration_audited_accuracy = 0;
    double calibration_audited_ece = 0;
    double calibration_audited_aurc = 0;
    double calibration_audited_majority_accuracy = 0;
    double calibration_audited_brier_skill = 0;
    double calibration_audited_crps_skill = 0;

    // The calibration fields from the metrics of a set of scored forecasts.
    void setCalibration(const ForecastMetrics& m) {
        calibration_n = m.n;
        calibration_accuracy = m.accuracy;
        calibration_ece = m.ece;
        calibration_aurc = m.aurc;
        calibration_majority_accuracy = m.majority_accuracy;
        calibration_brier_skill = m.brier_skill;
        calibration_crps_skill = m.crps_skill;
    }
    void setAuditedCalibration(const ForecastMetrics& m) {
        calibration_audited_n = m.n;
        calibration_audited_accuracy = m.accuracy;
        calibration_audited_ece = m.ece;
        calibration_audited_aurc = m.aurc;
        calibration_audited_majority_accuracy = m.majority_accuracy;
        calibration_audited_brier_skill = m.brier_skill;
        calibration_audited_crps_skill = m.crps_skill;
    }
};

struct SearchEvent {
    enum class Kind {
        RunStarted,
        CandidateProposed,  // candidate (with static_report when it compiled, compile_error when not)
        Forecast,           // candidate_id, forecast
        Gating,             // candidate_id, decision, reason
        Measured,           // candidate_id, measurement, speedup (static_report when it came with the measurement)
        NewBest,            // candidate_id, speedup
        Command,            // a steering command was applied: message names it
        Progress,           // progress only
        Pool,               // pool: the measurement pool's workers changed; message: a worker lost or retired
        Setup,              // before the run starts: message says what the set-up does (starting workers, training)
        Finished,           // exactly one of Finished/Failed ends a run
        Failed,             // message says why
    };
    Kind kind = Kind::Progress;
    int64_t run_id = 0;
    int64_t seq = 0;  // 1, 2, ... within a run
    int64_t candidate_id = 0;
    std::optional<Candidate> candidate;
    std::vector<StaticReport> static_report;
    std::string compile_error;
    std::optional<Forecast> forecast;
    std::optional<GatingDecision> decision;
    std::optional<Measurement> measurement;
    double speedup = 0;   // Measured / NewBest: measured speedup (0 when the candidate failed)
    std::string message;  // Command / Failed / Gating reason / Pool
    std::optional<PoolSnapshot> pool;
    SearchProgress progress;  // after this event
};
const char* to_string(SearchEvent::Kind kind);

using SearchEventFn = std::function<void(const SearchEvent&)>;

}  // namespace kerncast
