#include "app/gui/run_session.h"

#include "core/run_store.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QPointer>
#include <QStandardPaths>

#include <algorithm>

namespace kerncast {

RunSession::RunSession(QString resourcesDir, QObject* parent)
    : QObject(parent), m_resourcesDir(std::move(resourcesDir)) {
    m_bridge = new EngineBridge(m_resourcesDir, this);
}

RunSession::~RunSession() {
    // The bridge stops a running search and waits for it (bounded) before the views it feeds go away.
    delete m_bridge;
    m_bridge = nullptr;
}

QString RunSession::newRunPath(const QString& folder, const QString& stem) {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QLatin1Char('/') + folder;
    QDir().mkpath(dir);
    const QString base = QStringLiteral("%1/%2-%3")
                             .arg(dir, stem.isEmpty() ? QStringLiteral("run") : stem,
                                  QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = base + QStringLiteral(".sqlite");
    for (int i = 2; QFileInfo::exists(path); ++i)
        path = QStringLiteral("%1-%2.sqlite").arg(base).arg(i);
    return path;
}

bool RunSession::isSteerable() const { return m_live && m_bridge->isActive(); }

void RunSession::clear() {
    m_candidates.clear();
    m_forecasts.clear();
    m_compileErrors.clear();
    m_reader.reset();
    m_runId = 0;
    m_progress.clear();
    m_measurements = 0;
    m_lastProgress = SearchProgress{};
    m_followBest = true;
}

void RunSession::start(const SearchConfig& config, const QString& path, const std::string& problemName) {
    clear();
    m_opened.reset();
    m_path = path;
    m_live = true;
    m_problemName = problemName;
    m_bridge->start(config, path, false);
}

bool RunSession::resume(const SearchBudgets& budgets) {
    if (!m_opened || !m_opened->config || m_bridge->isActive())
        return false;
    SearchConfig config = *m_opened->config;
    // The budgets of the run control may extend the stored ones (the engine keeps the larger measurement budget).
    config.budgets = budgets;
    m_live = true;
    m_candidates.clear();
    m_forecasts.clear();
    m_compileErrors.clear();
    m_bridge->start(config, m_path, true);
    return true;
}

bool RunSession::submit(const QString& source, qint64 parentId) {
    if (!isSteerable())
        return false;
    std::map<std::string, int64_t> tunables;
    try {
        if (const auto c = parentId ? candidate(parentId) : std::nullopt)
            tunables = c->tunables;
    } catch (const std::exception&) {
        // submitted without them: a compile error will name what is missing
    }
    m_bridge->submitKernel(source, parentId, tunables);
    return true;
}

bool RunSession::absorb(const std::vector<SearchEvent>& events) {
    bool candidatesChanged = false;
    for (const SearchEvent& e : events) {
        switch (e.kind) {
        case SearchEvent::Kind::RunStarted:
            m_runId = e.run_id;
            break;
        case SearchEvent::Kind::CandidateProposed:
            if (e.candidate)
                m_candidates[e.candidate_id ? e.candidate_id : e.candidate->id] = *e.candidate;
            if (!e.compile_error.empty())
                m_compileErrors[e.candidate_id] = e.compile_error;
            break;
        case SearchEvent::Kind::Forecast:
            if (e.forecast)
                m_forecasts[e.candidate_id] = *e.forecast;
            candidatesChanged = true;
            break;
        case SearchEvent::Kind::Measured:
            if (e.measurement && e.measurement->device_kind != "compiler") {
                m_measurements = e.progress.measurements;
                if (e.progress.best_speedup > 0 &&
                    (m_progress.empty() || e.progress.best_speedup > m_progress.back().best_speedup))
                    m_progress.push_back({e.progress.measurements, e.progress.best_speedup});
            }
            candidatesChanged = true;
            break;
        default:
            break;
        }
        m_lastProgress = e.progress;
    }
    return candidatesChanged;
}

void RunSession::open(const QString& path) {
    m_open.start([path] { return loadRun(path); },
                 [this](LoadedRun run) {
        if (!run.error.isEmpty()) {
            Q_EMIT loadFailed(run.error);
            return;
        }
        m_pending = std::move(run);
        Q_EMIT runRead();
    });
}

std::vector<CandidateRow> RunSession::showRead() {
    if (!m_pending)
        return {};
    clear();
    m_live = false;
    m_opened = std::move(m_pending);
    m_pending.reset();
    m_path = m_opened->path;
    m_runId = m_opened->run.id;
    m_problemName = m_opened->run.problem;
    m_progress = m_opened->progress;
    m_measurements = m_opened->measurements;
    return std::exchange(m_opened->rows, {});  // the population model holds them from now on
}

void RunSession::evaluate(EvaluationOptions options) {
    options.resources_dir = m_resourcesDir.toStdString();
    QPointer<RunSession> self(this);
    m_evaluation.start(
        [options, self] {
        EvaluationOutcome out;
        try {
            out.result = evaluate_pairs(
                options, [](const std::string&) {},
                [self](const std::string& stage, size_t done, size_t total) {
                // Progress goes to the GUI thread as a queued call; it is dropped if the session is gone.
                const QString text = QString::fromStdString(stage);
                if (self)
                    QMetaObject::invokeMethod(
                        self.data(),
                        [self, text, done, total] {
                        if (self)
                            Q_EMIT self->evaluationProgress(text, static_cast<int>(done), static_cast<int>(total));
                        },
                        Qt::QueuedConnection);
                });
        } catch (const std::exception& e) {
            out.error = e.what();
        }
        return out;
        },
        [this](const EvaluationOutcome& out) {
        if (!out.result)
            Q_EMIT evaluationFailed(QString::fromStdString(out.error));
        else
            Q_EMIT evaluated(QString::fromStdString(out.result->store_path), static_cast<int>(out.result->metrics.n));
    });
}

RunStore* RunSession::reader() {
    if (m_path.isEmpty())
        return nullptr;
    if (!m_reader) {
        try {
            m_reader = std::make_unique<RunStore>(RunStore::openReadOnly(m_path.toStdString()));
        } catch (const std::exception&) {
            return nullptr;
        }
    }
    return m_reader.get();
}

RunSession::CandidateDetails RunSession::details(const CandidateRow& row, const std::vector<CandidateRow>& population) {
    CandidateDetails d;
    try {
        d.candidate = candidate(row.id);
        d.forecast = forecast(row.id, row.hasForecast());
        // A forecast names its anchor (0: the reference); without one, the parent stands in.
        const int64_t anchorId = d.forecast ? d.forecast->anchor_id : d.candidate ? d.candidate->parent_id : 0;
        if (d.candidate && anchorId) {
            d.parent = candidate(anchorId);
        } else if (d.candidate && d.candidate->mutator != Mutator::Reference) {
            const auto reference = std::find_if(population.begin(), population.end(),
                                                [](const CandidateRow& r) { return r.mutator == Mutator::Reference; });
            if (reference != population.end())
                d.parent = candidate(reference->id);
        }
    } catch (const std::exception& e) {
        d.error = QString::fromUtf8(e.what());
    }
    d.compileError = compileError(row.id);
    if (d.compileError.isEmpty() && row.status == QLatin1String(candidate_status::CompileError))
        d.compileError = row.reason;
    d.prompt = prompt(row.id);
    d.anchor = anchor(row.id);
    return d;
}

std::optional<Candidate> RunSession::candidate(int64_t id) {
    if (auto it = m_candidates.find(id); it != m_candidates.end())
        return it->second;
    if (RunStore* store = reader())
        return store->candidate(id);
    return std::nullopt;
}

std::optional<Forecast> RunSession::forecast(int64_t id, bool stored) {
    if (auto it = m_forecasts.find(id); it != m_forecasts.end())
        return it->second;
    if (RunStore* store = stored ? reader() : nullptr) {
        const auto stored = store->forecastsFor(id);
        if (!stored.empty())
            return stored.back().forecast;
    }
    return std::nullopt;
}

QString RunSession::compileError(int64_t id) const {
    const auto it = m_compileErrors.find(id);
    return it != m_compileErrors.end() ? QString::fromStdString(it->second) : QString();
}

QString RunSession::prompt(int64_t id) const {
    if (!m_opened)
        return {};
    const auto it = m_opened->prompts.find(id);
    return it != m_opened->prompts.end() ? QString::fromStdString(it->second) : QString();
}

const std::string* RunSession::anchor(int64_t id) const {
    if (!m_opened)
        return nullptr;
    const auto it = m_opened->anchors.find(id);
    return it != m_opened->anchors.end() ? &it->second : nullptr;
}

QString RunSession::stateName(RunState state) {
    switch (state) {
    case RunState::Idle:
        return tr("idle");
    case RunState::Starting:
        return tr("starting");
    case RunState::Running:
        return tr("running");
    case RunState::Paused:
        return tr("paused");
    case RunState::Stopping:
        return tr("stopping");
    case RunState::Finished:
        return tr("finished");
    case RunState::Failed:
        return tr("failed");
    }
    return {};
}

QString RunSession::stateText() const {
    if (m_live) {
        return stateName(m_bridge->state());
    }
    if (m_opened)
        return m_opened->evaluation  ? tr("evaluation (opened)")
               : !m_opened->endState ? tr("interrupted (opened)")
                                     : tr("%1 (opened)").arg(stateName(*m_opened->endState));
    return tr("no run");
}

QString RunSession::workerState(int queueLength) const {
    if (!isSteerable())
        return tr("idle");
    switch (m_bridge->state()) {
    case EngineBridge::State::Starting:
        return tr("starting (training the surrogate)");
    case EngineBridge::State::Paused:
        return queueLength > 0 ? tr("paused, %n waiting", nullptr, queueLength) : tr("paused");
    case EngineBridge::State::Stopping:
        return tr("stopping");
    default:
        return queueLength > 0 ? tr("measuring") : tr("idle (forecasting)");
    }
}

}  // namespace kerncast
