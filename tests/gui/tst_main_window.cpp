#include "app/gui/command_line.h"
#include "app/gui/main_menus.h"
#include "app/gui/main_window.h"
#include "app/gui/run_control_panel.h"
#include "app/gui/translations.h"
#include "app/gui/window_layout.h"

#include "core/run_store.h"
#include "widgets/forecast_inspector.h"
#include "widgets/lineage_graph.h"
#include "widgets/measurement_panel.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"
#include "widgets/reliability_plot.h"
#include "widgets/search_progress_plot.h"

#include "engine/replay/replay_device.h"
#include "widgets/device_list_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/problem_details_view.h"
#include "widgets/problem_list_model.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QRegion>
#include <QScopeGuard>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <QToolButton>
#include <QWheelEvent>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
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

    // English again after a test that switched the language.
    static void restore_english() {
        install_translations(QLocale(QLocale::English, QLocale::UnitedStates));
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    }
    // The window at 1280×720 in `language` (German from its catalogue; English is the source text), shown and ready.
    void openSmallWindow(const QLocale& language, std::unique_ptr<MainWindow>& w) {
        if (language.language() != QLocale::English)
            QVERIFY(install_translations(language));
        w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), true});
        w->resize(1280, 720);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
    }

    std::unique_ptr<MainWindow> openWindow() {
        auto w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), true});
        // The window's models change from background loads: check them through every reset and insertion.
        new QAbstractItemModelTester(w->problemModel(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     w.get());
        new QAbstractItemModelTester(w->deviceModel(), QAbstractItemModelTester::FailureReportingMode::QtTest, w.get());
        w->show();
        return w;
    }

    static void languages() {
        QTest::addColumn<QLocale>("language");
        QTest::newRow("English") << QLocale(QLocale::English, QLocale::UnitedStates);
        QTest::newRow("German") << QLocale(QLocale::German, QLocale::Germany);
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

    // Problem folders with hostile files (nesting past any stack in problem.json, an endless launch expression) are
    // listed with their errors; the window starts.
    void hostileProblemFoldersAreListedWithTheirErrors() {
        copyFolder(kFixture, problemsDir() + QStringLiteral("/deep_json"));
        writeFile(problemsDir() + QStringLiteral("/deep_json/problem.json"),
                  "{\"name\": \"deep\", \"sizes\": " + QByteArray(300000, '[') + QByteArray(300000, ']') + "}");
        copyFolder(kFixture, problemsDir() + QStringLiteral("/deep_plan"));
        QString json = readFile(problemsDir() + QStringLiteral("/deep_plan/problem.json"));
        json.replace(QStringLiteral("\"name\": \"saxpy\""), QStringLiteral("\"name\": \"deep_plan\""));
        writeFile(problemsDir() + QStringLiteral("/deep_plan/problem.json"), json.toUtf8());
        writeFile(problemsDir() + QStringLiteral("/deep_plan/reference.cu"),
                  "// @kerncast launch saxpy grid(" + QByteArray(200, '(') + "N" + QByteArray(200, ')') +
                      ") block(256) args(x, y, a, N)\nextern \"C\" __global__ void saxpy(const float* x, float* y, "
                      "float a, int n) {}\n");
        auto w = openWindow();
        QSignalSpy ready(w.get(), &MainWindow::ready);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 30000);
        QCOMPARE(w->problemModel()->rowCount(), 4);
        std::map<QString, QString> errors;
        for (int r = 0; r < w->problemModel()->rowCount(); ++r) {
            const QModelIndex status = w->problemModel()->index(r, ProblemListModel::StatusColumn);
            errors[QFileInfo(status.data(ProblemListModel::DirRole).toString()).fileName()] =
                status.data(Qt::ToolTipRole).toString();
        }
        QVERIFY2(errors["deep_json"].contains(QStringLiteral("problem.json:1: invalid JSON at column")) &&
                     errors["deep_json"].contains(QStringLiteral("nest deeper than 64 levels")),
                 qPrintable(errors["deep_json"]));
        QVERIFY2(errors["deep_plan"].contains(QStringLiteral("reference.cu:1: expected at most 64 levels")),
                 qPrintable(errors["deep_plan"]));
    }

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
        for (const char* expected : {"y = a * x + y over N floats",       // description
                                     "benchmark", "67,108,864", "4,099",  // the sizes of each case
                                     "inout", "f32",                      // buffers with dtype and role
                                     "134.22 MFLOP", "805.31 MB",         // 2*N and 12*N at the benchmark case
                                     "17 configurations"})                // the family's search space
            QVERIFY2(text.contains(QLatin1String(expected)),
                     qPrintable(QStringLiteral("'%1' not in:\n%2").arg(QLatin1String(expected), text)));
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

    // A problem folder opened by hand that has errors says so: every error in a dialog (with the first one's file to
    // open), the Details dock in front; a valid folder opens without one.
    void openingABadFolderShowsItsErrors() {
        QTemporaryDir elsewhere;
        const QString dir = elsewhere.filePath(QStringLiteral("bad_saxpy"));
        copyFolder(problemsDir() + QStringLiteral("/broken"), dir);
        // Beside vec4.cu's launch line naming an unknown argument, a seed whose launch line does not parse.
        writeFile(dir + QStringLiteral("/seeds/also_bad.cu"),
                  "// @kerncast launch k grid(ceil_div(N, 256) block(256) args(x, y, a, N)\n"
                  "extern \"C\" __global__ void k(const float* x, float* y, float a, int n) {}\n");
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        w->openProblemFolder(dir);
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 30000);
        const QString message = errors.first().at(0).toString();
        QVERIFY2(message.contains(QStringLiteral("also_bad.cu")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("vec4.cu")), qPrintable(message));
        auto* details = w->findChild<QDockWidget*>(QStringLiteral("detailsDock"));
        QVERIFY(details && details->isVisible() && !details->visibleRegion().isEmpty());

        QTemporaryDir good;
        copyFolder(kFixture, good.filePath(QStringLiteral("good_saxpy")));
        w->openProblemFolder(good.filePath(QStringLiteral("good_saxpy")));
        QTRY_COMPARE_WITH_TIMEOUT(w->selectedProblemDir(), good.filePath(QStringLiteral("good_saxpy")), 30000);
        QCOMPARE(errors.count(), 1);
    }

    // File > Open T1 Problem...: the T1 file becomes a problem folder that the library lists and selects; a file
    // that cannot be imported is an error dialog naming it, and nothing is written.
    void openingAT1ProblemImportsAndSelectsIt() {
        QTemporaryDir elsewhere;
        const QString dir = elsewhere.filePath(QStringLiteral("blur"));
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->findChild<QAction*>(QStringLiteral("openT1ProblemAction")));
        QCOMPARE(w->openT1Problem(QStringLiteral(KERNCAST_TEST_DATA "/t1/blur/blur.json"), dir), dir);
        QTRY_COMPARE_WITH_TIMEOUT(w->selectedProblemDir(), dir, 30000);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/family.cu")));
        QVERIFY(w->editor()->source().contains(QStringLiteral("#define use_ldg 0")));  // the reference

        QSignalSpy shown(w.get(), &MainWindow::errorShown);
        const QString bad = elsewhere.filePath(QStringLiteral("bad.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"ConfigurationSpace\": {}}");
        f.close();
        QCOMPARE(w->openT1Problem(bad, elsewhere.filePath(QStringLiteral("never"))), QString());
        QCOMPARE(shown.count(), 1);
        QVERIFY2(shown.front().front().toString().contains(QStringLiteral("KernelSpecification")),
                 qPrintable(shown.front().front().toString()));
        QVERIFY(!QFileInfo::exists(elsewhere.filePath(QStringLiteral("never"))));
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

    // Every shortcut belongs to one action: Qt triggers neither of two actions on one key ("Ambiguous shortcut
    // overload"). F5 is Start Search, as the README and the empty plot say, and pressing it starts one.
    void everyShortcutHasOneAction() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        std::map<QString, QString> owner;
        for (const QAction* a : w->findChildren<QAction*>()) {
            // Shortcuts of one widget (an editor's Submit) do not clash with the window's.
            if (a->shortcutContext() != Qt::WindowShortcut && a->shortcutContext() != Qt::ApplicationShortcut)
                continue;
            for (const QKeySequence& key : a->shortcuts()) {
                const QString name = key.toString(QKeySequence::PortableText);
                const auto [at, added] = owner.emplace(name, a->text());
                QVERIFY2(added, qPrintable(QStringLiteral("%1: %2 and %3").arg(name, at->second, a->text())));
            }
        }
        QCOMPARE(owner[QStringLiteral("F5")], w->runControl()->startAction()->text());
        QVERIFY(w->findChild<QAction*>(QStringLiteral("reloadProblemsAction")));
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        QSignalSpy started(w->runControl()->startAction(), &QAction::triggered);
        QTest::keyClick(w.get(), Qt::Key_F5);
        QCOMPARE(started.count(), 1);
    }

    // A search on a problem the replay device has no recording of (of this definition) stops before its first
    // measurement, with the reason in an error dialog.
    void aSearchOnAnUnrecordedProblemIsAnError() {
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QVERIFY(w->runControl()->setProblemDir(problemsDir() + QStringLiteral("/saxpy")));
        QVERIFY(w->runControl()->setDeviceId(QStringLiteral("replay:test-gpu")));
        w->runControl()->setSurrogate(QStringLiteral("none"));
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        QSignalSpy ended(w.get(), &MainWindow::searchEnded);
        QTemporaryDir dir;
        const QString run = dir.filePath(QStringLiteral("unrecorded.sqlite"));
        QVERIFY(w->startSearch(run));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        QCOMPARE(ended.first().at(0).toBool(), false);
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.first().at(0).toString().contains(QStringLiteral("replay device could measure nothing")),
                 qPrintable(errors.first().at(0).toString()));
        QCOMPARE(w->session()->lastProgress().measurements, int64_t{0});
    }

    // File › Open Run offers the names the desktop entry registers for run files.
    void openRunAcceptsEveryRunFileName() {
        const QString filter = runFileNameFilter();
        for (const char* pattern : {"*.kerncast", "*.kcrun", "*.sqlite"})
            QVERIFY2(filter.section(QStringLiteral(";;"), 0, 0).contains(QLatin1String(pattern)), pattern);
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
        // Why these numbers are not those of the search the pairs came from.
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("scored as a search starts")),
                 qPrintable(w->statusBar()->currentMessage()));
        // A forecast is on show in the inspector and its source in the editor.
        QVERIFY(w->inspector()->candidateId() > 0);
        QVERIFY(w->editor()->source().contains(QStringLiteral("__global__")));
        // An evaluation is not a search: nothing to resume.
        QVERIFY(!w->findChild<QAction*>(QStringLiteral("resumeRunAction"))->isEnabled());

        // The same forecaster on the same pairs scores the same in `kerncast-cli evaluate` as here.
        QProcess cli;
        cli.start(QStringLiteral(KERNCAST_BINARY_DIR "/app/kerncast-cli"),
                  {QStringLiteral("--resources"), m_resources->path(), QStringLiteral("evaluate"),
                   QStringLiteral("--pairs"), pairs, QStringLiteral("--surrogate"), QStringLiteral("local"),
                   QStringLiteral("--store"), work.filePath(QStringLiteral("cli.sqlite")), QStringLiteral("--json")});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        const auto printed = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
        const ForecastMetrics& shown = w->shownMetrics();
        const auto& metrics = printed.at("metrics");
        QCOMPARE(shown.n, printed.at("n").get<int64_t>());
        for (const auto& [name, value] : {std::pair<const char*, double>{"accuracy", shown.accuracy},
                                          {"brier", shown.brier},
                                          {"brier_skill", shown.brier_skill},
                                          {"crps_skill", shown.crps_skill}})
            QVERIFY2(metrics.at(name).is_number() ? std::abs(value - metrics.at(name).get<double>()) < 1e-9
                                                  : !std::isfinite(value),
                     qPrintable(QStringLiteral("%1: %2 here, %3 printed")
                                    .arg(QLatin1String(name))
                                    .arg(value)
                                    .arg(QString::fromStdString(metrics.at(name).dump()))));
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

    // An opened run shows how it ran, not the run control's defaults: an LLM run's surrogate, endpoint and model, its
    // gating as last changed, its budgets, and its counters (tokens, measurements against the budget of the last
    // session, elapsed time).
    void anOpenedRunShowsHowItRan() {
        const QString path = m_resources->filePath(QStringLiteral("llm-run.sqlite"));
        {
            RunStore store = RunStore::create(path.toStdString());
            SearchConfig config;
            config.problem_dir = (problemsDir() + QStringLiteral("/saxpy")).toStdString();
            config.device = "replay:test-gpu";
            config.surrogate = "llm";
            config.mutators = {"llm-rewrite"};
            config.gating.kind = GatingKind::TopK;
            config.gating.top_k = 3;
            config.budgets.measurements = 40;
            config.budgets.tokens = 500000;
            config.seed = 11;
            config.llm = {{"endpoint", "http://127.0.0.1:9/v1"}, {"model", "qwen-test"}};
            RunInfo run;
            run.name = "llm run";
            run.problem = "saxpy";
            run.device = config.device;
            run.surrogate = "llm";
            run.gating = "top-k";
            nlohmann::json j;
            to_json(j, config);
            run.config = j;
            const int64_t runId = store.addRun(run);
            Candidate reference;
            reference.mutator = Mutator::Reference;
            reference.label = "reference";
            reference.source = "extern \"C\" __global__ void k() {}";
            store.addCandidate(runId, reference);
            for (int i = 0; i < 3; ++i) {
                Candidate c;
                c.mutator = Mutator::LlmRewrite;
                c.label = "rewrite " + std::to_string(i);
                c.source = reference.source + "\n// " + std::to_string(i);
                c.parent_id = reference.id;
                c.generation = 1;
                store.addCandidate(runId, c);
                Forecast f = Forecast::fromRaw({0, 0, 0, 0.2, 0.5, 0.3, 0, 0});
                f.surrogate_id = "llm:qwen-test";
                f.tokens_in = 100000;
                f.tokens_out = 40000 + i;
                f.cost_usd = 0.5;
                store.addForecast(c.id, f);
                LlmCall call;
                call.kind = "forecast";
                call.candidate_id = c.id;
                call.model = "qwen-test";
                call.prompt = "forecast rewrite " + std::to_string(i);
                call.reply = "reply for rewrite " + std::to_string(i);
                call.outcome = "ok";
                store.addLlmCall(runId, call);
            }
            for (int i = 0; i < 60; ++i) {
                Measurement m;
                m.status = Status::Ok;
                m.speedup = 1.0 + i / 100.0;
                m.device_kind = "replay";
                store.addMeasurement(reference.id, m);
            }
            GatingConfig changed;
            changed.kind = GatingKind::Selective;
            changed.tau = 0.7;
            store.addEvent(runId, "checkpoint", {{"rng", "1"}, {"iteration", 3}, {"elapsed_s", 125.0}});
            store.addEvent(runId, "gating_changed", {{"gating", changed}});
            store.addEvent(runId, "resumed", {{"measurements", 20}, {"budget_measurements", 60}});
            store.addEvent(runId, "finished", {{"reason", "measurement budget spent (60)"}});
        }
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy loaded(w.get(), &MainWindow::runLoaded);
        w->openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        RunControlPanel* rc = w->runControl();
        QCOMPARE(rc->surrogate(), QStringLiteral("llm"));
        QCOMPARE(rc->endpoint(), QStringLiteral("http://127.0.0.1:9/v1"));
        QCOMPARE(rc->model(), QStringLiteral("qwen-test"));
        QCOMPARE(rc->problemDir(), problemsDir() + QStringLiteral("/saxpy"));
        const SearchConfig shown = rc->config();
        QCOMPARE(shown.mutators, std::vector<std::string>{"llm-rewrite"});
        QCOMPARE(shown.gating.kind, GatingKind::Selective);  // as changed during the run
        QCOMPARE(shown.gating.tau, 0.7);
        QCOMPARE(shown.budgets.tokens, int64_t{500000});
        QCOMPARE(shown.seed, uint64_t{11});
        QCOMPARE(rc->measurementsLabel()->text(), QStringLiteral("Measurements: 60 of 60"));
        QCOMPARE(rc->progressBar()->maximum(), 60);
        QCOMPARE(rc->tokensLabel()->text(), QStringLiteral("Tokens: 420,003 ($1.50)"));
        QCOMPARE(rc->elapsedLabel()->text(), QStringLiteral("Elapsed: 2:05"));

        // A candidate's model calls arrive from a background read of the run file, the newest selection's only.
        auto* calls = w->findChild<QPlainTextEdit*>(QStringLiteral("llmCallsText"));
        QVERIFY(calls);
        QVERIFY(w->selectCandidate(2));
        QVERIFY(w->selectCandidate(3));
        QTRY_VERIFY_WITH_TIMEOUT(calls->toPlainText().contains(QStringLiteral("reply for rewrite 1")), 10000);
        QVERIFY(!calls->toPlainText().contains(QStringLiteral("reply for rewrite 0")));
        // While a candidate is on show no library program is selected; picking one shows it again.
        QCOMPARE(w->selectedProgram(), -1);
        QVERIFY(w->selectProgram(0));
        QCOMPARE(w->selectedProgram(), 0);
    }

    // The lineage graph of an opened run picks a candidate with a click on its node, as a row of the table does; the
    // picked candidate's Measurement tab has the rates at the benchmark sizes of the problem the run file stores, and
    // the worker's verdict per case.
    void aClickInTheLineageGraphPicksACandidate() {
        const QString path = m_resources->filePath(QStringLiteral("graph-run.sqlite"));
        int64_t referenceId = 0, childId = 0;
        {
            RunStore store = RunStore::create(path.toStdString());
            RunInfo run;
            run.name = "graph run";
            run.problem = "saxpy";
            run.device = "replay:test-gpu";
            run.surrogate = "none";
            run.gating = "measure-all";
            const int64_t runId = store.addRun(run);
            ProblemRecord problem;
            problem.name = "saxpy";
            problem.dir = (problemsDir() + QStringLiteral("/saxpy")).toStdString();
            problem.json =
                nlohmann::json::parse(readFile(problemsDir() + QStringLiteral("/saxpy/problem.json")).toStdString());
            store.addProblem(problem);
            Candidate reference;
            reference.mutator = Mutator::Reference;
            reference.label = "reference";
            reference.source = "extern \"C\" __global__ void k() {}";
            referenceId = store.addCandidate(runId, reference);
            Candidate child = reference;
            child.id = 0;
            child.mutator = Mutator::Parametric;
            child.parent_id = referenceId;
            child.generation = 1;
            child.label = "family VEC=4";
            child.source += "\n// vec4";
            childId = store.addCandidate(runId, child);
            Measurement m;
            m.status = Status::Ok;
            m.speedup = 2;
            m.seeds_checked = 2;
            m.device_kind = "replay";
            TimingStats t;
            t.median_us = 500;
            t.n = 1;
            t.samples_us = {500};
            m.candidate = t;
            t.median_us = 1000;
            m.reference = t;
            store.addMeasurement(childId, m);
        }
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QSignalSpy loaded(w.get(), &MainWindow::runLoaded);
        w->openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        auto* graph = w->findChild<LineageGraph*>();
        QVERIFY(graph);
        auto* tabs = qobject_cast<QTabWidget*>(graph->parentWidget()->parentWidget());
        QVERIFY(tabs);
        tabs->setCurrentWidget(graph);
        QVERIFY(graph->isVisible());
        QCOMPARE(graph->nodeCount(), 2);
        QCOMPARE(graph->bestPath(), (QList<qint64>{referenceId, childId}));
        QVERIFY(w->selectCandidate(referenceId));
        QCOMPARE(graph->selected(), referenceId);  // the graph follows a pick made elsewhere

        QTest::mouseClick(graph->viewport(), Qt::LeftButton, {}, *graph->nodeCenter(childId));
        QCOMPARE(w->selectedCandidate(), childId);
        QVERIFY(!w->followsBest());
        QCOMPARE(w->populationView()->currentIndex().data(PopulationModel::CandidateIdRole).toLongLong(), childId);
        QVERIFY(w->editor()->source().contains(QStringLiteral("// vec4")));
        const QString measured = w->inspector()->measurementPanel()->text();
        // 12 * 2^26 bytes in 500 µs, the reference in 1 ms.
        for (const char* part : {"1,610.6 GB/s (the reference 805.3 GB/s)", "Correctness case 2 (N=4099)",
                                 "passed on seeds 1–2", "Benchmark case (N=67108864)"})
            QVERIFY2(measured.contains(QString::fromUtf8(part)),
                     qPrintable(QString::fromUtf8(part) + " in:\n" + measured));
    }

    void theFirstSizeComesFromTheScreen_data() {
        QTest::addColumn<QRect>("available");
        QTest::addColumn<QSize>("size");
        QTest::newRow("full HD") << QRect(0, 0, 1920, 1080) << QSize(1920, 1080);
        QTest::newRow("full HD under a panel") << QRect(0, 0, 1920, 1050) << QSize(1920, 1050);
        QTest::newRow("large") << QRect(0, 0, 2560, 1400) << QSize(2560, 1400);
        QTest::newRow("1280x720") << QRect(0, 0, 1280, 720) << QSize(1280, 720);
        QTest::newRow("1366x768 under a panel") << QRect(0, 32, 1366, 736) << QSize(1366, 736);
    }
    void theFirstSizeComesFromTheScreen() {
        QFETCH(QRect, available);
        QFETCH(QSize, size);
        QCOMPARE(initialWindowSize(available), size);
    }

    // At 1280x720 every dock can be reached (in view, or a tab beside one in view), Start and Pause are in view, the
    // population shows the outcome columns, and every plot tab is in view.
    void everyDockIsUsableAt1280x720() {
        auto w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), true});
        w->resize(1280, 720);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QCoreApplication::processEvents();
        const QRect window = w->rect();
        for (QDockWidget* dock : w->findChildren<QDockWidget*>()) {
            QList<QDockWidget*> group = w->tabifiedDockWidgets(dock);
            group << dock;
            const auto shown = std::find_if(group.begin(), group.end(), [](QDockWidget* d) {
                return d->isVisible() && !d->visibleRegion().isEmpty();
            });
            QVERIFY2(shown != group.end(), qPrintable(dock->windowTitle()));
            const QRect at((*shown)->mapTo(w.get(), QPoint(0, 0)), (*shown)->size());
            QVERIFY2(window.contains(at), qPrintable(dock->windowTitle()));
            QVERIFY2(
                at.width() >= 280 && at.height() >= 150,
                qPrintable(QStringLiteral("%1: %2x%3").arg((*shown)->windowTitle()).arg(at.width()).arg(at.height())));
        }
        for (QAction* action : {w->runControl()->startAction(), w->runControl()->pauseAction()}) {
            QToolButton* button = nullptr;
            for (QToolButton* b : w->runControl()->findChildren<QToolButton*>())
                if (b->defaultAction() == action)
                    button = b;
            QVERIFY(button);
            QVERIFY2(!button->visibleRegion().isEmpty(), qPrintable(action->text()));
            QVERIFY(window.contains(QRect(button->mapTo(w.get(), QPoint(0, 0)), button->size())));
        }
        QTableView* table = w->populationView();
        for (int column : {PopulationModel::IdColumn, PopulationModel::StatusColumn, PopulationModel::SpeedupColumn,
                           PopulationModel::ForecastColumn}) {
            const int x = table->columnViewportPosition(column);
            QVERIFY2(x >= 0 && x + table->columnWidth(column) <= table->viewport()->width(),
                     qPrintable(w->populationModel()->headerData(column, Qt::Horizontal).toString()));
        }
        auto* tabs = qobject_cast<QTabWidget*>(w->progressPlot()->parentWidget()->parentWidget());
        QVERIFY(tabs);
        // Every plot is offered by its whole name, in both languages.
        auto* chooser = w->findChild<QComboBox*>(QStringLiteral("plotChooser"));
        QVERIFY(chooser);
        QCOMPARE(chooser->count(), tabs->count());
        QVERIFY2(chooser->width() >= chooser->sizeHint().width(),
                 qPrintable(QStringLiteral("%1 < %2").arg(chooser->width()).arg(chooser->sizeHint().width())));
        chooser->setCurrentIndex(3);
        QCOMPARE(tabs->currentWidget(), w->progressPlot());
    }

    void plotNamesAreWholeInGermanAt1280x720() {
        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        const auto restoreEnglish =
            qScopeGuard([] { install_translations(QLocale(QLocale::English, QLocale::UnitedStates)); });
        auto w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), true});
        w->resize(1280, 720);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        auto* plots = w->findChild<QDockWidget*>(QStringLiteral("plotsDock"));
        plots->raise();
        QCoreApplication::processEvents();
        auto* chooser = w->findChild<QComboBox*>(QStringLiteral("plotChooser"));
        QVERIFY(chooser && chooser->isVisible());
        QCOMPARE(chooser->itemText(1), QStringLiteral("Zuverlässigkeit"));
        QVERIFY2(chooser->width() >= chooser->sizeHint().width(),
                 qPrintable(QStringLiteral("%1 < %2").arg(chooser->width()).arg(chooser->sizeHint().width())));
    }

    void theMeasurementTabIsInViewAt1280x720_data() { languages(); }
    // A kernel engineer on a laptop reads what the device measured without hunting for it: the inspector's
    // Measurement tab is in view at 1280×720 in either language (not below the fold of a scrolled dock, not behind
    // the tab bar's arrows), its name whole, and a click opens it at a readable size.
    void theMeasurementTabIsInViewAt1280x720() {
        QFETCH(QLocale, language);
        const auto restore = qScopeGuard([] { restore_english(); });
        std::unique_ptr<MainWindow> w;
        openSmallWindow(language, w);
        if (QTest::currentTestFailed())
            return;
        QCoreApplication::processEvents();
        ForecastInspector* inspector = w->inspector();
        auto* tabs = inspector->findChild<QTabWidget*>(QStringLiteral("detailsTabs"));
        QVERIFY(tabs);
        const int index = tabs->indexOf(inspector->measurementPanel());
        QVERIFY(index >= 0);
        QTabBar* bar = tabs->tabBar();
        const QRect tab = bar->tabRect(index);
        QVERIFY2((QRegion(tab) - bar->visibleRegion()).isEmpty(),
                 qPrintable(QStringLiteral("tab %1,%2 %3x%4 outside what is seen of the tab bar")
                                .arg(tab.x())
                                .arg(tab.y())
                                .arg(tab.width())
                                .arg(tab.height())));
        for (const QToolButton* arrow : bar->findChildren<QToolButton*>())
            QVERIFY(!arrow->isVisible() || !arrow->geometry().intersects(tab));
        QVERIFY2(tab.width() >= bar->fontMetrics().horizontalAdvance(bar->tabText(index)),
                 qPrintable(bar->tabText(index)));
        const QRect inWindow(bar->mapTo(w.get(), tab.topLeft()), tab.size());
        QVERIFY(w->rect().contains(inWindow));
        QTest::mouseClick(bar, Qt::LeftButton, {}, tab.center());
        QCOMPARE(tabs->currentIndex(), index);
        MeasurementPanel* panel = inspector->measurementPanel();
        QVERIFY(panel->isVisible() && !panel->visibleRegion().isEmpty());
        QVERIFY2(panel->height() >= 120 && panel->width() >= 280,
                 qPrintable(QStringLiteral("%1x%2").arg(panel->width()).arg(panel->height())));
    }

    void theRunSettingsFitTheirDockAt1280x720_data() { languages(); }
    // The run settings scroll down on a small screen, never sideways: every field ends inside the dock, and every
    // check box and label shows its whole text.
    void theRunSettingsFitTheirDockAt1280x720() {
        QFETCH(QLocale, language);
        const auto restore = qScopeGuard([] { restore_english(); });
        std::unique_ptr<MainWindow> w;
        openSmallWindow(language, w);
        if (QTest::currentTestFailed())
            return;
        w->findChild<QDockWidget*>(QStringLiteral("runDock"))->raise();
        QCoreApplication::processEvents();
        auto* scroll = w->findChild<QScrollArea*>(QStringLiteral("runSettingsScroll"));
        QVERIFY(scroll && scroll->isVisible());
        QWidget* settings = scroll->widget();
        const int available = scroll->viewport()->width();
        QStringList cut;
        for (QWidget* child : settings->findChildren<QWidget*>()) {
            if (!child->isVisible() || child->inherits("QScrollBar"))
                continue;
            const int right = child->mapTo(settings, QPoint(child->width(), 0)).x();
            const auto* label = qobject_cast<QLabel*>(child);
            const bool textWidget = qobject_cast<QAbstractButton*>(child) || (label && !label->wordWrap());
            if (right > available || (textWidget && child->width() < child->sizeHint().width()))
                cut << QStringLiteral("%1 '%2': right edge %3 of %4, width %5 of %6")
                           .arg(QString::fromLatin1(child->metaObject()->className()),
                                label                                   ? label->text()
                                : qobject_cast<QAbstractButton*>(child) ? qobject_cast<QAbstractButton*>(child)->text()
                                                                        : child->objectName())
                           .arg(right)
                           .arg(available)
                           .arg(child->width())
                           .arg(child->sizeHint().width());
        }
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        QVERIFY(!scroll->horizontalScrollBar()->isVisible());
    }

    // Turning the wheel to scroll the run settings changes no setting the pointer passes over (it set the surrogate
    // to None): a box takes the wheel only once clicked into, and the wheel scrolls the settings instead.
    void theWheelScrollsTheRunSettingsWithoutChangingThem() {
        auto w = openWindow();
        w->resize(1280, 720);
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        w->findChild<QDockWidget*>(QStringLiteral("runDock"))->raise();
        QCoreApplication::processEvents();
        auto* scroll = w->findChild<QScrollArea*>(QStringLiteral("runSettingsScroll"));
        auto* surrogate = w->findChild<QComboBox*>(QStringLiteral("runSurrogate"));
        QVERIFY(scroll && surrogate && surrogate->isVisible());
        QVERIFY(scroll->verticalScrollBar()->maximum() > 0);  // at 1280×720 the settings scroll
        const int chosen = surrogate->currentIndex(), scrolled = scroll->verticalScrollBar()->value();
        auto wheel = [&](QWidget* target, int delta) {
            const QPointF at(target->width() / 2.0, target->height() / 2.0);
            QWheelEvent e(at, target->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(target, &e);
        };
        surrogate->clearFocus();
        for (int i = 0; i < 3; ++i)
            wheel(surrogate, -120);
        QCOMPARE(surrogate->currentIndex(), chosen);
        QVERIFY2(scroll->verticalScrollBar()->value() > scrolled, "the wheel did not scroll the settings");
        // Clicked into, the box takes the wheel as usual.
        surrogate->setFocus(Qt::MouseFocusReason);
        QVERIFY(surrogate->hasFocus());
        wheel(surrogate, -120);
        QVERIFY(surrogate->currentIndex() != chosen);
    }

    // View › Reset Layout brings back every dock a person closed, floated or moved, laid out as at the first start.
    void resetLayoutBringsEveryDockBack() {
        auto w = openWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        auto* plots = w->findChild<QDockWidget*>(QStringLiteral("plotsDock"));
        auto* inspector = w->findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
        plots->setFloating(true);
        inspector->hide();
        w->removeDockWidget(w->findChild<QDockWidget*>(QStringLiteral("runDock")));
        auto* reset = w->findChild<QAction*>(QStringLiteral("resetLayoutAction"));
        QVERIFY(reset);
        reset->trigger();
        QCoreApplication::processEvents();
        for (QDockWidget* dock : w->findChildren<QDockWidget*>()) {
            QVERIFY2(!dock->isFloating(), qPrintable(dock->windowTitle()));
            QVERIFY2(!dock->isHidden(), qPrintable(dock->windowTitle()));
            QVERIFY2(w->dockWidgetArea(dock) != Qt::NoDockWidgetArea, qPrintable(dock->windowTitle()));
        }
    }

    // File › Open Recent offers the runs opened or started, the newest first, also after a restart.
    void recentRunsAreOfferedAndKept() {
        QTemporaryDir dir;
        const QString first = dir.filePath(QStringLiteral("first.kerncast"));
        const QString second = dir.filePath(QStringLiteral("second.kcrun"));
        for (const QString& path : {first, second}) {
            RunStore store = RunStore::create(path.toStdString());
            RunInfo run;
            run.name = "recent";
            store.addRun(run);
        }
        {
            auto w = openWindow();
            QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
            for (const QString& path : {first, second, first}) {
                QSignalSpy loaded(w.get(), &MainWindow::runLoaded);
                w->openRun(path);
                QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
            }
            QCOMPARE(w->recentRuns(), (QStringList{first, second}));
            w->close();
        }
        auto w = openWindow();
        QCOMPARE(w->recentRuns(), (QStringList{first, second}));
        auto* menu = w->findChild<QMenu*>(QStringLiteral("recentRunsMenu"));
        QVERIFY(menu);
        Q_EMIT menu->aboutToShow();
        QCOMPARE(menu->actions().size(), 2);
        QCOMPARE(menu->actions().at(0)->text(), QStringLiteral("first.kerncast"));
        QCOMPARE(menu->actions().at(1)->toolTip(), second);
    }

    // At 1920×1080 the window takes the screen and the population shows every column beside the plots.
    void everyPopulationColumnIsInViewAt1920x1080() {
        auto w = std::make_unique<MainWindow>(MainWindow::Options{m_resources->path(), false});
        QCOMPARE(w->size(), QSize(1920, 1200));  // the offscreen platform's stand-in screen, all of it
        w->resize(1920, 1080);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QCoreApplication::processEvents();
        QTableView* table = w->populationView();
        for (int column = 0; column < PopulationModel::ColumnCount; ++column) {
            const int x = table->columnViewportPosition(column);
            QVERIFY2(x >= 0 && x + table->columnWidth(column) <= table->viewport()->width(),
                     qPrintable(w->populationModel()->headerData(column, Qt::Horizontal).toString()));
        }
        QVERIFY2(w->scatterPlot()->width() >= 450 && w->scatterPlot()->height() >= 250,
                 qPrintable(QStringLiteral("%1x%2").arg(w->scatterPlot()->width()).arg(w->scatterPlot()->height())));
    }

    // The German translation is compiled in and its contexts match the namespaced classes: docks, menus and the run
    // control speak German, and English comes back when asked.
    void germanReachesDocksAndMenus() {
        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        // English again for the tests that follow, also when a check below fails.
        const auto restoreEnglish =
            qScopeGuard([] { install_translations(QLocale(QLocale::English, QLocale::UnitedStates)); });
        auto w = openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(w->isReady(), 30000);
        QStringList docks;
        for (const QDockWidget* d : w->findChildren<QDockWidget*>())
            docks << d->windowTitle();
        for (const char* title : {"Laufsteuerung", "Prognose-Inspektor", "Diagramme", "Probleme"})
            QVERIFY2(docks.contains(QString::fromUtf8(title)), qPrintable(docks.join(QLatin1Char(','))));
        QStringList menus;
        for (const QAction* a : w->menuBar()->actions())
            menus << a->text();
        QVERIFY2(menus.contains(QStringLiteral("&Datei")), qPrintable(menus.join(QLatin1Char(','))));
        QVERIFY2(menus.contains(QStringLiteral("&Lauf")), qPrintable(menus.join(QLatin1Char(','))));
        QCOMPARE(w->runControl()->startAction()->text(), QStringLiteral("Suche &starten"));
        // Numbers follow the language too.
        QCOMPARE(QLocale().toString(1.5, 'f', 1), QStringLiteral("1,5"));
        w.reset();
        QVERIFY(!install_translations(QLocale(QLocale::English, QLocale::UnitedStates)));
        auto english = openWindow();
        QCOMPARE(english->runControl()->startAction()->text(), QStringLiteral("&Start Search"));
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
        QTest::newRow("missing resources")
            << QStringList{"--resources", "/nonexistent/kerncast"} << QString() << -1.0 << true;
        QTest::newRow("demo") << QStringList{"--demo", "--quit-after", "60"} << QString() << 60.0 << false;
        QTest::newRow("missing run file")
            << QStringList{"--run", "/nonexistent/run.sqlite"} << QString() << -1.0 << true;
        QTest::newRow("language") << QStringList{"--language", "de"} << QString() << -1.0 << false;
        QTest::newRow("unknown language") << QStringList{"--language", "klingon"} << QString() << -1.0 << true;
        QTest::newRow("demo and run") << QStringList{"--demo", "--run", KERNCAST_TEST_DATA "/forecasters/pairs.jsonl"}
                                      << QString() << -1.0 << true;
    }
    void commandLine() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, screenshot);
        QFETCH(double, quitAfter);
        QFETCH(bool, fails);
        const auto cl = parse_command_line(
            QStringList{QStringLiteral("kerncast"), QStringLiteral("--resources"), m_resources->path()} + arguments);
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
