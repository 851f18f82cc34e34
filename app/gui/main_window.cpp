#include "app/gui/main_window.h"

#include "app/gui/demo_setup.h"
#include "app/gui/device_panel.h"
#include "app/gui/evaluate_dialog.h"
#include "app/gui/kernel_pane.h"
#include "app/gui/plots_panel.h"
#include "app/gui/population_panel.h"
#include "app/gui/problem_browser.h"
#include "app/gui/run_control_panel.h"
#include "app/gui/run_session.h"
#include "app/gui/window_layout.h"
#include "widgets/device_list_model.h"
#include "widgets/diff_view.h"
#include "widgets/forecast_inspector.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/kernel_editor.h"
#include "widgets/population_model.h"
#include "widgets/problem_details_view.h"
#include "widgets/problem_list_model.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
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
    connectParts();
    createMenus();
    readSettings();
    m_surrogateStatus->setText(surrogateStatus());
    reloadProblems();
    reloadDevices();
}

MainWindow::~MainWindow() {
    // The session stops a running search and waits for it (bounded) before the views it feeds go away.
    delete m_session;
    m_session = nullptr;
}

QDockWidget* MainWindow::addDock(const QString& title, const QString& objectName, QWidget* widget) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    return dock;
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

    m_docks = {addDock(tr("Run Control"), QStringLiteral("runDock"), m_runControl),
               addDock(tr("Problems"), QStringLiteral("problemDock"), m_problems),
               addDock(tr("Device"), QStringLiteral("deviceDock"), m_devices),
               addDock(tr("Population"), QStringLiteral("populationDock"), m_population),
               addDock(tr("Forecast Inspector"), QStringLiteral("inspectorDock"), m_inspector),
               addDock(tr("Diff"), QStringLiteral("diffDock"), m_diff),
               addDock(tr("Details"), QStringLiteral("detailsDock"), m_details),
               addDock(tr("Plots"), QStringLiteral("plotsDock"), m_plots)};
    addWorkbenchDocks(this, m_docks);

    m_runStatus = new QLabel(this);
    m_runStatus->setObjectName(QStringLiteral("runStatus"));
    m_deviceStatus = new QLabel(tr("Device: looking for devices..."), this);
    m_surrogateStatus = new QLabel(this);
    m_busy = new QProgressBar(this);
    m_busy->setObjectName(QStringLiteral("busyIndicator"));
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(160);
    m_busy->setTextVisible(false);
    m_busy->hide();
    for (QWidget* w : std::initializer_list<QWidget*>{m_busy, m_runStatus, m_deviceStatus, m_surrogateStatus})
        statusBar()->addPermanentWidget(w);
    clearRunViews();
    refreshRunStatus();
}

void MainWindow::connectParts() {
    connect(m_kernelPane, &KernelPane::submitRequested, this, &MainWindow::submitEditedKernel);
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
        markReadyIfDone();
    });
    connect(m_details, &ProblemDetailsView::errorActivated, this, [this](const QString& file, int line) {
        if (!m_kernelPane->showProgramError(file, line))
            statusBar()->showMessage(line > 0 ? tr("%1, line %2").arg(file).arg(line) : file, 10000);
    });
    connect(m_devices, &DevicePanel::activeDeviceChanged, this, [this](const QString& id) {
        m_runControl->setDeviceId(id);
        m_deviceStatus->setText(id.isEmpty() ? tr("Device: none") : tr("Device: %1").arg(id));
    });
    connect(m_devices, &DevicePanel::loaded, this, [this](int count) {
        Q_EMIT devicesLoaded(count);
        markReadyIfDone();
    });

    EngineBridge* bridge = m_session->bridge();
    connect(m_runControl->startAction(), &QAction::triggered, this, [this] { startSearch(); });
    connect(m_runControl->pauseAction(), &QAction::triggered, bridge, [bridge] {
        if (bridge->state() == EngineBridge::State::Paused)
            bridge->resume();
        else
            bridge->pause();
    });
    connect(m_runControl->stepAction(), &QAction::triggered, bridge, &EngineBridge::step);
    connect(m_runControl->stopAction(), &QAction::triggered, bridge, &EngineBridge::stop);
    connect(m_runControl, &RunControlPanel::gatingEdited, this, [this](const GatingConfig& gating) {
        if (m_session->isSteerable())
            m_session->bridge()->setGating(gating);
    });
    connect(m_runControl, &RunControlPanel::problemSelected, this, [this](const QString& dir) { selectProblem(dir); });
    connect(m_runControl, &RunControlPanel::deviceSelected, this, &MainWindow::setActiveDevice);
    connect(m_runControl, &RunControlPanel::surrogateChanged, this,
            [this] { m_surrogateStatus->setText(surrogateStatus()); });

    connect(m_population, &PopulationPanel::candidateClicked, this, [this](qint64 id) {
        m_session->setPicked();
        showCandidate(id);
    });
    connect(m_population, &PopulationPanel::pinRequested, bridge, &EngineBridge::pin);
    connect(m_population, &PopulationPanel::banRequested, bridge, &EngineBridge::ban);
    connect(m_population, &PopulationPanel::measureRequested, bridge, &EngineBridge::forceMeasure);
    connect(m_population, &PopulationPanel::reviewRequested, this, &MainWindow::reviewSuspect);
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
        m_kernelPane->setCandidateEditable(m_selectedCandidate && m_session->isSteerable());
        refreshRunStatus();
    });
    connect(m_session, &RunSession::runRead, this, &MainWindow::showReadRun);
    connect(m_session, &RunSession::loadFailed, this, [this](const QString& message) {
        m_busy->hide();
        const auto [file, line] = EngineBridge::locationOf(message);
        showErrorDialog(tr("Cannot open the run"), message, file, line);
    });
    connect(m_session, &RunSession::evaluationProgress, this, [this](const QString& stage, int done, int total) {
        m_busy->setRange(0, total);
        m_busy->setValue(done);
        statusBar()->showMessage(tr("Evaluating: %1 %2 of %3").arg(stage).arg(done).arg(total));
    });
    connect(m_session, &RunSession::evaluationFailed, this, [this](const QString& message) {
        m_busy->hide();
        m_busy->setRange(0, 0);
        m_evaluateAction->setEnabled(true);
        const auto [file, line] = EngineBridge::locationOf(message);
        showErrorDialog(tr("The evaluation failed"), message, file, line);
        Q_EMIT evaluationFailed(message);
    });
    connect(m_session, &RunSession::evaluated, this, [this](const QString& store, int pairs) {
        m_busy->hide();
        m_busy->setRange(0, 0);
        m_evaluateAction->setEnabled(true);
        if (m_session->bridge()->isActive()) {
            // The window belongs to the running search; the evaluation waits in its file.
            statusBar()->showMessage(tr("Evaluation of %1 pairs stored in %2; open it with File › Open Run once the "
                                        "search has ended")
                                         .arg(pairs)
                                         .arg(store));
        } else {
            openRun(store);
            statusBar()->showMessage(tr("Evaluation of %1 pairs stored in %2").arg(pairs).arg(store), 15000);
        }
        Q_EMIT evaluationFinished(store);
    });
}

void MainWindow::createMenus() {
    auto* file = menuBar()->addMenu(tr("&File"));
    auto* openRunAction = file->addAction(tr("Open &Run..."), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open Run"), QFileInfo(shownRunPath()).absolutePath(),
                                         tr("Run files (*.sqlite *.db);;All files (*)"));
        if (!path.isEmpty())
            openRun(path);
    });
    openRunAction->setShortcut(QKeySequence::Open);
    m_evaluateAction = file->addAction(tr("&Evaluate Pair Set..."), this, [this] {
        EvaluateDialog dialog(m_runControl->surrogate(), m_runControl->endpoint(), m_runControl->model(), this);
        if (dialog.exec() == QDialog::Accepted && !dialog.options().pairs.empty())
            evaluatePairs(dialog.options());
    });
    file->addSeparator();
    auto* open = file->addAction(tr("Open &Problem Folder..."), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Problem Folder"), selectedProblemDir());
        if (!dir.isEmpty())
            openProblemFolder(dir);
    });
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    auto* run = menuBar()->addMenu(tr("&Run"));
    for (QAction* a : {m_runControl->startAction(), m_runControl->pauseAction(), m_runControl->stepAction(),
                       m_runControl->stopAction()})
        run->addAction(a);
    run->addSeparator();
    m_resumeRunAction = run->addAction(tr("&Resume Opened Run"), this, [this] { resumeOpenedRun(); });
    m_resumeRunAction->setObjectName(QStringLiteral("resumeRunAction"));
    m_resumeRunAction->setEnabled(false);
    m_resumeRunAction->setToolTip(tr("Continue the opened search in its run file"));

    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Reload Problems"), this, &MainWindow::reloadProblems)->setShortcut(QKeySequence::Refresh);
    view->addAction(tr("Reload &Devices"), this, &MainWindow::reloadDevices);
    view->addSeparator();
    for (QDockWidget* dock : {m_docks.run, m_docks.problems, m_docks.devices, m_docks.population, m_docks.inspector,
                              m_docks.diff, m_docks.details, m_docks.plots})
        view->addAction(dock->toggleViewAction());

    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Kerncast"), this, [this] {
        QMessageBox::about(
            this, tr("About Kerncast"),
            tr("<h3>Kerncast %1</h3><p>A workbench for forecast-guided evolutionary search over CUDA kernels: a "
               "surrogate forecasts each candidate's speedup as a distribution over speedup bins, and only the "
               "candidates it is unsure about are measured on the GPU.</p><p>Resources: <code>%2</code></p>")
                .arg(QCoreApplication::applicationVersion(), m_options.resourcesDir.toHtmlEscaped()));
    });
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::readSettings() {
    if (!m_options.persistSettings) {
        placeOnScreen(this);
        m_defaultLayoutPending = true;
        return;
    }
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        placeOnScreen(this);
    if (!restoreState(settings.value(QStringLiteral("window/state")).toByteArray()))
        m_defaultLayoutPending = true;
    m_problems->setOpenedFolders(settings.value(QStringLiteral("problems/opened")).toStringList());
    m_problems->setPendingSelection(settings.value(QStringLiteral("problems/selected")).toString());
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
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("problems/opened"), m_problems->openedFolders());
    settings.setValue(QStringLiteral("problems/selected"), selectedProblemDir());
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
void MainWindow::openProblemFolder(const QString& dir) { m_problems->openFolder(dir); }
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

QString MainWindow::surrogateStatus() const {
    const QString s = m_runControl ? m_runControl->surrogate() : QStringLiteral("local");
    if (s == QLatin1String("llm"))
        return m_runControl->model().isEmpty() ? tr("Surrogate: LLM (no model set)")
                                               : tr("Surrogate: LLM %1").arg(m_runControl->model());
    if (s == QLatin1String("none"))
        return tr("Surrogate: none (measure everything)");
    return tr("Surrogate: local");
}

QString MainWindow::workerState() const { return m_session->workerState(m_queueLength); }

// ---- runs ---------------------------------------------------------------------------------------------------------

bool MainWindow::startSearch(const QString& runPath) {
    if (m_session->bridge()->isActive()) {
        showErrorDialog(tr("Search running"), tr("A search is running already. Stop it before starting another."));
        return false;
    }
    const SearchConfig config = m_runControl->config();
    QString missing;
    if (config.problem_dir.empty())
        missing = tr("Choose a problem to search.");
    else if (config.device.empty())
        missing = tr("No device can measure: choose a GPU or a replay device.");
    else if (config.mutators.empty())
        missing = tr("Choose at least one mutator.");
    if (!missing.isEmpty()) {
        showErrorDialog(tr("Cannot start the search"), missing);
        return false;
    }
    const ProblemEntry* entry =
        m_problems->model()->entry(m_problems->model()->rowOfDir(QString::fromStdString(config.problem_dir)));
    const QString name = entry ? QString::fromStdString(entry->name) : QFileInfo(m_runControl->problemDir()).fileName();
    const QString path = runPath.isEmpty() ? RunSession::newRunPath(QStringLiteral("runs"), name) : runPath;
    clearRunViews();
    m_resumeRunAction->setEnabled(false);
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
    const QString& problem = demo.problemDir;
    if (problem.isEmpty()) {
        showErrorDialog(tr("Cannot start the demo"),
                        tr("The demo needs a problem with a recording for the replay device under %1.")
                            .arg(QDir(m_options.resourcesDir).filePath(QStringLiteral("recordings"))));
        return;
    }
    selectProblem(problem);
    m_runControl->setProblemDir(problem);
    setActiveDevice(demo.deviceId);
    m_runControl->setSurrogate(QStringLiteral("local"));
    GatingConfig gating;
    gating.kind = GatingKind::Selective;
    m_runControl->setGating(gating);
    m_runControl->setBudget(40);
    startSearch(RunSession::newRunPath(QStringLiteral("demo"), QFileInfo(problem).fileName()));
}

void MainWindow::clearRunViews() {
    m_population->clear();
    m_session->clear();
    m_queueLength = 0;
    m_selectedCandidate = 0;
    m_plots->clear();
    m_inspector->clear();
    m_diff->clear();
    m_runControl->clearProgress();
    refreshRunStatus();
}

void MainWindow::onEvents(const SearchEventBatch& batch) {
    if (batch.session != m_session->bridge()->session() || !m_session->isLive())
        return;  // a batch of an earlier search, or the window shows an opened run now
    const bool candidatesChanged = m_session->absorb(batch.events);
    m_devices->showPoolEvents(batch.events);
    populationModel()->setRunId(m_session->runId());
    m_population->applyEvents(batch.events);
    m_runControl->showProgress(m_session->lastProgress());
    // The plots and the device line follow at a slower pace than the table: they look at every row.
    if (candidatesChanged && !m_plotRefresh->isActive())
        m_plotRefresh->start(m_population->isLarge() ? kLargePlotRefreshMs : kPlotRefreshMs);
    const qint64 best = m_session->lastProgress().best_candidate;
    const bool selectedChanged =
        m_selectedCandidate && std::any_of(batch.events.begin(), batch.events.end(), [this](const SearchEvent& e) {
            return e.candidate_id == m_selectedCandidate && e.kind != SearchEvent::Kind::CandidateProposed;
        });
    if (m_session->followsBest() && best && best != m_selectedCandidate) {
        // Until someone picks a row, the editor, diff and inspector show the newest best: the search's answer so far.
        showSelection(best);
    } else if (selectedChanged) {
        // The selected candidate was forecast or measured meanwhile.
        const CandidateRow& row = populationModel()->row(populationModel()->rowOfId(m_selectedCandidate));
        m_inspector->setCandidate(row, m_session->forecast(m_selectedCandidate, false));
    }
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
    if (m_selectedCandidate)
        m_plots->setSelected(m_selectedCandidate);
    refreshRunStatus();
}

void MainWindow::refreshRunStatus() {
    m_population->setReviewable(!m_session->path().isEmpty());
    m_runStatus->setText(tr("Run: %1").arg(m_session->stateText()));
    m_runStatus->setToolTip(m_session->path());
    m_devices->showWorker(m_session->isSteerable() ? QString::fromStdString(m_session->bridge()->config().device)
                                                   : QString(),
                          workerState(), m_queueLength);
}

void MainWindow::onSearchEnded(quint64 session, bool ok, const QString& message, const QString& file, int line) {
    if (session != m_session->bridge()->session())
        return;
    m_queueLength = 0;
    if (ok) {
        statusBar()->showMessage(tr("Search finished: %1").arg(message), 15000);
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

void MainWindow::showErrorDialog(const QString& title, const QString& message, const QString& file, int line) {
    // Window-modal and not waited for: the engine keeps reporting and the event loop keeps running.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    if (!file.isEmpty() && QFileInfo(file).isFile()) {
        box->setInformativeText(line > 0 ? tr("In %1, line %2.").arg(file).arg(line) : tr("In %1.").arg(file));
        auto* show = box->addButton(tr("Show the File"), QMessageBox::ActionRole);
        connect(show, &QPushButton::clicked, this, [this, file, line] { m_kernelPane->showFile(file, line); });
    }
    box->open();
    statusBar()->showMessage(message.section(QLatin1Char('\n'), 0, 0), 15000);
    Q_EMIT errorShown(message);
}

void MainWindow::reviewSuspect(qint64 candidateId, bool accept) {
    const QString error = m_session->bridge()->review(m_session->path(), candidateId, accept);
    if (!error.isEmpty())
        statusBar()->showMessage(tr("Review failed: %1").arg(error), 10000);
    else if (accept)
        statusBar()->showMessage(tr("Candidate %1 accepted: it enters the archive").arg(candidateId), 8000);
    else
        statusBar()->showMessage(tr("Candidate %1 rejected: it stays out of the archive").arg(candidateId), 8000);
}

void MainWindow::openRun(const QString& path) {
    if (m_session->bridge()->isActive()) {
        showErrorDialog(tr("Search running"), tr("Stop the running search before opening another run."));
        return;
    }
    m_busy->show();
    statusBar()->showMessage(tr("Reading %1...").arg(path));
    m_session->open(path);
}

void MainWindow::showReadRun() {
    m_busy->hide();
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
    SearchProgress p = storedProgress(run, populationModel()->rows());
    const ForecastMetrics& metrics = shownMetrics();
    p.calibration_n = metrics.n;
    p.calibration_accuracy = metrics.accuracy;
    p.calibration_ece = metrics.ece;
    p.calibration_aurc = metrics.aurc;
    p.calibration_majority_accuracy = metrics.majority_accuracy;
    p.calibration_brier_skill = metrics.brier_skill;
    p.calibration_crps_skill = metrics.crps_skill;
    if (run.config)
        m_runControl->setConfig(*run.config);
    m_runControl->showProgress(p);
    if (run.evaluation)
        m_plots->showReliability();
    refreshRunStatus();
    statusBar()->showMessage(tr("Opened %1: %2, %n candidate(s)", nullptr, populationModel()->rowCount())
                                 .arg(run.path, QString::fromStdString(run.run.name)),
                             15000);
    // Show something right away: the best measured candidate with a forecast, else the first with a forecast.
    qint64 pick = 0;
    double best = -1;
    for (const CandidateRow& r : populationModel()->rows()) {
        const double score = r.measured_speedup ? *r.measured_speedup : 0;
        if (r.hasForecast() && (!pick || score > best)) {
            pick = r.id;
            best = score;
        }
    }
    if (pick)
        showSelection(pick);
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
    m_busy->show();
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

bool MainWindow::showSelection(qint64 candidateId) {
    if (populationModel()->rowOfId(candidateId) < 0)
        return false;
    showCandidate(candidateId);
    m_population->showCurrent(candidateId);
    return true;
}

void MainWindow::showLlmCalls(qint64 id) {
    RunStore* store = m_session->reader();
    const int64_t runId = m_session->opened() ? m_session->opened()->run.id : m_session->runId();
    if (!store || runId == 0)
        return;
    try {
        m_inspector->setLlmCalls(store->llmCalls(runId, id));
    } catch (const std::exception& e) {
        statusBar()->showMessage(
            tr("Could not read the model calls of candidate #%1: %2").arg(id).arg(QString::fromUtf8(e.what())), 10000);
    }
}

void MainWindow::showCandidate(qint64 id) {
    const int rowIndex = populationModel()->rowOfId(id);
    if (rowIndex < 0)
        return;
    m_selectedCandidate = id;
    const CandidateRow& row = populationModel()->row(rowIndex);
    m_plots->setSelected(id);

    // The candidate, its forecast and compile error: from the events of a live run, else from the store.
    const RunSession::CandidateDetails d = m_session->details(row, populationModel()->rows());
    if (!d.error.isEmpty())
        statusBar()->showMessage(tr("Could not read candidate #%1: %2").arg(id).arg(d.error), 10000);
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

void MainWindow::submitEditedKernel(const QString& source) {
    if (!m_session->submit(source, m_selectedCandidate))
        statusBar()->showMessage(tr("Submitting a kernel needs a running search."), 8000);
    else
        statusBar()->showMessage(m_selectedCandidate
                                     ? tr("Kernel submitted to the search as a child of #%1").arg(m_selectedCandidate)
                                     : tr("Kernel submitted to the search"),
                                 8000);
}

// ---- parts, for tests and benchmarks ------------------------------------------------------------------------------

EngineBridge* MainWindow::bridge() const { return m_session->bridge(); }
QString MainWindow::shownRunPath() const { return m_session->path(); }
ProblemListModel* MainWindow::problemModel() const { return m_problems->model(); }
DeviceListModel* MainWindow::deviceModel() const { return m_devices->model(); }
PopulationModel* MainWindow::populationModel() const { return m_population->model(); }
PopulationFilterProxy* MainWindow::populationProxy() const { return m_population->proxy(); }
LineageModel* MainWindow::lineageModel() const { return m_population->lineage(); }
QTableView* MainWindow::populationView() const { return m_population->tableView(); }
KernelEditor* MainWindow::editor() const { return m_kernelPane->editor(); }
ForecastScatterPlot* MainWindow::scatterPlot() const { return m_plots->scatter(); }
ReliabilityPlot* MainWindow::reliabilityPlot() const { return m_plots->reliability(); }
RiskCoveragePlot* MainWindow::riskCoveragePlot() const { return m_plots->riskCoverage(); }
SearchProgressPlot* MainWindow::progressPlot() const { return m_plots->progress(); }
QLabel* MainWindow::metricsLabel() const { return m_plots->metricsLabel(); }
const ForecastMetrics& MainWindow::shownMetrics() const { return m_plots->metrics(); }

}  // namespace kerncast
