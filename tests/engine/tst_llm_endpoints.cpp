// The LLM search path end to end through each emulated product (tests/support/llm_servers.h): `search` with the LLM
// forecaster, LLM rewrites and LLM diffs on the replay device, and `evaluate`, both in the auto profile with no
// per-server flag: the endpoint, model and prices come from the settings file alone. Checked: candidates of both
// mutators, forecasts without failures, every call stored with its prompt (and reasoning where the server sends
// it), costs that match the server's token counts and the prices, duplicates pointing at their original, the cost
// budget stopping a run (also after --resume), and predict-or-defer.
#include "core/run_store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/llm_servers.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

using namespace kerncast;
using namespace kerncast::test;
using nlohmann::json;

namespace {

constexpr double kPriceIn = 2.0;  // USD per million tokens, from the settings file
constexpr double kPriceOut = 8.0;

// Two real rewrites of saxpy (each answer repeats one of them: the second time it is a duplicate).
std::string rewrite(int n) {
    const std::string body =
        n % 2 ? "    for (int k = 0; k < 4; ++k)\n" : "#pragma unroll\n    for (int k = 0; k < 4; ++k)\n";
    return "Four elements per thread (answer " + std::to_string(n) +
           ").\n\n```cuda\n"
           "// @kerncast launch saxpy4 grid(ceil_div(N, 1024)) block(256) args(x, y, a, N)\n"
           "// answer " +
           std::to_string(n) +
           "\n"
           "extern \"C\" __global__ void saxpy4(const float* x, float* y, float a, int N) {\n"
           "    int i = (blockIdx.x * 256 + threadIdx.x) * 4;\n" +
           body + "        if (i + k < N) y[i + k] = a * x[i + k] + y[i + k];\n}\n```\n";
}

// An edit of the parent shown in the prompt: a real one (a #define line) or, every third answer, a comment only
// (the parent again: a duplicate).
std::string diff(const json& request, int n) {
    const std::string prompt = request["messages"].back()["content"].get<std::string>();
    const size_t parent = prompt.find("# Parent to improve");
    const size_t code = prompt.find("```cuda\n", parent);
    const size_t lineEnd = prompt.find('\n', code + 8);
    const std::string first = prompt.substr(code + 8, lineEnd - code - 8);
    const std::string added = n % 3 == 0 ? "// a comment only" : "#define KERNCAST_EDIT_" + std::to_string(n) + " 1";
    return "One edit.\n<<<<<<< SEARCH\n" + first + "\n=======\n" + first + "\n" + added + "\n>>>>>>> REPLACE\n";
}

EmulatedLlmServer::Answer kernelAnswers(int deferEvery = 0) {
    return [deferEvery](LlmTask task, const json& request, int n) {
        switch (task) {
        case LlmTask::Forecast:
            if (deferEvery > 0 && n % deferEvery == 0)
                return json{{"tool", "defer_to_measurement"}, {"arguments", {{"reasoning", "cannot tell"}}}}.dump();
            return estimate_arguments(1 + n % 8);
        case LlmTask::Rewrite:
            return rewrite(n);
        case LlmTask::Diff:
            return diff(request, n);
        }
        return std::string();
    };
}

// XDG_CONFIG_HOME pointing at a folder with kerncast/llm.json for one test; the old value comes back after.
class SettingsFile {
public:
    SettingsFile(const json& settings) {
        if (const char* old = std::getenv("XDG_CONFIG_HOME"))
            m_old = old;
        ::setenv("XDG_CONFIG_HOME", m_dir.path().toUtf8().constData(), 1);
        std::filesystem::create_directories(m_dir.path().toStdString() + "/kerncast");
        std::ofstream(m_dir.path().toStdString() + "/kerncast/llm.json") << settings.dump(2);
    }
    ~SettingsFile() {
        if (m_old)
            ::setenv("XDG_CONFIG_HOME", m_old->c_str(), 1);
        else
            ::unsetenv("XDG_CONFIG_HOME");
    }

private:
    QTemporaryDir m_dir;
    std::optional<std::string> m_old;
};

json settingsFor(const EmulatedLlmServer& server) {
    return {{"endpoint", server.baseUrl()},
            {"model", server.model()},
            {"price_in_per_mtok", kPriceIn},
            {"price_out_per_mtok", kPriceOut},
            {"concurrency", 4}};
}

std::vector<std::string> searchArgs(const std::string& run, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"search",      "--problem", "saxpy",       "--device",    "replay:nvidia-h200",
                                     "--surrogate", "llm",       "--mutator",   "llm-rewrite", "--mutator",
                                     "llm-diff",    "--gating",  "measure-all", "--batch",     "4",
                                     "--seed",      "3",         "--run",       run,           "--json",
                                     "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

double priced(int64_t in, int64_t out) {
    return (static_cast<double>(in) * kPriceIn + static_cast<double>(out) * kPriceOut) / 1e6;
}

void addProducts() {
    QTest::addColumn<int>("product");
    for (LlmProduct p : {LlmProduct::OpenAiReasoning, LlmProduct::Vllm, LlmProduct::VllmGptOss, LlmProduct::Ollama,
                         LlmProduct::LlamaCpp})
        QTest::newRow(product_name(p)) << static_cast<int>(p);
}

}  // namespace

class TestLlmEndpoints : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_pairs;
    int m_runs = 0;
    std::string newRun() { return m_dir.filePath(QString("run%1.sqlite").arg(++m_runs)).toStdString(); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const std::string run = newRun();
        auto r = run_cli({"search", "--problem", "saxpy", "--device", "replay:nvidia-h200", "--surrogate", "none",
                          "--gating", "measure-all", "--budget", "10", "--run", run, "--quiet"});
        QVERIFY2(r.code == 0, r.err.c_str());
        m_pairs = m_dir.filePath("pairs.jsonl").toStdString();
        r = run_cli({"export", "--run", run, "--format", "pairs-jsonl", "--out", m_pairs});
        QVERIFY2(r.code == 0, r.err.c_str());
    }

    void searchThroughEachServer_data() { addProducts(); }
    void searchThroughEachServer() {
        QFETCH(int, product);
        EmulatedLlmServer server(static_cast<LlmProduct>(product), kernelAnswers());
        SettingsFile settings(settingsFor(server));
        const std::string run = newRun();
        const auto r = run_cli(searchArgs(run, {"--budget", "12"}));
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const json summary = json::parse(r.out);
        QCOMPARE(summary["state"].get<std::string>(), std::string("finished"));

        RunStore store = RunStore::open(run);
        const int64_t runId = store.runs().back().id;
        int rewrites = 0, diffs = 0;
        std::set<int64_t> ids;
        for (const auto& c : store.candidates(runId)) {
            ids.insert(c.id);
            rewrites += c.mutator == Mutator::LlmRewrite;
            diffs += c.mutator == Mutator::LlmDiff;
        }
        QVERIFY2(rewrites > 0 && diffs > 0, (std::to_string(rewrites) + " " + std::to_string(diffs)).c_str());
        QCOMPARE(store.runs().back().surrogate, "llm:" + server.model());

        // Every forecast arrived: after at most one switch of the request's shape, nothing failed.
        int failedForecasts = 0, duplicates = 0, shapeEvents = 0;
        for (const auto& e : store.events(runId)) {
            failedForecasts += e.kind == "forecast_failed";
            if (e.kind == "duplicate") {
                ++duplicates;
                if (e.payload.contains("original"))
                    QVERIFY(ids.count(e.payload["original"].get<int64_t>()));
            }
            shapeEvents += e.kind == "llm_request_shape";
        }
        QCOMPARE(failedForecasts, 0);
        QVERIFY(duplicates > 0);  // repeated rewrites and comment-only edits
        QCOMPARE(summary["duplicates"].get<int>(), duplicates);
        QCOMPARE(shapeEvents > 0, static_cast<LlmProduct>(product) != LlmProduct::Vllm);
        QVERIFY(store.forecastCount(runId) > 0);

        // Every call is stored with its prompt; forecasts point at their candidate; reasoning where sent.
        std::map<std::string, int> kinds;
        for (const LlmCall& call : store.llmCalls(runId)) {
            ++kinds[call.kind];
            QVERIFY(!call.prompt.empty());
            QVERIFY(call.tokens_in > 0 && call.tokens_out > 0);
            QCOMPARE(call.cost_usd, priced(call.tokens_in, call.tokens_out));
            if (call.kind == "forecast") {
                QVERIFY(ids.count(call.candidate_id));
                QCOMPARE(call.outcome, std::string("ok"));
                QCOMPARE(store.forecastsFor(call.candidate_id).size(), size_t{1});
            }
            if (call.outcome == "duplicate")
                QCOMPARE(call.candidate_id, int64_t{0});
            QCOMPARE(call.reasoning.empty(), static_cast<LlmProduct>(product) == LlmProduct::OpenAiReasoning);
        }
        QVERIFY(kinds["forecast"] > 0 && kinds["mutate_rewrite"] > 0 && kinds["mutate_diff"] > 0);

        // Costs: what the server counted, at the settings file's prices; the summary says the same.
        const LlmTotals totals = store.llmTotals(runId);
        QCOMPARE(totals.tokens_in, server.promptTokens());
        QCOMPARE(totals.tokens_out, server.completionTokens());
        QVERIFY(std::abs(totals.cost_usd - priced(server.promptTokens(), server.completionTokens())) < 1e-12);
        QVERIFY(std::abs(summary["cost_usd"].get<double>() - totals.cost_usd) < 1e-12);
        QCOMPARE(summary["llm_calls"].get<int64_t>(), totals.calls);
        // The run keeps the settings it ran with (prices included), never a key.
        const json config = store.runs().back().config;
        QCOMPARE(config["llm"]["price_out_per_mtok"].get<double>(), kPriceOut);
        QCOMPARE(config["llm"]["profile"].get<std::string>(), std::string("auto"));
    }

    void costBudgetStopsTheRunAlsoAfterResume() {
        EmulatedLlmServer server(LlmProduct::OpenAiReasoning, kernelAnswers());
        SettingsFile settings(settingsFor(server));
        const std::string run = newRun();
        // A budget that a few iterations spend: the run stops on it, not on its measurements, and within it.
        auto r = run_cli(searchArgs(run, {"--budget", "200", "--cost-budget", "0.15"}));
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        json summary = json::parse(r.out);
        QCOMPARE(summary["reason"].get<std::string>(), std::string("cost budget spent"));
        RunStore store = RunStore::open(run);
        const int64_t runId = store.runs().back().id;
        const LlmTotals first = store.llmTotals(runId);
        QVERIFY(first.cost_usd > 0 && first.cost_usd <= 0.15);
        QVERIFY(std::abs(summary["cost_usd"].get<double>() - first.cost_usd) < 1e-12);

        // Resumed with the same budget: spent already (mutations included), so nothing more is asked.
        const int answered = server.answered();
        r = run_cli(
            {"search", "--run", run, "--resume", "--cost-budget", "0.15", "--budget", "200", "--json", "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        summary = json::parse(r.out);
        QCOMPARE(summary["reason"].get<std::string>(), std::string("cost budget spent"));
        QCOMPARE(server.answered(), answered);
        QVERIFY(std::abs(summary["cost_usd"].get<double>() - first.cost_usd) < 1e-12);
        QCOMPARE(summary["llm_calls"].get<int64_t>(), first.calls);

        // Raised: the run goes on from what it spent and stops at the new budget, counting both sessions. It starts
        // in the request shape the first session learned (max_completion_tokens): nothing is refused again.
        const int refused = server.refused();
        QVERIFY(refused >= 1);  // the first batch, in flight at once, before the switch
        r = run_cli(
            {"search", "--run", run, "--resume", "--cost-budget", "0.3", "--budget", "200", "--json", "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        summary = json::parse(r.out);
        QCOMPARE(summary["reason"].get<std::string>(), std::string("cost budget spent"));
        const LlmTotals second = RunStore::open(run).llmTotals(runId);
        QVERIFY(second.calls > first.calls);
        QCOMPARE(server.refused(), refused);
        QVERIFY(second.cost_usd > first.cost_usd && second.cost_usd <= 0.3);
        QVERIFY(std::abs(summary["cost_usd"].get<double>() - second.cost_usd) < 1e-12);
        QVERIFY(std::abs(second.cost_usd - priced(server.promptTokens(), server.completionTokens())) < 1e-12);
    }

    void deferralsAreMeasuredAndCounted() {
        EmulatedLlmServer server(LlmProduct::Vllm, kernelAnswers(3));
        SettingsFile settings(settingsFor(server));
        const std::string run = newRun();
        const auto r =
            run_cli({"search", "--problem", "saxpy", "--device", "replay:nvidia-h200", "--surrogate", "llm",
                     "--abstain", "--gating", "selective", "--budget", "10", "--run", run, "--json", "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const json summary = json::parse(r.out);
        const int abstained = summary["abstained"].get<int>();
        QVERIFY(abstained > 0);
        QCOMPARE(summary["abstain_rate"].get<double>(), double(abstained) / summary["forecasts"].get<double>());
        RunStore store = RunStore::open(run);
        const int64_t runId = store.runs().back().id;
        int deferred = 0;
        std::set<int64_t> measuredOrWaiting;
        for (const auto& e : store.events(runId)) {
            if (e.kind == "forecast_deferred") {
                ++deferred;
                const int64_t id = e.payload["candidate"].get<int64_t>();
                QVERIFY(store.forecastsFor(id).empty());
                measuredOrWaiting.insert(id);
            }
            if (e.kind == "gating" && measuredOrWaiting.count(e.payload["candidate"].get<int64_t>()))
                QCOMPARE(e.payload["decision"].get<std::string>(), std::string("measure"));
        }
        QCOMPARE(deferred, abstained);
        QCOMPARE(store.llmTotals(runId).deferred, int64_t(abstained));
    }

    void evaluateThroughEachServer_data() { addProducts(); }
    void evaluateThroughEachServer() {
        QFETCH(int, product);
        EmulatedLlmServer server(static_cast<LlmProduct>(product), kernelAnswers());
        SettingsFile settings(settingsFor(server));
        const std::string store = newRun();
        const auto r = run_cli({"evaluate", "--pairs", m_pairs, "--surrogate", "llm", "--store", store, "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const json j = json::parse(r.out);
        QCOMPARE(j["failed_forecasts"].get<int>(), 0);
        QCOMPARE(j["surrogate"].get<std::string>(), "llm:" + server.model());
        RunStore s = RunStore::open(store);
        const int64_t runId = s.runs().back().id;
        const LlmTotals totals = s.llmTotals(runId);
        QCOMPARE(totals.calls, j["n"].get<int64_t>());
        QVERIFY(std::abs(totals.cost_usd - priced(server.promptTokens(), server.completionTokens())) < 1e-12);
        QVERIFY(std::abs(j["llm"]["cost_usd"].get<double>() - totals.cost_usd) < 1e-12);
        for (const LlmCall& call : s.llmCalls(runId))
            QVERIFY(!call.prompt.empty() && call.candidate_id > 0);
    }
};

QTEST_GUILESS_MAIN(TestLlmEndpoints)
#include "tst_llm_endpoints.moc"
