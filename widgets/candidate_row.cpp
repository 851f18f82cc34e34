#include "widgets/candidate_row.h"

#include "core/run_store.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace kerncast {

namespace {

const QStringList& measuredStatuses() {
    static const QStringList names = [] {
        QStringList out;
        for (Status s : {Status::Ok, Status::Suspect, Status::CompileError, Status::LaunchError, Status::Incorrect,
                         Status::Timeout, Status::Crashed, Status::NotRecorded})
            out << QString::fromLatin1(to_string(s));
        return out;
    }();
    return names;
}

int64_t eventCandidateId(const SearchEvent& event) {
    if (event.candidate_id != 0)
        return event.candidate_id;
    return event.candidate ? event.candidate->id : 0;
}

// A status only moves forward through the pipeline, except that a new gating decision may replace an earlier one
// (a person forcing a measurement of a trusted candidate).
void advanceStatus(CandidateRow& row, const char* status) {
    const QString next = QString::fromLatin1(status);
    if (candidateStatusStage(next) >= candidateStatusStage(row.status))
        row.status = next;
}

}  // namespace

QStringList candidateStatuses() {
    QStringList out{QString::fromLatin1(candidate_status::Proposed), QString::fromLatin1(candidate_status::Forecast),
                    QString::fromLatin1(candidate_status::Trusted),  QString::fromLatin1(candidate_status::Discarded),
                    QString::fromLatin1(candidate_status::Queued),   QString::fromLatin1(candidate_status::Measuring)};
    out << measuredStatuses();
    return out;
}

int candidateStatusStage(const QString& status) {
    if (status == QLatin1String(candidate_status::Forecast))
        return 1;
    if (status == QLatin1String(candidate_status::Trusted) || status == QLatin1String(candidate_status::Discarded) ||
        status == QLatin1String(candidate_status::Queued))
        return 2;
    if (status == QLatin1String(candidate_status::Measuring))
        return 3;
    return isMeasuredStatus(status) ? 4 : 0;
}

bool isMeasuredStatus(const QString& status) { return measuredStatuses().contains(status); }

bool isFailureStatus(const QString& status) {
    for (Status s : {Status::CompileError, Status::LaunchError, Status::Incorrect, Status::Timeout, Status::Crashed})
        if (status == QLatin1String(to_string(s)))
            return true;
    return false;
}

std::optional<GatingDecision> gatingDecisionFromName(const QString& name) {
    for (GatingDecision d : {GatingDecision::Measure, GatingDecision::Trust, GatingDecision::Audit,
                             GatingDecision::Discard, GatingDecision::Forced})
        if (name == gatingDecisionName(d))
            return d;
    return std::nullopt;
}

QString gatingDecisionName(GatingDecision decision) {
    switch (decision) {
    case GatingDecision::Measure:
        return QStringLiteral("measure");
    case GatingDecision::Trust:
        return QStringLiteral("trust");
    case GatingDecision::Audit:
        return QStringLiteral("audit");
    case GatingDecision::Discard:
        return QStringLiteral("discard");
    case GatingDecision::Forced:
        return QStringLiteral("forced");
    }
    return {};
}

void applyCandidate(CandidateRow& row, int64_t runId, const Candidate& candidate) {
    row.id = candidate.id;
    row.run_id = runId;
    row.generation = candidate.generation;
    row.parent_id = candidate.parent_id;
    row.mutator = candidate.mutator;
    row.label = QString::fromStdString(candidate.label);
    row.tunables = candidate.tunables;
    row.source_hash = QString::fromStdString(candidate.source_hash);
}

void applyForecast(CandidateRow& row, const Forecast& forecast, const BinScheme& scheme) {
    row.probabilities = forecast.probabilities;
    row.predicted_bin = forecast.predicted_bin;
    row.confidence = forecast.maxProbability();
    // A surrogate that predicts the log-speedup itself (the local one) is plotted at its prediction: the bins end
    // at 4x, so their expectation cannot place a faster candidate.
    row.expected_log_speedup = forecast.log_mean ? *forecast.log_mean : forecast.expectedLogSpeedup(scheme);
    row.anchor_id = forecast.anchor_id;
    row.anchor_speedup = forecast.anchor_speedup > 0 ? forecast.anchor_speedup : 1.0;
    advanceStatus(row, candidate_status::Forecast);
}

QString anchorText(int64_t anchorId) {
    return anchorId > 0 ? QCoreApplication::translate("CandidateRow", "vs parent #%1").arg(anchorId)
                        : QCoreApplication::translate("CandidateRow", "vs reference");
}

void applyGating(CandidateRow& row, GatingDecision decision, const QString& reason) {
    row.decision = decision;
    row.reason = reason;
    if (row.isMeasured() || row.status == QLatin1String(candidate_status::Measuring))
        return;
    switch (decision) {
    case GatingDecision::Trust:
        row.status = QString::fromLatin1(candidate_status::Trusted);
        break;
    case GatingDecision::Discard:
        row.status = QString::fromLatin1(candidate_status::Discarded);
        break;
    case GatingDecision::Measure:
    case GatingDecision::Audit:
    case GatingDecision::Forced:
        row.status = QString::fromLatin1(candidate_status::Queued);
        break;
    }
}

void applyMeasurement(CandidateRow& row, const Measurement& m) {
    row.status = QString::fromLatin1(to_string(m.status));
    row.reason = QString::fromStdString(m.reason);
    const bool hasSpeedup = (m.status == Status::Ok || m.status == Status::Suspect) && m.speedup > 0;
    row.measured_speedup = hasSpeedup ? std::optional<double>(m.speedup) : std::nullopt;
    row.time_us =
        m.candidate && m.candidate->median_us > 0 ? std::optional<double>(m.candidate->median_us) : std::nullopt;
}

void applyStaticReport(CandidateRow& row, const std::vector<StaticReport>& kernels) {
    row.registers = 0;
    row.smem_bytes = 0;
    row.spills = 0;
    for (const auto& k : kernels) {
        row.registers = std::max(row.registers, k.registers);
        row.smem_bytes = std::max(row.smem_bytes, k.shared_bytes);
        row.spills += k.spill_store_bytes + k.spill_load_bytes;
    }
}

bool applyEvent(CandidateRow& row, const SearchEvent& event, const BinScheme& scheme) {
    using Kind = SearchEvent::Kind;
    switch (event.kind) {
    case Kind::CandidateProposed:
        if (event.candidate)
            applyCandidate(row, event.run_id, *event.candidate);
        row.id = eventCandidateId(event);
        row.run_id = event.run_id;
        applyStaticReport(row, event.static_report);
        if (!event.compile_error.empty()) {
            row.status = QString::fromLatin1(candidate_status::CompileError);
            row.reason = QString::fromStdString(event.compile_error);
        }
        return true;
    case Kind::Forecast:
        if (!event.forecast)
            return false;
        applyForecast(row, *event.forecast, scheme);
        return true;
    case Kind::Gating:
        if (!event.decision)
            return false;
        applyGating(row, *event.decision, QString::fromStdString(event.message));
        return true;
    case Kind::Measured:
        if (!event.measurement)
            return false;
        applyMeasurement(row, *event.measurement);
        if (!event.static_report.empty())
            applyStaticReport(row, event.static_report);  // compiled with the measurement
        return true;
    case Kind::RunStarted:
    case Kind::NewBest:
    case Kind::Command:
    case Kind::Progress:
    case Kind::Pool:
    case Kind::Setup:
    case Kind::Finished:
    case Kind::Failed:
        return false;
    }
    return false;
}

std::vector<CandidateRow> rowsFromStore(RunStore& store, int64_t runId, const BinScheme& scheme) {
    std::vector<CandidateRow> rows;
    QHash<int64_t, size_t> index;
    // One query per table for the whole run: per-candidate queries made opening a run of 100k candidates slow.
    const auto reports = store.staticReportsOfRun(runId);
    const auto forecasts = store.forecastsOfRun(runId);
    for (const Candidate& c : store.candidates(runId)) {
        CandidateRow row;
        applyCandidate(row, runId, c);
        if (const auto it = reports.find(c.id); it != reports.end())
            applyStaticReport(row, it->second);
        else
            applyStaticReport(row, {});
        if (const auto it = forecasts.find(c.id); it != forecasts.end() && !it->second.empty())
            applyForecast(row, it->second.back().forecast, scheme);
        index.insert(row.id, rows.size());
        rows.push_back(std::move(row));
    }
    // Gating before measurements: a measured candidate keeps its outcome whatever was decided before.
    for (const RunEvent& e : store.events(runId, "gating")) {
        if (!e.payload.is_object())
            continue;
        // The runner names the candidate "candidate"; older stores and imports "candidate_id".
        const int64_t id = e.payload.contains("candidate") ? e.payload.value("candidate", int64_t{0})
                                                           : e.payload.value("candidate_id", int64_t{0});
        const auto it = index.constFind(id);
        const auto decision =
            gatingDecisionFromName(QString::fromStdString(e.payload.value("decision", std::string())));
        if (it != index.constEnd() && decision)
            applyGating(rows[*it], *decision, QString::fromStdString(e.payload.value("reason", std::string())));
    }
    const auto measurements = store.measurementsOfRun(runId);
    for (CandidateRow& row : rows)
        if (const auto it = measurements.find(row.id); it != measurements.end() && !it->second.empty())
            applyMeasurement(row, it->second.back().measurement);
    return rows;
}

const CandidateRow* CandidateRowSet::find(int64_t id) const {
    const int index = indexOf(id);
    return index < 0 ? nullptr : &m_rows[static_cast<size_t>(index)];
}

int CandidateRowSet::upsert(CandidateRow row) {
    const int existing = indexOf(row.id);
    if (existing >= 0) {
        m_rows[static_cast<size_t>(existing)] = std::move(row);
        return existing;
    }
    const int index = static_cast<int>(m_rows.size());
    m_index.insert(row.id, index);
    m_rows.push_back(std::move(row));
    return index;
}

void CandidateRowSet::assign(std::vector<CandidateRow> rows) {
    // Adopting the vector costs one hash insertion per row and no copies, which is what loading 100k rows needs.
    clear();
    m_index.reserve(static_cast<qsizetype>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
        if (m_index.contains(rows[i].id)) {
            clear();
            reserve(rows.size());
            for (CandidateRow& r : rows)
                upsert(std::move(r));
            return;
        }
        m_index.insert(rows[i].id, static_cast<int>(i));
    }
    m_rows = std::move(rows);
}

void CandidateRowSet::appendNew(std::vector<CandidateRow> rows) {
    if (m_rows.empty()) {
        assign(std::move(rows));
        return;
    }
    // Grow geometrically: exact reservations would copy the whole table on every small batch.
    const size_t needed = m_rows.size() + rows.size();
    if (needed > m_rows.capacity()) {
        m_rows.reserve(std::max(needed, 2 * m_rows.capacity()));
        m_index.reserve(static_cast<qsizetype>(m_rows.capacity()));
    }
    for (CandidateRow& r : rows) {
        m_index.insert(r.id, static_cast<int>(m_rows.size()));
        m_rows.push_back(std::move(r));
    }
}

int CandidateRowSet::apply(const SearchEvent& event) {
    const int64_t id = eventCandidateId(event);
    if (id == 0)
        return -1;
    const int existing = indexOf(id);
    if (existing >= 0)
        return applyEvent(m_rows[static_cast<size_t>(existing)], event, m_scheme) ? existing : -1;
    CandidateRow row;
    row.id = id;
    row.run_id = event.run_id;
    if (!applyEvent(row, event, m_scheme))
        return -1;
    return upsert(std::move(row));
}

bool CandidateRowSet::applyToExisting(const SearchEvent& event) {
    const int existing = indexOf(eventCandidateId(event));
    return existing >= 0 && applyEvent(m_rows[static_cast<size_t>(existing)], event, m_scheme);
}

void CandidateRowSet::clear() {
    m_rows.clear();
    m_index.clear();
}

void CandidateRowSet::reserve(size_t rows) {
    m_rows.reserve(rows);
    m_index.reserve(static_cast<qsizetype>(rows));
}

std::vector<CandidateRow> CandidateRowSet::takeRows() {
    std::vector<CandidateRow> out = std::move(m_rows);
    clear();
    return out;
}

}  // namespace kerncast
