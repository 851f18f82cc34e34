#pragma once
// Gating policies (ARCHITECTURE §6): which forecast candidates go to the device. Pure logic, so the same decisions come
// out for the same forecasts and random state, on any machine.

#include "core/bins.h"
#include "core/forecast.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// A small, fully specified random generator (splitmix64): its whole state is one integer, so a run can store it
// and resume with the same sequence.
class SplitMix {
public:
    explicit SplitMix(uint64_t seed = 0) : m_state(seed) {}
    uint64_t next();
    double uniform();            // [0, 1)
    uint64_t below(uint64_t n);  // [0, n), n > 0
    uint64_t state() const { return m_state; }
    void setState(uint64_t state) { m_state = state; }

private:
    uint64_t m_state;
};

enum class GatingDecision {
    Measure,  // unsure or promising: sent to the device
    Trust,    // confident forecast accepted without a measurement (kept out of the elite archive)
    Audit,    // trusted, but measured anyway by the epsilon-audit share
    Discard,  // trusted "slow" forecast: dropped
    Forced,   // a person asked for a measurement
};
const char* to_string(GatingDecision decision);
GatingDecision gating_decision_from_string(const std::string& name);  // throws kerncast::Error
inline bool is_measured(GatingDecision d) {
    return d == GatingDecision::Measure || d == GatingDecision::Audit || d == GatingDecision::Forced;
}

enum class GatingKind { MeasureAll, TopK, Selective };
const char* to_string(GatingKind kind);
GatingKind gating_kind_from_string(const std::string& name);  // "measure-all", "top-k", "selective"

// tau's default comes from kerncast-bench-gated-vs-baseline (docs/gpu-runs/2026-11-22-gating-sweep.txt). At 0.5 a
// gated search with the local surrogate spent up to a third of a 30-measurement budget on unsure children whose
// whole forecast lay below the best, and missed the measure-all baseline's median best on rmsnorm; at 0.4 it
// matched or beat that baseline on all five benchmark problems, over two sets of 20 seeds.
// epsilon's default is large enough that the audited calibration (the surrogate scored on a random share of the
// trusted candidates, which the gate's choice does not skew) has a few candidates in an ordinary search, and small
// enough that the budget it takes costs little: at 0.02 a 30-measurement benchmark search audited a median 3-5
// candidates, at 0.04 6-9, with median bests within 0.5% of 0.02's on five problems and both recordings; at 0.05 and
// above stencil2d on the H100 recording fell below the measure-all baseline (docs/bench/2026-11-27-audit-share.txt).
struct GatingConfig {
    GatingKind kind = GatingKind::Selective;
    int top_k = 1;          // top-k: measured per parent batch, by expected bin
    double tau = 0.4;       // selective: measure when confidence (max probability) < tau ...
    double pi = 0.3;        // ... or when P(S > best) >= pi
    double epsilon = 0.04;  // share of trusted candidates measured anyway (audit); 0 turns auditing off
};
void to_json(nlohmann::json& j, const GatingConfig& c);
GatingConfig gating_config_from_json(const nlohmann::json& j);  // throws kerncast::Error naming the bad field
std::string describe(const GatingConfig& c);                    // "selective tau=0.50 pi=0.30 eps=0.05"

// One forecast candidate of a batch (the children of one parent).
struct GatingInput {
    std::optional<Forecast> forecast;  // none: the surrogate failed, so the candidate is measured
};

struct GatingOutcome {
    GatingDecision decision = GatingDecision::Measure;
    std::string reason;
    double p_above_best = 1;  // P(S > best) under the forecast
    double confidence = 0;    // max probability
};

// Decides a batch. best_speedup is the best the run has measured so far (0 before any). Uses rng only for the
// audit share, one draw per trusted candidate, in batch order.
std::vector<GatingOutcome> decide_gating(const GatingConfig& config, const std::vector<GatingInput>& batch,
                                         const BinScheme& scheme, double best_speedup, SplitMix& rng);

}  // namespace kerncast
