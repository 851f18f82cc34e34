#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"
#include "core/run_store.h"

#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <sstream>

using namespace kerncast;

namespace {

const std::string kData = KERNCAST_TEST_DATA "/forecasters/";

ImportResult import_file(const std::string& name, ImportMode mode = ImportMode::Skip) {
    return import_forecasters_jsonl_file(kData + name, BinScheme::gfV2(), mode);
}

ImportResult import_text(const std::string& text, ImportMode mode = ImportMode::Skip) {
    std::istringstream in(text);
    return import_forecasters_jsonl(in, "inline.jsonl", BinScheme::gfV2(), mode);
}

const ImportedPair* find_pair(const ImportResult& result, const std::string& id) {
    for (const auto& p : result.pairs)
        if (p.comparison_id == id)
            return &p;
    return nullptr;
}

std::string valid_line(const std::string& id, const std::string& speedup = "1.5") {
    return R"({"comparison_id": ")" + id +
           R"(", "pack": "p", "anchor_code": "a", "candidate_code": "b", "hardware": "H100", "aggregated_speedup": )" +
           speedup + R"(, "true_bin": 4})";
}

}  // namespace

class TestForecastersImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void importsEvalSetPairs() {
        const auto result = import_file("pairs.jsonl");
        QVERIFY(result.issues.empty());
        QCOMPARE(result.lines_read, 6);
        QCOMPARE(result.pairs.size(), size_t{6});

        const auto& first = result.pairs[0];
        QCOMPARE(first.comparison_id, std::string("kb_l1_019_relu__c01"));
        QCOMPARE(first.pack, std::string("kernelbench-l1"));
        QCOMPARE(first.hardware, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(first.line, 1);
        QVERIFY(first.anchor_code.find("__global__ void relu_kernel") != std::string::npos);
        QVERIFY(first.candidate_code.find("float4") != std::string::npos);
        QCOMPARE(first.speedup, std::optional<double>(1.2));
        // Fields outside the schema's core are kept, not dropped.
        QCOMPARE(first.extra["problem_name"].get<std::string>(), std::string("19_ReLU"));
        QCOMPARE(first.extra["problem_id"].get<int>(), 19);
        QCOMPARE(first.extra["model"].get<std::string>(), std::string("qwen2.5-coder-32b"));
        QVERIFY(!first.extra.contains("anchor_code"));

        const auto* failed = find_pair(result, "kb_l1_019_relu__c03");
        QVERIFY(failed);
        QVERIFY(!failed->speedup.has_value());
        QCOMPARE(failed->true_bin, 0);
        QVERIFY(!failed->source_true_bin.has_value());
        QVERIFY(failed->extra["error"].get<std::string>().find("compile_error") == 0);
    }

    void trueBinIsRecomputedWithOurScheme_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<int>("ours");
        QTest::addColumn<int>("theirs");  // -1: none in the file
        QTest::newRow("1.2x: their floor(2 log2 S)+4 says 4") << "kb_l1_019_relu__c01" << 5 << 4;
        QTest::newRow("2.0x: upper edge is inclusive") << "kb_l1_019_relu__c02" << 6 << 6;
        QTest::newRow("failure") << "kb_l1_019_relu__c03" << 0 << -1;
        QTest::newRow("0.6x") << "kb_l1_023_softmax__c01" << 3 << 2;
        QTest::newRow("1.0x") << "kb_l1_023_softmax__c02" << 4 << 4;
        QTest::newRow("3.1x") << "kb_l1_023_softmax__c03" << 7 << 7;
    }
    void trueBinIsRecomputedWithOurScheme() {
        QFETCH(QString, id);
        QFETCH(int, ours);
        QFETCH(int, theirs);
        const auto result = import_file("pairs.jsonl");
        const auto* pair = find_pair(result, id.toStdString());
        QVERIFY(pair);
        QCOMPARE(pair->true_bin, ours);
        QCOMPARE(pair->source_true_bin, theirs < 0 ? std::optional<int>() : std::optional<int>(theirs));
        QCOMPARE(result.binDisagreements(), 2);
    }

    void skipModeReportsEveryMalformedLine_data() {
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        QTest::newRow("bad JSON") << 3 << "not JSON";
        QTest::newRow("missing anchor_code") << 5 << "missing field \"anchor_code\"";
        QTest::newRow("string speedup") << 6 << "\"aggregated_speedup\" must be a number or null, found a string";
        QTest::newRow("negative speedup") << 8 << "must be a positive finite number, found -1.0";
        QTest::newRow("float true_bin") << 9 << "\"true_bin\" must be an integer, found a number";
        QTest::newRow("array") << 10 << "expected a JSON object, found an array";
        QTest::newRow("duplicate id") << 11 << "duplicate comparison_id \"m01\" (first on line 1)";
        QTest::newRow("overflowing speedup") << 12 << "not finite";
        QTest::newRow("missing speedup") << 14 << "missing field \"aggregated_speedup\"";
    }
    void skipModeReportsEveryMalformedLine() {
        QFETCH(int, line);
        QFETCH(QString, message);
        const auto result = import_file("malformed.jsonl");
        const auto it = std::find_if(result.issues.begin(), result.issues.end(),
                                     [&](const ImportIssue& issue) { return issue.line == line; });
        QVERIFY2(it != result.issues.end(), qPrintable(QString("no issue for line %1").arg(line)));
        QVERIFY2(it->message.find(message.toStdString()) != std::string::npos, it->message.c_str());
    }

    void skipModeKeepsTheGoodLines() {
        const auto result = import_file("malformed.jsonl");
        QCOMPARE(result.lines_read, 14);
        std::vector<int> good, bad;
        for (const auto& p : result.pairs)
            good.push_back(p.line);
        for (const auto& i : result.issues)
            bad.push_back(i.line);
        QCOMPARE(good, std::vector<int>({1, 2, 7, 13}));
        // Line 4 is blank: ignored, not an issue. Every other line is accounted for.
        QCOMPARE(bad, std::vector<int>({3, 5, 6, 8, 9, 10, 11, 12, 14}));
        QCOMPARE(result.pairs[0].speedup, std::optional<double>(1.5));  // the first m01 wins over its duplicate
        QVERIFY(!result.pairs[3].speedup.has_value());
    }

    void strictModeStopsAtFirstMalformedLine() {
        try {
            import_file("malformed.jsonl", ImportMode::Strict);
            QFAIL("strict import accepted a malformed file");
        } catch (const Error& e) {
            QCOMPARE(e.where().line, 3);
            QCOMPARE(e.where().file, kData + "malformed.jsonl");
            const std::string what = e.what();
            QVERIFY2(what.find("malformed.jsonl:3: not JSON") != std::string::npos, e.what());
        }
        // A clean file passes strict mode unchanged.
        QCOMPARE(import_file("pairs.jsonl", ImportMode::Strict).pairs.size(), size_t{6});
    }

    void blankLinesAreIgnored() {
        const auto result = import_text("\n   \n" + valid_line("x") + "\r\n\t\n" + valid_line("y") + "\n\n");
        QVERIFY(result.issues.empty());
        QCOMPARE(result.pairs.size(), size_t{2});
        QCOMPARE(result.pairs[0].line, 3);
        QCOMPARE(result.pairs[1].line, 5);
        QCOMPARE(result.lines_read, 6);
    }

    void speedupValidation_data() {
        QTest::addColumn<QString>("speedup");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("integer") << "2" << true;
        QTest::newRow("null") << "null" << true;
        QTest::newRow("zero") << "0" << false;
        QTest::newRow("negative") << "-0.5" << false;
        QTest::newRow("string") << "\"2.0\"" << false;
        QTest::newRow("bool") << "true" << false;
        QTest::newRow("overflow") << "1e400" << false;
    }
    void speedupValidation() {
        QFETCH(QString, speedup);
        QFETCH(bool, accepted);
        const auto result = import_text(valid_line("s", speedup.toStdString()));
        QCOMPARE(result.pairs.size(), size_t{accepted ? 1u : 0u});
        QCOMPARE(result.issues.size(), size_t{accepted ? 0u : 1u});
        if (!accepted)
            QCOMPARE(result.issues[0].line, 1);
    }

    void exportRoundTrips() {
        const auto first = import_file("pairs.jsonl");
        std::ostringstream out;
        export_forecasters_jsonl(out, first.pairs);
        std::istringstream in(out.str());
        const auto second = import_forecasters_jsonl(in, "exported.jsonl", BinScheme::gfV2(), ImportMode::Strict);
        QCOMPARE(second.pairs.size(), first.pairs.size());
        for (size_t i = 0; i < first.pairs.size(); ++i) {
            const auto& a = first.pairs[i];
            const auto& b = second.pairs[i];
            QCOMPARE(b.comparison_id, a.comparison_id);
            QCOMPARE(b.pack, a.pack);
            QCOMPARE(b.hardware, a.hardware);
            QCOMPARE(b.anchor_code, a.anchor_code);
            QCOMPARE(b.candidate_code, a.candidate_code);
            QCOMPARE(b.speedup, a.speedup);
            QCOMPARE(b.true_bin, a.true_bin);
            QCOMPARE(b.source_true_bin, a.source_true_bin);
            QCOMPARE(b.extra.dump(), a.extra.dump());
            QCOMPARE(b.line, a.line);
        }
        // The schema's own fields lead each line, so the file reads like theirs.
        QVERIFY(out.str().rfind("{\"comparison_id\":\"kb_l1_019_relu__c01\",\"pack\":", 0) == 0);
    }

    void exportOfOurOwnPairsUsesTheirBinning() {
        ImportedPair measured;
        measured.comparison_id = "kerncast-run3-c17";
        measured.pack = "kerncast";
        measured.hardware = "NVIDIA H100 80GB HBM3";
        measured.anchor_code = "a";
        measured.candidate_code = "b";
        measured.speedup = 1.2;
        measured.true_bin = 5;
        ImportedPair failed = measured;
        failed.comparison_id = "kerncast-run3-c18";
        failed.speedup.reset();
        failed.true_bin = 0;
        const auto j = to_forecasters_json(measured);
        QCOMPARE(j["true_bin"].get<int>(), 4);  // theirs, so their scoring reads it as they expect
        QCOMPARE(j["aggregated_speedup"].get<double>(), 1.2);
        const auto f = to_forecasters_json(failed);
        QVERIFY(f["aggregated_speedup"].is_null());
        QVERIFY(f["true_bin"].is_null());
    }

    void forecastersBinning_data() {
        QTest::addColumn<double>("speedup");
        QTest::addColumn<int>("bin");
        // Their SpeedupBin.from_speedup clamps to 1..8 (bin 0 is failure, never a speedup's bin).
        QTest::newRow("0.1 clamps low to 1") << 0.1 << 1;
        QTest::newRow("0.25") << 0.25 << 1;
        QTest::newRow("0.35 (below 2^-1.5)") << 0.35 << 1;
        QTest::newRow("0.36") << 0.36 << 1;
        QTest::newRow("0.5") << 0.5 << 2;
        QTest::newRow("0.99") << 0.99 << 3;
        QTest::newRow("1.0") << 1.0 << 4;
        QTest::newRow("1.41 (below sqrt 2)") << 1.41 << 4;
        QTest::newRow("1.42") << 1.42 << 5;
        QTest::newRow("2.0") << 2.0 << 6;
        QTest::newRow("3.99") << 3.99 << 7;
        QTest::newRow("4.0") << 4.0 << 8;
        QTest::newRow("100 clamps high to 8") << 100.0 << 8;
    }
    void forecastersBinning() {
        QFETCH(double, speedup);
        QFETCH(int, bin);
        QCOMPARE(forecasters_bin(speedup), bin);
    }

    void unreadableFileIsAnError() {
        try {
            import_forecasters_jsonl_file("/nonexistent/pairs.jsonl", BinScheme::gfV2(), ImportMode::Skip);
            QFAIL("no error for a missing file");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("/nonexistent/pairs.jsonl") != std::string::npos, e.what());
        }
    }

    void storedPairsKeepBothBins() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto file = dir.filePath("pairs.sqlite").toStdString();
        const auto result = import_file("pairs.jsonl");
        int64_t run_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "import pairs.jsonl";
            run_id = store.addRun(run);
            int announced = 0;
            store.setObserver([&](const StoreChange& change) { announced += change.table == "imported_pairs"; });
            store.addImportedPairs(run_id, result.pairs);
            QCOMPARE(announced, 6);
        }
        auto store = RunStore::open(file);
        const auto stored = store.importedPairs(run_id);
        QCOMPARE(stored.size(), result.pairs.size());
        for (size_t i = 0; i < stored.size(); ++i) {
            QCOMPARE(stored[i].comparison_id, result.pairs[i].comparison_id);
            QCOMPARE(stored[i].candidate_code, result.pairs[i].candidate_code);
            QCOMPARE(stored[i].speedup, result.pairs[i].speedup);
            QCOMPARE(stored[i].true_bin, result.pairs[i].true_bin);
            QCOMPARE(stored[i].source_true_bin, result.pairs[i].source_true_bin);
            QCOMPARE(stored[i].extra.dump(), result.pairs[i].extra.dump());
            QCOMPARE(stored[i].line, result.pairs[i].line);
        }
    }
};

QTEST_GUILESS_MAIN(TestForecastersImport)
#include "tst_forecasters_import.moc"
