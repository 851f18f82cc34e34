// kerncast-cli in process, with tests/data as the resource folder (its recordings/ and problems/).
#include "engine/cli/cli.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/replay/replay_device.h"

#include "tests/support/cli_runner.h"
#include <QDir>
#include <QTemporaryDir>

#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace kerncast;
using kerncast::test::run_cli;

namespace {

const std::string kData = KERNCAST_TEST_DATA;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qputenv("KERNCAST_RESOURCES", QByteArray::fromStdString(kData)); }

    void devicesListsReplayAndExplainsMissingDriver() {
        const auto r = run_cli({"devices"});
        QCOMPARE(r.code, 0);
        QVERIFY2(contains(r.out, "replay:test-h100"), r.out.c_str());
        QVERIFY2(contains(r.out, "NVIDIA H100 80GB HBM3"), r.out.c_str());
        QVERIFY2(contains(r.out, "replay_saxpy"), r.out.c_str());
        if (!cuda::available()) {
            // Nobody is left guessing why no GPU shows up.
            QVERIFY2(contains(r.out, "No cuda device: "), r.out.c_str());
            QVERIFY2(contains(r.out, "libcuda"), r.out.c_str());
        }
    }

    void devicesJson() {
        const auto r = run_cli({"--json", "devices"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY(j["ok"].get<bool>());
        bool found = false;
        for (const auto& d : j["devices"])
            if (d["id"] == "replay:test-h100") {
                found = true;
                QCOMPARE(d["kind"].get<std::string>(), std::string("replay"));
                QCOMPARE(d["device"]["cc"].get<std::string>(), std::string("9.0"));
            }
        QVERIFY(found);
        if (!cuda::available())
            QVERIFY(!j["notes"].empty());
    }

    void measureOnReplay() {
        const auto r =
            run_cli({"measure", "--problem", "replay_saxpy", "--kernel", kData + "/problems/replay_saxpy/family.cu",
                     "--device", "replay:test-h100", "--tunable", "BLOCK=128", "--tunable", "ITEMS=4"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(contains(r.out, "status     ok"), r.out.c_str());
        QVERIFY2(contains(r.out, "1.080x"), r.out.c_str());
        QVERIFY2(contains(r.out, "64.80 us"), r.out.c_str());
        QVERIFY2(contains(r.out, "saxpy_family: 16 registers"), r.out.c_str());
    }

    void measureJson() {
        const auto r = run_cli({"--json", "measure", "--problem", kData + "/problems/replay_saxpy", "--kernel",
                                kData + "/problems/replay_saxpy/seeds/grid_stride.cu", "--device", "replay:test-h100"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["measurement"]["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(j["measurement"]["candidate"]["median_us"].get<double>(), 66.5);
        QCOMPARE(j["device"].get<std::string>(), std::string("replay:test-h100"));
    }

    void measuredButNotOkExitsTwo_data() {
        QTest::addColumn<QString>("tunable");
        QTest::addColumn<QString>("status");
        QTest::newRow("recorded as incorrect") << "BLOCK=256"
                                               << "incorrect";
        QTest::newRow("not recorded") << "BLOCK=128"
                                      << "not_recorded";
    }
    void measuredButNotOkExitsTwo() {
        QFETCH(QString, tunable);
        QFETCH(QString, status);
        QTemporaryDir dir;
        std::string kernel = kData + "/problems/replay_saxpy/family.cu";
        if (status == "not_recorded") {
            // An edited copy of a recorded program is a different program.
            std::ifstream in(kernel);
            std::ostringstream ss;
            ss << in.rdbuf() << "// edited\n";
            kernel = dir.filePath("family.cu").toStdString();
            std::ofstream(kernel) << ss.str();
        }
        const auto r = run_cli({"measure", "--problem", "replay_saxpy", "--kernel", kernel, "--device",
                                "replay:test-h100", "--tunable", tunable.toStdString(), "--tunable", "ITEMS=4"});
        QCOMPARE(r.code, 2);
        QVERIFY2(contains(r.out, "status     " + status.toStdString()), r.out.c_str());
    }

    // --seed replays a failure's inputs; anything but a non-zero unsigned number is refused before measuring, and a
    // valid one measures as usual.
    void measureSeedMustBeANonZeroNumber_data() {
        QTest::addColumn<QString>("seed");
        QTest::addColumn<int>("code");
        QTest::newRow("not a number") << "banana" << 1;
        QTest::newRow("zero") << "0" << 1;
        QTest::newRow("negative") << "-1" << 1;
        QTest::newRow("trailing text") << "0x12zz" << 1;
        QTest::newRow("hex") << "0x2f1c5e9a07b3d482" << 0;
    }
    void measureSeedMustBeANonZeroNumber() {
        QFETCH(QString, seed);
        QFETCH(int, code);
        const auto r = run_cli({"measure", "--problem", "replay_saxpy", "--kernel",
                                kData + "/problems/replay_saxpy/family.cu", "--device", "replay:test-h100", "--tunable",
                                "BLOCK=128", "--tunable", "ITEMS=4", "--seed", seed.toStdString()});
        QCOMPARE(r.code, code);
        if (code != 0)
            QVERIFY2(contains(r.err, "--seed: expected a non-zero number"), r.err.c_str());
    }

    void unknownProblemIsAClearError() {
        const auto r =
            run_cli({"measure", "--problem", "no_such_problem", "--kernel", "k.cu", "--device", "replay:test-h100"});
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, "unknown problem 'no_such_problem'"), r.err.c_str());
        QVERIFY2(contains(r.err, "replay_saxpy"), r.err.c_str());  // the known ones are listed

        const auto j = run_cli({"--json", "measure", "--problem", "no_such_problem", "--kernel", "k.cu"});
        QCOMPARE(j.code, 1);
        const auto parsed = nlohmann::json::parse(j.out);
        QVERIFY(!parsed["ok"].get<bool>());
        QVERIFY(contains(parsed["error"].get<std::string>(), "no_such_problem"));
    }

    void badArgumentsAreClearErrors_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing tunable") << QStringList{"--tunable", "BLOCK=128"} << "ITEMS";
        QTest::newRow("not an integer") << QStringList{"--tunable", "BLOCK=big", "--tunable", "ITEMS=1"}
                                        << "must be an integer";
        QTest::newRow("invalid value") << QStringList{"--tunable", "BLOCK=100", "--tunable", "ITEMS=1"}
                                       << "not a valid configuration";
        QTest::newRow("given twice") << QStringList{"--tunable", "BLOCK=128", "--tunable",
                                                    "ITEMS=1",   "--tunable", "BLOCK=256"}
                                     << "BLOCK is given twice";
        QTest::newRow("unknown device") << QStringList{"--tunable", "BLOCK=128", "--tunable",
                                                       "ITEMS=1",   "--device",  "replay:nowhere"}
                                        << "replay:test-h100";
    }
    void badArgumentsAreClearErrors() {
        QFETCH(QStringList, extra);
        QFETCH(QString, expected);
        std::vector<std::string> args{"measure", "--problem", "replay_saxpy", "--kernel",
                                      kData + "/problems/replay_saxpy/family.cu"};
        if (!extra.contains("--device")) {
            args.push_back("--device");
            args.push_back("replay:test-h100");
        }
        for (const auto& e : extra)
            args.push_back(e.toStdString());
        const auto r = run_cli(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, expected.toStdString()), r.err.c_str());
    }

    // --resources points one command at another library than $KERNCAST_RESOURCES (here tests/data) for this call only;
    // a folder that does not exist is refused before anything runs.
    void resourcesOptionPointsAtAnotherLibrary() {
        const std::string shipped = std::string(KERNCAST_SOURCE_DIR) + "/resources";
        const auto r = run_cli({"--resources", shipped, "devices"});
        QCOMPARE(r.code, 0);
        QVERIFY2(contains(r.out, "replay:nvidia-h200"), r.out.c_str());
        QVERIFY2(!contains(r.out, "replay:test-h100"), r.out.c_str());
        const auto back = run_cli({"devices"});  // the next call without it: $KERNCAST_RESOURCES again
        QVERIFY2(contains(back.out, "replay:test-h100"), back.out.c_str());
        const auto missing = run_cli({"--resources", kData + "/no-such-folder", "devices"});
        QVERIFY(missing.code != 0);
        QVERIFY2(contains(missing.err + missing.out, "no-such-folder"), (missing.err + missing.out).c_str());
    }

    // A bad --reference-config names that option, not --tunable.
    void badReferenceConfigNamesItsOption() {
        QTemporaryDir dir;
        const auto r = run_cli({"import", "--t1", kData + "/t1/blur/blur.json", "--out",
                                dir.filePath("blur").toStdString(), "--reference-config", "block_size_x"});
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, "--reference-config 'block_size_x': expected NAME=VALUE"), r.err.c_str());
        QVERIFY2(!contains(r.err, "--tunable"), r.err.c_str());
    }

    // Recording on the replay device would only copy a recording (or write not_recorded entries): refused.
    // (The recorder itself, resume included, is tested in tst_recorder.)
    void recordRefusesTheReplayDevice() {
        QTemporaryDir dir;
        const std::string out = dir.path().toStdString();
        const auto r =
            run_cli({"--json", "record", "--problem", "replay_saxpy", "--device", "replay:test-h100", "--out", out});
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.out, "measured on a GPU (--device cuda:N)"), r.out.c_str());
        QVERIFY(QDir(dir.path()).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
