#include "app/gui/candidate_view.h"

#include "app/gui/kernel_pane.h"
#include "app/gui/plots_panel.h"
#include "app/gui/population_panel.h"
#include "app/gui/run_session.h"
#include "widgets/diff_view.h"
#include "widgets/engine_text.h"
#include "widgets/forecast_inspector.h"
#include "widgets/kernel_editor.h"
#include "widgets/measurement_panel.h"
#include "widgets/population_model.h"

#include <QLocale>

#include <algorithm>

namespace kerncast {

CandidateView::CandidateView(RunSession* session, PopulationPanel* population, KernelPane* kernelPane,
                             ForecastInspector* inspector, DiffView* diff, PlotsPanel* plots, QObject* parent)
    : QObject(parent), m_session(session), m_population(population), m_kernelPane(kernelPane), m_inspector(inspector),
      m_diff(diff), m_plots(plots) {
    // Typing in a candidate is a person's choice of it: the views stop following the newest best (which would replace
    // the text), and the edit is kept for when the candidate is shown again.
    connect(m_kernelPane->editor(), &KernelEditor::sourceEdited, this, [this] {
        if (!m_selected || !m_kernelPane->showsCandidate())
            return;
        m_session->setPicked();
        m_drafts.insert(m_selected, m_kernelPane->editor()->source());
    });
}

void CandidateView::clear() {
    m_selected = 0;
    m_drafts.clear();
    m_awaitingSubmitted = false;
    m_inspector->clear();
    m_diff->clear();
}

bool CandidateView::showSelection(qint64 candidateId) {
    if (m_population->model()->rowOfId(candidateId) < 0)
        return false;
    showCandidate(candidateId);
    m_population->showCurrent(candidateId);
    return true;
}

void CandidateView::follow(const std::vector<SearchEvent>& events, qint64 best) {
    if (m_awaitingSubmitted)
        for (const SearchEvent& e : events)
            if (e.kind == SearchEvent::Kind::CandidateProposed && e.candidate &&
                e.candidate->mutator == Mutator::Human) {
                m_awaitingSubmitted = false;
                showSelection(e.candidate_id);
                Q_EMIT message(
                    e.compile_error.empty()
                        ? tr("Submitted kernel is candidate #%1: it is forecast and measured").arg(e.candidate_id)
                        : tr("Submitted kernel (candidate #%1) does not compile: the errors are marked on "
                             "their lines")
                              .arg(e.candidate_id),
                    15000);
                return;
            }
    const bool selectedChanged =
        m_selected && std::any_of(events.begin(), events.end(), [this](const SearchEvent& e) {
            return e.candidate_id == m_selected && e.kind != SearchEvent::Kind::CandidateProposed;
        });
    if (m_session->followsBest() && best && best != m_selected) {
        // Until someone picks a row, the editor, diff and inspector show the newest best: the search's answer so far.
        showSelection(best);
    } else if (selectedChanged) {
        // The selected candidate was forecast or measured meanwhile.
        const PopulationModel* model = m_population->model();
        m_inspector->setCandidate(model->row(model->rowOfId(m_selected)), m_session->forecast(m_selected, false));
        showMeasurement(m_selected);
    }
}

void CandidateView::showLlmCalls(qint64 id) {
    m_inspector->setLlmCalls({});
    const int64_t runId = m_session->opened() ? m_session->opened()->run.id : m_session->runId();
    const std::string path = m_session->path().toStdString();
    if (path.empty() || runId == 0)
        return;
    // The job opens its own read-only connection: the session's reader belongs to the GUI thread.
    m_llmCalls.start(
        [path, runId, id] {
        LlmCallsLoad load;
        load.id = id;
        try {
            load.calls = RunStore::openReadOnly(path).llmCalls(runId, id);
        } catch (const std::exception& e) {
            load.error = e.what();
        }
        return load;
        },
        [this](LlmCallsLoad load) {
        if (load.id != m_selected)
            return;
        if (!load.error.empty())
            Q_EMIT message(tr("Could not read the model calls of candidate #%1: %2")
                               .arg(load.id)
                               .arg(QString::fromStdString(load.error)),
                           10000);
        else
            m_inspector->setLlmCalls(load.calls);
    });
}

void CandidateView::showCandidate(qint64 id) {
    const PopulationModel* model = m_population->model();
    const int rowIndex = model->rowOfId(id);
    if (rowIndex < 0)
        return;
    m_selected = id;
    m_population->setShownCandidate(id);
    const CandidateRow& row = model->row(rowIndex);
    m_plots->setSelected(id);

    // The candidate, its forecast and compile error: from the events of a live run, else from the store.
    const RunSession::CandidateDetails d = m_session->details(row, model->rows());
    if (!d.error.isEmpty())
        Q_EMIT message(tr("Could not read candidate #%1: %2").arg(id).arg(d.error), 10000);
    m_inspector->setCandidate(row, d.forecast, d.prompt);
    showMeasurement(id);
    showLlmCalls(id);
    if (!d.candidate)
        return;
    const Candidate& c = *d.candidate;
    const QString label = QString::fromStdString(c.label);
    m_kernelPane->showCandidate(tr("<b>Candidate #%1</b> · %2 · generation %3 · %4")
                                    .arg(id)
                                    .arg(PopulationModel::mutatorText(row.mutator))
                                    .arg(row.generation)
                                    .arg(EngineText::message(label).toHtmlEscaped()),
                                m_drafts.value(id, QString::fromStdString(c.source)), compileFileName(c),
                                d.compileError, true);
    if (m_drafts.contains(id))
        m_kernelPane->editor()->setModified(true);
    // The diff against the forecast's anchor (the parent it was forecast against, or the reference); without a
    // forecast, against the parent (roots: against the reference); evaluation pairs: against their anchor.
    const QString title = tr("#%1 %2").arg(id).arg(label);
    if (d.anchor)
        m_diff->setSources(QString::fromStdString(*d.anchor), sourceWithTunables(c), tr("anchor of the pair"), title);
    else if (d.parent)
        m_diff->setSources(sourceWithTunables(*d.parent), sourceWithTunables(c),
                           tr("#%1 %2")
                               .arg(d.parent->id)
                               .arg(d.parent->mutator == Mutator::Reference ? tr("reference") : tr("parent")),
                           title);
    else
        m_diff->setSources(QString(), sourceWithTunables(c), tr("(no parent)"), title);
}

bool CandidateView::compareWith(qint64 other) {
    const PopulationModel* model = m_population->model();
    if (!m_selected || other == m_selected || model->rowOfId(other) < 0)
        return false;
    const auto left = m_session->candidate(other);
    const auto right = m_session->candidate(m_selected);
    if (!left || !right)
        return false;
    const QLocale locale;
    // Each side titled with what was measured of it, so that the two measurements stand beside the two programs.
    const auto title = [&](const Candidate& c) {
        const CandidateRow& row = model->row(model->rowOfId(c.id));
        QString text = row.measured_speedup
                           ? tr("#%1 · %2×").arg(c.id).arg(locale.toString(*row.measured_speedup, 'f', 2))
                           : tr("#%1 · %2").arg(c.id).arg(PopulationModel::statusText(row.status));
        if (row.time_us)
            text += QStringLiteral(" · ") + tr("%1 µs").arg(locale.toString(*row.time_us, 'f', 2));
        if (row.registers > 0)
            text += QStringLiteral(" · ") + tr("%n register(s)", nullptr, row.registers);
        if (row.spills > 0)
            text += QStringLiteral(" · ") + tr("%n B spilled", nullptr, row.spills);
        return text;
    };
    m_diff->setSources(sourceWithTunables(*left), sourceWithTunables(*right), title(*left), title(*right));
    Q_EMIT message(tr("Diff: #%1 against #%2").arg(m_selected).arg(other), 8000);
    return true;
}

void CandidateView::showMeasurement(qint64 id) {
    RunStore* store = m_session->reader();
    if (!store)
        return;
    try {
        std::optional<Measurement> last;
        for (const StoredMeasurement& m : store->measurementsFor(id))
            if (m.measurement.device_kind != "compiler")  // a compile error is the compiler's, shown in the editor
                last = m.measurement;
        m_inspector->measurementPanel()->setMeasurement(last, store->staticReportsFor(id), runProblem(*store));
    } catch (const std::exception&) {
        // a run file being written can be briefly locked: the next selection reads it again
    }
}

const Problem* CandidateView::runProblem(RunStore& store) {
    const std::string& name = m_session->problemName();
    const QString key = m_session->path() + QLatin1Char('\n') + QString::fromStdString(name);
    if (key == m_problemKey)
        return m_problem ? &*m_problem : nullptr;
    m_problem.reset();
    for (const ProblemRecord& record : store.problems())
        if (record.name == name && !record.json.empty()) {
            try {
                m_problem = Problem::parse(record.json.dump(), record.dir + "/problem.json");
            } catch (const std::exception&) {
                m_problem.reset();  // a definition this version does not read: the panel goes without its rates
            }
        }
    // A live run stores its problem as it starts: until then, read again on the next selection.
    if (m_problem)
        m_problemKey = key;
    return m_problem ? &*m_problem : nullptr;
}

void CandidateView::showBestForecast() {
    qint64 pick = 0;
    double best = -1;
    for (const CandidateRow& r : m_population->model()->rows()) {
        const double score = r.measured_speedup ? *r.measured_speedup : 0;
        if (r.hasForecast() && (!pick || score > best)) {
            pick = r.id;
            best = score;
        }
    }
    if (pick)
        showSelection(pick);
}

void CandidateView::submit(const QString& source) {
    if (!m_session->submit(source, m_selected)) {
        // The edit stays in the editor (and as the candidate's draft) for when the run is resumed.
        Q_EMIT message(tr("Submitting a kernel needs a running search: your edit is kept; resume the run (Run › "
                          "Resume Opened Run) and submit it again."),
                       15000);
        return;
    }
    m_drafts.remove(m_selected);
    m_kernelPane->editor()->setModified(false);
    m_awaitingSubmitted = true;
    m_session->setPicked();
    Q_EMIT message(m_selected ? tr("Kernel submitted to the search as a child of #%1").arg(m_selected)
                              : tr("Kernel submitted to the search"),
                   8000);
}

}  // namespace kerncast
