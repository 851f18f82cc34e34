#include "app/gui/main_window.h"

#include "app/gui/candidate_view.h"
#include "app/gui/demo_setup.h"
#include "app/gui/device_panel.h"
#include "app/gui/error_dialog.h"
#include "app/gui/kernel_pane.h"
#include "app/gui/main_menus.h"
#include "app/gui/plots_panel.h"
#include "app/gui/population_panel.h"
#include "app/gui/problem_browser.h"
#include "app/gui/run_control_panel.h"
#include "app/gui/run_session.h"
#include "app/gui/status_line.h"
#include "app/gui/window_layout.h"
#include "core/t1_problem.h"
#include "widgets/device_list_model.h"
#include "widgets/diff_view.h"
#include "widgets/engine_text.h"
#include "widgets/forecast_inspector.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/kernel_editor.h"
#include "widgets/population_model.h"
#include "widgets/problem_details_view.h"
#include "widgets/problem_list_model.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>

#include <algorithm>

// Resources are compiled into the kerncast_app library: a static library needs its initializer called by name.
static void initAppResources() { Q_INIT_RESOURCE(kerncast); }

namespace kerncast {

MainWindow::MainWindow(Options options, QWidget* parent) : QMainWindow(parent), m_options(std::move(options)) {
    initAppResources();
    setWindowTitle(tr("Kerncast"));
    QIcon icon;
    for (int size : {32, 64, 256})
        icon.addFile(QStringLiteral(":/icons/kerncast-%1.png").arg(size), QSize(size, size));
    setWindowIcon(icon);
    setObjectName(QStringLiteral("MainWindow"));
    setDockNestingEnabled(true);
    m_session = new RunSession(m_options.resourcesDir, this);
    m_plotRefresh = new QTimer(this);
    m_plotRefresh->setSingleShot(true);
    m_plotRefresh->setInterval(kPlotRefreshMs);
    connect(m_plotRefresh, &QTimer::timeout, this, &MainWindow::refreshPlots);
    createDocks();
    const MainMenus menus = createMainMenus(this, m_runControl, m_docks, m_options.resourcesDir);
    m_initialLayout = saveState();
    m_evaluateAction = menus.evaluate;
    m_resumeRunAction = menus.resumeRun;
    connectParts();
    readSettings();
    m_status->setSurrogate(m_runControl->surrogate(), m_runControl->model());
    reloadProblems();
    reloadDevices();
}

MainWindow::~MainWindow() {
    // The session stops a running search and waits for it (bounded) before the views it feeds go away.
    delete m_session;
    m_session = nullptr;
}

void MainWindow::createDocks() {
    m_kernelPane = new KernelPane(this);
    setCentralWidget(m_kernelPane);
    m_problems = new ProblemBrowser(m_options.resourcesDir, this);
    m_details = new ProblemDetailsView(this);
    m_devices = new DevicePanel(m_options.resourcesDir, this);
    m_runControl = new RunControlPanel(m_problems->model(), m_devices->model(), this);
    m_population = new PopulationPanel(this);
    m_inspector = new ForecastInspector(this);
    m_diff = new DiffView(this);
    m_diff->setMinimumWidth(280);  // its two editors would ask for more; a narrow diff scrolls instead
    m_plots = new PlotsPanel(this);
    m_candidateView = new CandidateView(m_session, m_population, m_kernelPane, m_inspector, m_diff, m_plots, this);
    connect(m_candidateView, &CandidateView::message, this,
            [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });

    m_docks = {makeDock(this, tr("Run Control"), QStringLiteral("runDock"), m_runControl),
               makeDock(this, tr("Problems"), QStringLiteral("problemDock"), m_problems),
               makeDock(this, tr("Device"), QStringLiteral("deviceDock"), m_devices),
               makeDock(this, tr("Population"), QStringLiteral("populationDock"), m_population),
               makeDock(this, tr("Forecast Inspector"), QStringLiteral("inspectorDock"), m_inspector),
               makeDock(this, tr("Diff"), QStringLiteral("diffDock"), m_diff),
               makeDock(this, tr("Details"), QStringLiteral("detailsDock"), m_details),
               makeDock(this, tr("Plots"), QStringLiteral("plotsDock"), m_plots)};
    addWorkbenchDocks(this, m_docks);

    m_status = new StatusLine(statusBar());
    clearRunViews();
    refreshRunStatus();
}

void MainWindow::connectParts() {
    connect(m_kernelPane, &KernelPane::submitRequested, m_candidateView, &CandidateView::submit);
    connect(m_problems, &ProblemBrowser::problemShown, this, &MainWindow::showProblem);
    connect(m_problems, &ProblemBrowser::loadStarted, this,
            [this](const QString& root) { statusBar()->showMessage(tr("Loading problems from %1...").arg(root)); });
    // The run control lists the same problems: its choice outlives a reload of the library.
    connect(m_problems->model(), &QAbstractItemModel::modelAboutToBeReset, this,
            [this] { m_runProblemBeforeReload = m_runControl->problemDir(); });
    connect(m_problems, &ProblemBrowser::loaded, this, [this](int count, const QString& message) {
        statusBar()->showMessage(message, 10000);
        const QString runProblem = std::exchange(m_runProblemBeforeReload, QString());
        if (!runProblem.isEmpty() && runProblem != selectedProblemDir())
            m_runControl->setProblemDir(runProblem);
        Q_EMIT problemsLoaded(count);
        showOpenedFolderErrors();
        markReadyIfDone();
    });
    connect(m_details, &ProblemDetailsView::errorActivated, this, [this](const QString& file, int line) {
        if (!m_kernelPane->showProgramError(file, line))
            statusBar()->showMessage(line > 0 ? tr("%1, line %2").arg(file).arg(line) : file, 10000);
    });
    connect(m_devices, &DevicePanel::activeDeviceChanged, this, [this](const QString& id) {
        m_runControl->setDeviceId(id);
        m_status->setDevice(id);
    });
    connect(m_devices, &DevicePanel::loaded, this, [this](int count) {
        Q_EMIT devicesLoaded(count);
        markReadyIfDone();
    });

    EngineBridge* bridge = m_session->bridge();
    connect(m_runControl->startAction(), &QAction::triggered, this, [this] { startSearch(); });
    m_runControl->bindTo(bridge);
    connect(m_runControl, &RunControlPanel::problemSelected, this, [this](const QString& dir) { selectProblem(dir); });
    connect(m_runControl, &RunControlPanel::deviceSelected, this, &MainWindow::setActiveDevice);
    connect(m_runControl, &RunControlPanel::surrogateChanged, this,
            [this] { m_status->setSurrogate(m_runControl->surrogate(), m_runControl->model()); });

    connect(m_population, &PopulationPanel::candidateClicked, this, [this](qint64 id) {
        m_session->setPicked();
        m_candidateView->showCandidate(id);
    });
    m_population->bindTo(bridge);
    connect(m_population, &PopulationPanel::reviewRequested, this, &MainWindow::reviewSuspect);
    connect(m_population, &PopulationPanel::compareRequested, this, [this](qint64 id) {
        if (m_candidateView->compareWith(id)) {
            m_docks.diff->show();
            m_docks.diff->raise();
        }
    });
    connect(m_population, &PopulationPanel::message, this,
            [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_plots, &PlotsPanel::candidateClicked, this, [this](qint64 id) { selectCandidate(id); });
    connect(m_inspector, &ForecastInspector::forceMeasureRequested, this, [this](qint64 id) {
        if (m_session->isSteerable())
            m_session->bridge()->forceMeasure(id);
        else
            statusBar()->showMessage(tr("Measuring needs a running search: resume the run first."), 8000);
    });

    connect(bridge, &EngineBridge::started, this, [this](quint64 session, const QString& runPath) {
        if (session != m_session->bridge()->session())
            return;
        m_session->setPath(runPath);
        m_devices->setTimeline(m_session->bridge()->timeline());
        refreshRunStatus();
    });
    connect(bridge, &EngineBridge::eventsReady, this, &MainWindow::onEvents);
    connect(bridge, &EngineBridge::finished, this,
            [this](quint64 session, const QString& reason) { onSearchEnded(session, true, reason, {}, 0); });
    connect(bridge, &EngineBridge::failed, this,
            [this](quint64 session, const QString& message, const QString& file, int line) {
        onSearchEnded(session, false, message, file, line);
    });
    connect(bridge, &EngineBridge::stateChanged, this, [this](EngineBridge::State state) {
        m_runControl->setRunState(state);
        m_population->setSteerable(m_session->isSteerable());
        m_resumeRunAction->setEnabled(!m_session->bridge()->isActive() && m_session->opened() &&
                                      m_session->opened()->config);
        // A candidate stays editable when the search pauses or ends: the edit is kept for a resumed run.
        m_kernelPane->setCandidateEditable(m_candidateView->selected() != 0);
        refreshRunStatus();
    });
    connect(m_session, &RunSession::runRead, this, &MainWindow::showReadRun);
    connect(m_session, &RunSession::loadFailed, this, [this](const QString& message) {
        m_status->hideBusy();
        showEngineError(tr("Cannot open the run"), message);
    });
    connect(m_session, &RunSession::evaluationProgress, this, [this](const QString& stage, int done, int total) {
        m_status->showProgress(done, total);
        statusBar()->showMessage(tr("Evaluating: %1 %2 of %3").arg(stage).arg(done).arg(total));
    });
    connect(m_session, &RunSession::evaluationFailed, this, [this](const QString& message) {
        m_status->hideBusy();
        m_evaluateAction->setEnabled(true);
        showEngineError(tr("The evaluation failed"), message);
        Q_EMIT evaluationFailed(message);
    });
    connect(m_session, &RunSession::evaluated, this, [this](const QString& store, int pairs) {
        m_status->hideBusy();
        m_evaluateAction->setEnabled(true);
        if (m_session->bridge()->isActive()) {
            // The window belongs to the running search; the evaluation waits in its file.
            const QString text = tr("Evaluation of %1 pairs stored in %2; open it with File › Open Run once the "
                                    "search has ended");
            statusBar()->showMessage(text.arg(pairs).arg(store));
        } else {
            openRun(store);
            statusBar()->showMessage(tr("Evaluation of %1 pairs stored in %2").arg(pairs).arg(store), 15000);
        }
        Q_EMIT evaluationFinished(store);
    });
}

void MainWindow::readSettings() {
    if (!m_options.persistSettings) {
        placeOnScreen(this);
        m_defaultLayoutPending = true;
        return;
    }
    QSettings settings;
    m_recentRuns = settings.value(QStringLiteral("runs/recent")).toStringList();
    m_defaultLayoutPending = !restoreWindow(this, settings);
    m_problems->readSettings(settings);
    m_devices->setSavedDevice(settings.value(QStringLiteral("devices/active")).toString());
    m_runControl->readSettings(settings);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // Dock sizes apply to a laid-out window: the first time it is shown, unless a saved layout was restored.
    if (std::exchange(m_defaultLayoutPending, false))
        applyDefaultDockLayout(this, m_docks);
}

void MainWindow::writeSettings() const {
    if (!m_options.persistSettings)
        return;
    QSettings settings;
    saveWindow(this, settings);
    settings.setValue(QStringLiteral("runs/recent"), m_recentRuns);
    m_problems->writeSettings(settings);
    if (!activeDeviceId().isEmpty())
        settings.setValue(QStringLiteral("devices/active"), activeDeviceId());
    m_runControl->writeSettings(settings);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    EngineBridge* bridge = m_session->bridge();
    if (bridge->isActive() && !m_closing) {
        // Stop first, close when the search has ended: everything it did is in its run file already. A search
        // that does not end in time does not keep the window open.
        m_closing = true;
        writeSettings();
        bridge->stop();
        statusBar()->showMessage(tr("Stopping the search..."));
        connect(bridge, &EngineBridge::stateChanged, this, [this](EngineBridge::State s) {
            if (s == EngineBridge::State::Finished || s == EngineBridge::State::Failed)
                QTimer::singleShot(0, this, &QWidget::close);
        });
        QTimer::singleShot(EngineBridge::kShutdownTimeoutMs, this, [this] {
            if (isVisible())
                close();
        });
        event->ignore();
        return;
    }
    if (!m_closing)
        writeSettings();
    m_closing = true;
    event->accept();
}

// ---- problems and devices ------------------------------------------------------------------------------------------

void MainWindow::reloadProblems() { m_problems->reload(); }
void MainWindow::openProblemFolder(const QString& dir) {
    m_openedFolder = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    m_problems->openFolder(dir);
}

void MainWindow::showOpenedFolderErrors() {
    const QString opened = std::exchange(m_openedFolder, QString());
    const ProblemEntry* entry = m_problems->selectedEntry();
    if (opened.isEmpty() || !entry || entry->valid() ||
        (QDir::cleanPath(QString::fromStdString(entry->dir)) != opened &&
         !QDir::cleanPath(QString::fromStdString(entry->dir)).startsWith(opened + QLatin1Char('/'))))
        return;
    // A folder a person just opened and that has errors says so where they look: every error, with the first one's
    // file to open, and the Details dock (which lists them as links) in front.
    m_docks.details->show();
    m_docks.details->raise();
    QStringList lines;
    for (const Error& e : entry->errors)
        lines << QString::fromUtf8(e.what());
    const Error& first = entry->errors.front();
    showErrorDialog(tr("The problem folder has %n error(s)", nullptr, int(entry->errors.size())),
                    tr("%1 (%2) cannot be searched until these are fixed:\n\n%3")
                        .arg(QString::fromStdString(entry->name), QString::fromStdString(entry->dir),
                             lines.join(QLatin1Char('\n'))),
                    QString::fromStdString(first.where().file), first.where().line);
}

QString MainWindow::openT1Problem(const QString& t1File, const QString& outDir) {
    try {
        const T1Problem imported = import_t1(t1File.toStdString());
        const QString name = QString::fromStdString(imported.name);
        const QString dir = outDir.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                                                   QStringLiteral("/t1-problems/") + name
                                             : outDir;
        write_t1_problem(imported, dir.toStdString());
        openProblemFolder(dir);
        statusBar()->showMessage(
            tr("Imported %1 from %2 into %3: %n valid configurations", nullptr, int(imported.configurations))
                .arg(name, QFileInfo(t1File).fileName(), dir),
            15000);
        return dir;
    } catch (const std::exception& e) {
        const auto [file, line] = EngineBridge::locationOf(QString::fromUtf8(e.what()));
        showErrorDialog(tr("Cannot open the T1 problem"), QString::fromUtf8(e.what()), file, line);
        return {};
    }
}
void MainWindow::reloadDevices() { m_devices->reload(); }
bool MainWindow::selectProblem(const QString& nameOrDir) { return m_problems->selectProblem(nameOrDir); }
QString MainWindow::selectedProblemDir() const { return m_problems->selectedDir(); }
QStringList MainWindow::programLabels() const { return m_kernelPane->programLabels(); }
bool MainWindow::selectProgram(int index) { return m_kernelPane->selectProgram(index); }
int MainWindow::selectedProgram() const { return m_kernelPane->selectedProgram(); }
QString MainWindow::activeDeviceId() const { return m_devices->activeDeviceId(); }
void MainWindow::setActiveDevice(const QString& id) { m_devices->setActiveDevice(id); }
bool MainWindow::isReady() const { return m_problems->isLoaded() && m_devices->isLoaded(); }

void MainWindow::markReadyIfDone() {
    if (!isReady() || m_readyEmitted)
        return;
    m_readyEmitted = true;
    Q_EMIT ready();
    if (std::exchange(m_demoPending, false))
        startDemo();
}

void MainWindow::showProblem(const ProblemEntry* entry) {
    if (entry && !m_session->bridge()->isActive())
        m_runControl->setProblemDir(QString::fromStdString(entry->dir));
    if (entry)
        m_details->setEntry(*entry);
    else
        m_details->clearEntry();
    m_kernelPane->showProblem(entry);
}

QString MainWindow::surrogateStatus() const { return m_status->surrogateText(); }

QString MainWindow::workerState() const { return m_session->workerState(m_queueLength); }

// ---- runs ---------------------------------------------------------------------------------------------------------

bool MainWindow::startSearch(const QString& runPath) {
    if (m_session->bridge()->isActive()) {
        showErrorDialog(tr("Search running"), tr("A search is running already. Stop it before starting another."));
        return false;
    }
    if (const QString missing = m_runControl->missingChoice(); !missing.isEmpty()) {
        showErrorDialog(tr("Cannot start the search"), missing);
        return false;
    }
    const SearchConfig config = m_runControl->config();
    const ProblemEntry* entry =
        m_problems->model()->entry(m_problems->model()->rowOfDir(QString::fromStdString(config.problem_dir)));
    const QString name = entry ? QString::fromStdString(entry->name) : QFileInfo(m_runControl->problemDir()).fileName();
    const QString path = runPath.isEmpty() ? RunSession::newRunPath(QStringLiteral("runs"), name) : runPath;
    clearRunViews();
    m_resumeRunAction->setEnabled(false);
    rememberRun(path);
    m_session->start(config, path, name.toStdString());
    statusBar()->showMessage(tr("Search started; run file %1").arg(path), 10000);
    return true;
}

void MainWindow::startDemo() {
    if (!isReady()) {
        m_demoPending = true;
        return;
    }
    const DemoSetup demo = findDemoSetup(*m_problems->model(), *m_devices->model(), m_options.resourcesDir);
    if (demo.problemDir.isEmpty()) {
        showErrorDialog(tr("Cannot start the demo"),
                        tr("The demo needs a problem with a recording for the replay device under %1.")
                            .arg(QDir(m_options.resourcesDir).filePath(QStringLiteral("recordings"))));
        return;
    }
    selectProblem(demo.problemDir);
    m_runControl->setProblemDir(demo.problemDir);
    setActiveDevice(demo.deviceId);
    m_runControl->applyDemoSettings();
    startSearch(RunSession::newRunPath(QStringLiteral("demo"), QFileInfo(demo.problemDir).fileName()));
}

void MainWindow::clearRunViews() {
    m_population->clear();
    m_session->clear();
    m_queueLength = 0;
    m_candidateView->clear();
    m_plots->clear();
    m_runControl->clearProgress();
    m_devices->setTimeline(nullptr);
    refreshRunStatus();
}

void MainWindow::onEvents(const SearchEventBatch& batch) {
    if (batch.session != m_session->bridge()->session() || !m_session->isLive())
        return;  // a batch of an earlier search, or the window shows an opened run now
    const bool candidatesChanged = m_session->absorb(batch.events);
    m_devices->showPoolEvents(batch.events);
    for (const SearchEvent& e : batch.events)
        if (e.kind == SearchEvent::Kind::Setup)
            statusBar()->showMessage(tr("Setting up: %1").arg(QString::fromStdString(e.message)), 15000);
    populationModel()->setRunId(m_session->runId());
    m_population->applyEvents(batch.events);
    m_runControl->showProgress(m_session->lastProgress());
    // The plots and the device line follow at a slower pace than the table: they look at every row.
    if (candidatesChanged && !m_plotRefresh->isActive())
        m_plotRefresh->start(m_population->isLarge() ? kLargePlotRefreshMs : kPlotRefreshMs);
    m_candidateView->follow(batch.events, m_session->lastProgress().best_candidate);
    refreshRunStatus();
}

void MainWindow::refreshPlots() {
    m_plotRefresh->stop();
    const std::vector<CandidateRow>& rows = populationModel()->rows();
    int queued = 0;
    for (const CandidateRow& r : rows)
        queued += r.status == QLatin1String(candidate_status::Queued) ? 1 : 0;
    m_queueLength = m_session->isSteerable() ? queued : 0;
    const int64_t measured = m_session->isLive()
                                 ? std::max(m_session->measurements(), m_session->lastProgress().measurements)
                                 : m_session->measurements();
    m_plots->refresh(rows, populationModel()->scheme(), m_session->problemName(), m_session->progress(), measured);
    if (m_candidateView->selected())
        m_plots->setSelected(m_candidateView->selected());
    refreshRunStatus();
}

void MainWindow::refreshRunStatus() {
    m_population->setReviewable(!m_session->path().isEmpty());
    m_status->setRun(m_session->stateText(), m_session->path());
    m_devices->showWorker(m_session->isSteerable() ? QString::fromStdString(m_session->bridge()->config().device)
                                                   : QString(),
                          workerState(), m_queueLength);
}

void MainWindow::onSearchEnded(quint64 session, bool ok, const QString& message, const QString& file, int line) {
    if (session != m_session->bridge()->session())
        return;
    m_queueLength = 0;
    m_devices->freezeTimeline();
    if (ok) {
        statusBar()->showMessage(tr("Search finished: %1").arg(EngineText::message(message)), 15000);
        refreshPlots();
        // Nothing picked: show the best candidate (the search's answer).
        if (m_session->followsBest() && m_session->lastProgress().best_candidate)
            showSelection(m_session->lastProgress().best_candidate);
    }
    refreshRunStatus();
    if (!ok)
        showErrorDialog(tr("The search failed"), message, file, line);
    Q_EMIT searchEnded(ok);
}

void MainWindow::showEngineError(const QString& title, const QString& message) {
    const auto [file, line] = EngineBridge::locationOf(message);
    showErrorDialog(title, message, file, line);
}

void MainWindow::showErrorDialog(const QString& title, const QString& message, const QString& file, int line) {
    openErrorDialog(this, title, message, file, line, [this, file, line] { m_kernelPane->showFile(file, line); });
    statusBar()->showMessage(message.section(QLatin1Char('\n'), 0, 0), 15000);
    Q_EMIT errorShown(message);
}

void MainWindow::reviewSuspect(qint64 candidateId, bool accept) {
    const QString error = m_session->bridge()->review(m_session->path(), candidateId, accept);
    statusBar()->showMessage(!error.isEmpty() ? tr("Review failed: %1").arg(error)
                             : accept         ? tr("Candidate %1 accepted: it enters the archive").arg(candidateId)
                                      : tr("Candidate %1 rejected: it stays out of the archive").arg(candidateId),
                             10000);
}

void MainWindow::openRun(const QString& path) {
    if (m_session->bridge()->isActive()) {
        showErrorDialog(tr("Search running"), tr("Stop the running search before opening another run."));
        return;
    }
    m_status->showBusy();
    statusBar()->showMessage(tr("Reading %1...").arg(path));
    rememberRun(path);
    m_session->open(path);
}

void MainWindow::rememberRun(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_recentRuns.removeAll(absolute);
    m_recentRuns.prepend(absolute);
    while (m_recentRuns.size() > kRecentRuns)
        m_recentRuns.removeLast();
}

void MainWindow::resetLayout() {
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        dock->setFloating(false);
    restoreState(m_initialLayout);
    applyDefaultDockLayout(this, m_docks);
    statusBar()->showMessage(tr("Layout reset"), 5000);
}

void MainWindow::showReadRun() {
    m_status->hideBusy();
    clearRunViews();
    std::vector<CandidateRow> rows = m_session->showRead();
    const LoadedRun& run = *m_session->opened();
    populationModel()->setRunId(run.run.id);
    populationModel()->setRows(std::move(rows));
    if (!run.baseline.empty())
        progressPlot()->setBaseline(run.baseline, run.baselineMeasurements, run.baselineName);
    refreshPlots();
    m_resumeRunAction->setEnabled(run.config.has_value());
    // The progress line as the run left it, and the settings it ran with.
    if (run.config)
        m_runControl->setConfig(*run.config);
    m_runControl->showProgress(
        storedProgress(run, populationModel()->rows(), shownMetrics(), populationModel()->scheme()), !run.evaluation);
    if (run.evaluation)
        m_plots->showReliability();
    refreshRunStatus();
    // The run's stored name is English ("softmax on replay:..."): say it in the window's language from its parts.
    QString opened =
        run.run.problem.empty() || run.run.device.empty()
            ? tr("Opened %1: %2, %n candidate(s)", nullptr, populationModel()->rowCount())
                  .arg(run.path, QString::fromStdString(run.run.name))
            : tr("Opened %1: %2 on %3, %n candidate(s)", nullptr, populationModel()->rowCount())
                  .arg(run.path, QString::fromStdString(run.run.problem), QString::fromStdString(run.run.device));
    // The same pairs score higher in the calibration line of the search they came from: say why, where the numbers
    // are (as `kerncast-cli evaluate` does).
    if (run.evaluation && run.run.surrogate.rfind("local", 0) == 0)
        opened += QStringLiteral(" — ") +
                  tr("scored as a search starts (the pack's problem left out, nothing learned from the pairs): lower "
                     "than the calibration line of a search, whose surrogate learns from its measurements");
    statusBar()->showMessage(opened, 30000);
    m_candidateView->showBestForecast();
    Q_EMIT runLoaded(run.path);
}

bool MainWindow::resumeOpenedRun() {
    if (!m_session->resume(m_runControl->config().budgets))
        return false;
    m_resumeRunAction->setEnabled(false);
    populationModel()->setRunId(m_session->runId());
    statusBar()->showMessage(tr("Resuming %1").arg(m_session->path()), 10000);
    return true;
}

void MainWindow::evaluatePairs(const EvaluationOptions& options) {
    m_evaluateAction->setEnabled(false);
    m_status->showBusy();
    statusBar()->showMessage(
        tr("Evaluating %1 with the %2 surrogate...")
            .arg(QString::fromStdString(options.pairs), QString::fromStdString(options.surrogate)));
    m_session->evaluate(options);
}

// ---- the candidate on show ----------------------------------------------------------------------------------------

bool MainWindow::selectCandidate(qint64 candidateId) {
    if (!showSelection(candidateId))
        return false;
    m_session->setPicked();  // a person's choice: it stays until they choose another
    return true;
}

bool MainWindow::followsBest() const { return m_session->followsBest(); }

qint64 MainWindow::selectedCandidate() const { return m_candidateView->selected(); }
bool MainWindow::showSelection(qint64 candidateId) { return m_candidateView->showSelection(candidateId); }
void MainWindow::showLlmCalls(qint64 id) { m_candidateView->showLlmCalls(id); }
bool MainWindow::compareWithSelected(qint64 otherId) { return m_candidateView->compareWith(otherId); }

}  // namespace kerncast
