// kerncast-cli search and export end to end: the JSON summary, a search killed with SIGKILL and resumed with
// nothing lost, and the three export formats.
#include "tests/support/chat_replies.h"
#include "tests/support/cli_runner.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"
#include "core/run_store.h"
#include "engine/search/search_runner.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace kerncast;
using kerncast::test::HttpAnswer;
using kerncast::test::HttpRequestSeen;
using kerncast::test::LoopbackHttpServer;
using kerncast::test::run_cli;

namespace {

int64_t measured_count(const std::string& path, std::set<int64_t>* ids = nullptr) {
    try {
        RunStore store = RunStore::open(path);
        const auto runs = store.runs();
        if (runs.empty())
            return 0;
        int64_t n = 0;
        for (const auto& c : store.candidates(runs.back().id)) {
            const auto ms = store.measurementsFor(c.id);
            if (!ms.empty() && ms.back().measurement.device_kind != "compiler") {
                ++n;
                if (ids)
                    ids->insert(c.id);
            }
        }
        return n;
    } catch (const std::exception&) {
        return 0;  // not created yet
    }
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

class TestCmdSearch : public QObject {
    Q_OBJECT

private slots:
    void jsonSummaryHasWhatTheIssueNames() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("s.sqlite").toStdString();
        auto r = run_cli({"search", "--problem", "transpose", "--device", "replay:nvidia-h200", "--surrogate", "local",
                          "--gating", "selective", "--budget", "12", "--seed", "3", "--run", run, "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        for (const char* key :
             {"best_speedup", "best_candidate", "measurements", "forecasts", "trajectory", "calibration"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["measurements"].get<int>(), 12);
        QCOMPARE(j["trajectory"].size(), size_t(12));
        QCOMPARE(j["trajectory"].back()["best_speedup"].get<double>(), j["best_speedup"].get<double>());
        QVERIFY(j["calibration"].contains("n"));
        if (j["calibration"]["n"].get<int>() > 0)
            for (const char* key : {"majority_accuracy", "brier_skill", "crps_skill", "brier_climatology"})
                QVERIFY2(j["calibration"]["metrics"].contains(key), key);
        QVERIFY(j["best_speedup"].get<double>() > 1.0);

        // Errors are plain: an unknown problem, a taken run file, a bad policy.
        r = run_cli({"search", "--problem", "no_such_problem", "--run", dir.filePath("x.sqlite").toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.find("no_such_problem") != std::string::npos);
        r = run_cli({"search", "--problem", "transpose", "--run", run});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("--resume") != std::string::npos, r.err.c_str());
        r = run_cli({"search", "--problem", "transpose", "--gating", "sometimes", "--run", run});
        QVERIFY(r.code != 0);
    }

    // --trace FILE: the timeline in the Trace Event format (a lane for the search thread and one per worker, every
    // measurement on a worker's lane), and the summary of where the wall time went, which --json carries too.
    void traceWritesTheTimelineAndSaysWhereTheTimeWent() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("t.sqlite").toStdString();
        const std::string trace = dir.filePath("trace.json").toStdString();
        auto r = run_cli({"search",   "--problem", "softmax",   "--device", "replay:nvidia-h200",
                          "--budget", "16",        "--seed",    "2",        "--overlap",
                          "--round",  "2",         "--workers", "2",        "--replay-wall-time",
                          "0.02",     "--run",     run,         "--trace",  trace});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("where the wall time went") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("worker 2: ") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("timeline written to " + trace) != std::string::npos, r.out.c_str());
        const auto j = nlohmann::json::parse(read(trace));
        std::set<std::string> lanes, search_phases;
        int64_t trips = 0;
        std::map<int, std::string> tid_lane;
        for (const auto& e : j["traceEvents"])
            if (e["ph"] == "M")
                tid_lane[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
        for (const auto& e : j["traceEvents"]) {
            if (e["ph"] != "X")
                continue;
            const std::string lane = tid_lane.at(e["tid"].get<int>());
            lanes.insert(lane);
            if (lane == "search")
                search_phases.insert(e["name"].get<std::string>());
            else if (e["name"] == "round trip")
                ++trips;
        }
        QCOMPARE(lanes.size(), size_t(3));  // the search thread and two workers
        QCOMPARE(trips, int64_t(16));       // each measurement once, on the worker that made it
        for (const char* phase :
             {"starting workers", "proposal", "forecasting", "gating", "store writes", "waiting for measurements"})
            QVERIFY2(search_phases.count(phase), phase);
        QCOMPARE(j["summary"]["measurements"].get<int64_t>(), int64_t(16));
        QCOMPARE(j["run"].get<std::string>(), run);

        // --json carries the summary; an unwritable trace file is an error that names it.
        r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--budget", "6", "--run",
                     dir.filePath("u.sqlite").toStdString(), "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto s = nlohmann::json::parse(r.out);
        QCOMPARE(s["timeline"]["measurements"].get<int64_t>(), int64_t(6));
        QVERIFY(s["timeline"]["search_thread_s"].contains("store writes"));
        r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--budget", "4", "--run",
                     dir.filePath("v.sqlite").toStdString(), "--trace",
                     dir.filePath("no/such/dir/t.json").toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("no/such/dir/t.json") != std::string::npos, r.err.c_str());
    }

    // kerncast-cli prepare does ahead what a first search does before its first measurement, and says so; the search
    // that follows reads the forecaster's base model from the cache.
    void prepareTrainsAheadAndTheSearchReadsTheCache() {
        QTemporaryDir cache;
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        auto r = run_cli({"prepare", "--device", "replay:nvidia-h200", "--problem", "transpose", "--seed", "11"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.err.find("[1/1] forecaster for transpose, seed 11: trained") != std::string::npos, r.err.c_str());
        r = run_cli({"prepare", "--device", "replay:nvidia-h200", "--problem", "transpose", "--seed", "11", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["forecasters"].size(), size_t(1));
        QVERIFY2(j["forecasters"][0]["base"].get<std::string>().rfind("cache", 0) == 0, r.out.c_str());
        // The search with the same settings says where its forecaster came from: the cache.
        QTemporaryDir dir;
        r = run_cli({"search", "--problem", "transpose", "--device", "replay:nvidia-h200", "--budget", "4", "--seed",
                     "11", "--run", dir.filePath("p.sqlite").toStdString()});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("local forecaster ready") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("(cache ") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("training the local forecaster") == std::string::npos, r.err.c_str());
        // Bad input: an unknown device or problem is named.
        r = run_cli({"prepare", "--device", "replay:no-such-gpu", "--problem", "transpose"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("no-such-gpu") != std::string::npos, r.err.c_str());
        r = run_cli({"prepare", "--device", "replay:nvidia-h200", "--problem", "no_such_problem"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("no_such_problem") != std::string::npos, r.err.c_str());
        qunsetenv("XDG_CACHE_HOME");
    }

    // Beside "calibration" (on every measured candidate, mostly those the gate chose because their forecast was
    // unsure or promising) the summary has "calibration_audited": the same metrics and baselines on the epsilon-audited
    // candidates alone, with their count; with none audited only the count 0, never a number, and the
    // human-readable summary says so.
    void summaryHasTheAuditedCalibration() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("a.sqlite").toStdString();
        auto r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "local",
                          "--gating", "selective", "--epsilon", "0.2", "--budget", "24", "--seed", "2", "--run", run,
                          "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY(j.contains("calibration_audited"));
        const auto& audited = j["calibration_audited"];
        const int n = audited.value("n", -1);
        QVERIFY2(n > 0, audited.dump().c_str());
        QVERIFY(n < j["calibration"]["n"].get<int>());
        for (const auto& [key, value] : j["calibration"]["metrics"].items())
            QVERIFY2(audited["metrics"].contains(key), key.c_str());
        for (const char* key : {"accuracy", "majority_accuracy", "brier_skill", "crps_skill", "ece", "aurc"})
            QVERIFY2(audited["metrics"].contains(key), key);
        // n counts the measured candidates the audit chose, as the run file stores their decisions.
        {
            RunStore store = RunStore::open(run);
            const int64_t id = store.runs().back().id;
            std::map<int64_t, std::string> decision;
            for (const auto& e : store.events(id))
                if (e.kind == "gating")
                    decision[e.payload.value("candidate", int64_t{0})] = e.payload.value("decision", "");
            const auto forecasts = store.forecastsOfRun(id);
            int stored = 0;
            for (const auto& [cid, ms] : store.measurementsOfRun(id))
                stored +=
                    decision[cid] == "audit" && ms.back().measurement.status == Status::Ok && forecasts.count(cid) > 0;
            QCOMPARE(stored, n);
        }

        // The human-readable summary: a line for each, the audited one with its count.
        r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "local",
                     "--gating", "selective", "--epsilon", "0.2", "--budget", "24", "--seed", "2", "--run",
                     dir.filePath("b.sqlite").toStdString(), "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("surrogate on measured candidates") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("surrogate on audited candidates (a random share of the trusted ones, n=" +
                            std::to_string(n) + "): accuracy") != std::string::npos,
                 r.out.c_str());

        // No audit share: no audited candidate, said so plainly.
        r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "local",
                     "--gating", "selective", "--epsilon", "0", "--budget", "12", "--seed", "2", "--run",
                     dir.filePath("c.sqlite").toStdString(), "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["calibration_audited"], nlohmann::json({{"n", 0}}));
        r = run_cli({"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "local",
                     "--gating", "selective", "--epsilon", "0", "--budget", "12", "--seed", "2", "--run",
                     dir.filePath("d.sqlite").toStdString(), "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("surrogate on audited candidates (a random share of the trusted ones): no audited "
                            "candidates yet") != std::string::npos,
                 r.out.c_str());
    }

    void killedSearchResumesWithNothingLost() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("k.sqlite").toStdString();
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QString(KERNCAST_BINARY_DIR) + "/app/kerncast-cli",
                {"search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "local", "--gating",
                 "selective", "--budget", "40", "--seed", "5", "--run", QString::fromStdString(run), "--quiet"});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(measured_count(run) >= 8, 120000);
        p.kill();  // SIGKILL mid-search
        QVERIFY(p.waitForFinished());
        std::set<int64_t> before;
        const int64_t n_before = measured_count(run, &before);
        QVERIFY(n_before >= 8 && n_before < 40);

        auto r = run_cli({"search", "--resume", "--run", run, "--budget", "40", "--json"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["measurements"].get<int>(), 40);
        std::set<int64_t> after;
        QCOMPARE(measured_count(run, &after), int64_t(40));
        for (int64_t id : before)
            QVERIFY(after.count(id));
        RunStore store = RunStore::open(run);
        QCOMPARE(store.runs().size(), size_t(1));
        QCOMPARE(QString::fromStdString(store.integrityCheck()), QString("ok"));
        std::set<std::string> hashes;
        for (const auto& c : store.candidates(store.runs().back().id)) {
            QVERIFY2(hashes.insert(c.source_hash).second, "a candidate was proposed twice");
            QVERIFY(store.measurementsFor(c.id).size() <= 1);
        }
    }

    // A search killed with SIGKILL at random moments (in its first instant, after the reference and the seeds are
    // measured but before the initial screen, mid-search) and resumed each time ends exactly as the same search run
    // without interruption: the same counters, trajectory and best. An overlapped search on a pool of replay workers
    // is killed with a batch in flight (chosen, queued, not yet applied).
    void killedAtRandomMomentsEndsLikeAnUninterruptedRun_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::newRow("each batch waited for") << QStringList{};
        QTest::newRow("overlapped batches on two replay workers")
            << QStringList{"--overlap", "--workers", "2", "--replay-wall-time", "0.05"};
    }
    void killedAtRandomMomentsEndsLikeAnUninterruptedRun() {
        QFETCH(QStringList, extra);
        QTemporaryDir dir;
        const QString cli = QString(KERNCAST_BINARY_DIR) + "/app/kerncast-cli";
        const QStringList settings = QStringList{"--problem",   "softmax", "--device", "replay:nvidia-h200",
                                                 "--surrogate", "local",   "--gating", "selective",
                                                 "--budget",    "24",      "--seed",   "7",
                                                 "--quiet",     "--json"} +
                                     extra;
        const auto summary = [](QProcess& p) {
            const QByteArray out = p.readAllStandardOutput();
            return nlohmann::json::parse(out.toStdString(), nullptr, false);
        };

        // The surrogate's model cache of these searches: the first trains its base model and saves it there, every
        // later one reads it.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_CACHE_HOME", dir.filePath("cache"));
        QProcess whole;
        whole.setProcessEnvironment(env);
        whole.start(cli, QStringList{"search", "--run", dir.filePath("whole.sqlite")} + settings);
        QVERIFY(whole.waitForFinished(240000));
        const nlohmann::json expected = summary(whole);
        QVERIFY2(whole.exitCode() == 0 && expected.is_object(), whole.readAllStandardError().constData());
        // The same search with the base read from the cache: the same search, and as long as a resumed session.
        QProcess again;
        again.setProcessEnvironment(env);
        QElapsedTimer clock;
        clock.start();
        again.start(cli, QStringList{"search", "--run", dir.filePath("again.sqlite")} + settings);
        QVERIFY(again.waitForFinished(240000));
        const qint64 duration_ms = clock.elapsed();
        const nlohmann::json cached = summary(again);
        QVERIFY2(again.exitCode() == 0 && cached.is_object(), again.readAllStandardError().constData());
        for (const char* key :
             {"measurements", "forecasts", "candidates", "best_speedup", "best_candidate", "trajectory"})
            QVERIFY2(cached[key] == expected[key], (std::string(key) + ": " + cached[key].dump() +
                                                    " with the cached base, " + expected[key].dump() + " without")
                                                       .c_str());

        int attempts = 1;
        std::string run = dir.filePath("killed-1.sqlite").toStdString();
        const int roots = 4;  // the reference and softmax's three seeds
        const auto screened = [&] {
            try {
                RunStore store = RunStore::open(run);
                const auto runs = store.runs();
                for (const auto& e : runs.empty() ? std::vector<RunEvent>{} : store.events(runs.back().id))
                    if (e.kind == "gating" && e.payload.value("reason", std::string()).starts_with("initial screening"))
                        return true;
            } catch (const std::exception&) {}
            return false;
        };
        std::mt19937 rng(20261124);
        int kills = 0;
        bool killed_before_screen = false;
        nlohmann::json resumed;
        for (int session = 0;; ++session) {
            QProcess p;
            p.setProcessEnvironment(env);
            QStringList args{"search", "--run", QString::fromStdString(run)};
            if (std::filesystem::exists(run))
                args << "--resume";  // with the settings: they start over a file that holds no run yet
            p.start(cli, args + settings);
            QVERIFY(p.waitForStarted());
            bool finished = false;
            if (session == 0) {
                QTest::qWait(5);  // its first instant: at most the schema is written
            } else if (session == 1) {
                // After the reference and the seeds are measured, before the initial screen decides.
                QElapsedTimer waited;
                waited.start();
                while (!finished && measured_count(run) < roots && waited.elapsed() < 120000)
                    finished = p.waitForFinished(2);
            } else if (session == 2) {
                // Mid-search, a few measurements after the screen.
                QElapsedTimer waited;
                waited.start();
                while (!finished && measured_count(run) < roots + 4 && waited.elapsed() < 120000)
                    finished = p.waitForFinished(2);
            } else if (session < 8) {
                finished = p.waitForFinished(std::uniform_int_distribution<int>(50, int(duration_ms))(rng));
            } else {
                QVERIFY(p.waitForFinished(240000));  // enough kills: let it finish
                finished = true;
            }
            if (finished) {
                // How it ended, not only what it said: a session that crashes says nothing on stderr.
                std::string ended = std::string(p.exitStatus() == QProcess::CrashExit ? "crashed" : "exited") +
                                    " (code " + std::to_string(p.exitCode()) + ", session " + std::to_string(session) +
                                    "): " + p.readAllStandardError().toStdString();
                if (p.exitCode() != 0) {
                    // With --json a failed search says why in its summary, not on stderr.
                    const nlohmann::json said = nlohmann::json::parse(p.peek(1 << 20).toStdString(), nullptr, false);
                    if (said.is_object())
                        ended += " state " + said.value("state", std::string("?")) + ": " +
                                 said.value("reason", std::string("?"));
                }
                QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, ended.c_str());
                resumed = summary(p);
                break;
            }
            p.kill();
            QVERIFY(p.waitForFinished());
            ++kills;
            if (session == 1) {
                killed_before_screen = measured_count(run) >= roots && !screened();
                // The screen follows the seeds' last measurement within milliseconds: a kill that missed that moment
                // starts over in a new run file.
                if (!killed_before_screen && attempts < 10) {
                    run = dir.filePath(QString("killed-%1.sqlite").arg(++attempts)).toStdString();
                    kills = 0;
                    session = -1;
                }
            }
        }
        QVERIFY2(kills >= 3, "the search was killed at least in its first instant, before the screen and once more");
        QVERIFY2(killed_before_screen, "one kill came after the seeds were measured and before the screen");
        QVERIFY(resumed.is_object());
        for (const char* key : {"measurements", "forecasts", "candidates", "tokens", "cost_usd", "best_speedup",
                                "best_candidate", "trajectory"})
            QVERIFY2(resumed[key] == expected[key], (std::string(key) + ": " + resumed[key].dump() + " after kills, " +
                                                     expected[key].dump() + " uninterrupted")
                                                        .c_str());
        RunStore store = RunStore::open(run);
        QCOMPARE(store.runs().size(), size_t(1));
        QCOMPARE(QString::fromStdString(store.integrityCheck()), QString("ok"));
        QCOMPARE(int64_t(store.forecastCount(store.runs().back().id)), expected["forecasts"].get<int64_t>());
    }

    // --resume names the flags it ignores and lets a larger budget extend the run; later resumes keep it.
    void resumeSaysWhatItIgnoresAndExtendsBudgets() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("r.sqlite").toStdString();
        auto r = run_cli({"search", "--problem", "row_sum", "--device", "replay:nvidia-h200", "--surrogate", "local",
                          "--gating", "selective", "--budget", "8", "--seed", "2", "--run", run, "--quiet"});
        QVERIFY2(r.code == 0, r.err.c_str());
        r = run_cli({"search", "--resume", "--run", run, "--gating", "measure-all", "--seed", "9", "--budget", "5"});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("--resume continues the run with its stored settings; ignored: --gating, --seed, --budget "
                            "5 (the run's budget is 8; a budget only grows)") != std::string::npos,
                 r.err.c_str());
        r = run_cli({"search", "--resume", "--run", run, "--budget", "12", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["measurements"].get<int>(), 12);
        QCOMPARE(j["ignored_flags"].size(), size_t(0));
        // A resume without --budget keeps the extended budget (not the default of 40).
        r = run_cli({"search", "--resume", "--run", run, "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        j = nlohmann::json::parse(r.out);
        QCOMPARE(j["measurements"].get<int>(), 12);
        QVERIFY2(j["reason"].get<std::string>().find("measurement budget spent (12)") != std::string::npos,
                 j.dump().c_str());
    }

    // An LLM surrogate's tokens come back on resume (every forecast's): a spent token budget makes no more calls.
    void aSpentTokenBudgetStaysSpentAfterResume() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) {
            nlohmann::json args = {{"predicted_bin", 5}, {"reasoning", "test answer"}};
            for (const char* key : {"p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown",
                                    "p_minor_slowdown", "p_significant_speedup", "p_high_speedup", "p_extreme_speedup"})
                args[key] = 0.0;
            args["p_minor_speedup"] = 1.0;
            const nlohmann::json calls = nlohmann::json::array(
                {{{"id", "call_1"},
                  {"type", "function"},
                  {"function", {{"name", "submit_kernel_runtime_estimate"}, {"arguments", args.dump()}}}}});
            return HttpAnswer::json(kerncast::test::chatCompletionBody(nullptr, 1500, 500, calls));
        });
        QTemporaryDir dir;
        const std::string run = dir.filePath("tokens.sqlite").toStdString();
        auto r = run_cli({"search",
                          "--problem",
                          "row_sum",
                          "--device",
                          "replay:nvidia-h200",
                          "--surrogate",
                          "llm",
                          "--endpoint",
                          server.baseUrl(),
                          "--model",
                          "m",
                          "--gating",
                          "selective",
                          "--budget",
                          "40",
                          "--token-budget",
                          "9000",
                          "--run",
                          run,
                          "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto first = nlohmann::json::parse(r.out);
        QCOMPARE(first["reason"].get<std::string>(), std::string("token budget spent"));
        // Within the budget (9,000: the first forecast is asked only when the budget covers a typical one, 6,000):
        // a forecast is asked only while what is left covers a call as large as the largest so far.
        QVERIFY2(first["tokens"].get<int64_t>() > 0 && first["tokens"].get<int64_t>() <= 9000, r.out.c_str());
        const size_t asked = server.requestCount();
        QVERIFY(asked > 0);
        r = run_cli({"search", "--resume", "--run", run, "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto resumed = nlohmann::json::parse(r.out);
        QCOMPARE(resumed["reason"].get<std::string>(), std::string("token budget spent"));
        QCOMPARE(resumed["tokens"], first["tokens"]);
        QCOMPARE(resumed["forecasts"], first["forecasts"]);
        QCOMPARE(server.requestCount(), asked);
    }

    // A run file that holds no run (killed before the settings were stored) starts over with the settings given.
    void aFileWithoutARunStartsOver() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("empty.sqlite").toStdString();
        RunStore::create(run);
        auto r = run_cli({"search", "--resume", "--run", run});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("holds no run") != std::string::npos && r.err.find("--problem") != std::string::npos,
                 r.err.c_str());
        r = run_cli({"search", "--problem", "row_sum", "--device", "replay:nvidia-h200", "--surrogate", "none",
                     "--gating", "measure-all", "--budget", "6", "--run", run, "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["measurements"].get<int>(), 6);
    }

    // The replay device answers only recorded programs of the recorded definition: a problem it has no recording of
    // (or an edited one) stops the search before its first measurement, with the reason and exit code 1, instead of
    // spending the budget on not_recorded answers and reporting a best of 0x.
    void anUnrecordedProblemStopsBeforeMeasuring_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QString>("says");
        QTest::newRow("no recording") << "row_sum_copy"
                                      << ""
                                      << "has no recording on replay:nvidia-h200";
        QTest::newRow("another definition") << "row_sum"
                                            << "\"rtol\": 1e-3"
                                            << "is not the definition recorded";
    }
    void anUnrecordedProblemStopsBeforeMeasuring() {
        QFETCH(QString, name);
        QFETCH(QString, edit);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const std::filesystem::path problem = dir.filePath(name).toStdString();
        std::filesystem::copy(std::string(KERNCAST_SOURCE_DIR "/resources/problems/row_sum"), problem,
                              std::filesystem::copy_options::recursive);
        std::string json = read((problem / "problem.json").string());
        json.replace(json.find("\"row_sum\""), 9, "\"" + name.toStdString() + "\"");
        if (!edit.isEmpty())
            json.replace(json.find("\"rtol\": 1e-4"), std::string("\"rtol\": 1e-4").size(), edit.toStdString());
        std::ofstream(problem / "problem.json") << json;
        const std::string run = dir.filePath("unrecorded.sqlite").toStdString();
        const auto r = run_cli({"search", "--problem", problem.string(), "--device", "replay:nvidia-h200",
                                "--surrogate", "none", "--gating", "measure-all", "--budget", "6", "--run", run});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(says.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY2(r.out.find("best 0.000x") == std::string::npos, r.out.c_str());
        QCOMPARE(measured_count(run), int64_t{0});
    }

    void exportsTheRunAsDatasets() {
        QTemporaryDir dir;
        const std::string run = dir.filePath("e.sqlite").toStdString();
        auto r = run_cli({"search", "--problem", "saxpy", "--device", "replay:nvidia-h200", "--surrogate", "none",
                          "--gating", "measure-all", "--budget", "10", "--run", run, "--quiet"});
        QVERIFY2(r.code == 0, r.err.c_str());

        const std::string pairs = dir.filePath("pairs.jsonl").toStdString();
        r = run_cli({"export", "--run", run, "--format", "pairs-jsonl", "--out", pairs});
        QVERIFY2(r.code == 0, r.err.c_str());
        // What we export, our importer reads back: every measured candidate is a pair with its speedup.
        const ImportResult imported = import_forecasters_jsonl_file(pairs, BinScheme::gfV2(), ImportMode::Strict);
        QCOMPARE(imported.pairs.size(), size_t(10));
        for (const auto& p : imported.pairs) {
            QCOMPARE(p.pack, std::string("saxpy"));
            QVERIFY(p.speedup.has_value());
            QCOMPARE(p.true_bin, BinScheme::gfV2().binOf(*p.speedup));
            QVERIFY(p.anchor_code.find("@kerncast launch") != std::string::npos);
            QCOMPARE(p.hardware, std::string("NVIDIA H200"));
        }

        r = run_cli({"export", "--run", run, "--format", "events-jsonl"});
        QCOMPARE(r.code, 0);
        std::istringstream lines(r.out);
        std::string line;
        std::multiset<std::string> kinds;
        std::string last_ts;
        bool first = true;
        while (std::getline(lines, line)) {
            const auto j = nlohmann::json::parse(line);
            kinds.insert(j["kind"].get<std::string>());
            if (first)
                QCOMPARE(j["kind"].get<std::string>(), std::string("run"));
            first = false;
        }
        QCOMPARE(kinds.count("run"), size_t(1));
        QCOMPARE(kinds.count("measurement"), size_t(10));
        QVERIFY(kinds.count("candidate") >= 10);
        QVERIFY(kinds.count("event") > 10);

        const std::string kt = dir.filePath("kt.json").toStdString();
        r = run_cli({"export", "--run", run, "--format", "kernel-tuner", "--out", kt});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(read(kt));
        // Kernel Tuner checks these against its own arguments: the family's declared tunable order, the kernel
        // function's name and the benchmark sizes (not the problem's name).
        QCOMPARE(doc["tune_params_keys"], (nlohmann::json{"BLOCK", "VEC", "ITEMS"}));
        QCOMPARE(doc["kernel_name"].get<std::string>(), std::string("saxpy_family"));
        QCOMPARE(doc["problem_size"], (nlohmann::json{67108864}));
        QCOMPARE(doc["tune_params"]["BLOCK"], (nlohmann::json{64, 128, 256, 512, 1024}));
        QVERIFY(!doc["cache"].empty());
        for (const auto& [key, entry] : doc["cache"].items()) {
            QVERIFY(entry["time"].is_number());
            QVERIFY(entry["time"].get<double>() > 0.01 && entry["time"].get<double>() < 10);  // ms
            QCOMPARE(key, std::to_string(entry["BLOCK"].get<int>()) + "," + std::to_string(entry["VEC"].get<int>()) +
                              "," + std::to_string(entry["ITEMS"].get<int>()));
        }

        r = run_cli({"export", "--run", dir.filePath("missing.sqlite").toStdString(), "--format", "pairs-jsonl"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.find("missing.sqlite") != std::string::npos);
    }

    // Budgets below zero (or a measurement budget below one), tau/pi/epsilon outside [0, 1] and top-k below one are
    // usage errors that name the option; no run file is started.
    void outOfRangeSettingsAreUsageErrors_data() {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        QTest::newRow("negative budget") << "--budget"
                                         << "-1";
        QTest::newRow("zero budget") << "--budget"
                                     << "0";
        QTest::newRow("negative forecast budget") << "--forecast-budget"
                                                  << "-5";
        QTest::newRow("negative token budget") << "--token-budget"
                                               << "-1";
        QTest::newRow("negative cost budget") << "--cost-budget"
                                              << "-0.5";
        QTest::newRow("negative time budget") << "--time-budget"
                                              << "-1";
        QTest::newRow("tau above 1") << "--tau"
                                     << "1.5";
        QTest::newRow("tau below 0") << "--tau"
                                     << "-0.1";
        QTest::newRow("pi above 1") << "--pi"
                                    << "2";
        QTest::newRow("epsilon below 0") << "--epsilon"
                                         << "-0.01";
        QTest::newRow("top-k 0") << "--top-k"
                                 << "0";
        QTest::newRow("negative ahead") << "--ahead"
                                        << "-1";
        QTest::newRow("unknown static reports") << "--static-reports"
                                                << "some";
    }
    void outOfRangeSettingsAreUsageErrors() {
        QFETCH(QString, option);
        QFETCH(QString, value);
        QTemporaryDir dir;
        const std::string run = dir.filePath("s.sqlite").toStdString();
        const auto r = run_cli({"search", "--problem", "saxpy", "--device", "replay:nvidia-h200", "--surrogate", "none",
                                "--run", run, option.toStdString(), value.toStdString()});
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.find(option.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(run)));
    }

    // The same limits hold for a stored configuration (a run file edited or written by another program).
    void storedSettingsOutOfRangeAreRefused_data() {
        QTest::addColumn<QString>("json");
        QTest::newRow("negative tokens") << R"({"problem_dir": "p", "budgets": {"tokens": -1}})";
        QTest::newRow("negative wall time") << R"({"problem_dir": "p", "budgets": {"wall_s": -3}})";
        QTest::newRow("zero measurements") << R"({"problem_dir": "p", "budgets": {"measurements": 0}})";
        QTest::newRow("tau") << R"({"problem_dir": "p", "gating": {"tau": 1.5}})";
        QTest::newRow("epsilon") << R"({"problem_dir": "p", "gating": {"epsilon": -1}})";
        QTest::newRow("top-k") << R"({"problem_dir": "p", "gating": {"top_k": 0}})";
        QTest::newRow("ahead") << R"({"problem_dir": "p", "overlap": true, "ahead": -4})";
        QTest::newRow("static reports") << R"({"problem_dir": "p", "static_reports": "some"})";
    }
    void storedSettingsOutOfRangeAreRefused() {
        QFETCH(QString, json);
        QVERIFY_THROWS_EXCEPTION(Error, search_config_from_json(nlohmann::json::parse(json.toStdString())));
        // The same file with the value in range is accepted.
        QVERIFY(!search_config_from_json(nlohmann::json::parse(R"({"problem_dir": "p"})")).problem_dir.empty());
    }
};

QTEST_GUILESS_MAIN(TestCmdSearch)
#include "tst_cmd_search.moc"
