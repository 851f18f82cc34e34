// The engine bridge with a real search: the saxpy problem on the replay device (the H200 recordings), the local
// surrogate and selective gating, driven through the bridge and through the workbench window; what they show is
// compared with what the run store holds.
#include "app/gui/engine_bridge.h"
#include "app/gui/main_window.h"
#include "app/gui/population_panel.h"
#include "app/gui/run_control_panel.h"
#include "app/gui/run_data.h"

#include "core/metrics.h"
#include "core/run_store.h"
#include "widgets/diff_view.h"
#include "widgets/forecast_inspector.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/kernel_editor.h"
#include "widgets/lineage_model.h"
#include "widgets/measurement_panel.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"
#include "widgets/qcustomplot_include.h"
#include "widgets/reliability_plot.h"
#include "widgets/risk_coverage_plot.h"
#include "widgets/search_progress_plot.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QElapsedTimer>
#include <QFile>
#include <QIcon>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

using namespace kerncast;

namespace {

const QString kResources = QStringLiteral(KERNCAST_SOURCE_DIR "/resources");
const QString kDevice = QStringLiteral("replay:nvidia-h200");

SearchConfig saxpyConfig(int64_t budget) {
    SearchConfig c;
    c.problem_dir = (kResources + QStringLiteral("/problems/saxpy")).toStdString();
    c.device = kDevice.toStdString();
    c.surrogate = "local";
    c.gating.kind = GatingKind::Selective;
    c.budgets.measurements = budget;
    c.seed = 7;
    return c;
}

std::vector<SearchEvent> allEvents(const QSignalSpy& spy) {
    std::vector<SearchEvent> events;
    for (const auto& args : spy) {
        const auto batch = args.at(0).value<SearchEventBatch>();
        events.insert(events.end(), batch.events.begin(), batch.events.end());
    }
    return events;
}

std::vector<std::string> eventKinds(const QString& runPath) {
    RunStore store = RunStore::open(runPath.toStdString());
    std::vector<std::string> kinds;
    for (const RunEvent& e : store.events(store.runs().back().id))
        kinds.push_back(e.kind);
    return kinds;
}

bool contains(const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

class TestEngineBridge : public QObject {
    Q_OBJECT
    std::unique_ptr<QTemporaryDir> m_dir;
    QString runPath(const QString& name) const { return m_dir->filePath(name); }

    // Shows the window and starts a saxpy search with a large budget into `file`.
    void startSaxpySearch(MainWindow& w, const QString& file) {
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.isReady(), 60000);
        QVERIFY(w.runControl()->setProblemDir(kResources + QStringLiteral("/problems/saxpy")));
        QVERIFY(w.runControl()->setDeviceId(kDevice));
        w.runControl()->setBudget(200);
        QVERIFY(w.startSearch(runPath(file)));
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KerncastTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_engine_bridge"));
        QVERIFY(QFileInfo::exists(kResources + QStringLiteral("/recordings/nvidia-h200/saxpy.jsonl")));
    }
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
    }
    void cleanup() { m_dir.reset(); }

    void deliversEveryEventInFewBatchesAndOneEnd() {
        EngineBridge bridge(kResources);
        QSignalSpy batches(&bridge, &EngineBridge::eventsReady);
        QSignalSpy finished(&bridge, &EngineBridge::finished);
        QSignalSpy failed(&bridge, &EngineBridge::failed);
        std::vector<qint64> arrivals;
        QElapsedTimer clock;
        clock.start();
        connect(&bridge, &EngineBridge::eventsReady, this, [&] { arrivals.push_back(clock.elapsed()); });

        const QString path = runPath(QStringLiteral("saxpy.sqlite"));
        bridge.start(saxpyConfig(14), path, false);
        QCOMPARE(bridge.state(), EngineBridge::State::Starting);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 240000);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(bridge.state(), EngineBridge::State::Finished);
        // Nothing more arrives once the run has ended.
        QTest::qWait(3 * EngineBridge::kDefaultBatchIntervalMs);
        QCOMPARE(finished.count(), 1);

        // Batches come at most ~20 a second: no two closer than the interval (with a little timer slack).
        QVERIFY(!arrivals.empty());
        for (size_t i = 1; i < arrivals.size(); ++i)
            QVERIFY2(arrivals[i] - arrivals[i - 1] >= EngineBridge::kDefaultBatchIntervalMs - 10,
                     qPrintable(QStringLiteral("batches %1 ms apart").arg(arrivals[i] - arrivals[i - 1])));
        std::vector<SearchEvent> events = allEvents(batches);
        for (const auto& args : batches)
            QCOMPARE(args.at(0).value<SearchEventBatch>().session, bridge.session());
        // The set-up says what it does before the run starts (here: where the local forecaster came from); those
        // events are not the run's and carry no number.
        size_t setup = 0;
        while (setup < events.size() && events[setup].kind == SearchEvent::Kind::Setup) {
            QCOMPARE(events[setup].seq, int64_t(0));
            QVERIFY(!events[setup].message.empty());
            ++setup;
        }
        QVERIFY2(setup >= 1, "the set-up said nothing");
        QVERIFY(std::none_of(events.begin() + std::ptrdiff_t(setup), events.end(),
                             [](const SearchEvent& e) { return e.kind == SearchEvent::Kind::Setup; }));
        events.erase(events.begin(), events.begin() + std::ptrdiff_t(setup));
        // Every event of the run, in order, none twice: the runner numbers them 1, 2, ...
        QVERIFY(events.size() > static_cast<size_t>(batches.size()));
        for (size_t i = 0; i < events.size(); ++i)
            QCOMPARE(events[i].seq, static_cast<int64_t>(i + 1));
        QCOMPARE(events.front().kind, SearchEvent::Kind::RunStarted);
        QCOMPARE(events.back().kind, SearchEvent::Kind::Finished);
        QCOMPARE(std::count_if(
                     events.begin(), events.end(),
                     [](const SearchEvent& e) {
            return e.kind == SearchEvent::Kind::Finished || e.kind == SearchEvent::Kind::Failed;
                     }),
                 1);

        // What the events announced is what the store holds.
        RunStore store = RunStore::open(path.toStdString());
        const int64_t runId = store.runs().back().id;
        std::set<int64_t> proposed;
        for (const SearchEvent& e : events)
            if (e.kind == SearchEvent::Kind::CandidateProposed)
                proposed.insert(e.candidate_id);
        QCOMPARE(proposed.size(), store.candidates(runId).size());
        QCOMPARE(events.back().progress.measurements, 14);
    }

    void windowShowsWhatTheStoreHolds() {
        MainWindow w({kResources, false});
        for (QAbstractItemModel* model : {static_cast<QAbstractItemModel*>(w.populationModel()),
                                          static_cast<QAbstractItemModel*>(w.populationProxy()),
                                          static_cast<QAbstractItemModel*>(w.lineageModel())})
            new QAbstractItemModelTester(model, QAbstractItemModelTester::FailureReportingMode::QtTest, &w);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.isReady(), 60000);
        QVERIFY(w.runControl()->setProblemDir(kResources + QStringLiteral("/problems/saxpy")));
        QVERIFY(w.runControl()->setDeviceId(kDevice));
        w.runControl()->setBudget(14);
        QSignalSpy ended(&w, &MainWindow::searchEnded);
        const QString path = runPath(QStringLiteral("window.sqlite"));
        QVERIFY(w.startSearch(path));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 240000);
        QCOMPARE(ended.front().front().toBool(), true);

        RunStore store = RunStore::open(path.toStdString());
        const int64_t runId = store.runs().back().id;
        const std::vector<Candidate> candidates = store.candidates(runId);
        QCOMPARE(w.populationModel()->rowCount(), static_cast<int>(candidates.size()));
        QCOMPARE(w.populationProxy()->rowCount(), static_cast<int>(candidates.size()));

        // Measured speedups and forecasts, candidate by candidate; the scored pairs the plots are made of.
        std::vector<ScoredForecast> scored;
        double best = 0;
        int64_t withForecast = 0;
        for (const Candidate& c : candidates) {
            const int row = w.populationModel()->rowOfId(c.id);
            QVERIFY(row >= 0);
            const CandidateRow& shown = w.populationModel()->row(row);
            const auto measurements = store.measurementsFor(c.id);
            const auto forecasts = store.forecastsFor(c.id);
            QCOMPARE(shown.hasForecast(), !forecasts.empty());
            if (measurements.empty()) {
                QVERIFY(!shown.measured_speedup);
                continue;
            }
            const Measurement& m = measurements.back().measurement;
            if (m.status != Status::Ok || !(m.speedup > 0)) {
                QVERIFY(!shown.measured_speedup || m.status == Status::Suspect);
                continue;
            }
            QVERIFY(shown.measured_speedup);
            QCOMPARE(*shown.measured_speedup, m.speedup);
            best = std::max(best, m.speedup);
            if (!forecasts.empty()) {
                ++withForecast;
                // A forecast is of the speedup over its anchor (the measured parent, or the reference).
                const Forecast& f = forecasts.back().forecast;
                scored.push_back(
                    {f.probabilities, m.speedup / (f.anchor_speedup > 0 ? f.anchor_speedup : 1.0), "saxpy"});
            }
        }
        QVERIFY(withForecast > 0);
        QCOMPARE(w.scatterPlot()->pointCount(), static_cast<int>(withForecast));
        const ForecastMetrics expected = compute_metrics(scored, BinScheme::gfV2());
        QCOMPARE(w.reliabilityPlot()->forecastCount(), expected.n);
        QCOMPARE(w.shownMetrics().ece, expected.ece);
        QCOMPARE(w.shownMetrics().aurc, expected.aurc);
        QVERIFY(w.riskCoveragePlot()->curve()->dataCount() > 0);
        // The best-so-far curve ends at the best measured speedup.
        auto* progress = w.progressPlot()->progressGraph();
        QVERIFY(progress->dataCount() > 0);
        QCOMPARE((progress->data()->constEnd() - 1)->value, best);

        // The inspector shows the selected candidate's stored forecast.
        int64_t forecastId = 0;
        for (const Candidate& c : candidates)
            if (!store.forecastsFor(c.id).empty())
                forecastId = c.id;
        QVERIFY(forecastId > 0);
        QVERIFY(w.selectCandidate(forecastId));
        QCOMPARE(w.inspector()->candidateId(), forecastId);
        const Forecast f = store.forecastsFor(forecastId).back().forecast;
        const QList<double> shownProbabilities = w.inspector()->distribution()->probabilities();
        QCOMPARE(shownProbabilities.size(), kBinCount);
        for (int b = 0; b < kBinCount; ++b)
            QCOMPARE(shownProbabilities[b], f.probabilities[static_cast<size_t>(b)]);
        QCOMPARE(w.selectedCandidate(), forecastId);
        // Clicking its scatter point selects the same candidate.
        if (w.scatterPlot()->contains(forecastId)) {
            QVERIFY(w.selectCandidate(candidates.front().id));
            const QPointF pixel = w.scatterPlot()->pixelOf(forecastId);
            QTest::mouseClick(w.scatterPlot()->customPlot(), Qt::LeftButton, {}, pixel.toPoint());
            QTRY_COMPARE(w.selectedCandidate(), forecastId);
        }
    }

    void steeringCommandsAreStoredAsEvents() {
        EngineBridge bridge(kResources);
        QSignalSpy batches(&bridge, &EngineBridge::eventsReady);
        QSignalSpy finished(&bridge, &EngineBridge::finished);
        const QString path = runPath(QStringLiteral("steered.sqlite"));
        bridge.start(saxpyConfig(200), path, false);
        // Sent while the runner is still being built: it pauses right after seeding the population.
        bridge.pause();
        QTRY_COMPARE_WITH_TIMEOUT(bridge.state(), EngineBridge::State::Paused, 240000);
        const auto commandsSeen = [&] {
            std::vector<std::string> names;
            for (const SearchEvent& e : allEvents(batches))
                if (e.kind == SearchEvent::Kind::Command)
                    names.push_back(e.message);
            return names;
        };
        bridge.step();
        QTRY_VERIFY_WITH_TIMEOUT(contains(commandsSeen(), "step"), 60000);
        GatingConfig gating;
        gating.kind = GatingKind::Selective;
        gating.tau = 0.8;
        gating.pi = 0.1;
        gating.epsilon = 0.05;
        bridge.setGating(gating);
        const auto gatingChanged = [&] {
            const std::vector<std::string> names = commandsSeen();
            return std::any_of(names.begin(), names.end(),
                               [](const std::string& m) { return m.rfind("gating_changed", 0) == 0; });
        };
        QTRY_VERIFY_WITH_TIMEOUT(gatingChanged(), 60000);
        QCOMPARE(bridge.state(), EngineBridge::State::Paused);
        // A kernel edited by hand, and a measurement forced on a candidate that gating did not send to the device.
        QFile seed(kResources + QStringLiteral("/problems/saxpy/seeds/float4.cu"));
        QVERIFY(seed.open(QIODevice::ReadOnly));
        bridge.submitKernel(QString::fromUtf8(seed.readAll()), 0);
        QTRY_VERIFY_WITH_TIMEOUT(contains(commandsSeen(), "submit_kernel"), 120000);
        int64_t unmeasured = 0;
        for (const SearchEvent& e : allEvents(batches))
            if (e.kind == SearchEvent::Kind::Gating && e.decision && !is_measured(*e.decision))
                unmeasured = e.candidate_id;
        QVERIFY(unmeasured > 0);
        bridge.forceMeasure(unmeasured);
        QTRY_VERIFY_WITH_TIMEOUT(contains(commandsSeen(), "force_measure"), 60000);
        bridge.stop();
        QCOMPARE(bridge.state(), EngineBridge::State::Stopping);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.front().at(1).toString(), QStringLiteral("stopped by request"));

        const std::vector<std::string> kinds = eventKinds(path);
        for (const char* kind :
             {"pause", "step", "gating_changed", "submit_kernel", "force_measure", "stop", "finished"})
            QVERIFY2(contains(kinds, kind), kind);
        RunStore store = RunStore::open(path.toStdString());
        const auto candidates = store.candidates(store.runs().back().id);
        QVERIFY(std::any_of(candidates.begin(), candidates.end(),
                            [](const Candidate& c) { return c.mutator == Mutator::Human; }));
        const auto forced = store.measurementsFor(unmeasured);
        QCOMPARE(forced.size(), size_t(1));
        for (const RunEvent& e : store.events(store.runs().back().id))
            if (e.kind == "gating_changed")
                QCOMPARE(gating_config_from_json(e.payload.at("gating")).tau, 0.8);
    }

    void anEditedKernelGoesToTheSearchAndClosingStopsIt() {
        MainWindow w({kResources, false});
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.isReady(), 60000);
        QVERIFY(w.runControl()->setProblemDir(kResources + QStringLiteral("/problems/saxpy")));
        QVERIFY(w.runControl()->setDeviceId(kDevice));
        w.runControl()->setBudget(200);
        const QString path = runPath(QStringLiteral("edited.sqlite"));
        QVERIFY(w.startSearch(path));
        w.bridge()->pause();  // stays paused after seeding, so the population holds still
        QTRY_COMPARE_WITH_TIMEOUT(w.bridge()->state(), EngineBridge::State::Paused, 240000);
        QTRY_VERIFY_WITH_TIMEOUT(w.populationModel()->rowCount() > 0, 10000);

        // A seed of the live search is editable; Submit sends the edited text as its child.
        const qint64 parent = w.populationModel()->row(1).id;
        QVERIFY(w.selectCandidate(parent));
        QVERIFY(!w.editor()->isReadOnly());
        const int before = w.populationModel()->rowCount();
        w.editor()->setSource(QStringLiteral("// @kerncast launch k grid(1) block(32) args(y)\n"
                                             "extern \"C\" __global__ void k(float* y) {\n"
                                             "    y[0] = undefined_name;\n"
                                             "}\n"),
                              QStringLiteral("candidate.cu"));
        w.editor()->setReadOnly(false);
        w.editor()->submitAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(w.populationModel()->rowCount() > before, 60000);
        const CandidateRow& submitted = w.populationModel()->row(before);
        QCOMPARE(submitted.mutator, Mutator::Human);
        QCOMPARE(submitted.parent_id, parent);
        QCOMPARE(submitted.status, QStringLiteral("compile_error"));
        // Its compile error is marked on the line it names.
        QVERIFY(w.selectCandidate(submitted.id));
        QCOMPARE(w.editor()->errorLines(), QList<int>{3});

        // Closing the window stops the search first; the run file keeps everything.
        w.close();
        QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), EngineBridge::kShutdownTimeoutMs + 5000);
        QVERIFY(!w.bridge()->isActive());
        const std::vector<std::string> kinds = eventKinds(path);
        for (const char* kind : {"submit_kernel", "stop", "finished"})
            QVERIFY2(contains(kinds, kind), kind);
    }

    // What a person does with the candidates of a paused search is kept and said: typing picks the candidate (the
    // views stop following the best) and the edit survives Resume and a look at another row; a submitted kernel with
    // a compile error is selected with its errors on their lines, in view; one that compiles is not discarded by the
    // gate, and the replay device, which cannot measure it, says so without spending a measurement. Pin and ban are
    // marked on the row, said in the status bar and undone from the same menu. Paused time is not search time, and
    // the closed window leaves the run file whole.
    void steeringAPausedSearchIsVisibleAndKept() {
        const QString path = runPath(QStringLiteral("steered.sqlite"));
        QElapsedTimer wall;
        double elapsed = 0;
        qint64 pausedMs = 0;
        {
            MainWindow w({kResources, false});
            startSaxpySearch(w, QStringLiteral("steered.sqlite"));
            if (QTest::currentTestFailed())
                return;
            wall.start();
            w.bridge()->pause();
            QTRY_COMPARE_WITH_TIMEOUT(w.bridge()->state(), EngineBridge::State::Paused, 240000);
            const auto& rows = w.populationModel()->rows();
            const auto seed = std::find_if(rows.begin(), rows.end(), [](const CandidateRow& r) {
                return r.mutator == Mutator::Seed && r.status == QLatin1String("ok");
            });
            QVERIFY(seed != rows.end());
            const qint64 seedId = seed->id;
            QVERIFY(w.selectCandidate(seedId));
            // The measured seed's Measurement tab: its timing and static report from the run file.
            QVERIFY2(w.inspector()->measurementPanel()->text().contains(QStringLiteral("Median")),
                     qPrintable(w.inspector()->measurementPanel()->text()));

            // Typing picks the candidate; Resume and another row do not lose the edit.
            QWidget* text = w.editor()->focusProxy();
            QVERIFY(text);
            w.editor()->goToLine(1);
            QTest::keyClicks(text, QStringLiteral("// tuned by hand"));
            QTest::keyClick(text, Qt::Key_Return);
            QVERIFY(w.editor()->source().startsWith(QStringLiteral("// tuned by hand")));
            QVERIFY(!w.followsBest());
            QElapsedTimer paused;
            paused.start();
            QTest::qWait(2000);
            pausedMs = paused.elapsed();
            w.bridge()->resume();
            QTest::qWait(300);
            w.bridge()->pause();
            QTRY_COMPARE_WITH_TIMEOUT(w.bridge()->state(), EngineBridge::State::Paused, 60000);
            QCOMPARE(w.selectedCandidate(), seedId);
            QVERIFY(w.editor()->source().startsWith(QStringLiteral("// tuned by hand")));
            const qint64 reference = w.populationModel()->row(0).id;
            QVERIFY(w.selectCandidate(reference));
            QVERIFY(!w.editor()->source().startsWith(QStringLiteral("// tuned by hand")));
            QVERIFY(w.selectCandidate(seedId));
            QVERIFY(w.editor()->source().startsWith(QStringLiteral("// tuned by hand")));
            QVERIFY(w.editor()->isModified());

            // The edit compiles; the replay device has no recording of it: not measured, and it says why.
            const int64_t measuredBefore = w.session()->lastProgress().measurements;
            int before = w.populationModel()->rowCount();
            w.editor()->submitAction()->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(w.populationModel()->rowCount() > before, 60000);
            const qint64 editedId = w.populationModel()->row(before).id;
            const auto edited = [&] { return w.populationModel()->row(w.populationModel()->rowOfId(editedId)); };
            QCOMPARE(edited().mutator, Mutator::Human);
            QTRY_VERIFY_WITH_TIMEOUT(edited().reason.contains(QStringLiteral("no measurement was spent")), 60000);
            QCOMPARE(edited().status, QStringLiteral("discarded"));
            QCOMPARE(w.session()->lastProgress().measurements, measuredBefore);
            QTRY_COMPARE_WITH_TIMEOUT(w.selectedCandidate(), editedId, 10000);
            QVERIFY(w.inspector()
                        ->findChild<QLabel*>(QStringLiteral("statusLabel"))
                        ->text()
                        .contains(QStringLiteral("no measurement was spent")));

            // A compile error: the new candidate is selected, its error marked on its line and scrolled into view.
            QVERIFY(w.selectCandidate(seedId));
            w.editor()->setSource(QStringLiteral("// @kerncast launch k grid(1) block(32) args(y)\n"
                                                 "extern \"C\" __global__ void k(float* y) {\n"
                                                 "    y[0] = 1.0f;\n"
                                                 "    y[1] = undefined_name;\n"
                                                 "}\n"),
                                  QStringLiteral("candidate.cu"));
            before = w.populationModel()->rowCount();
            QSignalSpy status(w.statusBar(), &QStatusBar::messageChanged);
            w.editor()->submitAction()->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(w.populationModel()->rowCount() > before, 60000);
            const qint64 brokenId = w.populationModel()->row(before).id;
            QTRY_COMPARE_WITH_TIMEOUT(w.selectedCandidate(), brokenId, 10000);
            QCOMPARE(w.editor()->errorLines(), QList<int>{4});
            QCOMPARE(w.editor()->currentLine(), 4);
            bool said = false;
            for (const auto& args : status)
                said = said || args.at(0).toString().contains(QStringLiteral("does not compile"));
            QVERIFY(said);

            // Pin and ban: a marker on the row, a message, and the menu offers to undo it.
            QSignalSpy messages(w.findChild<PopulationPanel*>(), &PopulationPanel::message);
            auto* panel = w.findChild<PopulationPanel*>();
            QVERIFY(panel);
            const auto menuTexts = [&](qint64 id) {
                QMenu menu;
                panel->fillContextMenu(menu, w.populationProxy()->mapFromSource(w.populationModel()->indexOfId(id)));
                QStringList texts;
                for (const QAction* a : menu.actions())
                    texts << a->text();
                return texts;
            };
            QVERIFY(menuTexts(seedId).contains(QStringLiteral("Pin as Parent")));
            panel->steer(seedId, static_cast<int>(PopulationModel::Steering::Pinned));
            const QModelIndex seedIndex = w.populationModel()->indexOfId(seedId);
            QVERIFY(!seedIndex.data(Qt::DecorationRole).value<QIcon>().isNull());
            QVERIFY(seedIndex.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Pinned")));
            QVERIFY(menuTexts(seedId).contains(QStringLiteral("Unpin as Parent")));
            QCOMPARE(messages.count(), 1);
            QVERIFY(messages.last().at(0).toString().contains(QStringLiteral("pinned")));
            panel->steer(reference, static_cast<int>(PopulationModel::Steering::Banned));
            QVERIFY(menuTexts(reference).contains(QStringLiteral("Unban as Parent")));
            panel->steer(seedId, static_cast<int>(PopulationModel::Steering::None));
            QVERIFY(w.populationModel()->indexOfId(seedId).data(Qt::DecorationRole).isNull());
            QVERIFY(menuTexts(seedId).contains(QStringLiteral("Pin as Parent")));

            // Any two candidates side by side: the one on show against another, each titled with its outcome.
            QVERIFY(w.selectCandidate(seedId));
            QVERIFY(menuTexts(reference).contains(QStringLiteral("Compare with #%1").arg(seedId)));
            QVERIFY(w.compareWithSelected(reference));
            QStringList titles;
            for (const QLabel* label : w.diffView()->findChildren<QLabel*>())
                titles << label->text();
            QVERIFY2(titles.contains(QStringLiteral("#%1 · ok").arg(reference)) ||
                         std::any_of(
                             titles.begin(), titles.end(),
                             [&](const QString& t) { return t.startsWith(QStringLiteral("#%1 · ").arg(reference)); }),
                     qPrintable(titles.join(QLatin1Char('|'))));
            QVERIFY(std::any_of(titles.begin(), titles.end(),
                                [&](const QString& t) { return t.startsWith(QStringLiteral("#%1 · ").arg(seedId)); }));
            QVERIFY(!w.compareWithSelected(seedId));  // not with itself

            QSignalSpy ended(&w, &MainWindow::searchEnded);
            w.bridge()->stop();
            QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
            elapsed = w.session()->lastProgress().elapsed_s;
            // After the run the candidate on show can still be edited (the edit is kept for a resumed run).
            QVERIFY(!w.editor()->isReadOnly());
            const auto kinds = eventKinds(path);
            for (const char* kind : {"pin_parent", "unpin_parent", "ban_parent"})
                QVERIFY2(contains(kinds, kind), kind);
            w.close();
        }
        // The pause is not in the elapsed time.
        QVERIFY2(elapsed * 1000 <= double(wall.elapsed() - pausedMs) + 250,
                 qPrintable(QStringLiteral("elapsed %1 s, wall %2 ms, paused %3 ms")
                                .arg(elapsed)
                                .arg(wall.elapsed())
                                .arg(pausedMs)));
        // The run file alone holds everything: no -wal beside it, and a copy reads back whole.
        QVERIFY(!QFile::exists(path + QStringLiteral("-wal")));
        const QString copy = runPath(QStringLiteral("copy.sqlite"));
        QVERIFY(QFile::copy(path, copy));
        RunStore original = RunStore::openReadOnly(path.toStdString());
        RunStore alone = RunStore::openReadOnly(copy.toStdString());
        const int64_t run = original.runs().back().id;
        QCOMPARE(alone.events(run).size(), original.events(run).size());
        QCOMPARE(alone.candidates(run).size(), original.candidates(run).size());
    }

    // A family configuration's source uses its tunables (BLOCK, VEC, ITEMS) as -D defines: an edited copy submitted
    // from the editor keeps them, so it compiles and is forecast like any child.
    void anEditedFamilyCandidateKeepsItsTunables() {
        MainWindow w({kResources, false});
        startSaxpySearch(w, QStringLiteral("family.sqlite"));
        if (QTest::currentTestFailed())
            return;
        w.bridge()->pause();
        QTRY_COMPARE_WITH_TIMEOUT(w.bridge()->state(), EngineBridge::State::Paused, 240000);
        const auto& rows = w.populationModel()->rows();
        const auto family = std::find_if(rows.begin(), rows.end(), [](const CandidateRow& r) {
            return r.mutator == Mutator::Parametric && r.status != QLatin1String("compile_error");
        });
        QVERIFY2(family != rows.end(), "the seeding measures family configurations");
        const qint64 parent = family->id;
        QVERIFY(w.selectCandidate(parent));
        QVERIFY(!w.editor()->isReadOnly());
        QVERIFY(w.editor()->source().contains(QStringLiteral("BLOCK")));
        const int before = w.populationModel()->rowCount();
        w.editor()->setSource(QStringLiteral("// edited by hand\n") + w.editor()->source(),
                              QStringLiteral("candidate.cu"));
        w.editor()->setReadOnly(false);
        w.editor()->submitAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(w.populationModel()->rowCount() > before, 60000);
        const qint64 submittedId = w.populationModel()->row(before).id;
        const auto submitted = [&] { return w.populationModel()->row(w.populationModel()->rowOfId(submittedId)); };
        QCOMPARE(submitted().mutator, Mutator::Human);
        QCOMPARE(submitted().parent_id, parent);
        QTRY_VERIFY_WITH_TIMEOUT(submitted().hasForecast(), 60000);
        QVERIFY2(submitted().status != QLatin1String("compile_error"), qPrintable(submitted().reason));
        QVERIFY(submitted().registers > 0);  // compiled: its static report is there
        RunStore store = RunStore::open(runPath(QStringLiteral("family.sqlite")).toStdString());
        QCOMPARE(store.candidate(submittedId)->tunables, store.candidate(parent)->tunables);
        w.bridge()->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!w.bridge()->isActive(), 60000);
    }

    // While a search runs and nobody has picked a row, the editor, diff and inspector show the newest best candidate;
    // once a person picks a row, they stay on it.
    void theViewsFollowTheNewestBestUntilARowIsPicked() {
        MainWindow w({kResources, false});
        startSaxpySearch(w, QStringLiteral("follow.sqlite"));
        if (QTest::currentTestFailed())
            return;
        const auto bestId = [&] {
            qint64 id = 0;
            double best = 0;
            for (const CandidateRow& r : w.populationModel()->rows())
                if (r.measured_speedup && *r.measured_speedup > best) {
                    best = *r.measured_speedup;
                    id = r.id;
                }
            return id;
        };
        QTRY_VERIFY_WITH_TIMEOUT(bestId() != 0, 240000);
        QTRY_COMPARE_WITH_TIMEOUT(w.inspector()->candidateId(), bestId(), 10000);
        QCOMPARE(w.selectedCandidate(), bestId());
        QVERIFY(w.followsBest());
        // The diff's right side is the best candidate's source, as the editor shows it (the diff pads with blank
        // lines where the other side has more).
        QVERIFY(!w.editor()->source().isEmpty());
        const auto nonBlank = [](const QString& text) {
            QStringList lines = text.split(QLatin1Char('\n'));
            lines.removeAll(QString());
            return lines.join(QLatin1Char('\n'));
        };
        QVERIFY(nonBlank(w.diffView()->rightEditor()->source()).endsWith(nonBlank(w.editor()->source())));

        // A click on another row (the reference, which is never the best) holds the views there.
        w.bridge()->pause();
        QTRY_COMPARE_WITH_TIMEOUT(w.bridge()->state(), EngineBridge::State::Paused, 60000);
        const auto& rows = w.populationModel()->rows();
        const auto reference = std::find_if(rows.begin(), rows.end(),
                                            [](const CandidateRow& r) { return r.mutator == Mutator::Reference; });
        QVERIFY(reference != rows.end());
        const qint64 picked = reference->id;
        const QModelIndex index = w.populationProxy()->mapFromSource(w.populationModel()->indexOfId(picked));
        w.populationView()->setCurrentIndex(index);
        QVERIFY(!w.followsBest());
        QCOMPARE(w.inspector()->candidateId(), picked);
        QSignalSpy ended(&w, &MainWindow::searchEnded);
        w.runControl()->setBudget(200);
        w.bridge()->resume();
        QTest::qWait(1500);
        w.bridge()->stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        QCOMPARE(w.inspector()->candidateId(), picked);
        QCOMPARE(w.selectedCandidate(), picked);
    }

    void aNewStartDropsTheOldRunsBatches() {
        EngineBridge bridge(kResources);
        QSignalSpy batches(&bridge, &EngineBridge::eventsReady);
        QSignalSpy finished(&bridge, &EngineBridge::finished);
        bridge.start(saxpyConfig(200), runPath(QStringLiteral("first.sqlite")), false);
        const quint64 first = bridge.session();
        bridge.start(saxpyConfig(6), runPath(QStringLiteral("second.sqlite")), false);
        const quint64 second = bridge.session();
        QVERIFY(second != first);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.front().at(0).value<quint64>(), second);
        for (const auto& args : batches)
            QCOMPARE(args.at(0).value<SearchEventBatch>().session, second);
        QVERIFY(bridge.waitForEnd(30000));
    }

    void failuresAreReadableSignals() {
        EngineBridge bridge(kResources);
        QSignalSpy failed(&bridge, &EngineBridge::failed);
        QSignalSpy finished(&bridge, &EngineBridge::finished);
        // The run file exists already and holds a run (a file without one is a search killed before it stored its
        // settings, which starts over).
        const QString existing = runPath(QStringLiteral("exists.sqlite"));
        {
            RunStore store = RunStore::create(existing.toStdString());
            RunInfo run;
            run.name = "earlier";
            store.addRun(run);
        }
        bridge.start(saxpyConfig(4), existing, false);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 240000);
        QVERIFY2(failed.front().at(1).toString().contains(QStringLiteral("exists already")),
                 qPrintable(failed.front().at(1).toString()));
        QCOMPARE(failed.front().at(2).toString(), existing);
        QCOMPARE(bridge.state(), EngineBridge::State::Failed);
        // A device that does not exist.
        SearchConfig bad = saxpyConfig(4);
        bad.device = "replay:no-such-recording";
        bridge.start(bad, runPath(QStringLiteral("bad.sqlite")), false);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 60000);
        QVERIFY2(failed.back().at(1).toString().contains(QStringLiteral("no-such-recording")),
                 qPrintable(failed.back().at(1).toString()));
        QCOMPARE(finished.count(), 0);
    }

    void locationsOfMessages_data() {
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::newRow("file and line") << "/p/seeds/a.cu:12: launch a: unknown argument"
                                       << "/p/seeds/a.cu" << 12;
        QTest::newRow("no location") << "the measurement budget must be at least 1" << QString() << 0;
        QTest::newRow("not a file") << "search settings: bad" << QString() << 0;
    }
    void locationsOfMessages() {
        QFETCH(QString, message);
        QFETCH(QString, file);
        QFETCH(int, line);
        const auto [f, l] = EngineBridge::locationOf(message);
        QCOMPARE(f, file);
        QCOMPARE(l, line);
    }

    void anOpenedRunIsShownAndResumed() {
        const QString path = runPath(QStringLiteral("resume.sqlite"));
        {
            EngineBridge bridge(kResources);
            QSignalSpy finished(&bridge, &EngineBridge::finished);
            bridge.start(saxpyConfig(6), path, false);
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        }
        MainWindow w({kResources, false});
        new QAbstractItemModelTester(w.populationModel(), QAbstractItemModelTester::FailureReportingMode::QtTest, &w);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.isReady(), 60000);
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
        const auto storedCandidates = [&] {
            RunStore store = RunStore::open(path.toStdString());
            return store.candidates(store.runs().back().id).size();
        };
        QCOMPARE(w.populationModel()->rowCount(), static_cast<int>(storedCandidates()));
        QVERIFY(w.inspector()->candidateId() > 0);  // the best forecast candidate is on show
        QVERIFY(w.progressPlot()->progressGraph()->dataCount() > 0);

        w.runControl()->setBudget(10);
        QSignalSpy ended(&w, &MainWindow::searchEnded);
        QVERIFY(w.resumeOpenedRun());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 240000);
        QCOMPARE(ended.front().front().toBool(), true);
        QVERIFY(contains(eventKinds(path), "resumed"));
        RunStore store = RunStore::open(path.toStdString());
        int64_t measurements = 0;
        progressFromStore(store, store.runs().back().id, &measurements);
        QCOMPARE(measurements, 10);
        // The rows read from the file and those the resumed search added are one population.
        QCOMPARE(w.populationModel()->rowCount(), static_cast<int>(storedCandidates()));
    }

    // The run control's audited line, live and for the same run opened from its file: the calibration on the
    // candidates the epsilon audit measured (their decisions are stored as gating events), with their count.
    void runControlShowsTheAuditedCalibration() {
        MainWindow w({kResources, false});
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.isReady(), 60000);
        QVERIFY(w.runControl()->setProblemDir(kResources + QStringLiteral("/problems/softmax")));
        QVERIFY(w.runControl()->setDeviceId(kDevice));
        w.runControl()->setSurrogate(QStringLiteral("local"));
        GatingConfig g;
        g.kind = GatingKind::Selective;
        g.epsilon = 0.3;  // audits enough for a figure in a short search
        w.runControl()->setGating(g);
        w.runControl()->setBudget(20);
        QSignalSpy ended(&w, &MainWindow::searchEnded);
        const QString path = runPath(QStringLiteral("audited.sqlite"));
        QVERIFY(w.startSearch(path));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 240000);
        QCOMPARE(ended.front().front().toBool(), true);

        int64_t audited = 0;
        {
            RunStore store = RunStore::open(path.toStdString());
            const int64_t runId = store.runs().back().id;
            std::map<int64_t, std::string> decision;
            for (const RunEvent& e : store.events(runId))
                if (e.kind == "gating")
                    decision[e.payload.value("candidate", int64_t{0})] = e.payload.value("decision", "");
            const auto forecasts = store.forecastsOfRun(runId);
            for (const auto& [id, ms] : store.measurementsOfRun(runId))
                audited += decision[id] == "audit" && ms.back().measurement.status == Status::Ok && forecasts.count(id);
        }
        QVERIFY(audited > 0);
        QLabel* line = w.runControl()->auditedCalibrationLabel();
        const QString live = line->text();
        QVERIFY2(
            live.startsWith(QStringLiteral("On %1 audited (a random share of the trusted): accuracy ").arg(audited)),
            qPrintable(live));
        QVERIFY2(w.metricsLabel()->text().contains(QStringLiteral("\n%1 audited forecast").arg(audited)),
                 qPrintable(w.metricsLabel()->text()));

        // Opened from its file, the run shows the same line.
        line->clear();
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
        QCOMPARE(line->text(), live);
    }

    void closingTheBridgeStopsTheSearchAndKeepsItsData() {
        const QString path = runPath(QStringLiteral("closed.sqlite"));
        QElapsedTimer clock;
        {
            EngineBridge bridge(kResources);
            bridge.start(saxpyConfig(100000), path, false);
            QTRY_COMPARE_WITH_TIMEOUT(bridge.state(), EngineBridge::State::Running, 240000);
            QTest::qWait(200);
            clock.start();
        }
        QVERIFY2(clock.elapsed() < EngineBridge::kShutdownTimeoutMs, qPrintable(QString::number(clock.elapsed())));
        const std::vector<std::string> kinds = eventKinds(path);
        QVERIFY(contains(kinds, "stop"));
        QVERIFY(contains(kinds, "finished"));
        RunStore store = RunStore::open(path.toStdString());
        QVERIFY(!store.candidates(store.runs().back().id).empty());
    }

    // The workbench's Accept/Reject Suspect Result on a run that is only opened: the verdict goes into the run
    // file as a review event; a candidate whose result is not suspect is refused with the reason.
    void reviewOfAnOpenedRunIsWrittenToItsFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("reviewed.sqlite"));
        int64_t run_id = 0, suspect = 0, ok = 0;
        {
            RunStore store = RunStore::create(path.toStdString());
            RunInfo run;
            run.name = "reviewed";
            run_id = store.addRun(run);
            for (const Status status : {Status::Suspect, Status::Ok}) {
                Candidate c;
                c.label = to_string(status);
                c.source = std::string("// ") + to_string(status) + "\n";
                const int64_t id = store.addCandidate(run_id, c);
                Measurement m;
                m.status = status;
                m.speedup = status == Status::Suspect ? 40.0 : 1.5;
                m.reason = status == Status::Suspect ? "below the roofline floor" : "";
                store.addMeasurement(id, m);
                (status == Status::Suspect ? suspect : ok) = id;
            }
        }
        EngineBridge bridge(kResources);
        QCOMPARE(bridge.review(path, suspect, true), QString());
        const QString refused = bridge.review(path, ok, true);
        QVERIFY2(refused.contains(QStringLiteral("not suspect")), qPrintable(refused));
        RunStore store = RunStore::open(path.toStdString());
        int reviews = 0;
        for (const RunEvent& e : store.events(run_id)) {
            if (e.kind != "review")
                continue;
            ++reviews;
            QCOMPARE(e.payload.value("candidate", int64_t{0}), suspect);
            QCOMPARE(e.payload.value("verdict", std::string()), std::string("accepted"));
        }
        QCOMPARE(reviews, 1);
    }
};

QTEST_MAIN(TestEngineBridge)
#include "tst_engine_bridge.moc"
