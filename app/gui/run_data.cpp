#include "app/gui/run_data.h"

#include <algorithm>
#include <cmath>
#include <exception>

namespace kerncast {

std::vector<ProgressPoint> progressFromStore(RunStore& store, int64_t runId, int64_t* total) {
    std::vector<ProgressPoint> points;
    double best = 0;
    int64_t n = 0;
    for (const MeasurementOutcome& m : store.measurementOutcomes(runId)) {
        if (m.device_kind == "compiler")
            continue;
        ++n;
        const bool ok = m.status == Status::Ok && m.speedup > 0 && std::isfinite(m.speedup);
        if (ok && m.speedup > best) {
            best = m.speedup;
            points.push_back({n, best});
        }
    }
    if (total)
        *total = n;
    return points;
}

QString compileFileName(const Candidate& c) {
    if (c.label.rfind("seed:", 0) == 0)
        return QString::fromStdString(c.label.substr(5));
    if (c.mutator == Mutator::Reference)
        return QStringLiteral("reference.cu");
    return QStringLiteral("candidate.cu");
}

QString sourceWithTunables(const Candidate& c) {
    QString text;
    if (!c.tunables.empty()) {
        QStringList parts;
        for (const auto& [name, value] : c.tunables)
            parts << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
        text = QStringLiteral("// -D %1\n").arg(parts.join(QLatin1Char(' ')));
    }
    return text + QString::fromStdString(c.source);
}

LoadedRun loadRun(const QString& path) {
    LoadedRun out;
    out.path = path;
    try {
        RunStore store = RunStore::openReadOnly(path.toStdString());
        const std::vector<RunInfo> runs = store.runs();
        if (runs.empty()) {
            out.error = QStringLiteral("%1: the file holds no run").arg(path);
            return out;
        }
        out.run = runs.back();
        out.evaluation = out.run.config.value("kind", std::string()) == "evaluation";
        if (!out.evaluation && out.run.config.contains("problem_dir")) {
            try {
                out.config = search_config_from_json(out.run.config);
            } catch (const std::exception&) {
                // shown without Resume
            }
        }
        if (out.config) {
            out.budgetMeasurements = out.config->budgets.measurements;
            out.budgetTokens = out.config->budgets.tokens;
            out.budgetCostUsd = out.config->budgets.cost_usd;
        }
        for (const RunEvent& e : store.events(out.run.id)) {
            if (e.kind == to_string(RunState::Finished) || e.kind == to_string(RunState::Failed))
                out.endState = run_state_from_string(e.kind);
            else if (e.kind == "resumed") {
                out.endState.reset();
                out.budgetMeasurements = e.payload.value("budget_measurements", out.budgetMeasurements);
            } else if (e.kind == "checkpoint")
                out.elapsedS = std::max(out.elapsedS, e.payload.value("elapsed_s", 0.0));
            else if (e.kind == "budgets_extended" && e.payload.contains("budgets")) {
                const SearchBudgets b = search_budgets_from_json(e.payload.at("budgets"));
                out.budgetTokens = b.tokens;
                out.budgetCostUsd = b.cost_usd;
            } else if (e.kind == "gating_changed" && out.config && e.payload.contains("gating"))
                out.config->gating = gating_config_from_json(e.payload.at("gating"));
            else if (e.kind == "prompt")
                out.prompts[e.payload.value("candidate", int64_t{0})] = e.payload.value("prompt", std::string());
        }
        out.rows = rowsFromStore(store, out.run.id);
        out.forecasts = store.forecastCount(out.run.id);
        const RunStore::ForecastUsage usage = store.forecastUsage(out.run.id);
        out.tokens = usage.tokens;
        out.costUsd = usage.cost_usd;
        // Every call to a model is a row of llm_calls, mutations too (a run written before the table existed counts
        // its forecasts' tokens, and so does one whose calls hold fewer): the run control's spend per measurement and
        // by kind, as a live search shows it.
        if (const LlmTotals llm = store.llmTotals(out.run.id); llm.calls > 0) {
            out.tokens = std::max(out.tokens, llm.tokens_in + llm.tokens_out);
            out.costUsd = std::max(out.costUsd, llm.cost_usd);
            out.llmCalls = llm.calls;
            const auto spend = [&](const char* kind) {
                const LlmTotals t = store.llmTotals(out.run.id, kind);
                return LlmSpend{t.calls, t.tokens_in + t.tokens_out, t.cost_usd, t.duplicate};
            };
            out.llmForecast = spend("forecast");
            out.llmRewrite = spend("mutate_rewrite");
            out.llmDiff = spend("mutate_diff");
        }
        if (out.evaluation) {
            // Each pair's candidate is compared with its anchor (what the speedup is relative to).
            std::unordered_map<std::string, std::string> anchorOf;
            for (ImportedPair& p : store.importedPairs(out.run.id))
                anchorOf.emplace("pair:" + p.comparison_id, std::move(p.anchor_code));
            for (const CandidateRow& r : out.rows)
                if (auto it = anchorOf.find(r.label.toStdString()); it != anchorOf.end())
                    out.anchors[r.id] = it->second;
        }
        if (!out.evaluation)
            out.progress = progressFromStore(store, out.run.id, &out.measurements);
        for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
            if (it->id == out.run.id || it->problem != out.run.problem || it->gating.rfind("measure-all", 0) != 0)
                continue;
            out.baseline = progressFromStore(store, it->id, &out.baselineMeasurements);
            out.baselineName = QString::fromStdString(it->name);
            break;
        }
    } catch (const std::exception& e) {
        out = LoadedRun{};
        out.path = path;
        out.error = QString::fromStdString(e.what());
    }
    return out;
}

QString skillText(double skill, const QLocale& locale) {
    if (!std::isfinite(skill))
        return QStringLiteral("n/a");
    return (skill >= 0 ? QStringLiteral("+") : QString()) + locale.toString(skill, 'f', 3);
}

SearchProgress storedProgress(const LoadedRun& run, const std::vector<CandidateRow>& rows, const ForecastMetrics& shown,
                              const BinScheme& scheme) {
    SearchProgress p;
    p.setCalibration(shown);
    p.setAuditedCalibration(auditedMetrics(rows, scheme));
    p.state = run.endState.value_or(RunState::Idle);
    p.candidates = static_cast<int64_t>(rows.size());
    p.measurements = run.measurements;
    // A file written before resumes recorded their budget may hold more measurements than its first budget.
    p.budget_measurements = std::max(run.budgetMeasurements, run.measurements);
    if (run.evaluation)
        p.budget_measurements = p.candidates;  // every pair comes measured
    p.forecasts = run.forecasts;
    p.tokens = run.tokens;
    p.cost_usd = run.costUsd;
    p.llm_calls = run.llmCalls;
    p.llm_forecast = run.llmForecast;
    p.llm_rewrite = run.llmRewrite;
    p.llm_diff = run.llmDiff;
    p.budget_tokens = run.budgetTokens;
    p.budget_cost_usd = run.budgetCostUsd;
    p.elapsed_s = run.elapsedS;
    for (const CandidateRow& r : rows) {
        p.measurements += run.evaluation && r.isMeasured() ? 1 : 0;
        if (r.measured_speedup && *r.measured_speedup > p.best_speedup) {
            p.best_speedup = *r.measured_speedup;
            p.best_candidate = r.id;
        }
    }
    return p;
}

std::vector<ForecastPoint> forecastPoints(const std::vector<CandidateRow>& rows) {
    std::vector<ForecastPoint> points;
    for (const CandidateRow& r : rows)
        // Both axes are S against the forecast's anchor (the parent, or the reference).
        if (const auto s = r.measuredAgainstAnchor(); r.hasForecast() && s && *s > 0)
            points.push_back({r.id, r.expected_log_speedup, std::log(*s), r.confidence, r.anchor_id});
    return points;
}

namespace {

std::vector<ScoredForecast> scoredRows(const std::vector<CandidateRow>& rows, const std::string& pack,
                                       bool auditedOnly) {
    std::vector<ScoredForecast> scored;
    for (const CandidateRow& r : rows) {
        if (!r.hasForecast() || !r.measured_speedup || !(*r.measured_speedup > 0) ||
            !std::isfinite(*r.measured_speedup))
            continue;
        if (auditedOnly && r.decision != GatingDecision::Audit)
            continue;
        ScoredForecast s;
        s.probabilities = r.probabilities;
        s.true_speedup = *r.measuredAgainstAnchor();  // the forecast was of S against its anchor
        s.pack = pack;
        scored.push_back(s);
    }
    return scored;
}

}  // namespace

std::vector<ScoredForecast> scoredForecasts(const std::vector<CandidateRow>& rows, const std::string& pack) {
    return scoredRows(rows, pack, false);
}

std::vector<ScoredForecast> auditedForecasts(const std::vector<CandidateRow>& rows, const std::string& pack) {
    return scoredRows(rows, pack, true);
}

ForecastMetrics auditedMetrics(const std::vector<CandidateRow>& rows, const BinScheme& scheme) {
    try {
        return compute_metrics(auditedForecasts(rows), scheme);
    } catch (const std::exception&) {
        return ForecastMetrics{};
    }
}

}  // namespace kerncast
