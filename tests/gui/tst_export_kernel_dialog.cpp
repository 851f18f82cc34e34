// File › Export Kernel…: the dialog plots the run's newest sweep of the candidate and exports it as a CUDA unit or a
// PyTorch extension into the chosen folder; a failure is said in the dialog.
#include "app/gui/export_kernel_dialog.h"

#include "core/run_store.h"
#include "core/text_util.h"
#include "widgets/qcustomplot_include.h"

#include "tests/support/plot_data.h"

#include <QLabel>
#include <QStandardPaths>
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
