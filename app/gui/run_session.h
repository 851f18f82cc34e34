#pragma once
// The run on show in the workbench, live or opened from a file. It owns the EngineBridge (the live search) and the
// reader of the run file, keeps what the events said about candidates (so that selecting one needs no store read),
// reads stored runs and evaluates pair sets off the GUI thread, and says which candidate the views follow: the newest
// best until a person picks one.

#include "app/gui/engine_bridge.h"
#include "app/gui/latest_result.h"
#include "app/gui/run_data.h"
#include "engine/surrogate/evaluation.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast {

class RunStore;

class RunSession : public QObject {
    Q_OBJECT
public:
    explicit RunSession(QString resourcesDir, QObject* parent = nullptr);
    ~RunSession() override;

    // A new run file in the application's data folder: <folder>/<stem>-<time>[-N].sqlite.
    static QString newRunPath(const QString& folder, const QString& stem);

    EngineBridge* bridge() const { return m_bridge; }
    // The run shown is the bridge's current session.
    bool isLive() const { return m_live; }
    // A live search is running (or paused): commands reach it.
    bool isSteerable() const;
    QString path() const { return m_path; }
    const std::optional<LoadedRun>& opened() const { return m_opened; }
    int64_t runId() const { return m_runId; }
    // The run file, opened read-only on first use (the live run's or the opened one's); nullptr when there is none.
    RunStore* reader();
    const std::string& problemName() const { return m_problemName; }
    const std::vector<ProgressPoint>& progress() const { return m_progress; }
    int64_t measurements() const { return m_measurements; }
    const SearchProgress& lastProgress() const { return m_lastProgress; }

    // The views follow the newest best until a person picks a candidate; a new run follows again.
    bool followsBest() const { return m_followBest; }
    void setPicked() { m_followBest = false; }

    // Nothing shown.
    void clear();
    // A new search into `path`, or the opened search continued in its file with these budgets.
    void start(const SearchConfig& config, const QString& path, const std::string& problemName);
    bool resume(const SearchBudgets& budgets);
    void setPath(const QString& path) { m_path = path; }
    // Sends an edited kernel to the live search as a child of parentId (0: a root), with the parent's tunables: a
    // family configuration's source uses them as -D values. False when no search runs.
    bool submit(const QString& source, qint64 parentId);
    // Takes in a batch of the live search; true when a candidate was forecast or measured.
    bool absorb(const std::vector<SearchEvent>& events);

    // Reads a run file in the background: runRead() or loadFailed() follows (a newer open drops an older one).
    void open(const QString& path);
    // Makes the run just read the one shown (not live); returns its rows for the population.
    std::vector<CandidateRow> showRead();
    // Scores a surrogate on a pair set in the background: evaluated() or evaluationFailed() follows.
    void evaluate(EvaluationOptions options);
    bool isEvaluating() const { return m_evaluation.running() > 0; }

    // Everything the editor, diff and inspector show of a candidate. `error`: the run file could not be read.
    struct CandidateDetails {
        std::optional<Candidate> candidate;
        std::optional<Candidate> parent;  // its forecast's anchor (else its parent), or the reference
        std::optional<Forecast> forecast;
        QString compileError;
        QString prompt;
        const std::string* anchor = nullptr;  // evaluations: the pair's anchor code
        QString error;
    };
    CandidateDetails details(const CandidateRow& row, const std::vector<CandidateRow>& population);

    // What is known of a candidate: from the live events, else from the run file.
    std::optional<Candidate> candidate(int64_t id);
    // A forecast the events did not carry is read from the file only when `stored` says there is one.
    std::optional<Forecast> forecast(int64_t id, bool stored);
    QString compileError(int64_t id) const;
    QString prompt(int64_t id) const;
    // Evaluations: the anchor code of a candidate's pair; nullptr when none.
    const std::string* anchor(int64_t id) const;

    // A run state in words ("running", "paused", ...).
    static QString stateName(RunState state);
    // "running", "finished (opened)", ... for the status bar.
    QString stateText() const;
    // What the device's worker does ("measuring", "paused, 3 waiting", ...).
    QString workerState(int queueLength) const;

Q_SIGNALS:
    void runRead();
    void loadFailed(const QString& message);
    void evaluationProgress(const QString& stage, int done, int total);
    void evaluated(const QString& storePath, int pairs);
    void evaluationFailed(const QString& message);

private:
    struct EvaluationOutcome {
        std::optional<EvaluationResult> result;
        std::string error;
    };

    QString m_resourcesDir;
    EngineBridge* m_bridge = nullptr;
    QString m_path;
    bool m_live = false;
    bool m_followBest = true;
    std::optional<LoadedRun> m_opened;   // what was read from the file (config for Resume, prompts)
    std::optional<LoadedRun> m_pending;  // read, handed over by show()
    std::unique_ptr<RunStore> m_reader;  // GUI-thread reader of m_path, opened on first need
    int64_t m_runId = 0;
    std::string m_problemName;
    std::vector<ProgressPoint> m_progress;
    int64_t m_measurements = 0;
    SearchProgress m_lastProgress;
    std::unordered_map<int64_t, Candidate> m_candidates;
    std::unordered_map<int64_t, Forecast> m_forecasts;
    std::unordered_map<int64_t, std::string> m_compileErrors;
    LatestResult<LoadedRun> m_open{this};
    LatestResult<EvaluationOutcome> m_evaluation{this};
};

}  // namespace kerncast
