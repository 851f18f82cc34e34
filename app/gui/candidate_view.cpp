#include "app/gui/candidate_view.h"

#include "app/gui/kernel_pane.h"
#include "app/gui/plots_panel.h"
#include "app/gui/population_panel.h"
#include "app/gui/run_session.h"
#include "widgets/diff_view.h"
#include "widgets/forecast_inspector.h"
#include "widgets/population_model.h"

#include <algorithm>

namespace kerncast {

CandidateView::CandidateView(RunSession* session, PopulationPanel* population, KernelPane* kernelPane,
                             ForecastInspector* inspector, DiffView* diff, PlotsPanel* plots, QObject* parent)
    : QObject(parent), m_session(session), m_population(population), m_kernelPane(kernelPane), m_inspector(inspector),
      m_diff(diff), m_plots(plots) {}

void CandidateView::clear() {
    m_selected = 0;
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
    const CandidateRow& row = model->row(rowIndex);
    m_plots->setSelected(id);

    // The candidate, its forecast and compile error: from the events of a live run, else from the store.
    const RunSession::CandidateDetails d = m_session->details(row, model->rows());
    if (!d.error.isEmpty())
        Q_EMIT message(tr("Could not read candidate #%1: %2").arg(id).arg(d.error), 10000);
    m_inspector->setCandidate(row, d.forecast, d.prompt);
    showLlmCalls(id);
    if (!d.candidate)
        return;
    const Candidate& c = *d.candidate;
    const QString label = QString::fromStdString(c.label);
    m_kernelPane->showCandidate(tr("<b>Candidate #%1</b> · %2 · generation %3 · %4")
                                    .arg(id)
                                    .arg(PopulationModel::mutatorText(row.mutator))
                                    .arg(row.generation)
                                    .arg(label.toHtmlEscaped()),
                                QString::fromStdString(c.source), compileFileName(c), d.compileError,
                                m_session->isSteerable());
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
    if (!m_session->submit(source, m_selected))
        Q_EMIT message(tr("Submitting a kernel needs a running search."), 8000);
    else
        Q_EMIT message(m_selected ? tr("Kernel submitted to the search as a child of #%1").arg(m_selected)
                                  : tr("Kernel submitted to the search"),
                       8000);
}

}  // namespace kerncast
