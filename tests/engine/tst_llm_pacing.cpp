// What an LLM-driven search spends (docs/llm.md "What a search costs and how to bound it"): LLM proposals earned by
// measurements and spread over the best parents (the ledger), a parent whose answers repeat programs no longer asked,
// the default token and cost budgets stored with a run, budgets that end a search within them also across --resume,
// the spend per measurement and per kind of call in `search --json`, and the warning before a search whose settings
// would pass its budgets. The endpoint is a real HTTP server on loopback that answers from the parent in the prompt.
#include "core/run_store.h"
#include "engine/search/search_runner.h"
#include "tests/support/chat_replies.h"
#include "tests/support/cli_runner.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace kerncast;
using namespace kerncast::test;
using nlohmann::json;

namespace {

// A model on loopback: "repeat" answers every rewrite with the parent as it is (a program already seen), "fresh"
// with a new variant of it each time. Tokens are the characters over 4, as the emulated servers count them.
class ScriptedModel {
public:
    explicit ScriptedModel(bool fresh) {
        m_server.setHandler([this, fresh](const HttpRequestSeen& r) {
            const json body = json::parse(r.body);
            std::string prompt;
            for (const auto& m : body["messages"])
                prompt += m.value("content", std::string());
            const int n = ++m_requests;
            std::string code = parentCodeOf(body["messages"].back().value("content", std::string()));
            if (fresh)
                code = "#define KERNCAST_VARIANT " + std::to_string(n) + "\n" + code;
            const std::string reply = "The program.\n\n```cuda\n" + code + "```\n";
            {
                std::lock_guard lock(m_mutex);
                m_promptChars.push_back(prompt.size());
            }
            return HttpAnswer::json(chatCompletionBody(reply, static_cast<int>(prompt.size() / 4 + 1),
                                                       static_cast<int>(reply.size() / 4 + 1)));
        });
    }
    ~ScriptedModel() { m_server.stop(); }
    std::string url() const { return m_server.baseUrl(); }
    int requests() const { return m_requests.load(); }
    std::vector<size_t> promptChars() const {
        std::lock_guard lock(m_mutex);
        return m_promptChars;
    }

private:
    LoopbackHttpServer m_server;
    std::atomic<int> m_requests{0};
    mutable std::mutex m_mutex;
    std::vector<size_t> m_promptChars;
};

std::vector<std::string> softmaxSearch(const ScriptedModel& model, const std::string& run, int budget,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"search",
                                     "--problem",
                                     "softmax",
                                     "--device",
                                     "replay:nvidia-h100-80gb-hbm3",
                                     "--gating",
                                     "selective",
                                     "--seed",
                                     "1",
                                     "--budget",
                                     std::to_string(budget),
                                     "--mutator",
                                     "llm-rewrite",
                                     "--mutator",
                                     "parametric",
                                     "--endpoint",
                                     model.url(),
                                     "--model",
                                     "scripted",
                                     "--run",
                                     run,
                                     "--json",
                                     "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

json runJson(const std::vector<std::string>& args) {
    const CliResult r = run_cli(args);
    if (r.code != 0)
        qWarning("%s\n%s", r.out.c_str(), r.err.c_str());
    return json::parse(r.out);
}

}  // namespace

class TestLlmPacing : public QObject {
    Q_OBJECT

    QTemporaryDir m_config;  // an empty settings folder: no user's llm.json takes part

private slots:
    void initTestCase() { ::setenv("XDG_CONFIG_HOME", m_config.path().toUtf8().constData(), 1); }

    void ledgerEarnsProposalsByMeasurement() {
        LlmPacing pacing;
        pacing.per_measurement = 0.5;
        pacing.initial = 1;
        pacing.per_parent = 3;
        pacing.duplicate_streak = 2;
        LlmProposalLedger ledger(pacing);
        QCOMPARE(ledger.allowance(7, 0), 1);  // the initial one
        ledger.note(7, LlmProposalLedger::Answer::NewProgram);
        QCOMPARE(ledger.allowance(7, 1), 0);   // half a proposal earned
        QCOMPARE(ledger.allowance(7, 10), 2);  // 1 + 5 earned, 1 spent: 5, but a streak of 2 allows at most 2
        ledger.note(7, LlmProposalLedger::Answer::Duplicate);
        QCOMPARE(ledger.allowance(7, 10), 1);
        ledger.note(7, LlmProposalLedger::Answer::NoProgram);  // prose neither ends nor lengthens the streak
        QCOMPARE(ledger.streak(7), 1);
        ledger.note(7, LlmProposalLedger::Answer::Duplicate);
        QVERIFY(ledger.retired(7));
        QCOMPARE(ledger.allowance(7, 100), 0);
        QCOMPARE(ledger.allowance(8, 100), 2);  // another parent: per_parent 3, streak room 2
        QCOMPARE(ledger.asked(7), 4);
        LlmProposalLedger restored(pacing);
        restored.restore(ledger.state());
        QCOMPARE(restored.spent(), int64_t{4});
        QVERIFY(restored.retired(7));
    }

    void pacingIsReadAndChecked() {
        const LlmPacing p = llm_pacing_from_json({{"per_measurement", 0.25}, {"elite_parents", 0}});
        QCOMPARE(p.per_measurement, 0.25);
        QCOMPARE(p.elite_parents, 0);
        QCOMPARE(p.duplicate_streak, LlmPacing{}.duplicate_streak);
        QVERIFY_THROWS_EXCEPTION(Error, llm_pacing_from_json({{"per_parent", 0}}));
        QVERIFY_THROWS_EXCEPTION(Error, llm_pacing_from_json({{"per_measurement", -1}}));
    }

    // Every answer is the parent again: each parent is asked until two of its answers in a row were programs already
    // seen, never more.
    void repeatedAnswersRetireTheParent() {
        ScriptedModel model(false);
        QTemporaryDir dir;
        const std::string run = dir.filePath("run.sqlite").toStdString();
        const json j = runJson(softmaxSearch(model, run, 16));
        QCOMPARE(j.value("state", std::string()), std::string("finished"));
        RunStore store = RunStore::open(run);
        std::map<int64_t, int> duplicates;  // by parent
        for (const RunEvent& e : store.events(j["run_id"].get<int64_t>()))
            if (e.kind == "duplicate" && e.payload.value("mutator", std::string()) == "llm_rewrite")
                ++duplicates[e.payload.value("parent", int64_t{0})];
        QVERIFY(!duplicates.empty());
        for (const auto& [parent, n] : duplicates)
            QVERIFY2(n <= 2, qPrintable(QString("parent %1 was answered %2 duplicates").arg(parent).arg(n)));
        QCOMPARE(j["llm"]["mutate_rewrite"]["duplicates"].get<int64_t>(), j["llm_calls"].get<int64_t>());
        QCOMPARE(static_cast<int64_t>(model.requests()), j["llm_calls"].get<int64_t>());
    }

    // New programs every time: the LLM is asked as often as measurements earn, with prompts within their limit, and
    // the spend is reported per measurement and per kind.
    void llmCallsArePacedByMeasurements() {
        ScriptedModel model(true);
        QTemporaryDir dir;
        const std::string run = dir.filePath("run.sqlite").toStdString();
        const json j = runJson(softmaxSearch(model, run, 20, {"--max-prompt-tokens", "3000"}));
        QCOMPARE(j.value("state", std::string()), std::string("finished"));
        const int64_t measurements = j["measurements"].get<int64_t>();
        const int64_t calls = j["llm_calls"].get<int64_t>();
        const LlmPacing pacing;
        QVERIFY(calls > 0);
        QVERIFY2(calls <= pacing.initial + static_cast<int64_t>(pacing.per_measurement * double(measurements)),
                 qPrintable(QString("%1 calls for %2 measurements").arg(calls).arg(measurements)));
        QCOMPARE(static_cast<int64_t>(model.requests()), calls);
        for (size_t chars : model.promptChars())
            QVERIFY2(chars <= 3000 * 4, qPrintable(QString("a prompt of %1 characters").arg(chars)));
        const json& rewrite = j["llm"]["mutate_rewrite"];
        QCOMPARE(rewrite["calls"].get<int64_t>(), calls);
        QCOMPARE(rewrite["tokens"].get<int64_t>(), j["tokens"].get<int64_t>());
        QCOMPARE(j["llm"]["forecast"]["calls"].get<int64_t>(), int64_t{0});
        QCOMPARE(j["tokens_per_measurement"].get<double>(), double(j["tokens"].get<int64_t>()) / double(measurements));
        QVERIFY(j["tokens_per_measurement"].get<double>() <= double(kLlmTokensPerMeasurement));
    }

    void budgetsHoldAcrossResume_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("small");
        QTest::addColumn<QString>("large");
        QTest::addColumn<QString>("field");
        QTest::addRow("tokens") << "--token-budget"
                                << "20000"
                                << "40000"
                                << "tokens";
        QTest::addRow("cost") << "--cost-budget"
                              << "0.05"
                              << "0.1"
                              << "cost_usd";
    }
    void budgetsHoldAcrossResume() {
        QFETCH(QString, flag);
        QFETCH(QString, small);
        QFETCH(QString, large);
        QFETCH(QString, field);
        ScriptedModel model(true);
        QTemporaryDir dir;
        const std::string run = dir.filePath("run.sqlite").toStdString();
        const std::vector<std::string> prices = {"--price-in", "2", "--price-out", "8", "--llm-per-measurement", "8"};
        auto spent = [&](const json& j) { return j[field.toStdString()].get<double>(); };
        std::vector<std::string> extra = prices;
        extra.insert(extra.end(), {flag.toStdString(), small.toStdString()});
        const json first = runJson(softmaxSearch(model, run, 200, extra));
        QCOMPARE(first.value("state", std::string()), std::string("finished"));
        const std::string what = field == "tokens" ? "token budget" : "cost budget";
        QVERIFY2(first.value("reason", std::string()).find(what) != std::string::npos,
                 first.value("reason", std::string()).c_str());
        QVERIFY2(spent(first) <= small.toDouble(), qPrintable(QString::number(spent(first))));
        // The same budget again: it ends at once, within it.
        const json again =
            runJson({"search", "--run", run, "--resume", flag.toStdString(), small.toStdString(), "--json", "--quiet"});
        QVERIFY2(again.value("reason", std::string()).find(what) != std::string::npos,
                 again.value("reason", std::string()).c_str());
        QCOMPARE(spent(again), spent(first));
        QCOMPARE(again["measurements"].get<int64_t>(), first["measurements"].get<int64_t>());
        // A raised one: it goes on, and ends within that.
        const json raised =
            runJson({"search", "--run", run, "--resume", flag.toStdString(), large.toStdString(), "--json", "--quiet"});
        QVERIFY(raised["llm_calls"].get<int64_t>() > first["llm_calls"].get<int64_t>());
        QVERIFY2(spent(raised) <= large.toDouble(), qPrintable(QString::number(spent(raised))));
    }

    // The LLM forecaster's first forecasts (the seeding's and the initial screen's, 2 x 16 of them by default) are
    // asked within the token budget like every later one: a budget of a few forecasts ends the search within it, and
    // again at once on --resume.
    void theForecastersFirstCallsStayWithinTheBudget() {
        LoopbackHttpServer model;
        std::atomic<int> requests{0};
        model.setHandler([&requests](const HttpRequestSeen& r) {
            const json body = json::parse(r.body);
            std::string prompt;
            for (const auto& m : body["messages"])
                prompt += m.value("content", std::string());
            const int n = ++requests;
            json args = {{"reasoning", "memory bound; the same traffic as the parent"}};
            const char* keys[] = {"p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown",
                                  "p_minor_slowdown",  "p_minor_speedup",        "p_significant_speedup",
                                  "p_high_speedup",    "p_extreme_speedup"};
            const int bin = 3 + n % 4;
            for (int i = 0; i < 8; ++i)
                args[keys[i]] = i + 1 == bin ? 0.65 : 0.05;
            args["predicted_bin"] = bin;
            const json calls =
                json::array({{{"id", "call_1"},
                              {"type", "function"},
                              {"function", {{"name", "submit_kernel_runtime_estimate"}, {"arguments", args.dump()}}}}});
            return HttpAnswer::json(chatCompletionBody(nullptr, static_cast<int>(prompt.size() / 4 + 1), 300, calls));
        });
        QTemporaryDir dir;
        const std::string run = dir.filePath("run.sqlite").toStdString();
        const std::vector<std::string> args = {
            "search",     "--problem",     "softmax", "--device",  "replay:nvidia-h100-80gb-hbm3",
            "--gating",   "selective",     "--seed",  "1",         "--budget",
            "20",         "--surrogate",   "llm",     "--mutator", "parametric",
            "--endpoint", model.baseUrl(), "--model", "scripted",  "--token-budget",
            "20000",      "--run",         run,       "--json",    "--quiet"};
        const json j = runJson(args);
        QCOMPARE(j.value("state", std::string()), std::string("finished"));
        QVERIFY2(j.value("reason", std::string()).find("token budget") != std::string::npos,
                 j.value("reason", std::string()).c_str());
        QVERIFY(j["llm"]["forecast"]["calls"].get<int64_t>() > 0);
        QCOMPARE(j["llm_calls"].get<int64_t>(), static_cast<int64_t>(requests.load()));
        QVERIFY2(j["tokens"].get<int64_t>() <= 20000,
                 qPrintable(QString("%1 tokens in %2 calls").arg(j["tokens"].get<int64_t>()).arg(requests.load())));
        const json again = runJson({"search", "--run", run, "--resume", "--json", "--quiet"});
        QVERIFY2(again.value("reason", std::string()).find("token budget") != std::string::npos,
                 again.value("reason", std::string()).c_str());
        QCOMPARE(again["tokens"].get<int64_t>(), j["tokens"].get<int64_t>());
        QCOMPARE(static_cast<int64_t>(requests.load()), j["llm_calls"].get<int64_t>());
        model.stop();
    }

    // A search that uses an LLM and gives no budget for it runs with the defaults, stored with the run; settings
    // that would pass them are warned about before the search starts.
    void defaultBudgetsAreStoredAndWarned() {
        ScriptedModel model(true);
        QTemporaryDir dir;
        const std::string run = dir.filePath("run.sqlite").toStdString();
        const json j = runJson(softmaxSearch(model, run, 6, {"--price-in", "2", "--price-out", "8"}));
        QVERIFY(!j.contains("spend_warning"));
        QCOMPARE(j["llm"]["budget_tokens"].get<int64_t>(), 6 * kLlmTokensPerMeasurement);
        QCOMPARE(j["llm"]["budget_cost_usd"].get<double>(), 6 * kLlmUsdPerMeasurement);
        const RunInfo info = RunStore::open(run).runs().back();
        QCOMPARE(info.config["budgets"]["tokens"].get<int64_t>(), 6 * kLlmTokensPerMeasurement);

        const std::string run2 = dir.filePath("run2.sqlite").toStdString();
        const json w = runJson(softmaxSearch(model, run2, 6, {"--llm-per-measurement", "40"}));
        QVERIFY2(w.value("spend_warning", std::string()).find("token budget") != std::string::npos, w.dump().c_str());
        // The same in text: the warning on stderr before the search, the spend per measurement in its summary.
        std::vector<std::string> args =
            softmaxSearch(model, dir.filePath("run3.sqlite").toStdString(), 8, {"--llm-per-measurement", "40"});
        args.erase(std::find(args.begin(), args.end(), "--json"));
        const CliResult text = run_cli(args);
        QVERIFY2(text.err.find("warning: this search may spend") != std::string::npos, text.err.c_str());
        QVERIFY2(text.out.find("per measurement:") != std::string::npos, text.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLlmPacing)
#include "tst_llm_pacing.moc"
