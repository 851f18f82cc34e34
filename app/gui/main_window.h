#pragma once
// The workbench window. It assembles: the kernel pane in the centre (a problem's programs, or the selected
// candidate, which can be edited and submitted to the running search) and one class per dock around it: run control,
// problems, devices, the population (table and lineage tree), the forecast inspector, the diff against the parent,
// problem details and the plots. The run on show (live or opened from a file) is a RunSession; the window passes
// what it reports to the docks and what the docks ask for to it. See docs/ARCHITECTURE.md §9.

#include "app/gui/device_panel.h"
#include "app/gui/engine_bridge.h"
#include "app/gui/kernel_pane.h"
#include "app/gui/plots_panel.h"
#include "app/gui/population_panel.h"
#include "app/gui/problem_browser.h"
#include "app/gui/run_session.h"
#include "app/gui/window_layout.h"
#include "engine/surrogate/evaluation.h"
#include "widgets/problem_entry.h"

#include <QMainWindow>
#include <QStringList>

class QDockWidget;
class QLabel;
class QProgressBar;
class QTableView;

namespace kerncast {

class CandidateView;
class DeviceListModel;
class DiffView;
class ForecastInspector;
class ForecastScatterPlot;
class KernelEditor;
class LineageModel;
class PopulationFilterProxy;
class PopulationModel;
class ProblemDetailsView;
class ProblemListModel;
class ReliabilityPlot;
class RiskCoveragePlot;
class RunControlPanel;
class StatusLine;
class SearchProgressPlot;
struct ForecastMetrics;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString resourcesDir;         // holds problems/ and recordings/
        bool persistSettings = true;  // false for screenshots: a scripted run must not move the user's layout
    };

    // How often the plots follow a running search at most (they look at every candidate; the table is immediate).
    static constexpr int kPlotRefreshMs = 250;
    static constexpr int kLargePlotRefreshMs = 1000;

    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Reloads the problem library (resources/problems plus folders opened by hand) off the GUI thread.
    void reloadProblems();
    // Adds a problem folder (or a folder of problem folders) and selects what it holds once loaded.
    void openProblemFolder(const QString& dir);
    // Imports a T1 problem file (core/t1_problem.h) into outDir (default: the application's data folder,
    // t1-problems/<name>) and opens it; returns the folder, or "" after showing the error.
    QString openT1Problem(const QString& t1File, const QString& outDir = {});
    void reloadDevices();

    bool selectProblem(const QString& nameOrDir);
    QString selectedProblemDir() const;
    // The kernel programs of the selected problem as offered in the program selector.
    QStringList programLabels() const;
    bool selectProgram(int index);
    int selectedProgram() const;

    // The device measurements go to (see DevicePanel::activeDeviceId).
    QString activeDeviceId() const;
    void setActiveDevice(const QString& id);
    QString surrogateStatus() const;

    bool isReady() const;

    // Starts a search with the run control's settings into a new run file (default: one in the data folder).
    // False, with the reason in an error dialog, when the settings are incomplete.
    bool startSearch(const QString& runPath = {});
    // The embedded demo: softmax (or the first recorded problem) on its replay device, the local surrogate,
    // selective gating; started as soon as problems and devices are loaded.
    void startDemo();
    // Reads a run file off the GUI thread and shows it; runLoaded() or an error dialog follows.
    void openRun(const QString& path);
    // Continues the opened search run (its stored config) in the same file.
    bool resumeOpenedRun();
    // A person's verdict on a suspect result of the shown run (ARCHITECTURE §5); the outcome goes to the status bar.
    void reviewSuspect(qint64 candidateId, bool accept);
    void showLlmCalls(qint64 id);  // the candidate's LLM calls into the inspector
    // The diff shows the selected candidate against another one (Population › Compare with #N).
    bool compareWithSelected(qint64 otherId);
    // Scores a surrogate on a pair JSONL in the background, then opens the run file it wrote.
    void evaluatePairs(const EvaluationOptions& options);
    // Selects a candidate everywhere (table, tree, scatter) and shows it in the editor, diff and inspector, as a
    // click does: from then on the views stay on it instead of following the newest best of a running search.
    bool selectCandidate(qint64 candidateId);
    qint64 selectedCandidate() const;
    // The views follow the newest best candidate (until a person selects one).
    bool followsBest() const;
    // The docks where the first layout puts them, sized for the window as it is (View › Reset Layout).
    void resetLayout();
    // Run files opened or started here, the newest first (File › Open Recent), at most kRecentRuns.
    static constexpr int kRecentRuns = 8;
    QStringList recentRuns() const { return m_recentRuns; }
    // The path of the run shown (live or opened), empty when none.
    QString shownRunPath() const { return m_session->path(); }

    RunSession* session() const { return m_session; }
    EngineBridge* bridge() const { return m_session->bridge(); }
    RunControlPanel* runControl() const { return m_runControl; }
    ProblemListModel* problemModel() const { return m_problems->model(); }
    DeviceListModel* deviceModel() const { return m_devices->model(); }
    PopulationModel* populationModel() const { return m_population->model(); }
    PopulationFilterProxy* populationProxy() const { return m_population->proxy(); }
    LineageModel* lineageModel() const { return m_population->lineage(); }
    QTableView* populationView() const { return m_population->tableView(); }
    KernelEditor* editor() const { return m_kernelPane->editor(); }
    DiffView* diffView() const { return m_diff; }
    ForecastInspector* inspector() const { return m_inspector; }
    ProblemDetailsView* detailsView() const { return m_details; }
    ForecastScatterPlot* scatterPlot() const { return m_plots->scatter(); }
    ReliabilityPlot* reliabilityPlot() const { return m_plots->reliability(); }
    RiskCoveragePlot* riskCoveragePlot() const { return m_plots->riskCoverage(); }
    SearchProgressPlot* progressPlot() const { return m_plots->progress(); }
    QLabel* metricsLabel() const { return m_plots->metricsLabel(); }
    // The metrics of the shown run's measured forecasts, as the plots show them.
    const ForecastMetrics& shownMetrics() const { return m_plots->metrics(); }
    // The worker line of the device dock ("idle", "measuring", ...) and the measurements waiting for the device.
    QString workerState() const;
    int queueLength() const { return m_queueLength; }

Q_SIGNALS:
    void problemsLoaded(int count);
    void devicesLoaded(int count);
    // Problems and devices have both been loaded once: the window shows real content.
    void ready();
    // An opened run is shown (rows, plots).
    void runLoaded(const QString& path);
    // A search shown in the window ended (finished or failed).
    void searchEnded(bool ok);
    // An evaluation finished and its run is being opened (storePath), or failed (message).
    void evaluationFinished(const QString& storePath);
    void evaluationFailed(const QString& message);
    // An error was shown to the user (also while no dialog can be seen, e.g. offscreen).
    void errorShown(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void createDocks();
    void connectParts();
    void readSettings();
    void writeSettings() const;
    void markReadyIfDone();
    void showProblem(const ProblemEntry* entry);
    void showOpenedFolderErrors();
    void showErrorDialog(const QString& title, const QString& message, const QString& file = {}, int line = 0);
    // An engine error whose message may start with "file:line: ".
    void showEngineError(const QString& title, const QString& message);
    void onEvents(const SearchEventBatch& batch);
    void onSearchEnded(quint64 session, bool ok, const QString& message, const QString& file, int line);
    void showReadRun();
    void clearRunViews();
    void refreshPlots();
    void refreshRunStatus();
    bool showSelection(qint64 candidateId);

    Options m_options;
    RunSession* m_session = nullptr;
    KernelPane* m_kernelPane = nullptr;
    ProblemBrowser* m_problems = nullptr;
    ProblemDetailsView* m_details = nullptr;
    DevicePanel* m_devices = nullptr;
    RunControlPanel* m_runControl = nullptr;
    PopulationPanel* m_population = nullptr;
    ForecastInspector* m_inspector = nullptr;
    DiffView* m_diff = nullptr;
    PlotsPanel* m_plots = nullptr;
    CandidateView* m_candidateView = nullptr;
    WorkbenchDocks m_docks{};
    StatusLine* m_status = nullptr;
    QAction* m_resumeRunAction = nullptr;
    QAction* m_evaluateAction = nullptr;
    QTimer* m_plotRefresh = nullptr;
    QString m_runProblemBeforeReload;
    QString m_openedFolder;
    QByteArray m_initialLayout;  // the docks as addWorkbenchDocks placed them
    QStringList m_recentRuns;
    void rememberRun(const QString& path);  // a folder opened by hand, whose errors are shown once it is loaded
    int m_queueLength = 0;
    bool m_readyEmitted = false;
    bool m_demoPending = false;
    bool m_closing = false;
    bool m_defaultLayoutPending = false;
};

}  // namespace kerncast
