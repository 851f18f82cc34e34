#include "app/gui/command_line.h"
#include "app/gui/main_window.h"
#include "app/gui/run_control_panel.h"

#include "core/run_store.h"
#include "widgets/forecast_inspector.h"
#include "widgets/population_model.h"
#include "widgets/reliability_plot.h"

#include "engine/replay_device.h"
#include "widgets/device_list_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/problem_details_view.h"
#include "widgets/problem_list_model.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDockWidget>
#include <QLineEdit>
#include <QSlider>
#include <QSpinBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <filesystem>
#include <fstream>
#include <memory>

using namespace kerncast;

namespace {

const QString kFixture = QStringLiteral(KERNCAST_TEST_DATA "/problems/saxpy_fixture");

void copyFolder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    std::filesystem::copy(from.toStdString(), to.toStdString(), std::filesystem::copy_options::recursive);
}

void writeFile(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

QString readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

QStringList statusBarTexts(const MainWindow& w) {
    QStringList texts;
    for (const auto* label : w.statusBar()->findChildren<QLabel*>())
        texts << label->text();
    return texts;
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

    // A resources folder the test owns: problems/{saxpy, broken}, recordings/test-gpu.
    std::unique_ptr<QTemporaryDir> m_resources;
    QString problemsDir() const { return m_resources->filePath(QStringLiteral("problems")); }

    std::unique_ptr<MainWindow> openWindow() {
        auto w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), true});
        // The window's models change from background loads: check them through every reset and insertion.
        new QAbstractItemModelTester(w->problemModel(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     w.get());
        new QAbstractItemModelTester(w->deviceModel(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     w.get());
        w->show();
        return w;
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        // Numbers in the details are grouped by the locale; pin it so the expected text is stable.
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        QCoreApplication::setOrganizationName(QStringLiteral("KerncastTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
        QVERIFY2(QFileInfo::exists(kFixture + QStringLiteral("/problem.json")), qPrintable(kFixture));
    }

    void init() {
        // Every test starts from a user with no saved layout or selection.
        QSettings().clear();
        m_resources = std::make_unique<QTemporaryDir>();
        QVERIFY(m_resources->isValid());
        copyFolder(kFixture, problemsDir() + QStringLiteral("/saxpy"));
        // "broken": a copy of saxpy whose seed has a launch line naming an argument the problem does not have.
        copyFolder(kFixture, problemsDir() + QStringLiteral("/broken"));
        QFile::remove(problemsDir() + QStringLiteral("/broken/seeds/grid_stride.cu"));
        QString json = readFile(problemsDir() + QStringLiteral("/broken/problem.json"));
        json.replace(QStringLiteral("\"name\": \"saxpy\""), QStringLiteral("\"name\": \"broken\""));
        writeFile(problemsDir() + QStringLiteral("/broken/problem.json"), json.toUtf8());
        writeFile(problemsDir() + QStringLiteral("/broken/seeds/vec4.cu"),
                  "// A seed with a mistake in its launch plan.\n"
                  "\n"
                  "// @kerncast launch bad grid(ceil_div(N, 256)) block(256) args(x, y, a, N, nonexistent)\n"
                  "extern \"C\" __global__ void bad(const float* x, float* y, float a, int n, int z) {}\n");

        RecordingHeader header;
        header.problem = "saxpy";
        header.device.name = "Test GPU";
        header.device.cc_major = 9;
        header.device.sm_count = 132;
        const QString recording = m_resources->filePath(QStringLiteral("recordings/test-gpu/saxpy.jsonl"));
        writeFile(recording, QByteArray::fromStdString(recording_header_json(header).dump() + "\n"));
    }

    void cleanup() { m_resources.reset(); }

    void loadsTheLibraryAndShowsTheFirstProblem() {
        auto w = openWindow();
        QSignalSpy ready(w.get(), &MainWindow::ready);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 30000);
        QCOMPARE(w->problemModel()->rowCount(), 2);
        // Sorted by name: "broken" before "saxpy"; the first row is selected so the window is never empty.
        QCOMPARE(w->selectedProblemDir(), problemsDir() + QStringLiteral("/broken"));
        QVERIFY(!w->editor()->source().isEmpty());
    }

    void offersEveryProgramOfTheProblem() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->selectProblem(QStringLiteral("saxpy")));
        const QStringList labels = w->programLabels();
        QCOMPARE(labels.size(), 4);
        QVERIFY2(labels[0].startsWith(QStringLiteral("reference.cu")), qPrintable(labels.join(", ")));
        QVERIFY(labels[1].startsWith(QStringLiteral("seeds/grid_stride.cu")));
        QVERIFY(labels[2].startsWith(QStringLiteral("seeds/vec4.cu")));
        QVERIFY(labels[3].startsWith(QStringLiteral("family.cu")));
        QVERIFY2(labels[3].contains(QStringLiteral("17")), qPrintable(labels[3]));  // its configuration count
    }

    void selectingAProgramShowsItsSource_data() {
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("file");
        QTest::newRow("reference") << 0 << "reference.cu";
        QTest::newRow("seed") << 2 << "seeds/vec4.cu";
        QTest::newRow("family") << 3 << "family.cu";
    }
    void selectingAProgramShowsItsSource() {
        QFETCH(int, index);
        QFETCH(QString, file);
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->selectProblem(QStringLiteral("saxpy")));
        QVERIFY(w->selectProgram(index));
        const QString path = problemsDir() + QStringLiteral("/saxpy/") + file;
        QCOMPARE(w->editor()->source(), readFile(path));
        QCOMPARE(w->editor()->fileName(), path);
        QVERIFY(w->editor()->isReadOnly());
        QVERIFY(w->editor()->errorLines().isEmpty());
    }

    void detailsDescribeTheProblem() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->selectProblem(QStringLiteral("saxpy")));
        const QString text = w->detailsView()->plainText();
        for (const char* expected : {"y = a * x + y over N floats",  // description
                                     "benchmark", "67,108,864", "4,099",  // the sizes of each case
                                     "inout", "f32",                       // buffers with dtype and role
                                     "134.22 MFLOP", "805.31 MB",          // 2*N and 12*N at the benchmark case
                                     "17 configurations"})                 // the family's search space
            QVERIFY2(text.contains(QLatin1String(expected)), qPrintable(QStringLiteral("'%1' not in:\n%2")
                                                                            .arg(QLatin1String(expected), text)));
    }

    void validationErrorsPointAtTheirLine() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->selectProblem(QStringLiteral("broken")));
        const QString seed = problemsDir() + QStringLiteral("/broken/seeds/vec4.cu");
        // The details list the error with its file and line ...
        const QString text = w->detailsView()->plainText();
        QVERIFY2(text.contains(seed + QStringLiteral(":3")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("nonexistent")));
        // ... and the seed, once shown, carries a marker on that line.
        const QStringList labels = w->programLabels();
        int seedIndex = -1;
        for (int i = 0; i < labels.size(); ++i)
            if (labels[i].startsWith(QStringLiteral("seeds/vec4.cu")))
                seedIndex = i;
        QVERIFY(seedIndex > 0);
        QVERIFY(w->selectProgram(seedIndex));
        QCOMPARE(w->editor()->errorLines(), QList<int>{3});
        QCOMPARE(w->editor()->currentLine(), 3);
        QVERIFY(w->selectProgram(0));
        QVERIFY(w->editor()->errorLines().isEmpty());
    }

    void statusBarShowsTheActiveDeviceAndSurrogate() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        auto* devices = w->deviceModel();
        QVERIFY(devices->rowOfId(QStringLiteral("replay:test-gpu")) >= 0);
        bool cuda = false;
        for (int r = 0; r < devices->rowCount(); ++r)
            cuda = cuda || (devices->index(r, 0).data(DeviceListModel::KindRole) == QStringLiteral("cuda") &&
                            devices->index(r, 0).data(DeviceListModel::UsableRole).toBool());
        // The replay device is the default unless a real GPU is present.
        QCOMPARE(w->activeDeviceId().startsWith(QStringLiteral("cuda:")), cuda);
        if (!cuda)
            QCOMPARE(w->activeDeviceId(), QStringLiteral("replay:test-gpu"));
        const QStringList texts = statusBarTexts(*w);
        QVERIFY2(texts.contains(QStringLiteral("Device: %1").arg(w->activeDeviceId())), qPrintable(texts.join('|')));
        // The embedded default surrogate, and no run yet.
        QVERIFY2(texts.contains(QStringLiteral("Surrogate: local")), qPrintable(texts.join('|')));
        QVERIFY2(texts.contains(QStringLiteral("Run: no run")), qPrintable(texts.join('|')));
    }

    void staleLoadsAreDropped() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy loaded(w.get(), &MainWindow::problemsLoaded);
        w->reloadProblems();
        QVERIFY(QDir(problemsDir() + QStringLiteral("/broken")).removeRecursively());
        w->reloadProblems();
        QThreadPool::globalInstance()->waitForDone();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        // Both jobs have finished and been delivered; only the newer one may be shown.
        QCoreApplication::processEvents();
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.front().front().toInt(), 1);
        QCOMPARE(w->problemModel()->rowCount(), 1);
        QCOMPARE(w->selectedProblemDir(), problemsDir() + QStringLiteral("/saxpy"));
    }

    void openingAFolderOutsideTheLibraryAddsAndSelectsIt() {
        QTemporaryDir elsewhere;
        const QString dir = elsewhere.filePath(QStringLiteral("my_saxpy"));
        copyFolder(kFixture, dir);
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        w->openProblemFolder(dir);
        QTRY_COMPARE_WITH_TIMEOUT(w->selectedProblemDir(), dir, 30000);
        QCOMPARE(w->problemModel()->rowCount(), 3);
        QCOMPARE(w->editor()->source(), readFile(dir + QStringLiteral("/reference.cu")));
    }

    void selectionAndDeviceSurviveARestart() {
        {
            auto w = openWindow();
            QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
            QVERIFY(w->selectProblem(QStringLiteral("saxpy")));
            w->close();
        }
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QCOMPARE(w->selectedProblemDir(), problemsDir() + QStringLiteral("/saxpy"));
        QVERIFY(!w->activeDeviceId().isEmpty());
    }

    void runControlHasTheDebuggerShortcuts_data() {
        QTest::addColumn<QString>("action");
        QTest::addColumn<QKeySequence>("shortcut");
        QTest::newRow("start") << "startAction" << QKeySequence(Qt::Key_F5);
        QTest::newRow("pause") << "pauseAction" << QKeySequence(Qt::Key_F6);
        QTest::newRow("step") << "stepAction" << QKeySequence(Qt::Key_F10);
        QTest::newRow("stop") << "stopAction" << QKeySequence(Qt::SHIFT | Qt::Key_F5);
    }
    void runControlHasTheDebuggerShortcuts() {
        QFETCH(QString, action);
        QFETCH(QKeySequence, shortcut);
        auto w = openWindow();
        auto* a = w->runControl()->findChild<QAction*>(action);
        QVERIFY(a);
        QCOMPARE(a->shortcut(), shortcut);
        // Only Start is possible while no search runs.
        QCOMPARE(a->isEnabled(), action == QLatin1String("startAction"));
    }

    void settingsKeepTheRunSetupButNeverTheKey() {
        const QByteArray key = "sk-test-0123456789abcdefghijklmnop";
        qputenv("KERNCAST_API_KEY", key);
        {
            auto w = openWindow();
            QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
            w->runControl()->findChild<QLineEdit*>(QStringLiteral("runEndpoint"))->setText("http://localhost:8000/v1");
            w->runControl()->findChild<QLineEdit*>(QStringLiteral("runModel"))->setText("qwen-coder");
            w->runControl()->tauSlider()->setValue(73);
            w->runControl()->topKSpin()->setValue(3);
            w->close();
        }
        qunsetenv("KERNCAST_API_KEY");
        QSettings settings;
        QCOMPARE(settings.value("run/endpoint").toString(), QStringLiteral("http://localhost:8000/v1"));
        QCOMPARE(settings.value("run/model").toString(), QStringLiteral("qwen-coder"));
        QCOMPARE(settings.value("run/tau").toDouble(), 0.73);
        for (const QString& k : settings.allKeys()) {
            QVERIFY2(!k.contains(QStringLiteral("key"), Qt::CaseInsensitive), qPrintable(k));
            QVERIFY2(!settings.value(k).toString().contains(QString::fromLatin1(key)), qPrintable(k));
        }
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QCOMPARE(w->runControl()->endpoint(), QStringLiteral("http://localhost:8000/v1"));
        QCOMPARE(w->runControl()->model(), QStringLiteral("qwen-coder"));
        QCOMPARE(w->runControl()->gating().tau, 0.73);
        QCOMPARE(w->runControl()->gating().top_k, 3);
        QVERIFY(statusBarTexts(*w).contains(QStringLiteral("Surrogate: local")));
    }

    void layoutIsRestored() {
        {
            auto w = openWindow();
            QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
            auto* plots = w->findChild<QDockWidget*>(QStringLiteral("plotsDock"));
            QVERIFY(plots && plots->isVisible());
            plots->hide();
            w->close();
        }
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(!w->findChild<QDockWidget*>(QStringLiteral("plotsDock"))->isVisible());
        QVERIFY(w->findChild<QDockWidget*>(QStringLiteral("populationDock"))->isVisible());
    }

    void evaluatingAPairSetOpensItsRun() {
        QTemporaryDir work;
        const QString pairs = work.filePath(QStringLiteral("pairs.jsonl"));
        QVERIFY(QFile::copy(QStringLiteral(KERNCAST_TEST_DATA "/forecasters/pairs.jsonl"), pairs));
        auto w = openWindow();
        new QAbstractItemModelTester(w->populationModel(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     w.get());
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy finished(w.get(), &MainWindow::evaluationFinished);
        QSignalSpy loaded(w.get(), &MainWindow::runLoaded);
        EvaluationOptions options;
        options.pairs = pairs.toStdString();
        options.surrogate = "local";
        w->evaluatePairs(options);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        const QString store = finished.front().front().toString();
        QCOMPARE(w->shownRunPath(), store);
        RunStore rs = RunStore::open(store.toStdString());
        const auto candidates = rs.candidates(rs.runs().back().id);
        QVERIFY(!candidates.empty());
        QCOMPARE(w->populationModel()->rowCount(), static_cast<int>(candidates.size()));
        // Every pair is measured (its recorded speedup) and forecast: the metrics cover all of them.
        QCOMPARE(w->reliabilityPlot()->forecastCount(), static_cast<int64_t>(candidates.size()));
        QVERIFY2(w->metricsLabel()->text().contains(QStringLiteral("accuracy")), qPrintable(w->metricsLabel()->text()));
        // A forecast is on show in the inspector and its source in the editor.
        QVERIFY(w->inspector()->candidateId() > 0);
        QVERIFY(w->editor()->source().contains(QStringLiteral("__global__")));
        // An evaluation is not a search: nothing to resume.
        QVERIFY(!w->findChild<QAction*>(QStringLiteral("resumeRunAction"))->isEnabled());
    }

    void aBrokenPairSetIsAnErrorNotACrash() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy failed(w.get(), &MainWindow::evaluationFailed);
        QSignalSpy shown(w.get(), &MainWindow::errorShown);
        EvaluationOptions options;
        options.pairs = "/nonexistent/pairs.jsonl";
        w->evaluatePairs(options);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QCOMPARE(shown.count(), 1);
        QVERIFY2(failed.front().front().toString().contains(QStringLiteral("/nonexistent/pairs.jsonl")),
                 qPrintable(failed.front().front().toString()));
    }

    void commandLine_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("screenshot");
        QTest::addColumn<double>("quitAfter");
        QTest::addColumn<bool>("fails");
        QTest::newRow("defaults") << QStringList{} << QString() << -1.0 << false;
        QTest::newRow("screenshot") << QStringList{"--screenshot", "/tmp/k.png"} << "/tmp/k.png" << -1.0 << false;
        QTest::newRow("quit after") << QStringList{"--quit-after", "2.5"} << QString() << 2.5 << false;
        QTest::newRow("quit after needs a number") << QStringList{"--quit-after", "soon"} << QString() << -1.0 << true;
        QTest::newRow("unknown option") << QStringList{"--fast"} << QString() << -1.0 << true;
        QTest::newRow("stray argument") << QStringList{"saxpy"} << QString() << -1.0 << true;
        QTest::newRow("missing resources") << QStringList{"--resources", "/nonexistent/kerncast"} << QString() << -1.0
                                           << true;
        QTest::newRow("demo") << QStringList{"--demo", "--quit-after", "60"} << QString() << 60.0 << false;
        QTest::newRow("missing run file") << QStringList{"--run", "/nonexistent/run.sqlite"} << QString() << -1.0
                                          << true;
        QTest::newRow("demo and run") << QStringList{"--demo", "--run", KERNCAST_TEST_DATA "/forecasters/pairs.jsonl"}
                                      << QString() << -1.0 << true;
    }
    void commandLine() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, screenshot);
        QFETCH(double, quitAfter);
        QFETCH(bool, fails);
        const auto cl = parse_command_line(QStringList{QStringLiteral("kerncast"), QStringLiteral("--resources"),
                                                       m_resources->path()} +
                                           arguments);
        QCOMPARE(!cl.error.isEmpty(), fails);
        if (fails)
            return;
        QCOMPARE(cl.resourcesDir, QDir::cleanPath(m_resources->path()));
        QCOMPARE(cl.screenshotFile, screenshot);
        QCOMPARE(cl.quitAfterSeconds, quitAfter);
        QCOMPARE(cl.demo, arguments.contains(QStringLiteral("--demo")));
    }

    void runFileAsArgument() {
        // `kerncast RUN_FILE`, as the desktop entry's Exec=kerncast %f starts it, opens the run like --run.
        const QString file = QStringLiteral(KERNCAST_TEST_DATA "/forecasters/pairs.jsonl");
        const QStringList base{QStringLiteral("kerncast"), QStringLiteral("--resources"), m_resources->path()};
        const auto cl = parse_command_line(base + QStringList{file});
        QVERIFY2(cl.error.isEmpty(), qPrintable(cl.error));
        QCOMPARE(cl.runFile, QFileInfo(file).absoluteFilePath());
        QVERIFY(!parse_command_line(base + QStringList{file, QStringLiteral("--run"), file}).error.isEmpty());
        QVERIFY(!parse_command_line(base + QStringList{file, file}).error.isEmpty());
        QVERIFY(parse_command_line(base + QStringList{QStringLiteral("/nonexistent/run.sqlite")})
                    .error.contains(QStringLiteral("/nonexistent/run.sqlite")));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
