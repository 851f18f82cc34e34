// kerncast-cli as other tools and shells see it: usage errors exit 2 and name what was wrong, a search reports
// fast_p, a run exports GPU Forecasters eval-set rows that pass their schema, predictions in their shape and RL
// reward components, and their other datasets import with line-numbered errors.
#include "tests/support/cli_runner.h"

#include "core/forecasters_datasets.h"
#include "core/forecasters_import.h"
#include "core/run_store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace kerncast;
using kerncast::test::run_cli;

namespace {

std::vector<nlohmann::json> lines_of(const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    return out;
}

}  // namespace

class TestInteropCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_run;  // a gated search with the local surrogate: measured and trusted candidates, forecasts

private Q_SLOTS:
    void initTestCase() {
        m_run = m_dir.filePath("gated.sqlite").toStdString();
        const auto r =
            run_cli({"--json", "search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate",
                     "local", "--gating", "selective", "--budget", "12", "--seed", "3", "--run", m_run, "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        // fast_p of this one problem: against the reference and against the recorded PyTorch eager time.
        const auto j = nlohmann::json::parse(r.out);
        const auto& ref = j["fast_p"]["reference"];
        QCOMPARE(ref["p"], (nlohmann::json{0.0, 1.0, 1.5, 2.0}));
        QCOMPARE(ref["n"].get<int>(), 1);
        const double best = j["best_speedup"].get<double>();
        QCOMPARE(ref["fast_p"][1].get<double>(), best > 1.0 ? 1.0 : 0.0);
        QCOMPARE(ref["fast_p"][3].get<double>(), best > 2.0 ? 1.0 : 0.0);
        const auto& eager = j["fast_p"]["pytorch_eager"];
        QCOMPARE(eager["n"].get<int>(), 1);  // the H200 softmax recording holds an eager time
        QCOMPARE(eager["fast_p"][0].get<double>(), 1.0);
    }

    void usageErrorsExitTwoWithCli11sMessage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing required option")
            << QStringList{"export", "--run", "x.sqlite"} << "--format is required";
        QTest::newRow("value not allowed")
            << QStringList{"export", "--run", "x.sqlite", "--format", "csv"} << "csv not in {";
        QTest::newRow("unknown option") << QStringList{"problems", "list", "--colour"} << "--colour";
        QTest::newRow("unknown command") << QStringList{"frobnicate", "--json"} << "unknown command 'frobnicate'";
        QTest::newRow("no command") << QStringList{} << "subcommand is required";
    }

    void usageErrorsExitTwoWithCli11sMessage() {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        std::vector<std::string> a;
        for (const auto& s : args)
            a.push_back(s.toStdString());
        const auto r = run_cli(a);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find(expected.toStdString()) != std::string::npos, r.err.c_str());
        // A successful --help is not a usage error.
        QCOMPARE(run_cli({"--help"}).code, 0);
    }

    void pairsExportPassesTheirEvalSetSchema() {
        const auto r = run_cli({"export", "--run", m_run, "--format", "pairs-jsonl"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto rows = lines_of(r.out);
        QVERIFY(!rows.empty());
        for (const auto& row : rows) {
            const auto problems = eval_set_row_problems(row);
            QVERIFY2(
                problems.empty(),
                (row["comparison_id"].get<std::string>() + ": " + (problems.empty() ? "" : problems.front())).c_str());
            QCOMPARE(row["true_bin"].get<int>(), forecasters_bin(row["aggregated_speedup"].get<double>()));
        }
        // Importing our own export: the only bins that differ are those where the two partitions do.
        std::istringstream in(r.out);
        const auto back = import_forecasters_jsonl(in, "export.jsonl", BinScheme::gfV2(), ImportMode::Strict);
        for (const auto& p : back.pairs) {
            const double s = *p.speedup;
            const bool same_partition = BinScheme::gfV2().binOf(s) == forecasters_bin(s);
            QCOMPARE(p.source_true_bin.value() == p.true_bin, same_partition);
        }
    }

    void predictionsAndRewardsExports() {
        auto r = run_cli({"export", "--run", m_run, "--format", "predictions-jsonl"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto predictions = lines_of(r.out);
        RunStore store = RunStore::open(m_run);
        QCOMPARE(static_cast<int64_t>(predictions.size()), store.forecastCount(store.runs().back().id));
        for (const auto& p : predictions) {
            QCOMPARE(p["bin_probabilities"].size(), size_t(8));
            double sum = 0;
            for (const auto& bp : p["bin_probabilities"])
                sum += bp["p"].get<double>();
            QVERIFY(std::abs(sum - 1.0) < 1e-9);
            QVERIFY(p["comparison_id"].get<std::string>().rfind("run", 0) == 0);
            QCOMPARE(p["pack"].get<std::string>(), std::string("softmax"));
        }

        const std::string out = m_dir.filePath("rewards.jsonl").toStdString();
        r = run_cli({"--json", "export", "--run", m_run, "--format", "rewards-jsonl", "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto summary = nlohmann::json::parse(r.out);
        std::ifstream in(out);
        std::stringstream text;
        text << in.rdbuf();
        const auto rewards = lines_of(text.str());
        QVERIFY(!rewards.empty());
        // Every forecast is either rewarded (its candidate was measured) or counted as left out.
        QCOMPARE(static_cast<int>(rewards.size()) + summary["forecasts_left_out"].get<int>(),
                 static_cast<int>(predictions.size()));
        for (const auto& w : rewards) {
            std::array<double, kBinCount> p{};
            for (int b = 0; b < kBinCount; ++b)
                p[b] = w["bin_probabilities"][b].get<double>();
            const int truth = forecasters_bin(w["aggregated_speedup"].get<double>());
            QCOMPARE(w["true_bin"].get<int>(), truth);
            const ForecastReward expect = forecast_reward(p, w["predicted_bin"].get<int>(), truth);
            QCOMPARE(w["reward_correctness_brier"].get<double>(), expect.correctness_brier);
            QCOMPARE(w["reward_correctness_crps"].get<double>(), expect.correctness_crps);
            QCOMPARE(w["distance"].get<double>(), expect.distance);
            QVERIFY(w["reward_correctness_brier"].get<double>() >= 0 &&
                    w["reward_correctness_brier"].get<double>() <= 2);
        }
    }

    void importsTheirOtherDatasets() {
        const std::string rl = m_dir.filePath("rl.jsonl").toStdString();
        std::ofstream(rl)
            << R"({"row_id": "r1", "pack": "trimul", "anchor_code": "a", "candidate_code": "b", "aggregated_speedup": 1.7, "relative_bin": 5, "pair_type": "pair", "hardware": "NVIDIA L40S", "source_id": "s", "source_search": "x.json", "internal_experiment": "e"})"
            << "\n"
            << R"({"row_id": "r2", "pack": "trimul", "anchor_code": "a", "candidate_code": "b", "aggregated_speedup": null, "relative_bin": 5, "pair_type": "pair", "hardware": "NVIDIA L40S", "source_id": "s", "source_search": "x.json", "internal_experiment": "e"})"
            << "\n";
        const std::string store = m_dir.filePath("rl.sqlite").toStdString();
        auto r = run_cli({"--json", "import", "--pairs", rl, "--dataset", "rl-pool", "--store", store});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["imported"].get<int>(), 1);
        QCOMPARE(j["skipped"][0]["line"].get<int>(), 2);
        QVERIFY(j["skipped"][0]["message"].get<std::string>().find("aggregated_speedup") != std::string::npos);

        r = run_cli({"import", "--pairs", rl, "--dataset", "rl-pool", "--store", store, "--strict"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(rl + ":2:") != std::string::npos, r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestInteropCli)
#include "tst_interop_cli.moc"
