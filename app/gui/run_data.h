#pragma once
// What the workbench shows of a run, as plain values: the population rows, the best-so-far curve, a measure-all
// baseline of the same problem, and the data the plots derive from the rows. A stored run is read off the GUI
// thread (loadRun), a live one is kept current from search events; both feed the same functions.

#include "core/metrics.h"
#include "core/run_store.h"
#include "engine/search/search_runner.h"
#include "widgets/candidate_row.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/search_progress_plot.h"

#include <QLocale>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast {

struct LoadedRun {
    QString path;
    QString error;  // non-empty when the file could not be read; nothing else is set then
    RunInfo run;
    bool evaluation = false;             // an `evaluate` run: imported pairs with forecasts, not a search
    std::optional<SearchConfig> config;  // a search's stored config (what Resume continues)
    std::optional<RunState> endState;  // finished/failed when the run's last session ended; none when killed or running
    std::vector<CandidateRow> rows;
    std::vector<ProgressPoint> progress;  // best-so-far after each device measurement
    int64_t measurements = 0;             // device measurements of the run
    int64_t forecasts = 0;                // forecasts of the run, re-forecasts included (what a live run counts)
    int64_t budgetMeasurements = 0;       // the measurement budget of the last session (a resume may raise it)
    int64_t tokens = 0;                   // LLM tokens of its forecasts and mutations
    double costUsd = 0;
    int64_t llmCalls = 0;                       // calls to language models (rows of llm_calls)
    LlmSpend llmForecast, llmRewrite, llmDiff;  // the tokens above by the kind of call
    int64_t budgetTokens = 0;                   // the token budget of its last session (0: none)
    double budgetCostUsd = 0;                   // the cost budget of its last session (0: none)
    double elapsedS = 0;                        // search time at the last checkpoint
    std::vector<ProgressPoint> baseline;        // a measure-all run of the same problem in the same store, if any
    int64_t baselineMeasurements = 0;
    QString baselineName;
    std::unordered_map<int64_t, std::string> prompts;  // candidate id -> the prompt an evaluation sent
    std::unordered_map<int64_t, std::string> anchors;  // evaluations: candidate id -> its pair's anchor code
};

// The file name a candidate was compiled under (what its compile log names).
QString compileFileName(const Candidate& c);
// The source as the diff shows it: tunables (which reach the kernel as -D defines) as a first line, so that two
// configurations of the same family differ where they really do.
QString sourceWithTunables(const Candidate& c);
// A skill score in the user's locale with its sign ("+0,455" in German), or "n/a" when it is undefined.
QString skillText(double skill, const QLocale& locale);

// Reads the last run of a store (every row, the curves). Never throws: a failure is in `error`.
LoadedRun loadRun(const QString& path);

// The progress line of a stored run as it was left: its counters (measurements against the budget of its last
// session, forecasts, tokens and cost, elapsed time) and the best of its rows; calibration from `shown`, the metrics
// the plots show for the same rows, and the audited calibration from the rows the epsilon audit chose.
SearchProgress storedProgress(const LoadedRun& run, const std::vector<CandidateRow>& rows, const ForecastMetrics& shown,
                              const BinScheme& scheme = BinScheme::gfV2());

// The best measured speedup after each device measurement of a run, in measurement order; compile failures (found
// by the compiler, not the device) do not count. total: the run's device measurements.
std::vector<ProgressPoint> progressFromStore(RunStore& store, int64_t runId, int64_t* total = nullptr);

// Candidates measured with a speedup that also have a forecast: the points of the forecast-vs-measured scatter, and
// the (forecast, outcome) pairs that calibration and risk-coverage are computed from.
std::vector<ForecastPoint> forecastPoints(const std::vector<CandidateRow>& rows);
std::vector<ScoredForecast> scoredForecasts(const std::vector<CandidateRow>& rows, const std::string& pack = {});
// The same for the rows whose gating decision was Audit: the epsilon share measured at random among the candidates
// the gate trusted, the unbiased sample of a gated search (the others were measured because the gate chose them).
std::vector<ScoredForecast> auditedForecasts(const std::vector<CandidateRow>& rows, const std::string& pack = {});
// compute_metrics of auditedForecasts, or no metrics (n 0) when they cannot be scored.
ForecastMetrics auditedMetrics(const std::vector<CandidateRow>& rows, const BinScheme& scheme = BinScheme::gfV2());

}  // namespace kerncast
