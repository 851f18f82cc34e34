#pragma once
// The candidate on show: the editor (kernel pane), the forecast inspector, the diff against the forecast's anchor and
// the plots' highlight all show one candidate of the run session. Until a person picks a row it follows the newest
// best of a running search (ARCHITECTURE.md "The GUI").

#include "app/gui/latest_result.h"
#include "core/problem.h"
#include "core/run_store.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <optional>
#include <string>
#include <vector>

namespace kerncast {

class DiffView;
class ForecastInspector;
class KernelPane;
class PlotsPanel;
class PopulationPanel;
class RunSession;
struct SearchEvent;

class CandidateView : public QObject {
    Q_OBJECT
public:
    CandidateView(RunSession* session, PopulationPanel* population, KernelPane* kernelPane,
                  ForecastInspector* inspector, DiffView* diff, PlotsPanel* plots, QObject* parent = nullptr);

    qint64 selected() const { return m_selected; }
    // Nothing on show (a new run, an opened one).
    void clear();
    // Shows the candidate and makes its row current; false when the population has no such row.
    bool showSelection(qint64 candidateId);
    // Shows the candidate in the editor, the inspector, the diff and the plots.
    void showCandidate(qint64 id);
    // The candidate's LLM calls into the inspector, read from the run file in the background (a run with thousands of
    // calls never stalls the window); a newer selection drops an older read.
    void showLlmCalls(qint64 id);
    // The diff shows the candidate on show against `other` (any two candidates of the run), each titled with its
    // measured speedup; false when either cannot be read.
    bool compareWith(qint64 other);
    // An opened run: the best measured candidate with a forecast, else the first with a forecast.
    void showBestForecast();
    // An edited kernel goes to the running search as a child of the candidate on show; once the search has it, it
    // is shown (its compile errors on their lines) and said in the status bar.
    void submit(const QString& source);
    // Unsubmitted edits, by candidate: showing the candidate again shows its edit, never the stored text over it.
    bool hasDraft(qint64 id) const { return m_drafts.contains(id); }
    // A batch of events of the live run: the newest best while nobody has picked a row, else the picked row again
    // when it was forecast or measured meanwhile.
    void follow(const std::vector<SearchEvent>& events, qint64 best);

Q_SIGNALS:
    // Something for the status bar.
    void message(const QString& text, int timeoutMs);

private:
    // The Measurement tab of the inspector, from the run file.
    void showMeasurement(qint64 id);
    // The problem the run searched, as the run file stores it (its bytes, flops and cases); nullptr when it has none.
    const Problem* runProblem(RunStore& store);

    RunSession* m_session;
    PopulationPanel* m_population;
    KernelPane* m_kernelPane;
    ForecastInspector* m_inspector;
    DiffView* m_diff;
    PlotsPanel* m_plots;
    qint64 m_selected = 0;
    QHash<qint64, QString> m_drafts;
    std::optional<Problem> m_problem;
    QString m_problemKey;  // the run file and problem m_problem was read for
    bool m_awaitingSubmitted = false;
    struct LlmCallsLoad {
        qint64 id = 0;
        std::vector<LlmCall> calls;
        std::string error;
    };
    LatestResult<LlmCallsLoad> m_llmCalls{this};
};

}  // namespace kerncast
