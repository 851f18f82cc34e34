// kerncast-cli import, in process: what a user sees when importing GPU Forecasters pairs into a run store.
#include "core/run_store.h"
#include "engine/cli/cli.h"

#include "tests/support/cli_runner.h"
#include <QTemporaryDir>

#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace kerncast;
using kerncast::test::run_cli;

namespace {

const std::string kPairs = KERNCAST_TEST_DATA "/forecasters/pairs.jsonl";
const std::string kMalformed = KERNCAST_TEST_DATA "/forecasters/malformed.jsonl";

}  // namespace

class TestCmdImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cleanFileImportsEveryPairIntoTheStore() {
        QTemporaryDir dir;
        const std::string store = dir.filePath("run.sqlite").toStdString();
        const auto r = run_cli({"--json", "import", "--pairs", kPairs, "--store", store});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j.value("imported", -1), 6);
        auto s = RunStore::open(store);
        const auto runs = s.runs();
        QCOMPARE(runs.size(), size_t{1});
        QCOMPARE(s.importedPairs(runs.front().id).size(), size_t{6});
    }

    void malformedLinesAreListedWithTheirNumbers() {
        QTemporaryDir dir;
        const std::string store = dir.filePath("run.sqlite").toStdString();
        const auto r = run_cli({"import", "--pairs", kMalformed, "--store", store});
        QCOMPARE(r.code, 0);
        const std::string all = r.out + r.err;
        // The fixture has bad JSON on line 3 and a missing field on line 5: each is named with its file and line.
        QVERIFY2(all.find("malformed.jsonl:3: not JSON") != std::string::npos, all.c_str());
        QVERIFY2(all.find("malformed.jsonl:5: missing field \"anchor_code\"") != std::string::npos, all.c_str());
        QVERIFY2(all.find("Imported 4 pairs") != std::string::npos, all.c_str());
    }

    void strictModeRejectsAndWritesNothing() {
        QTemporaryDir dir;
        const std::string store = dir.filePath("run.sqlite").toStdString();
        const auto r = run_cli({"import", "--pairs", kMalformed, "--store", store, "--strict"});
        QCOMPARE(r.code, 1);
        QVERIFY(!std::filesystem::exists(store));
        QVERIFY2(r.err.find("malformed.jsonl:3") != std::string::npos, r.err.c_str());
    }

    void missingFileIsAClearError() {
        QTemporaryDir dir;
        const auto r = run_cli(
            {"import", "--pairs", "/nonexistent/pairs.jsonl", "--store", dir.filePath("run.sqlite").toStdString()});
        QVERIFY(r.code != 0);
        QVERIFY2((r.out + r.err).find("/nonexistent/pairs.jsonl") != std::string::npos, (r.out + r.err).c_str());
    }
};

QTEST_GUILESS_MAIN(TestCmdImport)
#include "tst_cmd_import.moc"
