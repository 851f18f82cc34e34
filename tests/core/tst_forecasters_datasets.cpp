#include "core/error.h"
#include "core/forecasters_datasets.h"

#include <QTest>

#include <cmath>
#include <sstream>

using namespace kerncast;

namespace {

ImportResult import_text(const std::string& text, ForecastersDataset dataset, ImportMode mode = ImportMode::Skip,
                         std::string* version = nullptr) {
    std::istringstream in(text);
    return import_forecasters_dataset(in, "in.jsonl", dataset, BinScheme::gfV2(), mode, version);
}

nlohmann::json eval_row() {
    return nlohmann::json::parse(R"({"comparison_id": "c1", "pack": "trimul", "anchor_code": "a", "candidate_code": "b",
        "hardware": "NVIDIA A100-SXM4-80GB", "aggregated_speedup": 1.2, "true_bin": 4, "source_id": "s1",
        "source_search": "gpu_mode/trimul__e0033__gemini3_flash.json", "internal_experiment": "e0033"})");
}

const char* kRlRow =
    R"({"row_id": "r1", "pack": "trimul", "anchor_code": "a", "candidate_code": "b", "aggregated_speedup": 0.6, )"
    R"("relative_bin": 3, "pair_type": "parent_edit", "hardware": "NVIDIA L40S", "source_id": "s", )"
    R"("source_search": "x.json", "internal_experiment": "e1"})";

const char* kDiscoveryRow =
    R"({"pair_id": "p1", "problem_id": "cross_entropy", "benchmark_family": "gpu_mode", "parent_code": "P", )"
    R"("child_code": "C", "g_speedup": 2.5, "true_bin": 6, "hardware": "NVIDIA A100-SXM4-80GB", )"
    R"("parent_node_id": "01A", "child_node_id": "01B", "source_id": "s", "source_search": "x.json", )"
    R"("internal_experiment": "e2"})";

// A v2 max-reward PUCT log as their FileEventLog writes it (pydantic dump_json, one event per line): a root with
// reward 2.0, one child evaluated to reward 3.0 and one whose evaluation failed.
const char* kPuctV2 =
    R"({"kind":"search_initialized","root":{"program_code":"ROOT","ancestors":[],"evaluation":{"observation":{},"reward":2.0},"ulid":"01ROOT","is_seed":true}})"
    "\n"
    R"({"kind":"step_started","step":1,"parent_ulids":["01ROOT"]})"
    "\n"
    R"({"kind":"mutation_requested","request_id":"m1","parent_ulid":"01ROOT","started_at":null})"
    "\n"
    R"({"kind":"mutation_completed","request_id":"m1","code":"CHILD","completed_at":null})"
    "\n"
    R"({"kind":"evaluation_requested","request_id":"e1","child_ulid":"01C1","parent_ulid":"01ROOT","code":"CHILD","from_mutation_request_id":"m1","started_at":null})"
    "\n"
    R"({"kind":"evaluation_completed","request_id":"e1","evaluation":{"observation":{},"reward":3.0},"completed_at":null})"
    "\n"
    R"({"kind":"evaluation_requested","request_id":"e2","child_ulid":"01C2","parent_ulid":"01C1","code":"GRANDCHILD","from_mutation_request_id":null,"started_at":null})"
    "\n"
    R"({"kind":"evaluation_failed","request_id":"e2","reason":"compile error","completed_at":null})"
    "\n"
    R"({"kind":"step_completed","step":1})"
    "\n";

// The v3 shape: per-search context on the root event, step and parent on every per-candidate event, forecasts.
const char* kPuctV3 =
    R"({"kind":"search_initialized","root":{"program_code":"ROOT","ancestors":[],"evaluation":{"observation":{},"reward":1.0},"ulid":"01ROOT","is_seed":true},"kernel_task":{"op_name":"trimul","level_id":0,"task_id":0},"seed_reference_code":"REF","hardware":{"device_name":"NVIDIA H100","compute_capability":[9,0],"total_global_memory_gb":80.0,"multiprocessor_count":132,"max_threads_per_multiprocessor":2048,"clock_rate_ghz":1.98,"memory_clock_rate_ghz":2.6,"memory_bus_width_bits":5120}})"
    "\n"
    R"({"kind":"step_started","step":1,"parent_ulids":["01ROOT"],"selected_parent_scores":[0.5]})"
    "\n"
    R"({"kind":"forecast_completed","step":1,"request_id":"01R1","parent_ulid":"01ROOT","forecast":{"predicted_bin":5,"bin_probabilities":{},"reasoning":"","raw_probability_sum":1.0}})"
    "\n"
    R"({"kind":"candidate_selected","step":1,"request_id":"01R1","parent_ulid":"01ROOT","selection_score":1.2})"
    "\n"
    R"({"kind":"evaluation_requested","step":1,"request_id":"01R1","parent_ulid":"01ROOT","code":"CHILD","started_at":null})"
    "\n"
    R"({"kind":"evaluation_completed","step":1,"request_id":"01R1","parent_ulid":"01ROOT","evaluation":{"observation":{},"reward":0.5},"completed_at":null})"
    "\n"
    R"({"kind":"evaluations_drained","step":1,"parent_ulid":"01ROOT"})"
    "\n";

std::string patched(const char* row, const nlohmann::json& patch) {
    nlohmann::json j = nlohmann::json::parse(row);
    j.merge_patch(patch);
    return j.dump();
}

}  // namespace

class TestForecastersDatasets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void evalSetRowSchema_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");    // JSON; "-" removes the field
        QTest::addColumn<QString>("problem");  // "" when the row passes
        QTest::newRow("valid") << ""
                               << ""
                               << "";
        QTest::newRow("no source_id") << "source_id"
                                      << "-"
                                      << "missing field \"source_id\"";
        QTest::newRow("no source_search") << "source_search"
                                          << "-"
                                          << "missing field \"source_search\"";
        QTest::newRow("no internal_experiment") << "internal_experiment"
                                                << "-"
                                                << "missing field \"internal_experiment\"";
        QTest::newRow("failed candidate") << "aggregated_speedup"
                                          << "null"
                                          << "a failed candidate is not a row of this dataset";
        QTest::newRow("bin 0") << "true_bin"
                               << "0"
                               << "must be an integer from 1 to 8";
        QTest::newRow("bin 9") << "true_bin"
                               << "9"
                               << "must be an integer from 1 to 8";
        // 1.2 is their bin 4 (floor(2*log2 1.2)+4 = 4); 5 is gf-v2's bin, which their validator rejects.
        QTest::newRow("our bin, not theirs") << "true_bin"
                                             << "5"
                                             << "is not clamp(floor(2*log2 S)+4, 1, 8) = 4";
        QTest::newRow("string speedup") << "aggregated_speedup"
                                        << "\"1.2\""
                                        << "must be a number";
    }

    void evalSetRowSchema() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, problem);
        nlohmann::json row = eval_row();
        if (value == "-")
            row.erase(field.toStdString());
        else if (!field.isEmpty())
            row[field.toStdString()] = nlohmann::json::parse(value.toStdString());
        const auto problems = eval_set_row_problems(row);
        if (problem.isEmpty()) {
            QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
            return;
        }
        QVERIFY(!problems.empty());
        QVERIFY2(problems.front().find(problem.toStdString()) != std::string::npos, problems.front().c_str());
    }

    void importsRlPoolAndDiscoveryPairs() {
        auto rl = import_text(std::string(kRlRow) + "\n", ForecastersDataset::RlTrainingPool, ImportMode::Strict);
        QCOMPARE(rl.pairs.size(), size_t(1));
        QCOMPARE(rl.pairs[0].comparison_id, std::string("r1"));
        QCOMPARE(*rl.pairs[0].speedup, 0.6);
        QCOMPARE(rl.pairs[0].source_true_bin, std::optional<int>(3));  // their relative_bin
        QCOMPARE(rl.pairs[0].true_bin, BinScheme::gfV2().binOf(0.6));  // ours
        QCOMPARE(rl.pairs[0].extra["pair_type"].get<std::string>(), std::string("parent_edit"));

        auto d = import_text(std::string("\n") + kDiscoveryRow + "\n", ForecastersDataset::DiscoveryPairs);
        QVERIFY(d.issues.empty());
        QCOMPARE(d.pairs[0].pack, std::string("cross_entropy"));
        QCOMPARE(d.pairs[0].anchor_code, std::string("P"));
        QCOMPARE(d.pairs[0].candidate_code, std::string("C"));
        QCOMPARE(d.pairs[0].line, 2);
        QCOMPARE(d.pairs[0].extra["child_node_id"].get<std::string>(), std::string("01B"));
    }

    void rowErrorsNameTheLine_data() {
        QTest::addColumn<int>("dataset");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("rl: bad pair_type")
            << int(ForecastersDataset::RlTrainingPool)
            << QString::fromStdString(std::string(kRlRow) + "\n" +
                                      patched(kRlRow, {{"row_id", "r2"}, {"pair_type", "x"}}))
            << "in.jsonl:2: field \"pair_type\" must be one of seed, parent_edit, pair";
        QTest::newRow("rl: duplicate id")
            << int(ForecastersDataset::RlTrainingPool) << QString::fromStdString(std::string(kRlRow) + "\n" + kRlRow)
            << "in.jsonl:2: duplicate row_id \"r1\" (first on line 1)";
        QTest::newRow("discovery: bad family")
            << int(ForecastersDataset::DiscoveryPairs)
            << QString::fromStdString(patched(kDiscoveryRow, {{"benchmark_family", "l2"}}))
            << "in.jsonl:1: field \"benchmark_family\" must be one of gpu_mode, kernelbench_l3";
        QTest::newRow("discovery: not JSON") << int(ForecastersDataset::DiscoveryPairs) << "\n\n{oops"
                                             << "in.jsonl:3: not JSON";
        QTest::newRow("puct: unknown kind")
            << int(ForecastersDataset::PuctEvents) << QString(kPuctV2) + "{\"kind\":\"teleported\"}\n"
            << "in.jsonl:10: expected a search event";
        QTest::newRow("puct: v3 event without its step")
            << int(ForecastersDataset::PuctEvents)
            << QString(kPuctV3) +
                   "{\"kind\":\"evaluation_failed\",\"request_id\":\"x\",\"parent_ulid\":\"y\",\"reason\":\"r\"}\n"
            << "in.jsonl:8: a v3 evaluation_failed event needs \"step\"";
        QTest::newRow("puct: completion of nothing")
            << int(ForecastersDataset::PuctEvents)
            << QString(kPuctV2) +
                   "{\"kind\":\"evaluation_completed\",\"request_id\":\"zz\",\"evaluation\":{\"reward\":1}}\n"
            << "in.jsonl:10: evaluation_completed for request zz that no evaluation_requested line opened";
    }

    void rowErrorsNameTheLine() {
        QFETCH(int, dataset);
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            import_text(text.toStdString(), ForecastersDataset(dataset), ImportMode::Strict);
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
        // Skip mode keeps the good lines and lists the bad one.
        const auto r = import_text(text.toStdString(), ForecastersDataset(dataset), ImportMode::Skip);
        QCOMPARE(r.issues.size(), size_t(1));
    }

    void puctV2LogBecomesParentChildPairs() {
        std::string version;
        const auto r = import_text(kPuctV2, ForecastersDataset::PuctEvents, ImportMode::Strict, &version);
        QCOMPARE(version, std::string("v2"));
        QCOMPARE(r.pairs.size(), size_t(2));
        QCOMPARE(r.pairs[0].anchor_code, std::string("ROOT"));
        QCOMPARE(r.pairs[0].candidate_code, std::string("CHILD"));
        QCOMPARE(*r.pairs[0].speedup, 1.5);                           // reward 3.0 over its parent's 2.0
        QCOMPARE(r.pairs[0].source_true_bin, std::optional<int>(5));  // floor(2*log2 1.5)+4
        QCOMPARE(r.pairs[0].line, 6);
        QCOMPARE(r.pairs[1].anchor_code, std::string("CHILD"));  // the grandchild's parent is the child
        QVERIFY(!r.pairs[1].speedup);                            // its evaluation failed
        QCOMPARE(r.pairs[1].extra["failure"].get<std::string>(), std::string("compile error"));
    }

    void puctV3LogIsRecognised() {
        std::string version;
        const auto r = import_text(kPuctV3, ForecastersDataset::PuctEvents, ImportMode::Strict, &version);
        QCOMPARE(version, std::string("v3"));
        QCOMPARE(r.pairs.size(), size_t(1));
        QCOMPARE(r.pairs[0].pack, std::string("trimul"));
        QCOMPARE(r.pairs[0].hardware, std::string("NVIDIA H100"));
        QCOMPARE(*r.pairs[0].speedup, 0.5);
        QCOMPARE(r.pairs[0].extra["step"].get<int>(), 1);
    }

    void rewardComponents_data() {
        QTest::addColumn<int>("predicted");
        QTest::addColumn<int>("truth");
        QTest::addColumn<double>("peak");  // probability on the predicted bin; the rest spread evenly
        QTest::newRow("certain and right") << 5 << 5 << 1.0;
        QTest::newRow("certain and wrong by 3") << 2 << 5 << 1.0;
        QTest::newRow("hedged, right") << 4 << 4 << 0.44;
        QTest::newRow("hedged, top bin") << 1 << 8 << 0.3;
    }

    void rewardComponents() {
        QFETCH(int, predicted);
        QFETCH(int, truth);
        QFETCH(double, peak);
        std::array<double, kBinCount> p{};
        for (int b = 1; b <= kBinCount; ++b)
            p[b - 1] = b == predicted ? peak : (1 - peak) / 7.0;
        const ForecastReward r = forecast_reward(p, predicted, truth);
        // Their definitions, computed here independently: half-Brier; CRPS over the first 7 CDF points, / 7.
        double brier = 0, crps = 0, cdf = 0;
        for (int b = 1; b <= kBinCount; ++b) {
            brier += std::pow(p[b - 1] - (b == truth ? 1 : 0), 2);
            cdf += p[b - 1];
            if (b < kBinCount)
                crps += std::pow(cdf - (b >= truth ? 1 : 0), 2);
        }
        brier *= 0.5;
        crps /= 7;
        const double correct = predicted == truth ? 1 : 0;
        QVERIFY(std::abs(r.brier - brier) < 1e-12);
        QVERIFY(std::abs(r.crps - crps) < 1e-12);
        QCOMPARE(r.correctness, correct);
        QVERIFY(std::abs(r.correctness_brier - (correct + 1 - brier)) < 1e-12);
        QVERIFY(std::abs(r.correctness_crps - (correct + 1 - crps)) < 1e-12);
        QCOMPARE(r.distance, 1.0 - std::abs(predicted - truth) / 8.0);
        if (peak == 1.0 && predicted == truth) {
            QCOMPARE(r.correctness_brier, 2.0);
            QCOMPARE(r.correctness_crps, 2.0);
        }
        QVERIFY_THROWS_EXCEPTION(Error, forecast_reward(p, predicted, 0));  // a failure has no bin to reward
    }

    void predictionsRowHasTheirShape() {
        Forecast f = Forecast::fromRaw({0, 0, 0.1, 0.2, 0.4, 0.2, 0.1, 0});
        f.surrogate_id = "local-xgb";
        f.reasoning = "r";
        f.tokens_in = 10;
        f.tokens_out = 5;
        f.latency_ms = 1500;
        const auto j = predictions_row("c1", "trimul", f, 2);
        std::vector<std::string> keys;
        for (auto it = j.begin(); it != j.end(); ++it)
            keys.push_back(it.key());
        QCOMPARE(keys,
                 (std::vector<std::string>{"comparison_id", "pack", "surrogate_label", "repeat", "predicted_bin",
                                           "bin_probabilities", "reasoning", "raw_probability_sum", "parse_failed",
                                           "parse_error", "input_tokens", "output_tokens", "elapsed_s"}));
        QCOMPARE(j["predicted_bin"].get<int>(), 5);
        QCOMPARE(j["bin_probabilities"].size(), size_t(8));
        QCOMPARE(j["bin_probabilities"][4]["bin"].get<int>(), 5);
        QCOMPARE(j["bin_probabilities"][4]["p"].get<double>(), 0.4);
        QCOMPARE(j["elapsed_s"].get<double>(), 1.5);
        QCOMPARE(j["repeat"].get<int>(), 2);
    }
};

QTEST_GUILESS_MAIN(TestForecastersDatasets)
#include "tst_forecasters_datasets.moc"
