// File › Export Kernel…: the dialog plots the run's newest sweep of the candidate, ranks the run's swept candidates at
// any swept size, and exports it as a CUDA unit or a PyTorch extension into the chosen folder; without a run, a kernel
// file with its tunables; a failure is said in the dialog.
#include "app/gui/export_kernel_dialog.h"

#include "core/run_store.h"
#include "core/text_util.h"
#include "widgets/qcustomplot_include.h"

#include "tests/support/plot_data.h"

#include <QFile>
#include <QLabel>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace kerncast;
using kerncast::test::pointsOf;

namespace {

const std::string kProblems = std::string(KERNCAST_TEST_DATA) + "/../../resources/problems";

// A run of softmax with one family candidate, measured, and two sweeps of it (the newer one is shown).
qint64 makeRun(const std::string& path) {
    RunStore store = RunStore::create(path);
    RunInfo run;
    run.problem = "softmax";
    store.addRun(run);
    ProblemRecord pr;
    pr.name = "softmax";
    pr.dir = kProblems + "/softmax";
    store.addProblem(pr);
    Candidate c;
    c.mutator = Mutator::Parametric;
    c.source = read_text_file(kProblems + "/softmax/family.cu");
    c.tunables = {{"TPR", 128}, {"ROWS", 1}, {"VEC", 4}, {"ITEMS", 2}};
    c.label = "family";
    store.addCandidate(run.id, c);
    store.addEvent(
        run.id, "sweep",
        {{"candidate", c.id}, {"results", {{{"sizes", {{"M", 8}, {"N", 4096}}}, {"status", "ok"}, {"speedup", 9.0}}}}});
    store.addEvent(run.id, "sweep",
                   {{"candidate", c.id},
                    {"results",
                     {{{"sizes", {{"M", 1024}, {"N", 4096}}}, {"status", "ok"}, {"speedup", 1.1}},
                      {{"sizes", {{"M", 4095}, {"N", 4096}}}, {"status", "incorrect"}},
                      {{"sizes", {{"M", 16384}, {"N", 4096}}}, {"status", "ok"}, {"speedup", 1.3}}}}});
    return c.id;
}

// Three more candidates swept (as sweep --run R --top 3 stores them) at two sizes where their order differs: #a is
// fastest at the small size, #b at the large one, #c fails at the large one; a damaged sweep event is skipped.
std::vector<qint64> addRankedSweeps(const std::string& path) {
    RunStore store = RunStore::open(path);
    const int64_t run = store.runs().front().id;
    std::vector<qint64> ids;
    for (int i = 0; i < 3; ++i) {
        Candidate c;
        c.mutator = Mutator::Parametric;
        c.source = read_text_file(kProblems + "/softmax/family.cu");
        c.tunables = {{"TPR", 256}, {"ROWS", 1}, {"VEC", 4}, {"ITEMS", 2 + 2 * i}};
        c.label = "family";
        store.addCandidate(run, c);
        ids.push_back(c.id);
    }
    auto result = [](int64_t m, const char* status, double speedup) {
        nlohmann::json r = {{"sizes", {{"M", m}, {"N", 4096}}}, {"status", status}};
        if (speedup > 0)
            r["speedup"] = speedup;
        return r;
    };
    store.addEvent(run, "sweep",
                   {{"candidate", ids[0]}, {"results", {result(1024, "ok", 2.0), result(16384, "ok", 1.2)}}});
    store.addEvent(run, "sweep",
                   {{"candidate", ids[1]}, {"results", {result(1024, "ok", 1.5), result(16384, "ok", 1.8)}}});
    store.addEvent(run, "sweep",
                   {{"candidate", ids[2]}, {"results", {result(1024, "ok", 1.7), result(16384, "incorrect", 0)}}});
    // Damaged events, as a file written to fool the workbench may hold: skipped, the sweeps before them kept.
    store.addEvent(run, "sweep", {{"candidate", "not a number"}, {"results", 3}});
    store.addEvent(run, "sweep", {{"candidate", 999}, {"results", "not a list"}});
    store.addEvent(run, "sweep", {{"candidate", ids[0]}, {"results", {1, "x", {{"sizes", 7}, {"status", 2}}}}});
    store.addEvent(run, "sweep", {{"candidate", 1}, {"results", nlohmann::json::array()}});
    return ids;
}

// The candidate column's texts from top to bottom.
QStringList candidateOrder(QTableWidget* table) {
    QStringList out;
    for (int r = 0; r < table->rowCount(); ++r)
        out << table->item(r, 0)->text();
    return out;
}

}  // namespace

class TestExportKernelDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void plotsTheNewestSweepOfTheCandidate() {
        QTemporaryDir tmp;
        const std::string run = tmp.filePath("run.kcrun").toStdString();
        const qint64 id = makeRun(run);
        ExportKernelDialog dialog(QString::fromStdString(run), id);
        SweepPlot* plot = dialog.sweepPlot();
        QCOMPARE(pointsOf(plot->speedups()), (QVector<QPointF>{{1024, 1.1}, {16384, 1.3}}));
        QCOMPARE(pointsOf(plot->failures()), (QVector<QPointF>{{4095, 1.0}}));
        QCOMPARE(plot->speedups()->keyAxis()->label(), QStringLiteral("M"));
    }

    // The run's swept candidates ranked at a size: fastest first, a failure below every measured one, the best of
    // each size in bold, the candidate on show named; ranking at the other size reorders them.
    void ranksTheSweptCandidatesAtEachSize() {
        QTemporaryDir tmp;
        const std::string run = tmp.filePath("run.kcrun").toStdString();
        const qint64 id = makeRun(run);
        const auto ids = addRankedSweeps(run);
        ExportKernelDialog dialog(QString::fromStdString(run), id);
        QCOMPARE(pointsOf(dialog.sweepPlot()->speedups()), (QVector<QPointF>{{1024, 1.1}, {16384, 1.3}}));
        QTableWidget* table = dialog.ranking();
        QVERIFY(table->isVisibleTo(&dialog));
        QCOMPARE(table->columnCount(), 4);  // candidate, M=1024, M=4095 (this one failed there), M=16384
        QCOMPARE(table->horizontalHeaderItem(1)->text(), QStringLiteral("M=1024 N=4096"));
        QCOMPARE(table->horizontalHeaderItem(3)->text(), QStringLiteral("M=16384 N=4096"));
        QCOMPARE(table->rowCount(), 4);
        const QString a = QStringLiteral("#%1").arg(ids[0]), b = QStringLiteral("#%1").arg(ids[1]),
                      c = QStringLiteral("#%1").arg(ids[2]), self = QStringLiteral("#%1 (this one)").arg(id);
        // Opened at the last size: #b 1.8, this one 1.3, #a 1.2, #c failed.
        QCOMPARE(candidateOrder(table), (QStringList{b, self, a, c}));
        QCOMPARE(table->item(3, 3)->text(), QStringLiteral("incorrect"));
        QVERIFY(table->item(0, 3)->font().bold());
        QVERIFY(!table->item(1, 3)->font().bold());
        dialog.rankAt(0);  // M=1024: #a 2.0, #c 1.7, #b 1.5, this one 1.1
        QCOMPARE(candidateOrder(table), (QStringList{a, c, b, self}));
        QCOMPARE(table->item(0, 1)->text(), QStringLiteral("2.000×"));
        QVERIFY(table->item(0, 1)->font().bold());
        dialog.rankAt(1);  // M=4095: only this one was swept there, and failed; the others were not swept there
        QCOMPARE(candidateOrder(table).first(), self);
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("incorrect"));
        QCOMPARE(table->item(1, 2)->text(), QStringLiteral("–"));
    }

    // A file that is no run: the plot and the ranking's place say so, and the dialog still opens to export nothing.
    void anUnreadableRunIsSaid() {
        QTemporaryDir tmp;
        const QString run = tmp.filePath("run.kcrun");
        QFile f(run);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a run file, but text long enough to look like something");
        f.close();
        ExportKernelDialog dialog(run, 1);
        QVERIFY2(dialog.sweepPlot()->placeholderText().contains(QStringLiteral("cannot be read")),
                 qPrintable(dialog.sweepPlot()->placeholderText()));
        QVERIFY(!dialog.ranking()->isVisibleTo(&dialog));
        QCOMPARE(dialog.ranking()->rowCount(), 0);
    }

    // A run without sweeps shows no ranking.
    void noSweepsNoRanking() {
        QTemporaryDir tmp;
        const std::string run = tmp.filePath("run.kcrun").toStdString();
        RunStore store = RunStore::create(run);
        RunInfo info;
        info.problem = "softmax";
        store.addRun(info);
        Candidate c;
        c.source = read_text_file(kProblems + "/softmax/family.cu");
        store.addCandidate(info.id, c);
        ExportKernelDialog dialog(QString::fromStdString(run), c.id);
        QVERIFY(!dialog.ranking()->isVisibleTo(&dialog));
        QCOMPARE(dialog.ranking()->rowCount(), 0);
    }

    void exports_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("file");
        QTest::newRow("cuda") << "cuda"
                              << "softmax.h";
        QTest::newRow("torch") << "torch"
                               << "test_softmax.py";
    }
    void exports() {
        QFETCH(QString, format);
        QFETCH(QString, file);
        QTemporaryDir tmp;
        const std::string run = tmp.filePath("run.kcrun").toStdString();
        const qint64 id = makeRun(run);
        ExportKernelDialog dialog(QString::fromStdString(run), id);
        dialog.setFormat(format);
        dialog.setFolder(tmp.filePath("out"));
        QString error;
        QVERIFY2(dialog.exportKernel(&error), qPrintable(error));
        QVERIFY(std::filesystem::exists(tmp.filePath("out/" + file).toStdString()));
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("exportResult"))->text().contains(tmp.filePath("out")));
    }

    // Without a run: a kernel file of a problem with its tunables (spaces or commas apart), as export --kernel does.
    void exportsAKernelFileWithoutARun() {
        QTemporaryDir tmp;
        ExportKernelDialog dialog(KernelFileExport{QString::fromStdString(kProblems + "/softmax"),
                                                   QString::fromStdString(kProblems + "/softmax/family.cu"),
                                                   QStringLiteral("TPR=128, ROWS=1 VEC=4  ITEMS=2")});
        QVERIFY(!dialog.sweepPlot());
        QVERIFY(!dialog.ranking());
        dialog.rankAt(0);  // nothing to rank: nothing happens
        dialog.setFolder(tmp.filePath("out"));
        QString error;
        QVERIFY2(dialog.exportKernel(&error), qPrintable(error));
        const std::string unit = read_text_file(tmp.filePath("out/softmax.cu").toStdString());
        QVERIFY2(unit.find("128") != std::string::npos, unit.substr(0, 400).c_str());
        QVERIFY(std::filesystem::exists(tmp.filePath("out/softmax.h").toStdString()));
    }

    void kernelFileErrorsAreSaid_data() {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("tunables");
        QTest::addColumn<QString>("message");
        const QString softmax = QString::fromStdString(kProblems + "/softmax");
        const QString family = softmax + "/family.cu";
        QTest::newRow("no problem") << QString() << family << "TPR=128"
                                    << "choose the problem";
        QTest::newRow("no kernel") << softmax << QString() << "TPR=128"
                                   << "choose a kernel program file";
        QTest::newRow("a tunable missing") << softmax << family << "TPR=128 ROWS=1 VEC=4"
                                           << "ITEMS";
        QTest::newRow("a tunable without a value") << softmax << family << "TPR=128,ROWS=1, VEC=4 ITEMS"
                                                   << "'ITEMS': expected NAME=VALUE";
        QTest::newRow("a value the family does not declare") << softmax << family << "TPR=100 ROWS=1 VEC=4 ITEMS=8"
                                                             << "TPR";
        QTest::newRow("a tunable twice") << softmax << family << "TPR=128 ROWS=1 VEC=4 ITEMS=8 TPR=256"
                                         << "TPR is given twice";
        QTest::newRow("no such file") << softmax << softmax + "/nothing.cu"
                                      << ""
                                      << "nothing.cu";
    }
    void kernelFileErrorsAreSaid() {
        QFETCH(QString, problem);
        QFETCH(QString, kernel);
        QFETCH(QString, tunables);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        ExportKernelDialog dialog(KernelFileExport{problem, kernel, tunables});
        dialog.setFolder(tmp.filePath("out"));
        QString error;
        QVERIFY(!dialog.exportKernel(&error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("exportResult"))
                    ->text()
                    .startsWith(QStringLiteral("Not exported")));
        QVERIFY(!std::filesystem::exists(tmp.filePath("out/softmax.cu").toStdString()));
    }

    void aMissingFolderIsSaid() {
        QTemporaryDir tmp;
        const std::string run = tmp.filePath("run.kcrun").toStdString();
        const qint64 id = makeRun(run);
        ExportKernelDialog dialog(QString::fromStdString(run), id);
        dialog.setFolder(QString());
        QString error;
        QVERIFY(!dialog.exportKernel(&error));
        QVERIFY2(error.contains(QStringLiteral("choose a folder")), qPrintable(error));
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("exportResult"))
                    ->text()
                    .startsWith(QStringLiteral("Not exported")));
    }
};

QTEST_MAIN(TestExportKernelDialog)
#include "tst_export_kernel_dialog.moc"
