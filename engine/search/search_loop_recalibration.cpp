// The loop's recalibration of forecasts (SearchConfig::recalibrate, core/recalibration.h): the bins of every forecast
// mapped through the calibration its predecessors showed once measured, where that would have improved the newest
// outcomes' forecasts (choose_recalibration; else the reasoning says why not). The gating decision reads the
// surrogate's own bins (Forecast::uncalibrated), and the rest of the loop the continuous prediction (log_mean,
// log_sigma) where a forecast has one, so for the local surrogate this changes what the run shows and scores, not what
// it measures.

#include "engine/search/search_loop.h"

#include <cmath>
#include <cstdio>

namespace kerncast::search_loop {

void Loop::refreshRecalibration() {
    s.recalibration = RecalibrationChoice{};
    if (!cfg.recalibrate)
        return;
    // Measured outcomes in the order the candidates were made (ids grow), the newest weighing most: the calibration
    // drifts as the search climbs (early on many children beat their parents, near the optimum few do).
    std::vector<RecalibrationOutcome> outcomes;
    for (const auto& [id, c] : s.cands) {
        if (!c.forecast || !c.measurement || c.measurement->status != Status::Ok)
            continue;
        const double speedup = c.measurement->speedup / c.forecast->anchor_speedup;
        if (!(speedup > 0) || !std::isfinite(speedup))
            continue;
        // What the surrogate said, never a forecast already recalibrated: fitting on those would undo the correction.
        outcomes.push_back({c.forecast->uncalibrated.value_or(c.forecast->probabilities), s.scheme.binOf(speedup)});
    }
    s.recalibration = choose_recalibration(outcomes, SearchConfig::kRecalibrationHalfLife);
}

void Loop::recalibrate(Forecast& f) const {
    const RecalibrationChoice& r = s.recalibration;
    if (!r.fit) {
        if (r.held_out == 0)
            return;
        char note[300];
        std::snprintf(note, sizeof note,
                      "%sNot recalibrated against the %zu measured forecasts of the run: fitted on the older %zu, a "
                      "recalibration scored %.3f on the newest %zu against their own %.3f (Brier + RPS, lower is "
                      "better).",
                      f.reasoning.empty() ? "" : " ", r.outcomes, r.outcomes - r.held_out, r.score_recalibrated,
                      r.held_out, r.score_given);
        f.reasoning += note;
        return;
    }
    const std::array<double, kBinCount> given = f.probabilities;
    const Forecast binned = Forecast::fromRaw(r.fit->apply(given));
    f.uncalibrated = given;
    f.probabilities = binned.probabilities;
    f.predicted_bin = binned.predicted_bin;
    // The share of "faster than the anchor" before and after: the correction a reader most often wants to see.
    double above_before = 0, above_after = 0;
    const int first_faster = s.scheme.binOf(1.0) + 1;
    for (int b = first_faster; b <= kBinCount; ++b) {
        above_before += given[static_cast<size_t>(b - 1)];
        above_after += f.probabilities[static_cast<size_t>(b - 1)];
    }
    char note[200];
    std::snprintf(note, sizeof note,
                  "%sRecalibrated against the %zu measured forecasts of the run: P(faster than the anchor) %.0f%% -> "
                  "%.0f%%.",
                  f.reasoning.empty() ? "" : " ", r.fit->size(), 100 * above_before, 100 * above_after);
    f.reasoning += note;
}

}  // namespace kerncast::search_loop
