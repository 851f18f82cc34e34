#pragma once
// One candidate of a search population as the workbench's views show it: a flat value built from the run store
// (candidate + latest forecast, measurement and static report) or kept current by the runner's search events.
// No user-visible text here; the models translate statuses, mutators and decisions.

#include "core/bins.h"
#include "core/candidate.h"
#include "engine/search/search_events.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace kerncast {

class RunStore;

// The stage a candidate has reached, as stable lower-case names. The measured outcomes are core's Status names
// (to_string(Status)); the others are the steps before a measurement.
namespace candidate_status {
inline constexpr char Proposed[] = "proposed";    // in the population, nothing known yet
inline constexpr char Forecast[] = "forecast";    // forecast, no gating decision yet
inline constexpr char Trusted[] = "trusted";      // forecast accepted without a measurement
inline constexpr char Discarded[] = "discarded";  // trusted "slow" forecast: dropped
inline constexpr char Queued[] = "queued";        // gating sent it to the device
inline constexpr char Measuring[] = "measuring";  // on the device now
inline constexpr char CompileError[] = "compile_error";
inline constexpr char Ok[] = "ok";
}  // namespace candidate_status

// Every status name a row can carry, in pipeline order (for filters and legends).
QStringList candidateStatuses();
// Pipeline stage of a status: 0 proposed, 1 forecast, 2 gated (trusted/discarded/queued), 3 measuring,
// 4 measured (any device outcome, including compile_error). Unknown names count as 0.
int candidateStatusStage(const QString& status);
// A device outcome: ok or one of the failures (compile_error, incorrect, crashed, ...), suspect, not_recorded.
bool isMeasuredStatus(const QString& status);
// An outcome with no speedup (bin 0): compile_error, launch_error, incorrect, timeout, crashed.
bool isFailureStatus(const QString& status);

struct CandidateRow {
    int64_t id = 0;
    int64_t run_id = 0;
    int generation = 0;
    int64_t parent_id = 0;  // 0 for roots (reference, seeds)
    Mutator mutator = Mutator::Seed;
    QString label;
    QString status = QString::fromLatin1(candidate_status::Proposed);
    std::optional<GatingDecision> decision;
    QString reason;  // why it failed or was gated as it was (compile log, measurement reason, gating reason)

    // Latest forecast; predicted_bin 0 means none.
    int predicted_bin = 0;
    double confidence = 0;            // the forecast's max probability
    double expected_log_speedup = 0;  // of S, the speedup over the forecast's anchor
    std::array<double, kBinCount> probabilities{};
    // What the forecast was against (ARCHITECTURE §4): the measured parent anchor_id, or the reference (0); the
    // anchor's measured speedup over the reference turns a speedup over the reference into S.
    int64_t anchor_id = 0;
    double anchor_speedup = 1;

    std::optional<double> measured_speedup;  // set for a measurement that produced one (ok, suspect)
    std::optional<double> time_us;           // candidate median

    // Static report summed up over the launch plan's kernels: the most registers and shared memory any one kernel
    // uses, and all spill traffic (stores + loads) in bytes.
    int registers = 0;
    int smem_bytes = 0;
    int spills = 0;
    QString source_hash;
    std::map<std::string, int64_t> tunables;  // the family configuration's values (-D defines); empty for others

    bool hasForecast() const { return predicted_bin > 0; }
    // The measured S against the forecast's anchor (measured speedup / anchor_speedup), when measured.
    std::optional<double> measuredAgainstAnchor() const {
        if (!measured_speedup || !(anchor_speedup > 0))
            return std::nullopt;
        return *measured_speedup / anchor_speedup;
    }
    bool isMeasured() const { return isMeasuredStatus(status); }
};

// Field updates shared by the store loader and the event path.
void applyCandidate(CandidateRow& row, int64_t runId, const Candidate& candidate);
void applyForecast(CandidateRow& row, const Forecast& forecast, const BinScheme& scheme);
// "vs parent #12" or "vs reference": what a forecast was against, for the inspector, tooltips and plots.
QString anchorText(int64_t anchorId);
void applyGating(CandidateRow& row, GatingDecision decision, const QString& reason);
void applyMeasurement(CandidateRow& row, const Measurement& measurement);
void applyStaticReport(CandidateRow& row, const std::vector<StaticReport>& kernels);

// The gating decision's stable name ("measure", "trust", "audit", "discard", "forced"), as stored in "gating"
// events; nullopt for an unknown name.
std::optional<GatingDecision> gatingDecisionFromName(const QString& name);
QString gatingDecisionName(GatingDecision decision);

// Every candidate of a run, in id order, with its latest forecast, measurement and static report. Gating decisions
// come from the run's "gating" events (payload {"candidate": int, "decision": name, "reason": text}; older stores
// name the candidate "candidate_id"), the last one per candidate. Throws kerncast::Error when the store cannot be
// read. It reads a few rows per candidate, so a large run is loaded off the GUI thread, on a RunStore opened for
// that thread.
std::vector<CandidateRow> rowsFromStore(RunStore& store, int64_t runId, const BinScheme& scheme = BinScheme::gfV2());

// Rows keyed by candidate id, in insertion order (rows never move, so an index stays valid).
class CandidateRowSet {
public:
    CandidateRowSet() = default;
    explicit CandidateRowSet(const BinScheme& scheme) : m_scheme(scheme) {}

    const BinScheme& scheme() const { return m_scheme; }
    size_t size() const { return m_rows.size(); }
    bool empty() const { return m_rows.empty(); }
    const std::vector<CandidateRow>& rows() const { return m_rows; }
    const CandidateRow& operator[](size_t index) const { return m_rows[index]; }
    // -1 when no row has this id.
    int indexOf(int64_t id) const { return m_index.value(id, -1); }
    const CandidateRow* find(int64_t id) const;

    // Update-or-insert: replaces the row with the same id, or appends it. Returns its index.
    int upsert(CandidateRow row);
    // Replaces every row; of rows sharing an id the last one stays (in the place of the first).
    void assign(std::vector<CandidateRow> rows);
    // Appends rows whose ids are neither in the set nor repeated among them (as after takeRows() of another set).
    void appendNew(std::vector<CandidateRow> rows);
    // Update-or-insert from one event: the row the event names is created when it is missing. Returns the changed
    // row's index, or -1 when the event changes no row (progress, run state, commands, new best).
    int apply(const SearchEvent& event);
    // Applies an event to an existing row only; false when the row is missing or the event changes no row.
    bool applyToExisting(const SearchEvent& event);
    void clear();
    void reserve(size_t rows);
    // Moves the rows out, leaving the set empty.
    std::vector<CandidateRow> takeRows();

private:
    std::vector<CandidateRow> m_rows;
    QHash<int64_t, int> m_index;
    BinScheme m_scheme = BinScheme::gfV2();
};

// Applies an event to its row (which must be the one the event names). False when the event changes no row.
bool applyEvent(CandidateRow& row, const SearchEvent& event, const BinScheme& scheme);

}  // namespace kerncast
