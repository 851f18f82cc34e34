// Reading a stored run for the workbench: the best-so-far curve in measurement order, the measure-all baseline of
// the same problem, evaluation pairs with their anchors and prompts, what an LLM search spent, and readable errors.
#include "app/gui/run_control_panel.h"
#include "app/gui/run_data.h"

#include "core/run_store.h"
#include "tests/support/chat_replies.h"
#include "tests/support/cli_runner.h"
#include "widgets/device_list_model.h"
#include "widgets/problem_list_model.h"

#include <QLabel>
#include <QLocale>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>

using namespace kerncast;
using namespace kerncast::test;

namespace {

Measurement measured(double speedup, Status status = Status::Ok, const char* deviceKind = "replay") {
    Measurement m;
    m.status = status;
    m.speedup = status == Status::Ok ? speedup : 0;
    m.device_kind = deviceKind;
    return m;
}

int64_t addRun(RunStore& store, const std::string& problem, const std::string& gating) {
    RunInfo run;
    run.name = problem + " " + gating;
    run.problem = problem;
    run.gating = gating;
    run.config = {{"problem_dir", "/nowhere/" + problem}, {"gating", {{"kind", "selective"}}}};
    return store.addRun(run);
}

int64_t addCandidate(RunStore& store, int64_t runId, const std::string& label) {
    Candidate c;
    c.mutator = Mutator::Parametric;
    c.label = label;
    c.source = "// " + label;
    return store.addCandidate(runId, c);
}

}  // namespace

class TestRunData : public QObject {
    Q_OBJECT

    QTemporaryDir m_config;  // an empty settings folder: no user's llm.json takes part

private Q_SLOTS:
    void initTestCase() { ::setenv("XDG_CONFIG_HOME", m_config.path().toUtf8().constData(), 1); }

    // A search with LLM rewrites, opened from its file, shows in the run control what it spent per measurement, by
    // kind of call and against its budget, as the search reported it when it ended: the softmax search on the replay
    // device, its rewrites answered on loopback, every other answer the parent again (a duplicate).
    void anLlmSearchShowsItsSpendPerMeasurement() {
        LoopbackHttpServer model;
        std::atomic<int> requests{0};
        model.setHandler([&requests](const HttpRequestSeen& r) {
            const nlohmann::json body = nlohmann::json::parse(r.body);
            const std::string prompt = body["messages"].back().value("content", std::string());
            const int n = ++requests;
            std::string code = parentCodeOf(prompt);
            if (n % 2 == 0)
                code = "#define KERNCAST_VARIANT " + std::to_string(n) + "\n" + code;
            const std::string reply = "The program.\n\n```cuda\n" + code + "```\n";
            return HttpAnswer::json(chatCompletionBody(reply, static_cast<int>(prompt.size() / 4 + 1),
                                                       static_cast<int>(reply.size() / 4 + 1)));
        });
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llm.sqlite"));
        const CliResult r =
            run_cli({"search",     "--problem",     "softmax",     "--device",  "replay:nvidia-h100-80gb-hbm3",
                     "--gating",   "selective",     "--seed",      "1",         "--budget",
                     "12",         "--mutator",     "llm-rewrite", "--mutator", "parametric",
                     "--endpoint", model.baseUrl(), "--model",     "scripted",  "--price-in",
                     "2",          "--price-out",   "8",           "--run",     path.toStdString(),
                     "--json",     "--quiet"});
        model.stop();
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const nlohmann::json j = nlohmann::json::parse(r.out);
        QVERIFY(j["llm"]["mutate_rewrite"]["duplicates"].get<int64_t>() > 0);

        const LoadedRun loaded = loadRun(path);
        QVERIFY2(loaded.error.isEmpty(), qPrintable(loaded.error));
        const SearchProgress p = storedProgress(loaded, loaded.rows, ForecastMetrics{});
        QCOMPARE(p.measurements, j["measurements"].get<int64_t>());
        QCOMPARE(p.llm_calls, j["llm_calls"].get<int64_t>());
        QCOMPARE(p.llm_calls, static_cast<int64_t>(requests.load()));
        QCOMPARE(p.tokens, j["tokens"].get<int64_t>());
        QVERIFY(qFuzzyCompare(p.cost_usd, j["cost_usd"].get<double>()));
        const auto sameSpend = [&](const LlmSpend& s, const char* kind) {
            const nlohmann::json& k = j["llm"][kind];
            return s.calls == k["calls"].get<int64_t>() && s.tokens == k["tokens"].get<int64_t>() &&
                   qFuzzyCompare(1 + s.cost_usd, 1 + k["cost_usd"].get<double>()) &&
                   s.duplicates == k["duplicates"].get<int64_t>();
        };
        QVERIFY(sameSpend(p.llm_rewrite, "mutate_rewrite"));
        QVERIFY(sameSpend(p.llm_forecast, "forecast"));
        QVERIFY(sameSpend(p.llm_diff, "mutate_diff"));
        QVERIFY(p.budget_tokens > 0);  // the default budget, stored with the run
        QCOMPARE(p.budget_tokens, j["llm"]["budget_tokens"].get<int64_t>());
        QCOMPARE(p.budget_cost_usd, j["llm"]["budget_cost_usd"].get<double>());

        ProblemListModel problems;
        DeviceListModel devices;
        RunControlPanel panel(&problems, &devices);
        panel.showProgress(p);
        QLabel* label = panel.tokensPerMeasurementLabel();
        QVERIFY(!label->isHidden());
        const QLocale locale;
        QCOMPARE(label->text(), QStringLiteral("Per measurement: %1 tokens ($%2)")
                                    .arg(locale.toString(j["tokens_per_measurement"].get<double>(), 'f', 0),
                                         locale.toString(j["cost_per_measurement"].get<double>(), 'f', 3)));
        QVERIFY2(label->toolTip().startsWith(QStringLiteral("Forecasts: 0 tokens in 0 calls. Rewrites: %1 tokens in "
                                                            "%2 calls.")
                                                 .arg(locale.toString(static_cast<qlonglong>(p.llm_rewrite.tokens)),
                                                      locale.toString(static_cast<qlonglong>(p.llm_rewrite.calls)))),
                 qPrintable(label->toolTip()));
    }

    void progressFollowsMeasurementOrder() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("run.sqlite")).toStdString();
        RunStore store = RunStore::create(path);
        const int64_t run = addRun(store, "saxpy", "selective tau=0.50");
        const int64_t a = addCandidate(store, run, "a");
        const int64_t b = addCandidate(store, run, "b");
        const int64_t c = addCandidate(store, run, "c");
        // Measured in the order c (1.2x), a (compile error: not a device measurement), b (failed), a... b (1.5x).
        store.addMeasurement(c, measured(1.2));
        store.addMeasurement(a, measured(0, Status::CompileError, "compiler"));
        store.addMeasurement(b, measured(0, Status::Incorrect));
        store.addMeasurement(b, measured(1.5));
        int64_t total = 0;
        const auto points = progressFromStore(store, run, &total);
        QCOMPARE(total, 3);
        QCOMPARE(points.size(), size_t(2));
        QCOMPARE(points[0].measurements, 1);
        QCOMPARE(points[0].best_speedup, 1.2);
        QCOMPARE(points[1].measurements, 3);
        QCOMPARE(points[1].best_speedup, 1.5);
    }

    void aMeasureAllRunOfTheSameProblemIsTheBaseline() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        {
            RunStore store = RunStore::create(path.toStdString());
            const int64_t other = addRun(store, "gelu", "measure-all");
            store.addMeasurement(addCandidate(store, other, "g"), measured(3.0));
            const int64_t baseline = addRun(store, "saxpy", "measure-all");
            for (double s : {1.0, 1.1, 1.3, 1.2})
                store.addMeasurement(addCandidate(store, baseline, "m"), measured(s));
            const int64_t gated = addRun(store, "saxpy", "selective tau=0.50");
            store.addMeasurement(addCandidate(store, gated, "s"), measured(1.4));
        }
        const LoadedRun loaded = loadRun(path);
        QVERIFY2(loaded.error.isEmpty(), qPrintable(loaded.error));
        QCOMPARE(loaded.run.gating, std::string("selective tau=0.50"));  // the last run is the one shown
        QCOMPARE(loaded.rows.size(), size_t(1));
        QCOMPARE(loaded.measurements, 1);
        QCOMPARE(loaded.baselineMeasurements, 4);
        QCOMPARE(loaded.baselineName, QStringLiteral("saxpy measure-all"));
        QCOMPARE(loaded.baseline.back().best_speedup, 1.3);
        QVERIFY(!loaded.evaluation);
        QVERIFY(loaded.config.has_value());  // a search: it can be resumed
    }

    void evaluationsKeepAnchorsAndPrompts() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("eval.sqlite"));
        int64_t candidate = 0;
        {
            RunStore store = RunStore::create(path.toStdString());
            RunInfo run;
            run.name = "evaluation of pairs.jsonl";
            run.gating = "evaluation";
            run.config = {{"kind", "evaluation"}};
            store.addRun(run);
            ImportedPair pair;
            pair.comparison_id = "p1";
            pair.pack = "saxpy";
            pair.anchor_code = "// the anchor";
            pair.candidate_code = "// the candidate";
            pair.speedup = 2.0;
            store.addImportedPairs(run.id, {pair});
            candidate = addCandidate(store, run.id, "pair:p1");
            store.addEvent(run.id, "prompt", {{"candidate", candidate}, {"prompt", "Forecast this kernel"}});
        }
        const LoadedRun loaded = loadRun(path);
        QVERIFY2(loaded.error.isEmpty(), qPrintable(loaded.error));
        QVERIFY(loaded.evaluation);
        QVERIFY(!loaded.config.has_value());
        QCOMPARE(loaded.anchors.at(candidate), std::string("// the anchor"));
        QCOMPARE(loaded.prompts.at(candidate), std::string("Forecast this kernel"));
    }

    void anUnreadableFileIsAnError() {
        const LoadedRun missing = loadRun(QStringLiteral("/nonexistent/run.sqlite"));
        QVERIFY(!missing.error.isEmpty());
        QVERIFY2(missing.error.contains(QStringLiteral("/nonexistent/run.sqlite")), qPrintable(missing.error));
        QTemporaryDir dir;
        const QString empty = dir.filePath(QStringLiteral("empty.sqlite"));
        { RunStore::create(empty.toStdString()); }
        QVERIFY(loadRun(empty).error.contains(QStringLiteral("no run")));
    }

    void plotDataComesFromMeasuredForecastRows() {
        std::vector<CandidateRow> rows(3);
        for (size_t i = 0; i < rows.size(); ++i) {
            rows[i].id = static_cast<int64_t>(i + 1);
            std::array<double, kBinCount> p{};
            p[4] = 0.7;
            p[5] = 0.3;
            applyForecast(rows[i], Forecast::fromRaw(p), BinScheme::gfV2());
        }
        rows[0].measured_speedup = 1.2;
        rows[2].measured_speedup = 0.8;
        rows[2].predicted_bin = 0;  // no forecast
        const auto points = forecastPoints(rows);
        QCOMPARE(points.size(), size_t(1));
        QCOMPARE(points[0].candidate_id, 1);
        QCOMPARE(points[0].measured_log, std::log(1.2));
        QCOMPARE(points[0].confidence, 0.7);
        const auto scored = scoredForecasts(rows, "saxpy");
        QCOMPARE(scored.size(), size_t(1));
        QCOMPARE(scored[0].true_speedup, 1.2);
        QCOMPARE(scored[0].pack, std::string("saxpy"));
    }
};

QTEST_MAIN(TestRunData)
#include "tst_run_data.moc"
