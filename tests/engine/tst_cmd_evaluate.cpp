// kerncast-cli evaluate end to end: pairs exported from a replay search, scored with the local surrogate and with an
// LLM behind a real HTTP server on loopback; the JSON summary, the report tables and the stored forecasts.
#include "core/metrics.h"
#include "core/run_store.h"
#include "tests/support/chat_replies.h"
#include "tests/support/cli_runner.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

using namespace kerncast;
using namespace kerncast::test;

namespace {

// A tool-call answer that puts all mass on one bin.
std::string tool_answer(int bin) {
    static const char* keys[] = {"p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown",
                                 "p_minor_slowdown",  "p_minor_speedup",        "p_significant_speedup",
                                 "p_high_speedup",    "p_extreme_speedup"};
    nlohmann::json args = {{"predicted_bin", bin}, {"reasoning", "test answer"}};
    for (int b = 1; b <= 8; ++b)
        args[keys[b - 1]] = b == bin ? 1.0 : 0.0;
    const nlohmann::json calls = nlohmann::json::array(
        {{{"id", "call_1"},
          {"type", "function"},
          {"function", {{"name", "submit_kernel_runtime_estimate"}, {"arguments", args.dump()}}}}});
    return chatCompletionBody(nullptr, 100, 20, calls);
}

}  // namespace

class TestCmdEvaluate : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_pairs;

private slots:
    void initTestCase() {
        const std::string run = m_dir.filePath("run.sqlite").toStdString();
        auto r = run_cli({"search", "--problem", "saxpy", "--device", "replay:nvidia-h200", "--surrogate", "none",
                          "--gating", "measure-all", "--budget", "12", "--run", run, "--quiet"});
        QVERIFY2(r.code == 0, r.err.c_str());
        m_pairs = m_dir.filePath("pairs.jsonl").toStdString();
        r = run_cli({"export", "--run", run, "--format", "pairs-jsonl", "--out", m_pairs});
        QVERIFY2(r.code == 0, r.err.c_str());
    }

    void localSurrogateScoresThePairs() {
        const std::string report = m_dir.filePath("report").toStdString();
        const std::string store = m_dir.filePath("local-eval.sqlite").toStdString();
        auto r = run_cli(
            {"evaluate", "--pairs", m_pairs, "--surrogate", "local", "--report", report, "--store", store, "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["n"].get<int>(), 12);
        for (const char* key : {"accuracy", "off_by_one", "brier", "crps", "nll", "ece", "aurc", "kendall_tau_b",
                                "top10_recovery", "majority_accuracy", "brier_climatology", "crps_climatology"})
            QVERIFY2(j["metrics"].contains(key) && j["metrics"][key].is_number(), key);
        // Skill scores are numbers, or null where every pair fell in one bin.
        for (const char* key : {"brier_skill", "crps_skill"})
            QVERIFY2(j["metrics"].contains(key) && (j["metrics"][key].is_number() || j["metrics"][key].is_null()), key);
        QVERIFY(j["per_pack"].contains("saxpy"));
        QCOMPARE(j["per_pack"]["saxpy"]["n"].get<int>(), 12);
        // Why these numbers are not a search's calibration line on the same pairs: that surrogate learned from the
        // run's measurements while it forecast; this one learns nothing from the pairs.
        QVERIFY(j.value("compared_with_the_search", std::string()).find("learns nothing from these pairs") !=
                std::string::npos);
        const auto text = run_cli({"evaluate", "--pairs", m_pairs, "--surrogate", "local", "--store",
                                   m_dir.filePath("local-eval-text.sqlite").toStdString()});
        QVERIFY2(text.out.find("compared with the search: ") != std::string::npos, text.out.c_str());
        for (const char* f :
             {"metrics.json", "reliability.csv", "reliability.json", "risk_coverage.csv", "risk_coverage.json"})
            QVERIFY2(std::filesystem::file_size(report + "/" + f) > 0, f);
        // Every forecast is in the run file, next to the measured speedup it is scored against.
        RunStore s = RunStore::open(store);
        const auto run = s.runs().back();
        const auto cands = s.candidates(run.id);
        QCOMPARE(cands.size(), size_t(12));
        for (const auto& c : cands) {
            QCOMPARE(c.mutator, Mutator::Imported);
            QCOMPARE(s.forecastsFor(c.id).size(), size_t(1));
            QVERIFY(s.measurementsFor(c.id).at(0).measurement.speedup > 0);
        }
    }

    // The run file holds speedups over the reference, as a search's does: a pair anchored on a parent is stored as
    // the parent's speedup times S, its forecast carries the parent's speedup, and dividing one by the other (as the
    // workbench does) scores the same S the command scored.
    void anchoredPairsAreStoredOverTheReference() {
        const std::string store = m_dir.filePath("anchored-eval.sqlite").toStdString();
        auto r = run_cli({"evaluate", "--pairs", m_pairs, "--surrogate", "local", "--store", store, "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        std::map<std::string, nlohmann::json> lines;
        std::ifstream in(m_pairs);
        for (std::string line; std::getline(in, line);) {
            const auto pair = nlohmann::json::parse(line);
            lines["pair:" + pair["comparison_id"].get<std::string>()] = pair;
        }
        RunStore s = RunStore::open(store);
        std::vector<ScoredForecast> scored;
        int anchored = 0;
        for (const auto& c : s.candidates(s.runs().back().id)) {
            const nlohmann::json& pair = lines.at(c.label);
            const double S = pair["aggregated_speedup"].get<double>();
            const double anchor = pair.value("anchor_speedup", 1.0);
            anchored += pair.value("anchor_id", 0) > 0;
            const double stored = s.measurementsFor(c.id).at(0).measurement.speedup;
            QVERIFY2(std::abs(stored - S * anchor) < 1e-9 * stored, c.label.c_str());
            const Forecast f = s.forecastsFor(c.id).at(0).forecast;
            QVERIFY2(std::abs(f.anchor_speedup - anchor) < 1e-9 * anchor, c.label.c_str());
            scored.push_back({f.probabilities, stored / f.anchor_speedup, "saxpy"});
        }
        QVERIFY2(anchored > 0, "the exported search has no pair anchored on a parent");
        const ForecastMetrics m = compute_metrics(scored, BinScheme::gfV2());
        QCOMPARE(m.accuracy, j["metrics"]["accuracy"].get<double>());
        QCOMPARE(m.majority_accuracy, j["metrics"]["majority_accuracy"].get<double>());
    }

    void llmSurrogateOverHttp() {
        LoopbackHttpServer server;
        // Every answer says "high speedup" (bin 7): accuracy is the share of pairs whose true bin is 7.
        server.setHandler([](const HttpRequestSeen&) { return HttpAnswer::json(tool_answer(7)); });
        const std::string store = m_dir.filePath("llm-eval.sqlite").toStdString();
        auto r = run_cli({"evaluate", "--pairs", m_pairs, "--surrogate", "llm", "--endpoint", server.baseUrl(),
                          "--model", "test-model", "--concurrency", "4", "--store", store, "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["n"].get<int>(), 12);
        QCOMPARE(j["surrogate"].get<std::string>(), std::string("llm:test-model"));
        QCOMPARE(server.requestCount(), size_t(12));
        RunStore s = RunStore::open(store);
        const auto run = s.runs().back();
        int sevens = 0, prompts = 0;
        for (const auto& c : s.candidates(run.id)) {
            const auto m = s.measurementsFor(c.id).at(0).measurement;
            sevens += BinScheme::gfV2().binOf(m.speedup) == 7;
            QCOMPARE(s.forecastsFor(c.id).at(0).forecast.predicted_bin, 7);
        }
        for (const auto& e : s.events(run.id))
            prompts += e.kind == "prompt";
        QCOMPARE(prompts, 12);
        QCOMPARE(j["metrics"]["accuracy"].get<double>(), sevens / 12.0);
        // A forecaster that always names bin 7 is as accurate as the majority bin at best, and no constant forecast
        // beats the set's own frequencies on the Brier score: its skill is never above 0.
        QVERIFY(j["metrics"]["accuracy"].get<double>() <= j["metrics"]["majority_accuracy"].get<double>());
        if (!j["metrics"]["brier_skill"].is_null())
            QVERIFY(j["metrics"]["brier_skill"].get<double>() <= 1e-12);
    }

    void trueBinsFromTheFileOrTheScheme() {
        // Every answer says bin 4. The file's true bins are theirs (floor(2*log2 S)+4): 1.2x and 1.0x are bin 4
        // there, while gf-v2 puts 1.2x in bin 5; so the file scores 2 of the 5 measured pairs right, the scheme 1.
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) { return HttpAnswer::json(tool_answer(4)); });
        const std::string pairs = KERNCAST_TEST_DATA "/forecasters/pairs.jsonl";
        auto eval = [&](const char* bins) {
            auto r = run_cli({"evaluate", "--pairs", pairs, "--surrogate", "llm", "--endpoint", server.baseUrl(),
                              "--model", "m", "--true-bins", bins, "--store",
                              m_dir.filePath(QString("bins-%1.sqlite").arg(bins)).toStdString(), "--json"});
            if (r.code != 0)
                qWarning("%s", (r.out + r.err).c_str());
            return nlohmann::json::parse(r.out);
        };
        const auto file = eval("file");
        QCOMPARE(file["true_bins"].get<std::string>(), std::string("file"));
        QVERIFY(file["true_bins_rule"].get<std::string>().find("floor(2*log2 S)+4") != std::string::npos);
        QCOMPARE(file["n"].get<int>(), 5);  // the failed candidate has no bin at all
        QCOMPARE(file["metrics"]["accuracy"].get<double>(), 2.0 / 5.0);
        const auto scheme = eval("scheme");
        QCOMPARE(scheme["true_bins"].get<std::string>(), std::string("scheme"));
        QCOMPARE(scheme["metrics"]["accuracy"].get<double>(), 1.0 / 5.0);

        auto r = run_cli({"evaluate", "--pairs", pairs, "--surrogate", "llm", "--true-bins", "mine"});
        QCOMPARE(r.code, 2);  // a usage error
        QVERIFY2(r.err.find("--true-bins") != std::string::npos, r.err.c_str());
    }

    void failingEndpointIsReportedNotFatal() {
        LoopbackHttpServer server;
        int n = 0;
        // Every other answer is garbage: those pairs fail, the rest are scored, the exit code says so.
        server.setHandler([&](const HttpRequestSeen&) {
            return ++n % 2 ? HttpAnswer::json(tool_answer(8)) : HttpAnswer::json(chatCompletionBody("no idea"));
        });
        auto r =
            run_cli({"evaluate", "--pairs", m_pairs, "--surrogate", "llm", "--endpoint", server.baseUrl(), "--model",
                     "m", "--concurrency", "1", "--store", m_dir.filePath("half.sqlite").toStdString(), "--json"});
        QCOMPARE(r.code, 2);
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY(j["failed_forecasts"].get<int>() > 0);
        QCOMPARE(j["n"].get<int>() + j["failed_forecasts"].get<int>(), 12);
        QVERIFY(r.err.find("did not parse") != std::string::npos);

        r = run_cli({"evaluate", "--pairs", m_dir.filePath("missing.jsonl").toStdString(), "--surrogate", "local"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.find("missing.jsonl") != std::string::npos);
    }

    // A hostile pair file: one pair whose problem_name is a number fails that pair's forecast, lines nested too deep
    // or with a number past the largest double are skipped with their line; the other pairs are scored.
    void malformedPairsFailOnlyThemselves() {
        std::ifstream in(m_pairs);
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        QCOMPARE(lines.size(), size_t(12));
        nlohmann::json numbered = nlohmann::json::parse(lines[1]);
        numbered["pack"] = "elsewhere";
        numbered["problem_name"] = 7;
        lines[1] = numbered.dump();
        lines[2] = std::string(100000, '[') + std::string(100000, ']');
        lines[3].replace(lines[3].rfind('}'), 1, ", \"huge\": 1e999}");
        const std::string hostile = m_dir.filePath("hostile.jsonl").toStdString();
        std::ofstream out(hostile);
        for (const auto& line : lines)
            out << line << "\n";
        out.close();
        auto r = run_cli({"evaluate", "--pairs", hostile, "--surrogate", "local", "--store",
                          m_dir.filePath("hostile.sqlite").toStdString(), "--json"});
        QCOMPARE(r.code, 2);
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["n"].get<int>(), 9);
        QCOMPARE(j["failed_forecasts"].get<int>(), 1);
        QCOMPARE(j["skipped_lines"].get<int>(), 2);
        QVERIFY2(r.err.find("\"problem_name\" must be a string, found number") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("hostile.jsonl:3: skipped: not JSON (invalid JSON at line 1, column 65: objects and arrays "
                            "nest deeper than 64 levels)") != std::string::npos,
                 r.err.c_str());
        QVERIFY2(r.err.find("hostile.jsonl:4: skipped: not JSON (invalid JSON at line 1") != std::string::npos &&
                     r.err.find("the number 1e999 is not finite (too large for a double)") != std::string::npos,
                 r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCmdEvaluate)
#include "tst_cmd_evaluate.moc"
