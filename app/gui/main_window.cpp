#include "app/gui/main_window.h"

#include "app/gui/run_control_panel.h"
#include "core/error.h"
#include "core/run_store.h"
#include "engine/replay_device.h"
#include "widgets/device_list_model.h"
#include "widgets/pool_view.h"
#include "widgets/diff_view.h"
#include "widgets/forecast_inspector.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/kernel_editor.h"
#include "widgets/lineage_model.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"
#include "widgets/problem_details_view.h"
#include "widgets/problem_list_model.h"
#include "widgets/reliability_plot.h"
#include "widgets/risk_coverage_plot.h"
#include "widgets/search_progress_plot.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <filesystem>

// Resources are compiled into the kerncast_app library: a static library needs its initializer called by name.
static void initAppResources() {
    Q_INIT_RESOURCE(kerncast);
}

namespace kerncast {

namespace {

// What a background load hands back to the GUI thread: plain values only.
struct LibraryLoad {
    std::vector<ProblemEntry> entries;
    std::vector<std::string> failures;  // folders that could not be listed at all
};

struct DeviceLoad {
    std::vector<DeviceListing> devices;
    std::map<std::string, double> bandwidth;  // replay devices: measured DRAM GB/s from the recordings' headers
    std::string failure;
};

struct EvaluationOutcome {
    std::optional<EvaluationResult> result;
    std::string error;
    std::vector<std::string> messages;
};

LibraryLoad loadLibrary(const std::string& problemsRoot, const std::vector<std::string>& extraFolders) {
    LibraryLoad load;
    auto add = [&](const std::string& root) {
        try {
            for (auto& e : read_problem_entries(root)) {
                const bool known = std::any_of(load.entries.begin(), load.entries.end(),
                                               [&](const ProblemEntry& k) { return k.dir == e.dir; });
                if (!known)
                    load.entries.push_back(std::move(e));
            }
        } catch (const std::exception& ex) {
            load.failures.push_back(root + ": " + ex.what());
        }
    };
    if (std::filesystem::is_directory(problemsRoot))
        add(problemsRoot);
    else
        load.failures.push_back(problemsRoot + ": no such folder");
    for (const auto& f : extraFolders)
        add(f);
    return load;
}

bool sameFile(const std::string& a, const std::string& b) {
    if (a == b)
        return true;
    std::error_code ec1, ec2;
    const auto ca = std::filesystem::weakly_canonical(a, ec1);
    const auto cb = std::filesystem::weakly_canonical(b, ec2);
    return !ec1 && !ec2 && ca == cb;
}

QString programLabel(const ProgramEntry& p, const std::string& problemDir) {
    const QString rel = QString::fromStdString(std::filesystem::path(p.path).lexically_relative(problemDir).string());
    switch (p.kind) {
    case ProgramEntry::Kind::Reference:
        return MainWindow::tr("%1 (reference)").arg(rel);
    case ProgramEntry::Kind::Seed:
        return MainWindow::tr("%1 (seed)").arg(rel);
    case ProgramEntry::Kind::Family:
        if (p.configurations >= 0)
            return MainWindow::tr("%1 (family, %2 configurations)")
                .arg(rel, QLocale().toString(static_cast<qlonglong>(p.configurations)));
        return MainWindow::tr("%1 (family)").arg(rel);
    }
    return rel;
}

// The file name a candidate was compiled under (what its compile log names).
QString compileFileName(const Candidate& c) {
    if (c.label.rfind("seed:", 0) == 0)
        return QString::fromStdString(c.label.substr(5));
    if (c.mutator == Mutator::Reference)
        return QStringLiteral("reference.cu");
    return QStringLiteral("candidate.cu");
}

// The source as the diff shows it: tunables (which reach the kernel as -D defines) as a first line, so that two
// configurations of the same family differ where they really do.
QString diffText(const Candidate& c) {
    QString text;
    if (!c.tunables.empty()) {
        QStringList parts;
        for (const auto& [name, value] : c.tunables)
            parts << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
        text = QStringLiteral("// -D %1\n").arg(parts.join(QLatin1Char(' ')));
    }
    return text + QString::fromStdString(c.source);
}

QDockWidget* makeDock(const QString& title, const QString& objectName, QWidget* widget, QMainWindow* window) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    return dock;
}

}  // namespace

MainWindow::MainWindow(Options options, QWidget* parent) : QMainWindow(parent), m_options(std::move(options)) {
    initAppResources();
    setWindowTitle(tr("Kerncast"));
    QIcon icon;
    for (int size : {32, 64, 256})
        icon.addFile(QStringLiteral(":/icons/kerncast-%1.png").arg(size), QSize(size, size));
    setWindowIcon(icon);
    setObjectName(QStringLiteral("MainWindow"));
    setDockNestingEnabled(true);
    m_problems = new ProblemListModel(this);
    m_devices = new DeviceListModel(this);
    m_bridge = new EngineBridge(m_options.resourcesDir, this);
    m_plotRefresh = new QTimer(this);
    m_plotRefresh->setSingleShot(true);
    m_plotRefresh->setInterval(kPlotRefreshMs);
    connect(m_plotRefresh, &QTimer::timeout, this, &MainWindow::refreshPlots);
    m_resort = new QTimer(this);
    m_resort->setSingleShot(true);
    m_resort->setInterval(kLargeResortMs);
    connect(m_resort, &QTimer::timeout, this, [this] {
        m_populationProxy->sort(m_populationProxy->sortColumn(), m_populationProxy->sortOrder());
    });
    connect(m_bridge, &EngineBridge::started, this, &MainWindow::onBridgeStarted);
    connect(m_bridge, &EngineBridge::eventsReady, this, &MainWindow::onEvents);
    connect(m_bridge, &EngineBridge::finished, this, &MainWindow::onSearchFinished);
    connect(m_bridge, &EngineBridge::failed, this, &MainWindow::onSearchFailed);
    connect(m_bridge, &EngineBridge::stateChanged, this, &MainWindow::onBridgeState);
    createPanels();
    createRunDocks();
    createMenus();
    readSettings();
    reloadProblems();
    reloadDevices();
}

MainWindow::~MainWindow() {
    // The bridge stops a running search and waits for it (bounded) before the views it feeds go away.
    delete m_bridge;
    m_bridge = nullptr;
}

void MainWindow::createPanels() {
    // Centre: the selected kernel program or candidate.
    auto* central = new QWidget(this);
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(6, 6, 6, 0);
    centralLayout->setSpacing(4);
    auto* programRow = new QHBoxLayout;
    auto* programLabelWidget = new QLabel(tr("&Program:"), central);
    m_programSelector = new QComboBox(central);
    m_programSelector->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_programSelector->setMinimumContentsLength(28);
    programLabelWidget->setBuddy(m_programSelector);
    m_programPath = new QLabel(central);
    m_programPath->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_programPath->setStyleSheet(QStringLiteral("color: palette(mid);"));
    m_candidateTitle = new QLabel(central);
    m_candidateTitle->setObjectName(QStringLiteral("candidateTitle"));
    m_candidateTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_candidateTitle->hide();
    // Long labels and paths must not widen the window: they are cut where space ends (a tool tip has them whole).
    m_candidateTitle->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_programPath->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    programRow->addWidget(programLabelWidget);
    programRow->addWidget(m_programSelector);
    programRow->addWidget(m_candidateTitle, 1);
    programRow->addSpacing(8);
    programRow->addWidget(m_programPath, 1);
    centralLayout->addLayout(programRow);
    m_editor = new KernelEditor(central);
    centralLayout->addWidget(m_editor, 1);
    setCentralWidget(central);
    connect(m_programSelector, &QComboBox::currentIndexChanged, this, [this](int index) { showProgram(index); });
    connect(m_editor, &KernelEditor::submitRequested, this, &MainWindow::submitEditedKernel);

    // The problem browser.
    auto* browser = new QWidget(this);
    auto* browserLayout = new QVBoxLayout(browser);
    browserLayout->setContentsMargins(4, 4, 4, 4);
    browserLayout->setSpacing(4);
    m_problemFilter = new QLineEdit(browser);
    m_problemFilter->setPlaceholderText(tr("Filter problems"));
    m_problemFilter->setClearButtonEnabled(true);
    m_problemProxy = new QSortFilterProxyModel(this);
    m_problemProxy->setSourceModel(m_problems);
    m_problemProxy->setSortRole(ProblemListModel::SortRole);
    m_problemProxy->setFilterKeyColumn(ProblemListModel::NameColumn);
    m_problemProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(m_problemFilter, &QLineEdit::textChanged, m_problemProxy, &QSortFilterProxyModel::setFilterFixedString);
    m_problemView = new QTreeView(browser);
    m_problemView->setObjectName(QStringLiteral("problemView"));
    m_problemView->setModel(m_problemProxy);
    m_problemView->setRootIsDecorated(false);
    m_problemView->setUniformRowHeights(true);
    m_problemView->setAlternatingRowColors(true);
    m_problemView->setSortingEnabled(true);
    m_problemView->sortByColumn(ProblemListModel::NameColumn, Qt::AscendingOrder);
    m_problemView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_problemView->header()->setStretchLastSection(false);
    m_problemView->header()->setSectionResizeMode(ProblemListModel::NameColumn, QHeaderView::Stretch);
    for (int c = ProblemListModel::ProgramsColumn; c < ProblemListModel::ColumnCount; ++c)
        m_problemView->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    browserLayout->addWidget(m_problemFilter);
    browserLayout->addWidget(m_problemView, 1);
    connect(m_problemView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                const auto source = m_problemProxy->mapToSource(current);
                showProblem(source.isValid() ? m_problems->entry(source.row()) : nullptr);
            });
    m_problemDock = makeDock(tr("Problems"), QStringLiteral("problemDock"), browser, this);

    // Details of the selected problem.
    m_details = new ProblemDetailsView(this);
    connect(m_details, &ProblemDetailsView::errorActivated, this, &MainWindow::showError);
    m_detailsDock = makeDock(tr("Details"), QStringLiteral("detailsDock"), m_details, this);

    // Devices: the list, and what is known about the active one.
    auto* devicesPanel = new QWidget(this);
    auto* devicesLayout = new QVBoxLayout(devicesPanel);
    devicesLayout->setContentsMargins(4, 4, 4, 4);
    devicesLayout->setSpacing(4);
    m_deviceView = new QTreeView(devicesPanel);
    m_deviceView->setObjectName(QStringLiteral("deviceView"));
    m_deviceView->setModel(m_devices);
    m_deviceView->setRootIsDecorated(false);
    m_deviceView->setUniformRowHeights(true);
    m_deviceView->setAlternatingRowColors(true);
    m_deviceView->setWordWrap(true);
    m_deviceView->header()->setStretchLastSection(true);
    m_deviceView->setToolTip(tr("Double-click a device to measure on it."));
    m_deviceNote = new QLabel(devicesPanel);
    m_deviceNote->setWordWrap(true);
    m_deviceNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deviceNote->hide();
    m_deviceDetails = new QLabel(devicesPanel);
    m_deviceDetails->setObjectName(QStringLiteral("deviceDetails"));
    m_deviceDetails->setWordWrap(true);
    m_deviceDetails->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deviceDetails->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    devicesLayout->addWidget(m_deviceView, 1);
    devicesLayout->addWidget(m_deviceNote);
    devicesLayout->addWidget(m_deviceDetails);
    m_poolView = new PoolView(devicesPanel);
    devicesLayout->addWidget(m_poolView, 1);
    connect(m_deviceView, &QTreeView::activated, this, [this](const QModelIndex& index) {
        if (index.data(DeviceListModel::UsableRole).toBool())
            setActiveDevice(index.data(DeviceListModel::IdRole).toString());
    });
    m_deviceDock = makeDock(tr("Device"), QStringLiteral("deviceDock"), devicesPanel, this);

    m_runStatus = new QLabel(this);
    m_runStatus->setObjectName(QStringLiteral("runStatus"));
    m_deviceStatus = new QLabel(this);
    m_surrogateStatus = new QLabel(this);
    m_busy = new QProgressBar(this);
    m_busy->setObjectName(QStringLiteral("busyIndicator"));
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(160);
    m_busy->setTextVisible(false);
    m_busy->hide();
    statusBar()->addPermanentWidget(m_busy);
    statusBar()->addPermanentWidget(m_runStatus);
    statusBar()->addPermanentWidget(m_deviceStatus);
    statusBar()->addPermanentWidget(m_surrogateStatus);
}

void MainWindow::createRunDocks() {
    // Run control.
    m_runControl = new RunControlPanel(m_problems, m_devices, this);
    auto* runScroll = new QScrollArea(this);
    runScroll->setWidget(m_runControl);
    runScroll->setWidgetResizable(true);
    runScroll->setFrameShape(QFrame::NoFrame);
    runScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_runDock = makeDock(tr("Run Control"), QStringLiteral("runDock"), runScroll, this);
    connect(m_runControl->startAction(), &QAction::triggered, this, [this] { startSearch(); });
    connect(m_runControl->pauseAction(), &QAction::triggered, this, [this] {
        if (m_bridge->state() == EngineBridge::State::Paused)
            m_bridge->resume();
        else
            m_bridge->pause();
    });
    connect(m_runControl->stepAction(), &QAction::triggered, m_bridge, &EngineBridge::step);
    connect(m_runControl->stopAction(), &QAction::triggered, m_bridge, &EngineBridge::stop);
    connect(m_runControl, &RunControlPanel::gatingEdited, this, [this](const GatingConfig& gating) {
        if (m_bridge->isActive() && m_runLive)
            m_bridge->setGating(gating);
    });
    connect(m_runControl, &RunControlPanel::problemSelected, this, [this](const QString& dir) { selectProblem(dir); });
    connect(m_runControl, &RunControlPanel::deviceSelected, this, &MainWindow::setActiveDevice);
    connect(m_runControl, &RunControlPanel::surrogateChanged, this, [this] {
        m_surrogateStatus->setText(surrogateStatus());
    });

    // Population: a table through the sort/filter proxy, and the lineage tree.
    m_population = new PopulationModel(this);
    m_populationProxy = new PopulationFilterProxy(this);
    m_populationProxy->setSourceModel(m_population);
    m_lineage = new LineageModel(this);
    m_lineage->setPopulation(m_population);
    auto* populationPanel = new QWidget(this);
    auto* populationLayout = new QVBoxLayout(populationPanel);
    populationLayout->setContentsMargins(4, 4, 4, 4);
    populationLayout->setSpacing(4);
    m_populationFilter = new QLineEdit(populationPanel);
    m_populationFilter->setObjectName(QStringLiteral("populationFilter"));
    m_populationFilter->setPlaceholderText(tr("Filter by id, label, mutator, status or hash"));
    m_populationFilter->setClearButtonEnabled(true);
    connect(m_populationFilter, &QLineEdit::textChanged, m_populationProxy, &PopulationFilterProxy::setTextFilter);
    m_populationTabs = new QTabWidget(populationPanel);
    m_populationTabs->setDocumentMode(true);
    m_populationView = new QTableView(m_populationTabs);
    m_populationView->setObjectName(QStringLiteral("populationView"));
    m_populationView->setModel(m_populationProxy);
    m_populationView->setSortingEnabled(true);
    // A leaderboard: the fastest measured candidates first (unmeasured ones sort last).
    m_populationView->sortByColumn(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
    m_populationView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_populationView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_populationView->setAlternatingRowColors(true);
    m_populationView->verticalHeader()->hide();
    m_populationView->verticalHeader()->setDefaultSectionSize(m_populationView->fontMetrics().height() + 6);
    m_populationView->horizontalHeader()->setStretchLastSection(true);
    m_populationView->setWordWrap(false);
    // Fixed widths: sizing columns to their contents would scan every row of a large run.
    const int digit = m_populationView->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const std::pair<int, int> widths[] = {
        {PopulationModel::IdColumn, 6},        {PopulationModel::GenerationColumn, 4},
        {PopulationModel::ParentColumn, 6},    {PopulationModel::MutatorColumn, 11},
        {PopulationModel::StatusColumn, 11},   {PopulationModel::ForecastColumn, 14},
        {PopulationModel::SpeedupColumn, 8},   {PopulationModel::TimeColumn, 9},
        {PopulationModel::RegistersColumn, 6}, {PopulationModel::SharedMemoryColumn, 9}};
    for (const auto& [column, chars] : widths)
        m_populationView->setColumnWidth(column, digit * chars + 12);
    // What a narrow dock should show first: the outcome and the forecast, then the lineage.
    auto* header = m_populationView->horizontalHeader();
    header->setSectionsMovable(true);
    for (int column : {PopulationModel::StatusColumn, PopulationModel::SpeedupColumn, PopulationModel::ForecastColumn})
        header->moveSection(header->visualIndex(column), header->visualIndex(PopulationModel::GenerationColumn));
    m_populationView->setContextMenuPolicy(Qt::CustomContextMenu);
    m_lineageView = new QTreeView(m_populationTabs);
    m_lineageView->setObjectName(QStringLiteral("lineageView"));
    m_lineageView->setModel(m_lineage);
    m_lineageView->setUniformRowHeights(true);
    m_lineageView->setAlternatingRowColors(true);
    m_populationTabs->addTab(m_populationView, tr("Table"));
    m_populationTabs->addTab(m_lineageView, tr("Lineage"));
    populationLayout->addWidget(m_populationFilter);
    populationLayout->addWidget(m_populationTabs, 1);
    m_populationDock = makeDock(tr("Population"), QStringLiteral("populationDock"), populationPanel, this);
    connect(m_populationView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!m_selecting && current.isValid())
                    showCandidate(current.data(PopulationModel::CandidateIdRole).toLongLong());
            });
    connect(m_lineageView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!m_selecting && current.isValid())
                    showCandidate(current.data(PopulationModel::CandidateIdRole).toLongLong());
            });
    connect(m_populationView, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = m_populationView->indexAt(pos);
        if (!index.isValid())
            return;
        const qint64 id = index.data(PopulationModel::CandidateIdRole).toLongLong();
        const bool steerable = m_runLive && m_bridge->isActive();
        QMenu menu(this);
        menu.addAction(tr("Pin as Parent"), this, [this, id] { m_bridge->pin(id); })->setEnabled(steerable);
        menu.addAction(tr("Ban as Parent"), this, [this, id] { m_bridge->ban(id); })->setEnabled(steerable);
        menu.addAction(tr("Measure on the Device"), this, [this, id] { m_bridge->forceMeasure(id); })
            ->setEnabled(steerable && !index.siblingAtColumn(PopulationModel::StatusColumn)
                                           .data(PopulationModel::MeasuredSpeedupRole)
                                           .isValid());
        const bool suspect = index.data(PopulationModel::StatusRole).toString() == QLatin1String("suspect");
        for (const bool accept : {true, false})
            menu.addAction(accept ? tr("Accept Suspect Result") : tr("Reject Suspect Result"), this,
                           [this, id, accept] { reviewSuspect(id, accept); })
                ->setEnabled(suspect && !m_runPath.isEmpty());
        menu.exec(m_populationView->viewport()->mapToGlobal(pos));
    });

    // Forecast inspector.
    m_inspector = new ForecastInspector(this);
    m_inspectorDock = makeDock(tr("Forecast Inspector"), QStringLiteral("inspectorDock"), m_inspector, this);
    connect(m_inspector, &ForecastInspector::forceMeasureRequested, this, [this](qint64 id) {
        if (m_runLive && m_bridge->isActive())
            m_bridge->forceMeasure(id);
        else
            statusBar()->showMessage(tr("Measuring needs a running search: resume the run first."), 8000);
    });

    // Diff against the parent.
    m_diff = new DiffView(this);
    // Its two editors would ask for more; a narrow diff scrolls instead of widening the right column.
    m_diff->setMinimumWidth(280);
    m_diffDock = makeDock(tr("Diff"), QStringLiteral("diffDock"), m_diff, this);

    // Plots.
    auto* plotsPanel = new QWidget(this);
    auto* plotsLayout = new QVBoxLayout(plotsPanel);
    plotsLayout->setContentsMargins(4, 4, 4, 4);
    plotsLayout->setSpacing(2);
    m_plotTabs = new QTabWidget(plotsPanel);
    m_plotTabs->setDocumentMode(true);
    m_scatter = new ForecastScatterPlot(m_plotTabs);
    m_reliability = new ReliabilityPlot(m_plotTabs);
    m_riskCoverage = new RiskCoveragePlot(m_plotTabs);
    m_progressPlot = new SearchProgressPlot(m_plotTabs);
    m_plotTabs->addTab(m_scatter, tr("Forecast vs Measured"));
    m_plotTabs->addTab(m_reliability, tr("Reliability"));
    m_plotTabs->addTab(m_riskCoverage, tr("Risk-Coverage"));
    m_plotTabs->addTab(m_progressPlot, tr("Search Progress"));
    auto* exportButton = new QToolButton(m_plotTabs);
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save the plot shown as PNG or PDF"));
    exportButton->setAutoRaise(true);
    connect(exportButton, &QToolButton::clicked, this, [this, exportButton] {
        auto* plot = qobject_cast<PlotWidget*>(m_plotTabs->currentWidget());
        if (!plot)
            return;
        QMenu* menu = plot->createContextMenu();
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(exportButton->mapToGlobal(QPoint(0, exportButton->height())));
    });
    m_plotTabs->setCornerWidget(exportButton, Qt::TopRightCorner);
    m_metricsLabel = new QLabel(plotsPanel);
    m_metricsLabel->setObjectName(QStringLiteral("metricsLabel"));
    m_metricsLabel->setWordWrap(true);
    m_metricsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    plotsLayout->addWidget(m_plotTabs, 1);
    plotsLayout->addWidget(m_metricsLabel);
    m_plotsDock = makeDock(tr("Plots"), QStringLiteral("plotsDock"), plotsPanel, this);
    connect(m_scatter, &ForecastScatterPlot::candidateClicked, this, [this](qint64 id) { selectCandidate(id); });

    // Layout: run control and problems/devices on the left, full height; the inspector with diff and details on the
    // right; the population and the plots under the editor.
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    addDockWidget(Qt::LeftDockWidgetArea, m_runDock);
    addDockWidget(Qt::LeftDockWidgetArea, m_problemDock);
    tabifyDockWidget(m_problemDock, m_deviceDock);
    m_problemDock->raise();
    addDockWidget(Qt::RightDockWidgetArea, m_inspectorDock);
    addDockWidget(Qt::RightDockWidgetArea, m_diffDock);
    tabifyDockWidget(m_diffDock, m_detailsDock);
    m_diffDock->raise();
    addDockWidget(Qt::BottomDockWidgetArea, m_populationDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_plotsDock);
    splitDockWidget(m_populationDock, m_plotsDock, Qt::Horizontal);
    clearRunViews();
    refreshRunStatus();
}

void MainWindow::createMenus() {
    auto* file = menuBar()->addMenu(tr("&File"));
    auto* openRunAction = file->addAction(tr("Open &Run..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open Run"), QFileInfo(m_runPath).absolutePath(),
            tr("Run files (*.sqlite *.db);;All files (*)"));
        if (!path.isEmpty())
            openRun(path);
    });
    openRunAction->setShortcut(QKeySequence::Open);
    m_evaluateAction = file->addAction(tr("&Evaluate Pair Set..."), this, [this] {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Evaluate Pair Set"));
        auto* form = new QFormLayout(&dialog);
        auto* pairs = new QLineEdit(&dialog);
        pairs->setMinimumWidth(360);
        auto* browse = new QPushButton(tr("Browse..."), &dialog);
        auto* pairsRow = new QHBoxLayout;
        pairsRow->addWidget(pairs, 1);
        pairsRow->addWidget(browse);
        connect(browse, &QPushButton::clicked, &dialog, [&dialog, pairs] {
            const QString path = QFileDialog::getOpenFileName(&dialog, tr("Pair Set"), pairs->text(),
                                                              tr("Pair JSONL (*.jsonl *.json);;All files (*)"));
            if (!path.isEmpty())
                pairs->setText(path);
        });
        auto* surrogate = new QComboBox(&dialog);
        surrogate->addItem(tr("Local (learned from recordings)"), QStringLiteral("local"));
        surrogate->addItem(tr("LLM endpoint"), QStringLiteral("llm"));
        surrogate->setCurrentIndex(m_runControl->surrogate() == QLatin1String("llm") ? 1 : 0);
        auto* endpoint = new QLineEdit(m_runControl->endpoint(), &dialog);
        auto* model = new QLineEdit(m_runControl->model(), &dialog);
        form->addRow(tr("&Pairs:"), pairsRow);
        form->addRow(tr("&Surrogate:"), surrogate);
        form->addRow(tr("&Endpoint:"), endpoint);
        form->addRow(tr("&Model:"), model);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
        buttons->button(QDialogButtonBox::Ok)->setText(tr("Evaluate"));
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(buttons);
        if (dialog.exec() != QDialog::Accepted || pairs->text().trimmed().isEmpty())
            return;
        EvaluationOptions options;
        options.pairs = pairs->text().trimmed().toStdString();
        options.surrogate = surrogate->currentData().toString().toStdString();
        options.endpoint = endpoint->text().trimmed().toStdString();
        options.model = model->text().trimmed().toStdString();
        evaluatePairs(options);
    });
    file->addSeparator();
    auto* open = file->addAction(tr("Open &Problem Folder..."), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Problem Folder"),
                                                              QString::fromStdString(m_shownProblemDir));
        if (!dir.isEmpty())
            openProblemFolder(dir);
    });
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_runControl->startAction());
    run->addAction(m_runControl->pauseAction());
    run->addAction(m_runControl->stepAction());
    run->addAction(m_runControl->stopAction());
    run->addSeparator();
    m_resumeRunAction = run->addAction(tr("&Resume Opened Run"), this, [this] { resumeOpenedRun(); });
    m_resumeRunAction->setObjectName(QStringLiteral("resumeRunAction"));
    m_resumeRunAction->setEnabled(false);
    m_resumeRunAction->setToolTip(tr("Continue the opened search in its run file"));

    auto* view = menuBar()->addMenu(tr("&View"));
    auto* reload = view->addAction(tr("&Reload Problems"), this, &MainWindow::reloadProblems);
    reload->setShortcut(QKeySequence::Refresh);
    view->addAction(tr("Reload &Devices"), this, &MainWindow::reloadDevices);
    view->addSeparator();
    for (QDockWidget* dock : {m_runDock, m_problemDock, m_deviceDock, m_populationDock, m_inspectorDock, m_diffDock,
                              m_detailsDock, m_plotsDock})
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

void MainWindow::applyDefaultLayout() {
    resizeDocks({m_runDock, m_inspectorDock}, {390, 440}, Qt::Horizontal);
    resizeDocks({m_runDock, m_problemDock}, {680, 320}, Qt::Vertical);
    resizeDocks({m_inspectorDock, m_diffDock}, {540, 460}, Qt::Vertical);
    resizeDocks({m_populationDock, m_plotsDock}, {400, 460}, Qt::Horizontal);
    resizeDocks({m_populationDock}, {440}, Qt::Vertical);
}

void MainWindow::readSettings() {
    if (!m_options.persistSettings) {
        resize(1680, 1050);
        m_defaultLayoutPending = true;
        return;
    }
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1680, 1050);
    if (!restoreState(settings.value(QStringLiteral("window/state")).toByteArray()))
        m_defaultLayoutPending = true;
    m_openedFolders = settings.value(QStringLiteral("problems/opened")).toStringList();
    m_pendingSelection = settings.value(QStringLiteral("problems/selected")).toString();
    m_savedDevice = settings.value(QStringLiteral("devices/active")).toString();
    m_runControl->readSettings(settings);
    m_surrogateStatus->setText(surrogateStatus());
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // Dock sizes apply to a laid-out window: the first time it is shown, unless a saved layout was restored.
    if (m_defaultLayoutPending) {
        m_defaultLayoutPending = false;
        applyDefaultLayout();
    }
}

void MainWindow::writeSettings() const {
    if (!m_options.persistSettings)
        return;
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("problems/opened"), m_openedFolders);
    settings.setValue(QStringLiteral("problems/selected"), selectedProblemDir());
    if (!m_activeDevice.isEmpty())
        settings.setValue(QStringLiteral("devices/active"), m_activeDevice);
    m_runControl->writeSettings(settings);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_bridge->isActive() && !m_closing) {
        // Stop first, close when the search has ended: everything it did is in its run file already. A search
        // that does not end in time does not keep the window open.
        m_closing = true;
        writeSettings();
        m_bridge->stop();
        statusBar()->showMessage(tr("Stopping the search..."));
        connect(m_bridge, &EngineBridge::stateChanged, this, [this](EngineBridge::State s) {
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

void MainWindow::reloadProblems() {
    const quint64 generation = ++m_problemGeneration;
    if (m_pendingSelection.isEmpty())
        m_pendingSelection = selectedProblemDir();
    // Captured by value: the job never touches the window.
    const std::string root = QDir(m_options.resourcesDir).filePath(QStringLiteral("problems")).toStdString();
    std::vector<std::string> extra;
    for (const auto& f : m_openedFolders)
        extra.push_back(f.toStdString());
    statusBar()->showMessage(tr("Loading problems from %1...").arg(QString::fromStdString(root)));

    auto* watcher = new QFutureWatcher<LibraryLoad>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_problemGeneration)
            return;  // a newer reload is running; its result is the one to show
        LibraryLoad load = watcher->result();
        const int count = static_cast<int>(load.entries.size());
        const QString runProblem = m_runControl->problemDir();
        m_problems->setEntries(std::move(load.entries));
        int invalid = 0;
        for (int r = 0; r < m_problems->rowCount(); ++r)
            invalid += m_problems->entry(r)->valid() ? 0 : 1;
        QString message = invalid ? tr("%1 problems loaded, %2 with errors").arg(count).arg(invalid)
                                  : tr("%1 problems loaded").arg(count);
        if (!load.failures.empty())
            message += QStringLiteral(" — ") + QString::fromStdString(load.failures.front());
        statusBar()->showMessage(message, 10000);

        const QString wanted = std::exchange(m_pendingSelection, QString());
        if (wanted.isEmpty() || !selectProblem(wanted)) {
            if (m_problemProxy->rowCount() > 0)
                m_problemView->setCurrentIndex(m_problemProxy->index(0, 0));
            else
                showProblem(nullptr);
        }
        if (!runProblem.isEmpty() && runProblem != selectedProblemDir())
            m_runControl->setProblemDir(runProblem);
        m_problemsLoaded = true;
        Q_EMIT problemsLoaded(count);
        markReadyIfDone();
    });
    watcher->setFuture(QtConcurrent::run([root, extra] { return loadLibrary(root, extra); }));
}

void MainWindow::openProblemFolder(const QString& dir) {
    const QString clean = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    const QString library = QDir::cleanPath(QDir(m_options.resourcesDir).absoluteFilePath(QStringLiteral("problems")));
    if (!clean.startsWith(library + QLatin1Char('/')) && !m_openedFolders.contains(clean))
        m_openedFolders << clean;
    m_pendingSelection = clean;
    reloadProblems();
}

void MainWindow::reloadDevices() {
    const quint64 generation = ++m_deviceGeneration;
    const std::string resources = m_options.resourcesDir.toStdString();
    auto* watcher = new QFutureWatcher<DeviceLoad>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_deviceGeneration)
            return;
        DeviceLoad load = watcher->result();
        m_devices->setDevices(std::move(load.devices));
        m_deviceBandwidth.clear();
        for (const auto& [id, gbps] : load.bandwidth)
            m_deviceBandwidth.insert(QString::fromStdString(id), gbps);
        m_deviceView->resizeColumnToContents(DeviceListModel::IdColumn);
        m_deviceView->resizeColumnToContents(DeviceListModel::KindColumn);
        m_deviceView->resizeColumnToContents(DeviceListModel::GpuColumn);
        // A row that cannot measure carries the reason in a note too long for a table cell: spell it out below.
        QStringList notes;
        bool replay = false;
        for (int r = 0; r < m_devices->rowCount(); ++r) {
            const auto index = m_devices->index(r, 0);
            replay = replay || index.data(DeviceListModel::KindRole).toString() == QLatin1String("replay");
            if (!index.data(DeviceListModel::UsableRole).toBool())
                notes << QStringLiteral("%1: %2").arg(index.data(DeviceListModel::KindRole).toString() ==
                                                              QLatin1String("cuda")
                                                          ? tr("No CUDA device")
                                                          : index.data(DeviceListModel::IdRole).toString(),
                                                      index.data(DeviceListModel::NoteRole).toString());
        }
        if (!load.failure.empty())
            notes << tr("Could not list devices: %1").arg(QString::fromStdString(load.failure));
        if (!replay)
            notes << tr("No recordings for the replay device under %1.")
                         .arg(QDir(m_options.resourcesDir).filePath(QStringLiteral("recordings")));
        m_deviceNote->setText(notes.join(QLatin1Char('\n')));
        m_deviceNote->setVisible(!m_deviceNote->text().isEmpty());

        const QString keep = m_activeDevice.isEmpty() ? m_savedDevice : m_activeDevice;
        const int keepRow = m_devices->rowOfId(keep);
        if (!keep.isEmpty() && keepRow >= 0 && m_devices->index(keepRow, 0).data(DeviceListModel::UsableRole).toBool())
            m_activeDevice = keep;
        else
            m_activeDevice = m_devices->defaultDeviceId();
        m_devicesLoaded = true;
        m_runControl->setDeviceId(m_activeDevice);
        updateDeviceStatus();
        Q_EMIT devicesLoaded(m_devices->rowCount());
        markReadyIfDone();
    });
    watcher->setFuture(QtConcurrent::run([resources] {
        DeviceLoad load;
        try {
            load.devices = list_devices(resources);
            for (const auto& d : load.devices) {
                if (d.kind != "replay")
                    continue;
                try {
                    const std::string slug = d.id.substr(d.id.find(':') + 1);
                    ReplayDevice replay((std::filesystem::path(resources) / "recordings" / slug).string());
                    if (replay.header().ceilings.dram_gbps > 0)
                        load.bandwidth[d.id] = replay.header().ceilings.dram_gbps;
                } catch (const std::exception&) {
                    // a recording without ceilings: the bandwidth is shown as unknown
                }
            }
        } catch (const std::exception& e) {
            load.failure = e.what();
        }
        return load;
    }));
}

void MainWindow::markReadyIfDone() {
    if (isReady() && !m_readyEmitted) {
        m_readyEmitted = true;
        Q_EMIT ready();
        if (m_demoPending) {
            m_demoPending = false;
            startDemo();
        }
    }
}

bool MainWindow::selectProblem(const QString& nameOrDir) {
    for (int r = 0; r < m_problems->rowCount(); ++r) {
        const auto index = m_problems->index(r, 0);
        if (index.data(ProblemListModel::DirRole).toString() == nameOrDir ||
            index.data(ProblemListModel::NameRole).toString() == nameOrDir) {
            const auto proxied = m_problemProxy->mapFromSource(index);
            if (!proxied.isValid())
                return false;  // filtered out
            m_problemView->setCurrentIndex(proxied);
            m_problemView->scrollTo(proxied);
            return true;
        }
    }
    return false;
}

QString MainWindow::selectedProblemDir() const {
    return QString::fromStdString(m_shownProblemDir);
}

const ProblemEntry* MainWindow::currentEntry() const {
    const int row = m_problems->rowOfDir(QString::fromStdString(m_shownProblemDir));
    return m_problems->entry(row);
}

QStringList MainWindow::programLabels() const {
    QStringList labels;
    for (int i = 0; i < m_programSelector->count(); ++i)
        labels << m_programSelector->itemText(i);
    return labels;
}

bool MainWindow::selectProgram(int index) {
    if (index < 0 || index >= m_programSelector->count())
        return false;
    if (m_programSelector->currentIndex() == index)
        showProgram(index);  // back from a candidate to the same program
    else
        m_programSelector->setCurrentIndex(index);
    return true;
}

int MainWindow::selectedProgram() const {
    return m_programSelector->currentIndex();
}

void MainWindow::showProblem(const ProblemEntry* entry) {
    m_shownProblemDir = entry ? entry->dir : std::string();
    if (entry && !m_bridge->isActive())
        m_runControl->setProblemDir(QString::fromStdString(entry->dir));
    {
        const QSignalBlocker block(m_programSelector);
        m_programSelector->clear();
        if (entry)
            for (const auto& p : entry->programs)
                m_programSelector->addItem(programLabel(p, entry->dir));
    }
    if (!entry) {
        m_details->clearEntry();
        setEditorForCandidate(false);
        m_editor->setSource({});
        m_programPath->clear();
        return;
    }
    m_details->setEntry(*entry);
    m_programSelector->setCurrentIndex(entry->programs.empty() ? -1 : 0);
    showProgram(m_programSelector->currentIndex());
}

void MainWindow::setEditorForCandidate(bool forCandidate) {
    m_candidateTitle->setVisible(forCandidate);
    m_programPath->setVisible(!forCandidate);
    // A candidate of a running search can be edited and submitted as a new child; library files are read-only.
    m_editor->setReadOnly(!(forCandidate && m_runLive && m_bridge->isActive()));
}

void MainWindow::showProgram(int index) {
    setEditorForCandidate(false);
    const auto* entry = currentEntry();
    if (!entry || index < 0 || static_cast<size_t>(index) >= entry->programs.size()) {
        m_editor->setSource({});
        m_programPath->setText(entry ? tr("This problem has no kernel programs.") : QString());
        return;
    }
    const auto& program = entry->programs[static_cast<size_t>(index)];
    const QString path = QString::fromStdString(program.path);
    m_editor->setSource(QString::fromStdString(program.source), path);
    m_programPath->setText(path);
    m_programPath->setToolTip(path);
    QList<EditorDiagnostic> diagnostics;
    for (const auto& e : entry->errors)
        if (e.where().line > 0 && sameFile(e.where().file, program.path))
            diagnostics.append({e.where().line, QString::fromStdString(e.what())});
    m_editor->setDiagnostics(diagnostics);
    if (!diagnostics.isEmpty())
        m_editor->goToLine(diagnostics.front().line);
}

void MainWindow::showError(const QString& file, int line) {
    const auto* entry = currentEntry();
    if (entry) {
        for (size_t i = 0; i < entry->programs.size(); ++i) {
            if (sameFile(entry->programs[i].path, file.toStdString())) {
                selectProgram(static_cast<int>(i));
                if (line > 0)
                    m_editor->goToLine(line);
                m_editor->setFocus();
                return;
            }
        }
    }
    statusBar()->showMessage(line > 0 ? tr("%1, line %2").arg(file).arg(line) : file, 10000);
}

QString MainWindow::activeDeviceId() const {
    return m_activeDevice;
}

void MainWindow::setActiveDevice(const QString& id) {
    if (m_devices->rowOfId(id) < 0)
        return;
    m_activeDevice = id;
    m_runControl->setDeviceId(id);
    updateDeviceStatus();
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

void MainWindow::updateDeviceStatus() {
    if (!m_devicesLoaded)
        m_deviceStatus->setText(tr("Device: looking for devices..."));
    else if (m_activeDevice.isEmpty())
        m_deviceStatus->setText(tr("Device: none"));
    else
        m_deviceStatus->setText(tr("Device: %1").arg(m_activeDevice));
    m_deviceView->clearSelection();
    for (int r = 0; !m_activeDevice.isEmpty() && r < m_devices->rowCount(); ++r) {
        if (m_devices->index(r, 0).data(DeviceListModel::IdRole).toString() == m_activeDevice) {
            m_deviceView->setCurrentIndex(m_devices->index(r, 0));
            break;
        }
    }
    updateDeviceDetails();
}

QString MainWindow::workerState() const {
    if (!m_runLive || !m_bridge->isActive())
        return tr("idle");
    switch (m_bridge->state()) {
    case EngineBridge::State::Starting:
        return tr("starting (training the surrogate)");
    case EngineBridge::State::Paused:
        return m_queueLength > 0 ? tr("paused, %n waiting", nullptr, m_queueLength) : tr("paused");
    case EngineBridge::State::Stopping:
        return tr("stopping");
    default:
        return m_queueLength > 0 ? tr("measuring") : tr("idle (forecasting)");
    }
}

void MainWindow::updateDeviceDetails() {
    const QString id = m_runLive && m_bridge->isActive() ? QString::fromStdString(m_bridge->config().device)
                                                           : m_activeDevice;
    const int row = m_devices->rowOfId(id);
    const DeviceListing* d = m_devices->device(row);
    QStringList lines;
    const QLocale locale;
    if (!d) {
        lines << tr("<b>No device selected.</b>");
    } else {
        const DeviceFingerprint& f = d->fingerprint;
        lines << tr("<b>%1</b> (%2)").arg(QString::fromStdString(f.name.empty() ? d->id : f.name).toHtmlEscaped(),
                                          QString::fromStdString(d->id).toHtmlEscaped());
        if (f.cc_major > 0)
            lines << tr("Compute capability %1.%2, %3 SMs").arg(f.cc_major).arg(f.cc_minor).arg(f.sm_count);
        if (f.memory_bytes > 0 || f.l2_bytes > 0)
            lines << tr("Memory %1, L2 %2")
                         .arg(locale.formattedDataSize(f.memory_bytes), locale.formattedDataSize(f.l2_bytes));
        if (f.driver_version > 0)
            lines << tr("Driver %1, CUDA %2").arg(f.driver_version).arg(f.cuda_version);
        if (!f.uuid.empty())
            lines << tr("UUID %1").arg(QString::fromStdString(f.uuid).toHtmlEscaped());
        const auto bw = m_deviceBandwidth.constFind(id);
        lines << (bw != m_deviceBandwidth.constEnd()
                      ? tr("Measured DRAM bandwidth: %1 GB/s").arg(locale.toString(*bw, 'f', 0))
                      : tr("Measured DRAM bandwidth: not measured yet"));
    }
    lines << tr("Worker: %1").arg(workerState());
    lines << tr("Queue: %n candidate(s) waiting for the device", nullptr, m_queueLength);
    m_deviceDetails->setText(lines.join(QStringLiteral("<br>")));
}

// ---- runs ---------------------------------------------------------------------------------------------------------

QString MainWindow::defaultRunPath(const QString& problemName) const {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/runs");
    QDir().mkpath(dir);
    const QString stem = QStringLiteral("%1/%2-%3").arg(
        dir, problemName.isEmpty() ? QStringLiteral("run") : problemName,
        QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = stem + QStringLiteral(".sqlite");
    for (int i = 2; QFileInfo::exists(path); ++i)
        path = QStringLiteral("%1-%2.sqlite").arg(stem).arg(i);
    return path;
}

bool MainWindow::startSearch(const QString& runPath) {
    if (m_bridge->isActive()) {
        showErrorDialog(tr("Search running"), tr("A search is running already. Stop it before starting another."));
        return false;
    }
    const SearchConfig config = m_runControl->config();
    if (config.problem_dir.empty()) {
        showErrorDialog(tr("Cannot start the search"), tr("Choose a problem to search."));
        return false;
    }
    if (config.device.empty()) {
        showErrorDialog(tr("Cannot start the search"), tr("No device can measure: choose a GPU or a replay device."));
        return false;
    }
    if (config.mutators.empty()) {
        showErrorDialog(tr("Cannot start the search"), tr("Choose at least one mutator."));
        return false;
    }
    const int row = m_problems->rowOfDir(QString::fromStdString(config.problem_dir));
    const ProblemEntry* entry = m_problems->entry(row);
    const QString name = entry ? QString::fromStdString(entry->name) : QFileInfo(m_runControl->problemDir()).fileName();
    const QString path = runPath.isEmpty() ? defaultRunPath(name) : runPath;
    clearRunViews();
    m_opened.reset();
    m_resumeRunAction->setEnabled(false);
    m_runPath = path;
    m_runLive = true;
    m_problemName = name.toStdString();
    m_bridge->start(config, path, false);
    statusBar()->showMessage(tr("Search started; run file %1").arg(path), 10000);
    return true;
}

void MainWindow::startDemo() {
    if (!isReady()) {
        m_demoPending = true;
        return;
    }
    // The problem: softmax when it is in the library and recorded, else the first problem with a recording.
    QString problem;
    QString device;
    for (const QString& wanted : {QStringLiteral("softmax"), QString()}) {
        for (int r = 0; r < m_problems->rowCount() && problem.isEmpty(); ++r) {
            const ProblemEntry* e = m_problems->entry(r);
            if (!e->valid() || e->recorded.empty() || (!wanted.isEmpty() && e->name != wanted.toStdString()))
                continue;
            for (int d = 0; d < m_devices->rowCount(); ++d) {
                const QString id = m_devices->index(d, 0).data(DeviceListModel::IdRole).toString();
                if (id.startsWith(QStringLiteral("replay:")) &&
                    QFileInfo::exists(QDir(m_options.resourcesDir)
                                          .filePath(QStringLiteral("recordings/%1/%2.jsonl")
                                                        .arg(id.mid(7), QString::fromStdString(e->name))))) {
                    problem = QString::fromStdString(e->dir);
                    device = id;
                    break;
                }
            }
        }
        if (!problem.isEmpty())
            break;
    }
    if (problem.isEmpty()) {
        showErrorDialog(tr("Cannot start the demo"),
                        tr("The demo needs a problem with a recording for the replay device under %1.")
                            .arg(QDir(m_options.resourcesDir).filePath(QStringLiteral("recordings"))));
        return;
    }
    selectProblem(problem);
    m_runControl->setProblemDir(problem);
    setActiveDevice(device);
    m_runControl->setSurrogate(QStringLiteral("local"));
    GatingConfig gating;
    gating.kind = GatingKind::Selective;
    m_runControl->setGating(gating);
    m_runControl->setBudget(40);
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/demo");
    QDir().mkpath(dir);
    QString path = QStringLiteral("%1/%2-%3.sqlite")
                       .arg(dir, QFileInfo(problem).fileName(),
                            QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    for (int i = 2; QFileInfo::exists(path); ++i)
        path = QStringLiteral("%1/%2-%3-%4.sqlite")
                   .arg(dir, QFileInfo(problem).fileName(),
                        QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                   .arg(i);
    startSearch(path);
}

void MainWindow::clearRunViews() {
    m_resort->stop();
    m_populationProxy->setDynamicSortFilter(true);
    m_population->clear();
    m_population->setRunId(0);
    m_candidates.clear();
    m_forecasts.clear();
    m_compileErrors.clear();
    m_reader.reset();
    m_runId = 0;
    m_progress.clear();
    m_measurements = 0;
    m_queueLength = 0;
    m_lastProgress = SearchProgress{};
    m_selectedCandidate = 0;
    m_scatter->clear();
    m_reliability->clear();
    m_riskCoverage->clear();
    m_progressPlot->clear();
    m_inspector->clear();
    m_diff->clear();
    m_metrics = ForecastMetrics{};
    m_metricsLabel->setText(tr("No run shown. Start a search (F5), or open a run or evaluate a pair set from the "
                               "File menu."));
    m_runControl->clearProgress();
    updateDeviceDetails();
}

void MainWindow::onBridgeStarted(quint64 session, const QString& runPath) {
    if (session != m_bridge->session())
        return;
    m_runPath = runPath;
    m_runLive = true;
    refreshRunStatus();
}

void MainWindow::onEvents(const SearchEventBatch& batch) {
    if (batch.session != m_bridge->session() || !m_runLive)
        return;  // a batch of an earlier search, or the window shows an opened run now
    bool candidatesChanged = false;
    for (const SearchEvent& e : batch.events) {
        switch (e.kind) {
        case SearchEvent::Kind::RunStarted:
            m_runId = e.run_id;
            m_population->setRunId(e.run_id);
            m_poolView->clear();  // the new search's pool reports itself with its first batch
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
        case SearchEvent::Kind::Pool:
            if (e.pool)
                m_poolView->showSnapshot(*e.pool, QString::fromStdString(e.message));
            break;
        default:
            break;
        }
        m_lastProgress = e.progress;
    }
    m_population->applyEvents(batch.events);
    // A sorted proxy re-sorts a large table on every change it hears; past a size the table keeps its order while
    // the events stream in and is re-sorted every few seconds instead.
    const bool large = m_population->rowCount() > kLiveSortLimit;
    if (m_populationProxy->dynamicSortFilter() == large)
        m_populationProxy->setDynamicSortFilter(!large);
    if (large && !m_resort->isActive())
        m_resort->start();
    m_runControl->showProgress(m_lastProgress);
    // The plots and the device line follow at a slower pace than the table: they look at every row.
    if (candidatesChanged && !m_plotRefresh->isActive())
        m_plotRefresh->start(large ? kLargePlotRefreshMs : kPlotRefreshMs);
    // The selected candidate may have been forecast or measured meanwhile.
    const bool selectedChanged = m_selectedCandidate &&
        std::any_of(batch.events.begin(), batch.events.end(), [this](const SearchEvent& e) {
            return e.candidate_id == m_selectedCandidate && e.kind != SearchEvent::Kind::CandidateProposed;
        });
    if (selectedChanged) {
        const CandidateRow& row = m_population->row(m_population->rowOfId(m_selectedCandidate));
        const auto f = m_forecasts.find(m_selectedCandidate);
        m_inspector->setCandidate(row, f != m_forecasts.end() ? std::optional<Forecast>(f->second) : std::nullopt);
    }
    refreshRunStatus();
}

void MainWindow::refreshPlots() {
    m_plotRefresh->stop();
    const std::vector<CandidateRow>& rows = m_population->rows();
    int queued = 0;
    for (const CandidateRow& r : rows)
        queued += r.status == QLatin1String(candidate_status::Queued) ? 1 : 0;
    m_queueLength = m_runLive && m_bridge->isActive() ? queued : 0;
    updateDeviceDetails();
    m_scatter->setPoints(forecastPoints(rows));
    if (m_selectedCandidate)
        m_scatter->setSelected(m_selectedCandidate);
    const int64_t measured = m_runLive ? std::max(m_measurements, m_lastProgress.measurements) : m_measurements;
    m_progressPlot->setProgress(m_progress, measured);

    std::vector<ScoredForecast> scored = scoredForecasts(rows, m_problemName);
    const BinScheme scheme = m_population->scheme();
    const auto compute = [scheme](const std::vector<ScoredForecast>& s) {
        try {
            return compute_metrics(s, scheme);
        } catch (const std::exception&) {
            return ForecastMetrics{};
        }
    };
    const quint64 generation = ++m_metricsGeneration;
    if (static_cast<int>(rows.size()) <= kLiveSortLimit) {
        showMetrics(compute(scored));
        return;
    }
    // Calibration over tens of thousands of forecasts takes a while: worked out off the GUI thread, shown unless a
    // newer refresh has started meanwhile.
    auto* watcher = new QFutureWatcher<ForecastMetrics>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation == m_metricsGeneration)
            showMetrics(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([compute, scored = std::move(scored)] { return compute(scored); }));
}

void MainWindow::showMetrics(const ForecastMetrics& metrics) {
    m_metrics = metrics;
    m_reliability->setMetrics(m_metrics);
    m_riskCoverage->setMetrics(m_metrics);
    const QLocale locale;
    if (m_metrics.n > 0)
        m_metricsLabel->setText(tr("%n measured forecast(s): accuracy %1 (majority bin %2), off by one %3, ECE %4, "
                                   "AURC %5, Kendall τ-b %6; Brier %7 (climatology %8, skill %9), CRPS %10 "
                                   "(climatology %11, skill %12)",
                                   nullptr, static_cast<int>(m_metrics.n))
                                    .arg(locale.toString(m_metrics.accuracy, 'f', 3),
                                         locale.toString(m_metrics.majority_accuracy, 'f', 3),
                                         locale.toString(m_metrics.off_by_one, 'f', 3),
                                         locale.toString(m_metrics.ece, 'f', 3),
                                         locale.toString(m_metrics.aurc, 'f', 3),
                                         locale.toString(m_metrics.kendall_tau_b, 'f', 3),
                                         locale.toString(m_metrics.brier, 'f', 3),
                                         locale.toString(m_metrics.brier_climatology, 'f', 3),
                                         QString::fromStdString(skill_text(m_metrics.brier_skill)))
                                    .arg(locale.toString(m_metrics.crps, 'f', 4),
                                         locale.toString(m_metrics.crps_climatology, 'f', 4),
                                         QString::fromStdString(skill_text(m_metrics.crps_skill))));
    else
        m_metricsLabel->setText(m_population->rowCount() == 0 ? tr("No candidates yet.")
                                                              : tr("No measured candidate with a forecast yet."));
}

void MainWindow::refreshRunStatus() {
    QString state;
    if (m_runLive) {
        switch (m_bridge->state()) {
        case EngineBridge::State::Idle:
            state = tr("idle");
            break;
        case EngineBridge::State::Starting:
            state = tr("starting");
            break;
        case EngineBridge::State::Running:
            state = tr("running");
            break;
        case EngineBridge::State::Paused:
            state = tr("paused");
            break;
        case EngineBridge::State::Stopping:
            state = tr("stopping");
            break;
        case EngineBridge::State::Finished:
            state = tr("finished");
            break;
        case EngineBridge::State::Failed:
            state = tr("failed");
            break;
        }
    } else if (m_opened) {
        state = m_opened->evaluation ? tr("evaluation (opened)")
                : m_opened->endState.isEmpty() ? tr("interrupted (opened)")
                                               : tr("%1 (opened)").arg(m_opened->endState == QLatin1String("finished")
                                                                           ? tr("finished")
                                                                           : tr("failed"));
    } else {
        state = tr("no run");
    }
    m_runStatus->setText(tr("Run: %1").arg(state));
    m_runStatus->setToolTip(m_runPath);
    updateDeviceDetails();
}

void MainWindow::onBridgeState(EngineBridge::State state) {
    m_runControl->setRunState(state);
    m_resumeRunAction->setEnabled(!m_bridge->isActive() && m_opened && m_opened->config);
    if (m_selectedCandidate && m_candidateTitle->isVisible())
        setEditorForCandidate(true);
    refreshRunStatus();
}

void MainWindow::onSearchFinished(quint64 session, const QString& reason) {
    if (session != m_bridge->session())
        return;
    statusBar()->showMessage(tr("Search finished: %1").arg(reason), 15000);
    m_queueLength = 0;
    refreshPlots();
    // Nothing picked yet: show the best candidate (the search's answer).
    if (!m_selectedCandidate && m_lastProgress.best_candidate)
        selectCandidate(m_lastProgress.best_candidate);
    refreshRunStatus();
    Q_EMIT searchEnded(true);
}

void MainWindow::onSearchFailed(quint64 session, const QString& message, const QString& file, int line) {
    if (session != m_bridge->session())
        return;
    m_queueLength = 0;
    refreshRunStatus();
    showErrorDialog(tr("The search failed"), message, file, line);
    Q_EMIT searchEnded(false);
}

void MainWindow::showErrorDialog(const QString& title, const QString& message, const QString& file, int line) {
    // Window-modal and not waited for: the engine keeps reporting and the event loop keeps running.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    if (!file.isEmpty() && QFileInfo(file).isFile()) {
        box->setInformativeText(line > 0 ? tr("In %1, line %2.").arg(file).arg(line) : tr("In %1.").arg(file));
        auto* show = box->addButton(tr("Show the File"), QMessageBox::ActionRole);
        connect(show, &QPushButton::clicked, this, [this, file, line] {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly))
                return;
            setEditorForCandidate(false);
            m_editor->setSource(QString::fromUtf8(f.readAll()), file);
            m_programPath->setText(file);
            if (line > 0)
                m_editor->goToLine(line);
        });
    }
    box->open();
    statusBar()->showMessage(message.section(QLatin1Char('\n'), 0, 0), 15000);
    Q_EMIT errorShown(message);
}

void MainWindow::reviewSuspect(qint64 candidateId, bool accept) {
    const QString error = m_bridge->review(m_runPath, candidateId, accept);
    if (!error.isEmpty())
        statusBar()->showMessage(tr("Review failed: %1").arg(error), 10000);
    else if (accept)
        statusBar()->showMessage(tr("Candidate %1 accepted: it enters the archive").arg(candidateId), 8000);
    else
        statusBar()->showMessage(tr("Candidate %1 rejected: it stays out of the archive").arg(candidateId), 8000);
}

void MainWindow::openRun(const QString& path) {
    if (m_bridge->isActive()) {
        showErrorDialog(tr("Search running"), tr("Stop the running search before opening another run."));
        return;
    }
    const quint64 generation = ++m_runGeneration;
    m_busy->show();
    statusBar()->showMessage(tr("Reading %1...").arg(path));
    auto* watcher = new QFutureWatcher<LoadedRun>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_runGeneration)
            return;
        m_busy->hide();
        LoadedRun run = watcher->result();
        if (!run.error.isEmpty()) {
            const auto [file, line] = EngineBridge::locationOf(run.error);
            showErrorDialog(tr("Cannot open the run"), run.error, file, line);
            return;
        }
        showLoadedRun(std::move(run));
    });
    watcher->setFuture(QtConcurrent::run([path] { return loadRun(path); }));
}

void MainWindow::showLoadedRun(LoadedRun run) {
    clearRunViews();
    m_runLive = false;
    m_runPath = run.path;
    m_runId = run.run.id;
    m_problemName = run.run.problem;
    m_progress = run.progress;
    m_measurements = run.measurements;
    m_population->setRunId(run.run.id);
    m_population->setRows(run.rows);
    if (!run.baseline.empty())
        m_progressPlot->setBaseline(run.baseline, run.baselineMeasurements, run.baselineName);
    m_opened = std::move(run);
    m_opened->rows.clear();  // the model holds them now
    refreshPlots();
    m_resumeRunAction->setEnabled(m_opened->config.has_value());
    // Progress from what is stored.
    SearchProgress p;
    p.state = m_opened->endState.toStdString();
    p.candidates = m_population->rowCount();
    p.measurements = m_measurements;
    p.budget_measurements = m_opened->config ? m_opened->config->budgets.measurements : m_measurements;
    if (m_opened->evaluation)
        p.budget_measurements = m_population->rowCount();  // every pair comes measured
    p.forecasts = m_opened->forecasts;
    for (const CandidateRow& r : m_population->rows()) {
        p.measurements += m_opened->evaluation && r.isMeasured() ? 1 : 0;
        if (r.measured_speedup && *r.measured_speedup > p.best_speedup) {
            p.best_speedup = *r.measured_speedup;
            p.best_candidate = r.id;
        }
    }
    p.calibration_n = m_metrics.n;
    p.calibration_accuracy = m_metrics.accuracy;
    p.calibration_ece = m_metrics.ece;
    p.calibration_aurc = m_metrics.aurc;
    p.calibration_majority_accuracy = m_metrics.majority_accuracy;
    p.calibration_brier_skill = m_metrics.brier_skill;
    p.calibration_crps_skill = m_metrics.crps_skill;
    m_runControl->showProgress(p);
    if (m_opened->config) {
        m_runControl->setGating(m_opened->config->gating);
        m_runControl->setProblemDir(QString::fromStdString(m_opened->config->problem_dir));
    }
    if (m_opened->evaluation)
        m_plotTabs->setCurrentWidget(m_reliability);
    refreshRunStatus();
    statusBar()->showMessage(tr("Opened %1: %2, %n candidate(s)", nullptr, m_population->rowCount())
                                 .arg(m_runPath, QString::fromStdString(m_opened->run.name)),
                             15000);
    // Show something right away: the best measured candidate with a forecast, else the first with a forecast.
    qint64 pick = 0;
    double best = -1;
    for (const CandidateRow& r : m_population->rows()) {
        if (!r.hasForecast())
            continue;
        const double score = r.measured_speedup ? *r.measured_speedup : 0;
        if (!pick || score > best) {
            pick = r.id;
            best = score;
        }
    }
    if (pick)
        selectCandidate(pick);
    Q_EMIT runLoaded(m_runPath);
}

bool MainWindow::resumeOpenedRun() {
    if (!m_opened || !m_opened->config || m_bridge->isActive())
        return false;
    SearchConfig config = *m_opened->config;
    // The budgets of the run control may extend the stored ones (the engine keeps the larger measurement budget).
    config.budgets = m_runControl->config().budgets;
    const int64_t runId = m_runId;
    m_runLive = true;
    m_resumeRunAction->setEnabled(false);
    m_candidates.clear();
    m_forecasts.clear();
    m_compileErrors.clear();
    m_population->setRunId(runId);
    m_bridge->start(config, m_runPath, true);
    statusBar()->showMessage(tr("Resuming %1").arg(m_runPath), 10000);
    return true;
}

void MainWindow::evaluatePairs(const EvaluationOptions& options) {
    EvaluationOptions o = options;
    o.resources_dir = m_options.resourcesDir.toStdString();
    m_evaluateAction->setEnabled(false);
    m_busy->show();
    statusBar()->showMessage(tr("Evaluating %1 with the %2 surrogate...")
                                 .arg(QString::fromStdString(o.pairs), QString::fromStdString(o.surrogate)));
    QPointer<MainWindow> self(this);
    auto* watcher = new QFutureWatcher<EvaluationOutcome>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_busy->hide();
        m_busy->setRange(0, 0);
        m_evaluateAction->setEnabled(true);
        EvaluationOutcome out = watcher->result();
        if (!out.result) {
            const QString message = QString::fromStdString(out.error);
            const auto [file, line] = EngineBridge::locationOf(message);
            showErrorDialog(tr("The evaluation failed"), message, file, line);
            Q_EMIT evaluationFailed(message);
            return;
        }
        const QString store = QString::fromStdString(out.result->store_path);
        if (m_bridge->isActive()) {
            // The window belongs to the running search; the evaluation waits in its file.
            statusBar()->showMessage(tr("Evaluation of %1 pairs stored in %2; open it with File › Open Run once the "
                                        "search has ended")
                                         .arg(out.result->metrics.n)
                                         .arg(store));
        } else {
            openRun(store);
            statusBar()->showMessage(tr("Evaluation of %1 pairs stored in %2").arg(out.result->metrics.n).arg(store),
                                     15000);
        }
        Q_EMIT evaluationFinished(store);
    });
    watcher->setFuture(QtConcurrent::run([o, self] {
        EvaluationOutcome out;
        try {
            out.result = evaluate_pairs(
                o, [&out](const std::string& line) { out.messages.push_back(line); },
                [self](const std::string& stage, size_t done, size_t total) {
                    // Progress goes to the GUI thread as a queued call; it is dropped if the window is gone.
                    const QString text = QString::fromStdString(stage);
                    if (!self)
                        return;
                    QMetaObject::invokeMethod(
                        self.data(),
                        [self, text, done, total] {
                            if (!self)
                                return;
                            self->m_busy->setRange(0, static_cast<int>(total));
                            self->m_busy->setValue(static_cast<int>(done));
                            self->statusBar()->showMessage(
                                MainWindow::tr("Evaluating: %1 %2 of %3").arg(text).arg(done).arg(total));
                        },
                        Qt::QueuedConnection);
                });
        } catch (const std::exception& e) {
            out.error = e.what();
        }
        return out;
    }));
}

RunStore* MainWindow::reader() {
    if (m_runPath.isEmpty())
        return nullptr;
    if (!m_reader) {
        try {
            m_reader.emplace(RunStore::openReadOnly(m_runPath.toStdString()));
        } catch (const std::exception&) {
            return nullptr;
        }
    }
    return &*m_reader;
}

bool MainWindow::selectCandidate(qint64 candidateId) {
    const QModelIndex source = m_population->indexOfId(candidateId);
    if (!source.isValid())
        return false;
    showCandidate(candidateId);
    m_selecting = true;
    const QModelIndex proxied = m_populationProxy->mapFromSource(source);
    if (proxied.isValid()) {
        m_populationView->setCurrentIndex(proxied);
        m_populationView->scrollTo(proxied);
    }
    const QModelIndex tree = m_lineage->indexOfId(candidateId);
    if (tree.isValid())
        m_lineageView->setCurrentIndex(tree);
    m_selecting = false;
    return true;
}

void MainWindow::showCandidate(qint64 id) {
    const int rowIndex = m_population->rowOfId(id);
    if (rowIndex < 0)
        return;
    m_selectedCandidate = id;
    const CandidateRow& row = m_population->row(rowIndex);
    m_scatter->setSelected(id);

    // The candidate, its forecast and compile error: from the events of a live run, else from the store.
    std::optional<Candidate> candidate;
    std::optional<Forecast> forecast;
    QString compileError;
    QString prompt;
    if (auto it = m_candidates.find(id); it != m_candidates.end())
        candidate = it->second;
    if (auto it = m_forecasts.find(id); it != m_forecasts.end())
        forecast = it->second;
    if (auto it = m_compileErrors.find(id); it != m_compileErrors.end())
        compileError = QString::fromStdString(it->second);
    RunStore* store = (!candidate || (!forecast && row.hasForecast())) ? reader() : nullptr;
    try {
        if (store && !candidate)
            candidate = store->candidate(id);
        if (store && !forecast && row.hasForecast()) {
            const auto stored = store->forecastsFor(id);
            if (!stored.empty())
                forecast = stored.back().forecast;
        }
    } catch (const std::exception& e) {
        statusBar()->showMessage(tr("Could not read candidate #%1: %2").arg(id).arg(QString::fromUtf8(e.what())),
                                 10000);
    }
    if (compileError.isEmpty() && row.status == QLatin1String(candidate_status::CompileError))
        compileError = row.reason;
    if (m_opened)
        if (auto it = m_opened->prompts.find(id); it != m_opened->prompts.end())
            prompt = QString::fromStdString(it->second);
    m_inspector->setCandidate(row, forecast, prompt);

    if (!candidate)
        return;
    m_candidateTitle->setText(tr("<b>Candidate #%1</b> · %2 · generation %3 · %4")
                                  .arg(id)
                                  .arg(PopulationModel::mutatorText(row.mutator))
                                  .arg(row.generation)
                                  .arg(QString::fromStdString(candidate->label).toHtmlEscaped()));
    m_candidateTitle->setToolTip(m_candidateTitle->text());
    setEditorForCandidate(true);
    m_editor->setSource(QString::fromStdString(candidate->source), compileFileName(*candidate));
    if (!compileError.isEmpty())
        m_editor->setCompileLog(compileError);

    // The diff against the parent (roots: against the reference).
    std::optional<Candidate> parent;
    const int64_t parentId = candidate->parent_id;
    if (parentId) {
        if (auto it = m_candidates.find(parentId); it != m_candidates.end())
            parent = it->second;
        else if (RunStore* s = reader())
            parent = s->candidate(parentId);
    } else if (candidate->mutator != Mutator::Reference) {
        for (const CandidateRow& r : m_population->rows()) {
            if (r.mutator != Mutator::Reference)
                continue;
            if (auto it = m_candidates.find(r.id); it != m_candidates.end())
                parent = it->second;
            else if (RunStore* s = reader())
                parent = s->candidate(r.id);
            break;
        }
    }
    const std::string* anchor = nullptr;
    if (m_opened)
        if (auto it = m_opened->anchors.find(id); it != m_opened->anchors.end())
            anchor = &it->second;
    if (anchor)
        m_diff->setSources(QString::fromStdString(*anchor), diffText(*candidate), tr("anchor of the pair"),
                           tr("#%1 %2").arg(id).arg(QString::fromStdString(candidate->label)));
    else if (parent)
        m_diff->setSources(diffText(*parent), diffText(*candidate),
                           tr("#%1 %2").arg(parent->id).arg(parentId ? tr("parent") : tr("reference")),
                           tr("#%1 %2").arg(id).arg(QString::fromStdString(candidate->label)));
    else
        m_diff->setSources(QString(), diffText(*candidate), tr("(no parent)"),
                           tr("#%1 %2").arg(id).arg(QString::fromStdString(candidate->label)));
}

void MainWindow::submitEditedKernel(const QString& source) {
    if (!m_runLive || !m_bridge->isActive()) {
        statusBar()->showMessage(tr("Submitting a kernel needs a running search."), 8000);
        return;
    }
    m_bridge->submitKernel(source, m_selectedCandidate);
    statusBar()->showMessage(m_selectedCandidate
                                 ? tr("Kernel submitted to the search as a child of #%1").arg(m_selectedCandidate)
                                 : tr("Kernel submitted to the search"),
                             8000);
}

}  // namespace kerncast
