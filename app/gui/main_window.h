#pragma once
// The workbench window. The centre is the kernel editor (a problem's programs, or the selected candidate, which can
// be edited and submitted to the running search). Around it, docks: run control, problems, devices, the
// population (table and lineage tree), the forecast inspector, the diff against the parent, problem details and
// the plots. A search runs behind an EngineBridge; a stored run (a search or an evaluation) can be opened and, for a
// search, resumed.

#include "app/gui/engine_bridge.h"
#include "app/gui/run_data.h"
#include "widgets/problem_entry.h"

#include "engine/device.h"
#include "engine/evaluation.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QStringList>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

class QComboBox;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMessageBox;
class QProgressBar;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTimer;
class QTreeView;

namespace kerncast {

class DeviceListModel;
class PoolView;
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
class RunStore;
class SearchProgressPlot;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString resourcesDir;         // holds problems/ and recordings/
        bool persistSettings = true;  // false for screenshots: a scripted run must not move the user's layout
    };

    // How often the plots follow a running search at most (they look at every candidate; the table is immediate).
    static constexpr int kPlotRefreshMs = 250;
    // Above this many candidates a running search does not re-sort the table on every change, but every
    // kLargeResortMs (a re-sort of 100k rows takes tens of milliseconds).
    static constexpr int kLiveSortLimit = 20000;
    static constexpr int kLargeResortMs = 3000;
    static constexpr int kLargePlotRefreshMs = 1000;

    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Reloads the library (resources/problems plus folders opened by hand) off the GUI thread. A newer reload makes
    // an older one's result stale: it is dropped, never shown.
    void reloadProblems();
    // Adds a problem folder (or a folder of problem folders) and selects what it holds once loaded.
    void openProblemFolder(const QString& dir);
    void reloadDevices();

    bool selectProblem(const QString& nameOrDir);
    QString selectedProblemDir() const;
    // The kernel programs of the selected problem as offered in the program selector.
    QStringList programLabels() const;
    bool selectProgram(int index);
    int selectedProgram() const;

    // The device measurements go to: the saved choice when it is still listed, else the first CUDA GPU, else the
    // first replay device; empty when there is none.
    QString activeDeviceId() const;
    void setActiveDevice(const QString& id);
    QString surrogateStatus() const;

    bool isReady() const { return m_problemsLoaded && m_devicesLoaded; }

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
    // A person's verdict on a suspect result of the shown run (DESIGN §5); the outcome goes to the status bar.
    void reviewSuspect(qint64 candidateId, bool accept);
    // Scores a surrogate on a pair JSONL in the background, then opens the run file it wrote.
    void evaluatePairs(const EvaluationOptions& options);
    // Selects a candidate everywhere (table, tree, scatter) and shows it in the editor, diff and inspector.
    bool selectCandidate(qint64 candidateId);
    qint64 selectedCandidate() const { return m_selectedCandidate; }
    // The path of the run shown (live or opened), empty when none.
    QString shownRunPath() const { return m_runPath; }

    EngineBridge* bridge() const { return m_bridge; }
    RunControlPanel* runControl() const { return m_runControl; }
    ProblemListModel* problemModel() const { return m_problems; }
    DeviceListModel* deviceModel() const { return m_devices; }
    PopulationModel* populationModel() const { return m_population; }
    PopulationFilterProxy* populationProxy() const { return m_populationProxy; }
    LineageModel* lineageModel() const { return m_lineage; }
    QTableView* populationView() const { return m_populationView; }
    KernelEditor* editor() const { return m_editor; }
    DiffView* diffView() const { return m_diff; }
    ForecastInspector* inspector() const { return m_inspector; }
    ProblemDetailsView* detailsView() const { return m_details; }
    ForecastScatterPlot* scatterPlot() const { return m_scatter; }
    ReliabilityPlot* reliabilityPlot() const { return m_reliability; }
    RiskCoveragePlot* riskCoveragePlot() const { return m_riskCoverage; }
    SearchProgressPlot* progressPlot() const { return m_progressPlot; }
    QLabel* metricsLabel() const { return m_metricsLabel; }
    // The metrics of the shown run's measured forecasts, as the plots show them.
    const ForecastMetrics& shownMetrics() const { return m_metrics; }
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
    void createMenus();
    void createPanels();
    void createRunDocks();
    void readSettings();
    void applyDefaultLayout();
    void writeSettings() const;
    void showProblem(const ProblemEntry* entry);
    void showProgram(int index);
    void showError(const QString& file, int line);
    void updateDeviceStatus();
    void updateDeviceDetails();
    void markReadyIfDone();
    const ProblemEntry* currentEntry() const;

    void showErrorDialog(const QString& title, const QString& message, const QString& file = {}, int line = 0);
    void onBridgeStarted(quint64 session, const QString& runPath);
    void onEvents(const SearchEventBatch& batch);
    void onSearchFinished(quint64 session, const QString& reason);
    void onSearchFailed(quint64 session, const QString& message, const QString& file, int line);
    void onBridgeState(EngineBridge::State state);
    void showLoadedRun(LoadedRun run);
    void clearRunViews();
    void refreshPlots();
    void showMetrics(const ForecastMetrics& metrics);
    void refreshRunStatus();
    void showCandidate(qint64 id);
    void submitEditedKernel(const QString& source);
    RunStore* reader();
    QString defaultRunPath(const QString& problemName) const;
    void setEditorForCandidate(bool forCandidate);

    Options m_options;
    QStringList m_openedFolders;  // outside the library, kept across reloads
    QString m_pendingSelection;   // folder to select when the running load finishes
    QString m_savedDevice;
    quint64 m_problemGeneration = 0;
    quint64 m_deviceGeneration = 0;
    quint64 m_runGeneration = 0;  // opened runs: a newer open makes an older load stale
    bool m_problemsLoaded = false;
    bool m_devicesLoaded = false;
    bool m_readyEmitted = false;
    bool m_demoPending = false;
    bool m_closing = false;
    bool m_defaultLayoutPending = false;

    ProblemListModel* m_problems = nullptr;
    QSortFilterProxyModel* m_problemProxy = nullptr;
    DeviceListModel* m_devices = nullptr;
    QHash<QString, double> m_deviceBandwidth;  // device id -> measured DRAM GB/s (replay recordings' ceilings)
    QTreeView* m_problemView = nullptr;
    QLineEdit* m_problemFilter = nullptr;
    QTreeView* m_deviceView = nullptr;
    QLabel* m_deviceNote = nullptr;
    QLabel* m_deviceDetails = nullptr;
    PoolView* m_poolView = nullptr;
    QComboBox* m_programSelector = nullptr;
    QLabel* m_programPath = nullptr;
    QLabel* m_candidateTitle = nullptr;
    KernelEditor* m_editor = nullptr;
    ProblemDetailsView* m_details = nullptr;
    QDockWidget* m_problemDock = nullptr;
    QDockWidget* m_detailsDock = nullptr;
    QDockWidget* m_deviceDock = nullptr;
    QDockWidget* m_runDock = nullptr;
    QDockWidget* m_populationDock = nullptr;
    QDockWidget* m_inspectorDock = nullptr;
    QDockWidget* m_diffDock = nullptr;
    QDockWidget* m_plotsDock = nullptr;
    QLabel* m_runStatus = nullptr;
    QLabel* m_deviceStatus = nullptr;
    QLabel* m_surrogateStatus = nullptr;
    QProgressBar* m_busy = nullptr;
    QString m_activeDevice;
    std::string m_shownProblemDir;

    // The run shown: live (from the bridge) or opened from a file.
    EngineBridge* m_bridge = nullptr;
    RunControlPanel* m_runControl = nullptr;
    PopulationModel* m_population = nullptr;
    PopulationFilterProxy* m_populationProxy = nullptr;
    LineageModel* m_lineage = nullptr;
    QTableView* m_populationView = nullptr;
    QTreeView* m_lineageView = nullptr;
    QLineEdit* m_populationFilter = nullptr;
    QTabWidget* m_populationTabs = nullptr;
    DiffView* m_diff = nullptr;
    ForecastInspector* m_inspector = nullptr;
    QTabWidget* m_plotTabs = nullptr;
    ForecastScatterPlot* m_scatter = nullptr;
    ReliabilityPlot* m_reliability = nullptr;
    RiskCoveragePlot* m_riskCoverage = nullptr;
    SearchProgressPlot* m_progressPlot = nullptr;
    QLabel* m_metricsLabel = nullptr;
    QAction* m_resumeRunAction = nullptr;
    QTimer* m_plotRefresh = nullptr;
    QTimer* m_resort = nullptr;
    QAction* m_evaluateAction = nullptr;

    QString m_runPath;
    bool m_runLive = false;  // the shown run is the bridge's current session
    std::optional<LoadedRun> m_opened;  // what was read from the file (config for Resume, prompts)
    std::optional<RunStore> m_reader;  // GUI-thread reader of m_runPath, opened on first need
    int64_t m_runId = 0;
    std::string m_problemName;
    std::vector<ProgressPoint> m_progress;
    int64_t m_measurements = 0;
    SearchProgress m_lastProgress;
    ForecastMetrics m_metrics;
    quint64 m_metricsGeneration = 0;  // a newer refresh makes an older background calibration stale
    int m_queueLength = 0;
    bool m_measuring = false;
    bool m_plotsDirty = false;
    // Live runs: what the events told about candidates, so that selecting one needs no store read.
    std::unordered_map<int64_t, Candidate> m_candidates;
    std::unordered_map<int64_t, Forecast> m_forecasts;
    std::unordered_map<int64_t, std::string> m_compileErrors;
    qint64 m_selectedCandidate = 0;
    bool m_selecting = false;
};

}  // namespace kerncast
