// kerncast-cli sweep without a GPU: the errors a user meets before anything is measured (a replay device cannot
// sweep, since a recording holds one size; malformed --sizes; no kernel). The measurements themselves need a GPU
// (bench/export_check runs them).
#include "tests/support/cli_runner.h"

#include <QtTest>

#include <string>
#include <vector>

using namespace kerncast::test;

namespace {
const std::string kProblems = std::string(KERNCAST_TEST_DATA) + "/../../resources/problems";
}

class TestCmdSweep : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString saxpy = QString::fromStdString(kProblems + "/saxpy/reference.cu");
        QTest::newRow("replay device")
            << QStringList{"--problem", "saxpy",       "--kernel", saxpy,
                           "--sizes",   "N=1024,4096", "--device", "replay:nvidia-h100-80gb-hbm3"}
            << "a recording holds each program at the problem's one benchmark size: sweep needs a GPU";
        QTest::newRow("unknown size name") << QStringList{"--problem", "saxpy", "--kernel", saxpy, "--sizes", "M=4"}
                                           << "NAME one of the problem's sizes (N)";
        QTest::newRow("not a number") << QStringList{"--problem", "saxpy", "--kernel", saxpy, "--sizes", "N=4,x"}
                                      << "'x' is not a positive integer";
        QTest::newRow("zero") << QStringList{"--problem", "saxpy", "--kernel", saxpy, "--sizes", "N=0"}
                              << "'0' is not a positive integer";
        QTest::newRow("no sizes") << QStringList{"--problem", "saxpy", "--kernel", saxpy}
                                  << "give --sizes NAME=v1,v2,... or --around benchmark";
        QTest::newRow("both") << QStringList{"--problem", "saxpy", "--kernel", saxpy,
                                             "--sizes",   "N=4",   "--around", "benchmark"}
                              << "give --sizes NAME=v1,v2,... or --around benchmark";
        QTest::newRow("around what") << QStringList{"--problem", "saxpy", "--kernel", saxpy, "--around", "median"}
                                     << "--around takes benchmark";
        QTest::newRow("no kernel") << QStringList{"--problem", "saxpy", "--sizes", "N=4"}
                                   << "give --problem P --kernel";
        QTest::newRow("invalid configuration")
            << QStringList{"--problem", "softmax",
                           "--kernel",  QString::fromStdString(kProblems + "/softmax/family.cu"),
                           "--tunable", "TPR=32",
                           "--tunable", "ROWS=1",
                           "--tunable", "VEC=1",
                           "--tunable", "ITEMS=1",
                           "--sizes",   "N=64"}
            << "not a valid configuration";
        QTest::newRow("top without a run")
            << QStringList{"--problem", "saxpy", "--kernel", saxpy, "--sizes", "N=4", "--top", "3"}
            << "--top re-ranks the candidates of a run: give --run RUN_FILE";
        QTest::newRow("no run file") << QStringList{"--run", "/nonexistent/run.kcrun", "--sizes", "N=4"}
                                     << "no such run file";
    }
    void errors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        std::vector<std::string> a = {"sweep"};
        for (const auto& s : args)
            a.push_back(s.toStdString());
        const CliResult r = run_cli(a);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(message.toStdString()) != std::string::npos, r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCmdSweep)
#include "tst_cmd_sweep.moc"
