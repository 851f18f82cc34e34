#include "core/error.h"
#include "core/run_store.h"

#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

using namespace kerncast;

namespace {

Candidate make_candidate(const std::string& label, int64_t parent = 0, int generation = 0) {
    Candidate c;
    c.parent_id = parent;
    c.generation = generation;
    c.mutator = parent ? Mutator::LlmRewrite : Mutator::Seed;
    c.label = label;
    c.source = "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; } // " + label + "\n";
    c.tunables = {{"BLOCK", 128}, {"VEC", 4}};
    return c;
}

Measurement make_measurement(double speedup) {
    Measurement m;
    m.status = Status::Ok;
    m.speedup = speedup;
    m.device_kind = "cuda";
    m.device.name = "NVIDIA H100 80GB HBM3";
    m.device.uuid = "GPU-1234";
    m.device.cc_major = 9;
    TimingStats cand;
    cand.median_us = 10.0;
    cand.n = 3;
    cand.samples_us = {9.5, 10.0, 10.5};
    TimingStats ref = cand;
    ref.median_us = 10.0 * speedup;
    m.candidate = cand;
    m.reference = ref;
    return m;
}

// Raw access to the file, as another program (or a person with the sqlite3 shell) would see it.
struct RawDb {
    sqlite3* db = nullptr;
    explicit RawDb(const std::string& path) { sqlite3_open(path.c_str(), &db); }
    ~RawDb() { sqlite3_close(db); }
    std::string text(const std::string& sql, int column = 0) {
        sqlite3_stmt* stmt = nullptr;
        std::string out;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
            out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
        sqlite3_finalize(stmt);
        return out;
    }
    void exec(const std::string& sql) { QCOMPARE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK); }
};

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

class TestRunStore : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return m_dir.path().toStdString() + "/" + name; }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void newStoreHasSchemaWalAndVersion() {
        const auto file = path("schema.sqlite");
        { auto store = RunStore::create(file); }
        RawDb raw(file);
        QCOMPARE(raw.text("PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(raw.text("PRAGMA user_version"), std::to_string(RunStore::schemaVersion()));
        for (const char* table : {"runs", "problems", "candidates", "static_reports", "forecasts", "measurements",
                                  "events", "imported_pairs", "llm_calls"}) {
            QCOMPARE(raw.text(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '") +
                              table + "'"),
                     std::string("1"));
        }
        // The readers' queries go through indices, not full scans of a run's history.
        for (const char* query : {"SELECT * FROM measurements WHERE candidate_id = 1 ORDER BY id",
                                  "SELECT * FROM forecasts WHERE candidate_id = 1 ORDER BY id",
                                  "SELECT * FROM candidates WHERE run_id = 1 ORDER BY id",
                                  "SELECT * FROM events WHERE run_id = 1 ORDER BY id"}) {
            const auto plan = raw.text(std::string("EXPLAIN QUERY PLAN ") + query, 3);
            QVERIFY2(plan.find("USING INDEX") != std::string::npos ||
                         plan.find("USING COVERING INDEX") != std::string::npos,
                     (std::string(query) + " -> " + plan).c_str());
        }
    }

    void candidatesKeepLineageAndSource() {
        auto store = RunStore::create(path("lineage.sqlite"));
        RunInfo run;
        run.name = "softmax search";
        run.problem = "softmax";
        run.seed = 42;
        run.config = {{"budget", 200}, {"max_tokens", 4096}};
        const int64_t run_id = store.addRun(run);
        QVERIFY(run_id > 0);
        QCOMPARE(run.id, run_id);
        QVERIFY(!run.created_at.empty());

        Candidate seed = make_candidate("seed:vec4.cu");
        const int64_t seed_id = store.addCandidate(run_id, seed);
        QCOMPARE(seed.id, seed_id);
        QCOMPARE(seed.source_hash, content_hash(seed.source, seed.tunables));
        Candidate child = make_candidate("llm child", seed_id, 1);
        store.addCandidate(run_id, child);

        const auto all = store.candidates(run_id);
        QCOMPARE(all.size(), size_t{2});
        QCOMPARE(all[1].parent_id, seed_id);
        QCOMPARE(all[1].generation, 1);
        QCOMPARE(all[1].mutator, Mutator::LlmRewrite);
        QCOMPARE(all[1].source, child.source);
        QCOMPARE(all[1].tunables, child.tunables);
        QCOMPARE(all[0].parent_id, int64_t{0});

        const auto runs = store.runs();
        QCOMPARE(runs.size(), size_t{1});
        QCOMPARE(runs[0].problem, std::string("softmax"));
        QCOMPARE(runs[0].seed, int64_t{42});
        QCOMPARE(runs[0].config["max_tokens"].get<int>(), 4096);
        QVERIFY(!store.candidate(9999).has_value());
    }

    void measurementsForecastsAndReportsRoundTrip() {
        auto store = RunStore::create(path("values.sqlite"));
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);
        Candidate c = make_candidate("c");
        store.addCandidate(run_id, c);

        const Measurement m = make_measurement(2.5);
        store.addMeasurement(c.id, m);
        Measurement failed;
        failed.status = Status::CompileError;
        failed.reason = "error: identifier \"__half2\" is undefined";
        store.addMeasurement(c.id, failed);
        const auto ms = store.measurementsFor(c.id);
        QCOMPARE(ms.size(), size_t{2});
        QCOMPARE(nlohmann::json(ms[0].measurement).dump(), nlohmann::json(m).dump());
        QCOMPARE(ms[1].measurement.status, Status::CompileError);
        QCOMPARE(ms[1].measurement.reason, failed.reason);
        // The query columns agree with the JSON: a failure has no speedup.
        RawDb raw(store.path());
        QCOMPARE(raw.text("SELECT speedup FROM measurements WHERE id = " + std::to_string(ms[0].id)),
                 std::string("2.5"));
        QCOMPARE(raw.text("SELECT typeof(speedup) FROM measurements WHERE id = " + std::to_string(ms[1].id)),
                 std::string("null"));

        Forecast f;
        f.surrogate_id = "llm:qwen2.5-coder-32b";
        f.probabilities = {0.0, 0.05, 0.05, 0.1, 0.4, 0.3, 0.1, 0.0};
        f.raw_sum = 1.02;
        f.predicted_bin = 5;
        f.reasoning = "vectorised loads; memory bound";
        f.prompt_hash = "abc123";
        f.tokens_in = 1800;
        f.tokens_out = 240;
        f.latency_ms = 812.5;
        f.cost_usd = 0.0031;
        store.addForecast(c.id, f);
        const auto fs = store.forecastsFor(c.id);
        QCOMPARE(fs.size(), size_t{1});
        QCOMPARE(fs[0].forecast.probabilities, f.probabilities);
        QCOMPARE(fs[0].forecast.predicted_bin, 5);
        QCOMPARE(fs[0].forecast.reasoning, f.reasoning);
        QCOMPARE(fs[0].forecast.tokens_out, int64_t{240});
        QCOMPARE(fs[0].forecast.cost_usd, 0.0031);
        QCOMPARE(fs[0].forecast.surrogate_id, f.surrogate_id);

        StaticReport r1;
        r1.kernel = "rowmax";
        r1.registers = 40;
        r1.spill_store_bytes = 16;
        StaticReport r2;
        r2.kernel = "rowsum";
        r2.shared_bytes = 4096;
        store.addStaticReports(c.id, {r1, r2});
        const auto rs = store.staticReportsFor(c.id);
        QCOMPARE(rs.size(), size_t{2});
        QCOMPARE(rs[0].registers, 40);
        QCOMPARE(rs[0].spill_store_bytes, 16);
        QCOMPARE(rs[1].kernel, std::string("rowsum"));
        QCOMPARE(rs[1].shared_bytes, 4096);
    }

    // A recalibrated forecast keeps what the surrogate said (Forecast::uncalibrated) bit for bit, through both
    // readers; a forecast left as given reads back without it, stored as NULL.
    void uncalibratedForecastsRoundTrip() {
        auto store = RunStore::create(path("uncalibrated.sqlite"));
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);
        Candidate c = make_candidate("c");
        store.addCandidate(run_id, c);

        Forecast given = Forecast::fromRaw({0.02, 0.03, 0.05, 0.15, 0.40, 0.20, 0.10, 0.05});
        given.surrogate_id = "local";
        Forecast recalibrated = given;
        recalibrated.probabilities = {0.03, 0.07, 0.25, 0.45, 0.05, 0.05, 0.05, 0.05};
        recalibrated.predicted_bin = 4;
        // Values whose decimal text is long: the JSON column must keep every bit.
        recalibrated.uncalibrated = std::array<double, kBinCount>{0.1 / 3, 0.2 / 3, 1e-300, 0, 0.4, 0.2, 1.0 / 7, 0.0};
        const int64_t given_id = store.addForecast(c.id, given);
        const int64_t recalibrated_id = store.addForecast(c.id, recalibrated);

        const auto of_run = store.forecastsOfRun(run_id);
        QCOMPARE(of_run.size(), size_t{1});
        for (const auto& fs : {store.forecastsFor(c.id), of_run.at(c.id)}) {
            QCOMPARE(fs.size(), size_t{2});
            QCOMPARE(fs[0].id, given_id);
            QVERIFY(!fs[0].forecast.uncalibrated.has_value());
            QCOMPARE(fs[1].id, recalibrated_id);
            QVERIFY(fs[1].forecast.uncalibrated.has_value());
            QCOMPARE(*fs[1].forecast.uncalibrated, *recalibrated.uncalibrated);
            QCOMPARE(fs[1].forecast.probabilities, recalibrated.probabilities);
            QCOMPARE(fs[1].forecast.predicted_bin, 4);
        }
        RawDb raw(store.path());
        QCOMPARE(raw.text("SELECT typeof(uncalibrated) FROM forecasts WHERE id = " + std::to_string(given_id)),
                 std::string("null"));
        // Readable by another program as a JSON array of the 8 probabilities.
        QCOMPARE(raw.text("SELECT json_array_length(uncalibrated) FROM forecasts WHERE id = " +
                          std::to_string(recalibrated_id)),
                 std::string("8"));
        QCOMPARE(raw.text("SELECT json_extract(uncalibrated, '$[4]') FROM forecasts WHERE id = " +
                          std::to_string(recalibrated_id)),
                 std::string("0.4"));
    }

    // A stored "uncalibrated" that is not 8 finite, non-negative numbers is refused when read, with a reason, never
    // read as something else.
    void corruptUncalibratedIsRefused_data() {
        QTest::addColumn<QString>("stored");
        QTest::addColumn<QString>("expected");
        QTest::newRow("seven") << "[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.4]"
                               << "must be an array of 8 numbers";
        QTest::newRow("nine") << "[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.1]"
                              << "must be an array of 8 numbers";
        QTest::newRow("negative") << "[0.1, 0.1, -0.1, 0.1, 0.1, 0.1, 0.4, 0.2]"
                                  << "bin 3 must be a finite number, not negative";
        QTest::newRow("text in it") << R"([0.1, 0.1, 0.1, "0.1", 0.1, 0.1, 0.2, 0.2])"
                                    << "bin 4 must be a finite number, not negative";
        QTest::newRow("object") << R"({"p1": 1})"
                                << "must be an array of 8 numbers";
        QTest::newRow("not JSON") << "[0.1, 0.1,"
                                  << "corrupt uncalibrated forecast in the store";
    }
    void corruptUncalibratedIsRefused() {
        QFETCH(QString, stored);
        QFETCH(QString, expected);
        const auto file = path("corrupt-uncalibrated-" +
                               QString(QTest::currentDataTag()).replace(' ', '_').toStdString() + ".sqlite");
        int64_t run_id = 0, candidate_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "r";
            run_id = store.addRun(run);
            Candidate c = make_candidate("c");
            candidate_id = store.addCandidate(run_id, c);
            Forecast f = Forecast::fromRaw({1, 1, 1, 1, 1, 1, 1, 1});
            f.uncalibrated = f.probabilities;
            store.addForecast(c.id, f);
        }
        {
            RawDb raw(file);
            sqlite3_stmt* stmt = nullptr;
            QCOMPARE(sqlite3_prepare_v2(raw.db, "UPDATE forecasts SET uncalibrated = ?", -1, &stmt, nullptr),
                     SQLITE_OK);
            const std::string text = stored.toStdString();
            sqlite3_bind_text(stmt, 1, text.c_str(), -1, SQLITE_TRANSIENT);
            QCOMPARE(sqlite3_step(stmt), SQLITE_DONE);
            sqlite3_finalize(stmt);
        }
        auto store = RunStore::open(file);
        for (int reader = 0; reader < 2; ++reader) {
            try {
                if (reader == 0)
                    store.forecastsFor(candidate_id);
                else
                    store.forecastsOfRun(run_id);
                QFAIL("a corrupt uncalibrated forecast was read");
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
            }
        }
    }

    // A store written before recalibration (schema 4) opens: its forecasts read back without "uncalibrated", and new
    // ones keep it.
    void olderStoreGainsUncalibrated() {
        const auto file = path("schema4.sqlite");
        int64_t candidate_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "before";
            Candidate c = make_candidate("kept");
            candidate_id = store.addCandidate(store.addRun(run), c);
            store.addForecast(c.id, Forecast::fromRaw({0, 0, 0, 1, 1, 0, 0, 0}));
        }
        {
            RawDb raw(file);
            raw.exec("ALTER TABLE forecasts DROP COLUMN uncalibrated; PRAGMA user_version = 4");
        }
        auto store = RunStore::open(file);
        Forecast recalibrated = Forecast::fromRaw({0, 0, 1, 1, 0, 0, 0, 0});
        recalibrated.uncalibrated = std::array<double, kBinCount>{0, 0, 0, 0.5, 0.5, 0, 0, 0};
        store.addForecast(candidate_id, recalibrated);
        const auto fs = store.forecastsFor(candidate_id);
        QCOMPARE(fs.size(), size_t{2});
        QVERIFY(!fs[0].forecast.uncalibrated.has_value());
        QCOMPARE(fs[0].forecast.probabilities[3], 0.5);
        QVERIFY(fs[1].forecast.uncalibrated.has_value());
        QCOMPARE(*fs[1].forecast.uncalibrated, *recalibrated.uncalibrated);
        RawDb raw(file);
        QCOMPARE(raw.text("PRAGMA user_version"), std::to_string(RunStore::schemaVersion()));
    }

    // The whole-run readers give what the per-candidate readers give, and nothing of another run.
    void runReadersMatchCandidateReaders() {
        auto store = RunStore::create(path("bulk.sqlite"));
        std::vector<int64_t> runs;
        std::vector<std::vector<int64_t>> candidates(2);
        for (int r = 0; r < 2; ++r) {
            RunInfo run;
            run.name = "run " + std::to_string(r);
            runs.push_back(store.addRun(run));
            for (int i = 0; i < 5; ++i) {
                Candidate c = make_candidate("r" + std::to_string(r) + "c" + std::to_string(i));
                store.addCandidate(runs.back(), c);
                candidates[static_cast<size_t>(r)].push_back(c.id);
            }
        }
        // Interleaved writes, so that rows of the two runs alternate in every table; candidate 4 has nothing.
        for (int k = 0; k < 3; ++k)
            for (int r = 0; r < 2; ++r)
                for (int i = 0; i < 4; ++i) {
                    const int64_t id = candidates[static_cast<size_t>(r)][static_cast<size_t>(i)];
                    if (k < i)
                        store.addMeasurement(id, make_measurement(1.0 + r + 0.1 * i + 0.01 * k));
                    Forecast f = Forecast::fromRaw({0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.2});
                    f.reasoning = "r" + std::to_string(r) + " i" + std::to_string(i) + " k" + std::to_string(k);
                    f.tokens_in = 1000 * (r + 1);
                    f.tokens_out = i;
                    f.cost_usd = 0.25 * (r + 1);
                    store.addForecast(id, f);
                    StaticReport rep;
                    rep.kernel = f.reasoning;
                    if (k == 0)
                        store.addStaticReports(id, {rep});
                }
        for (size_t r = 0; r < 2; ++r) {
            const auto ms = store.measurementsOfRun(runs[r]);
            const auto fs = store.forecastsOfRun(runs[r]);
            const auto rs = store.staticReportsOfRun(runs[r]);
            QCOMPARE(fs.size(), size_t{4});
            QCOMPARE(rs.size(), size_t{4});
            QCOMPARE(ms.size(), size_t{3});  // candidate 0 was never measured
            QCOMPARE(store.forecastCount(runs[r]), int64_t{12});
            // Tokens and cost of the run's forecasts only: 12 forecasts, tokens_out 0..3 three times each.
            const RunStore::ForecastUsage usage = store.forecastUsage(runs[r]);
            QCOMPARE(usage.tokens, static_cast<int64_t>(12 * 1000 * (r + 1) + 3 * (0 + 1 + 2 + 3)));
            QCOMPARE(usage.cost_usd, 12 * 0.25 * static_cast<double>(r + 1));
            // The column-only outcomes agree with the measurements' JSON, in id order.
            std::vector<std::pair<int64_t, double>> from_json, from_columns;
            for (const auto& [id, list] : ms)
                for (const auto& m : list)
                    from_json.push_back({m.id, m.measurement.speedup});
            std::sort(from_json.begin(), from_json.end());
            for (const MeasurementOutcome& o : store.measurementOutcomes(runs[r])) {
                QCOMPARE(o.status, Status::Ok);
                QCOMPARE(o.device_kind, std::string("cuda"));
                from_columns.push_back({o.id, o.speedup});
            }
            QCOMPARE(from_columns, from_json);
            for (const auto& [id, list] : fs)
                QVERIFY(std::count(candidates[r].begin(), candidates[r].end(), id) == 1);
            for (int64_t id : candidates[r]) {
                auto dump_forecasts = [](const std::vector<StoredForecast>& v) {
                    std::string out;
                    for (const auto& f : v)
                        out += std::to_string(f.id) + " " + nlohmann::json(f.forecast).dump() + "\n";
                    return out;
                };
                auto dump_measurements = [](const std::vector<StoredMeasurement>& v) {
                    std::string out;
                    for (const auto& m : v)
                        out += std::to_string(m.id) + " " + nlohmann::json(m.measurement).dump() + "\n";
                    return out;
                };
                const auto f = fs.find(id);
                QCOMPARE(f == fs.end() ? std::string() : dump_forecasts(f->second),
                         dump_forecasts(store.forecastsFor(id)));
                const auto m = ms.find(id);
                QCOMPARE(m == ms.end() ? std::string() : dump_measurements(m->second),
                         dump_measurements(store.measurementsFor(id)));
                const auto rep = rs.find(id);
                QCOMPARE(rep == rs.end() ? size_t{0} : rep->second.size(), store.staticReportsFor(id).size());
                if (rep != rs.end())
                    QCOMPARE(rep->second.front().kernel, store.staticReportsFor(id).front().kernel);
            }
        }
    }

    void eventsKeepOrderAndPayload() {
        auto store = RunStore::create(path("events.sqlite"));
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);
        store.addEvent(run_id, "pause", {});
        store.addEvent(run_id, "gating_changed", {{"policy", "selective"}, {"tau", 0.6}});
        store.addEvent(run_id, "resume", nlohmann::json::object());
        const auto events = store.events(run_id);
        QCOMPARE(events.size(), size_t{3});
        QCOMPARE(events[0].kind, std::string("pause"));
        QCOMPARE(events[1].payload["policy"].get<std::string>(), std::string("selective"));
        QCOMPARE(events[2].kind, std::string("resume"));
        QVERIFY(events[0].id < events[1].id && events[1].id < events[2].id);
        QVERIFY(!events[0].ts.empty());
        QVERIFY(store.events(run_id + 1).empty());
        const auto gating = store.events(run_id, "gating_changed");
        QCOMPARE(gating.size(), size_t{1});
        QCOMPARE(gating[0].id, events[1].id);
        QCOMPARE(gating[0].payload, events[1].payload);
        QVERIFY(store.events(run_id, "sweep").empty());
    }

    void secretsNeverEnterTheStore_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("removedPointer");
        QTest::newRow("api_key") << R"({"api_key": "sk-live-SECRET", "model": "m"})"
                                 << "/api_key";
        QTest::newRow("apiKey nested") << R"({"llm": {"apiKey": "sk-live-SECRET", "url": "http://x"}, "model": "m"})"
                                       << "/llm/apiKey";
        QTest::newRow("authorization header")
            << R"({"headers": {"Authorization": "Bearer sk-live-SECRET"}, "model": "m"})"
            << "/headers/Authorization";
        QTest::newRow("token in array")
            << R"({"endpoints": [{"url": "http://x", "access_token": "sk-live-SECRET"}], "model": "m"})"
            << "/endpoints/0/access_token";
        QTest::newRow("password") << R"({"PASSWORD": "sk-live-SECRET", "model": "m"})"
                                  << "/PASSWORD";
    }
    void secretsNeverEnterTheStore() {
        QFETCH(QString, config);
        QFETCH(QString, removedPointer);
        const auto file =
            path("secrets-" + QString(QTest::currentDataTag()).replace(' ', '_').toStdString() + ".sqlite");
        int64_t run_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "llm run";
            run.config = nlohmann::json::parse(config.toStdString());
            run.config["max_tokens"] = 1024;  // looks like "token" but is a setting, not a secret
            run_id = store.addRun(run);
            QVERIFY(run.config.dump().find("SECRET") == std::string::npos);

            const auto stored = store.run(run_id);
            QVERIFY(stored.has_value());
            QCOMPARE(stored->config["model"].get<std::string>(), std::string("m"));
            QCOMPARE(stored->config["max_tokens"].get<int>(), 1024);
            // Never silent: the run's log says which key was dropped (not its value).
            const auto events = store.events(run_id);
            QCOMPARE(events.size(), size_t{1});
            QCOMPARE(events[0].kind, std::string("secrets_stripped"));
            QCOMPARE(events[0].payload["config_keys"][0].get<std::string>(), removedPointer.toStdString());

            store.addEvent(run_id, "submit_kernel", {{"author", "me"}, {"api_key", "sk-live-SECRET"}});
        }
        // Not in the database, not in its write-ahead log.
        QVERIFY(file_bytes(file).find("sk-live-SECRET") == std::string::npos);
        QVERIFY(file_bytes(file + "-wal").find("sk-live-SECRET") == std::string::npos);
        auto reopened = RunStore::open(file);
        QVERIFY(reopened.events(run_id).back().payload.dump().find("SECRET") == std::string::npos);
    }

    void observerHearsOnlyCommittedRows() {
        const auto file = path("observer.sqlite");
        auto store = RunStore::create(file);
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);

        std::vector<StoreChange> heard;
        std::vector<bool> visible_elsewhere;
        auto reader = RunStore::open(file);  // another connection sees only what is committed
        store.setObserver([&](const StoreChange& change) {
            heard.push_back(change);
            if (change.table == "candidates")
                visible_elsewhere.push_back(reader.candidate(change.row_id).has_value());
            else if (change.table == "measurements")
                visible_elsewhere.push_back(!reader.measurementsFor(heard.front().row_id).empty());
        });

        Candidate single = make_candidate("outside a transaction");
        store.addCandidate(run_id, single);
        QCOMPARE(heard.size(), size_t{1});
        QCOMPARE(heard[0].table, std::string("candidates"));
        QCOMPARE(heard[0].row_id, single.id);
        QCOMPARE(heard[0].run_id, run_id);

        {
            auto tx = store.transaction();
            Candidate c = make_candidate("in a transaction");
            store.addCandidate(run_id, c);
            store.addMeasurement(single.id, make_measurement(1.5));
            QCOMPARE(heard.size(), size_t{1});  // nothing announced before the commit
            tx.commit();
        }
        QCOMPARE(heard.size(), size_t{3});
        QCOMPARE(heard[1].table, std::string("candidates"));
        QCOMPARE(heard[2].table, std::string("measurements"));
        QCOMPARE(heard[2].run_id, run_id);
        QCOMPARE(visible_elsewhere, std::vector<bool>({true, true, true}));

        {
            auto tx = store.transaction();
            Candidate c = make_candidate("rolled back");
            store.addCandidate(run_id, c);
        }  // destroyed without commit
        QCOMPARE(heard.size(), size_t{3});
        QCOMPARE(store.candidates(run_id).size(), size_t{2});
    }

    void transactionIsAllOrNothing() {
        auto store = RunStore::create(path("tx.sqlite"));
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);
        auto tx = store.transaction();
        Candidate a = make_candidate("a");
        store.addCandidate(run_id, a);
        // A failing write inside the transaction is undone on its own; the transaction goes on.
        QVERIFY_THROWS_EXCEPTION(Error, store.addMeasurement(a.id + 100, make_measurement(1.0)));
        QVERIFY_THROWS_EXCEPTION(Error, store.transaction());
        Candidate b = make_candidate("b", a.id, 1);
        store.addCandidate(run_id, b);
        tx.commit();
        QCOMPARE(store.candidates(run_id).size(), size_t{2});
        QCOMPARE(store.candidate(b.id)->parent_id, a.id);
    }

    void wrongIdsAreReadableErrors() {
        auto store = RunStore::create(path("ids.sqlite"));
        try {
            store.addMeasurement(777, make_measurement(1.0));
            QFAIL("no error for a missing candidate");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("no candidate 777") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("ids.sqlite") != std::string::npos, e.what());
        }
        Candidate c = make_candidate("orphan");
        QVERIFY_THROWS_EXCEPTION(Error, store.addCandidate(5, c));
        QCOMPARE(c.id, int64_t{0});
    }

    void openRefusesWhatItCannotRead_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected");
        QTest::newRow("text file") << "notes.sqlite"
                                   << "not a Kerncast run store";
        QTest::newRow("other sqlite database") << "other.db"
                                               << "another program";
        QTest::newRow("newer schema") << "newer.sqlite"
                                      << "newer Kerncast";
        QTest::newRow("missing file") << "missing.sqlite"
                                      << "does not exist";
    }
    void openRefusesWhatItCannotRead() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        const auto file = path(name.toStdString());
        if (name == "notes.sqlite") {
            std::ofstream(file) << "kernel notes, not a database\n" << std::string(4096, 'x');
        } else if (name == "other.db") {
            RawDb raw(file);
            raw.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)");
        } else if (name == "newer.sqlite") {
            { auto store = RunStore::create(file); }
            RawDb raw(file);
            raw.exec("PRAGMA user_version = " + std::to_string(RunStore::schemaVersion() + 1));
        }
        const std::string before = file_bytes(file);
        try {
            auto store = RunStore::open(file);
            QFAIL("opened a file it should refuse");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(file) != std::string::npos, e.what());
            QVERIFY2(what.find(expected.toStdString()) != std::string::npos, e.what());
            QCOMPARE(e.where().file, file);
        }
        QCOMPARE(file_bytes(file), before);  // refused files are left as they were
    }

    void emptyFileBecomesAStore() {
        const auto file = path("empty.sqlite");
        std::ofstream(file).close();
        auto store = RunStore::open(file);
        RunInfo run;
        run.name = "r";
        QVERIFY(store.addRun(run) > 0);
        QCOMPARE(store.integrityCheck(), std::string("ok"));
        QVERIFY_THROWS_EXCEPTION(Error, RunStore::create(file));
    }

    // Programs that open one store at once, while it is not yet in write-ahead logging (an empty file, or one a
    // killed search left in rollback mode): each needs an exclusive lock to switch it, and SQLite answers one of two
    // that hold a shared lock SQLITE_BUSY at once instead of waiting. Every open must still succeed.
    void concurrentOpensOfAFileNotYetInWalAllSucceed() {
        QTemporaryDir dir;
        int failures = 0;
        std::string said;
        for (int round = 0; round < 60; ++round) {
            const std::string path = dir.filePath(QString("race-%1.sqlite").arg(round)).toStdString();
            std::ofstream(path).close();  // an empty file: a store not yet made
            std::vector<std::thread> openers;
            std::mutex m;
            for (int t = 0; t < 8; ++t)
                openers.emplace_back([&] {
                    try {
                        RunStore store = RunStore::open(path);
                        (void)store.runs();
                    } catch (const std::exception& e) {
                        const std::lock_guard lock(m);
                        ++failures;
                        said = e.what();
                    }
                });
            for (auto& t : openers)
                t.join();
        }
        QVERIFY2(failures == 0, (std::to_string(failures) + " opens failed, e.g. " + said).c_str());
    }

    void diskFullIsClearAndLeavesStoreUsable() {
        const auto file = path("full.sqlite");
        std::vector<int64_t> written;
        int64_t run_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "r";
            run_id = store.addRun(run);
            store.limitPages(60);
            std::string error;
            for (int i = 0; i < 1000 && error.empty(); ++i) {
                Candidate c = make_candidate("big " + std::to_string(i));
                c.source += std::string(3000, 'a' + i % 26);
                try {
                    auto tx = store.transaction();
                    store.addCandidate(run_id, c);
                    store.addMeasurement(c.id, make_measurement(1.0 + i));
                    tx.commit();
                    written.push_back(c.id);
                } catch (const Error& e) {
                    error = e.what();
                }
            }
            QVERIFY2(error.find("disk full") != std::string::npos, error.c_str());
            QVERIFY2(error.find(file) != std::string::npos, error.c_str());
            QVERIFY(written.size() > 3);
            // The store still answers, holds every committed row and nothing of the failed one.
            QCOMPARE(store.candidates(run_id).size(), written.size());
            QCOMPARE(store.integrityCheck(), std::string("ok"));
            store.addEvent(run_id, "paused_disk_full", {});  // small writes still fit in the freed pages
        }
        auto reopened = RunStore::open(file);  // a new connection has no page cap: the "disk" has room again
        QCOMPARE(reopened.integrityCheck(), std::string("ok"));
        const auto rows = reopened.candidates(run_id);
        QCOMPARE(rows.size(), written.size());
        for (size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(rows[i].id, written[i]);
            QCOMPARE(rows[i].source_hash, content_hash(rows[i].source, rows[i].tunables));
            QCOMPARE(reopened.measurementsFor(rows[i].id).size(), size_t{1});
        }
        Candidate more = make_candidate("after the disk was freed");
        QVERIFY(reopened.addCandidate(run_id, more) > written.back());
    }

    // A resumed search takes its run back to the last checkpoint: later candidates (with their reports, forecasts
    // and measurements), later forecasts and measurements of earlier candidates and later events go; the rest stays.
    void rollBackKeepsTheRowsUpToAPoint() {
        auto store = RunStore::create(path("rollback.sqlite"));
        RunInfo run;
        run.name = "r";
        const int64_t run_id = store.addRun(run);
        RunInfo other;
        other.name = "other run";
        const int64_t other_id = store.addRun(other);
        Candidate a = make_candidate("a");
        store.addCandidate(run_id, a);
        const int64_t fa = store.addForecast(a.id, Forecast::fromRaw({0, 0, 0, 0, 1, 0, 0, 0}));
        const int64_t ma = store.addMeasurement(a.id, make_measurement(1.5));
        const int64_t checkpoint = store.addEvent(run_id, "checkpoint", {});
        store.addForecast(a.id, Forecast::fromRaw({0, 0, 0, 0, 0, 1, 0, 0}));  // a re-forecast after the checkpoint
        Candidate b = make_candidate("b", a.id, 1);
        store.addCandidate(run_id, b);
        store.addStaticReports(b.id, {StaticReport{}});
        store.addForecast(b.id, Forecast::fromRaw({0, 0, 0, 0, 1, 0, 0, 0}));
        store.addMeasurement(b.id, make_measurement(2.0));
        store.addEvent(run_id, "gating", {{"candidate", b.id}});
        store.addEvent(run_id, "budgets_extended", {});
        Candidate c = make_candidate("other run's");
        store.addCandidate(other_id, c);
        store.addEvent(other_id, "gating", {});

        store.rollBackRun(run_id, a.id, fa, ma, checkpoint, {"budgets_extended"});
        QCOMPARE(store.candidates(run_id).size(), size_t{1});
        QCOMPARE(store.forecastsFor(a.id).size(), size_t{1});
        QCOMPARE(store.measurementsFor(a.id).size(), size_t{1});
        QVERIFY(store.staticReportsFor(b.id).empty());
        QVERIFY(store.forecastsFor(b.id).empty());
        const auto events = store.events(run_id);
        QCOMPARE(events.size(), size_t{2});
        QCOMPARE(events[0].kind, std::string("checkpoint"));
        QCOMPARE(events[1].kind, std::string("budgets_extended"));
        // Another run in the file is not touched, and the run goes on from there.
        QCOMPARE(store.candidates(other_id).size(), size_t{1});
        QCOMPARE(store.events(other_id).size(), size_t{1});
        Candidate again = make_candidate("b again", a.id, 1);
        QVERIFY(store.addCandidate(run_id, again) > a.id);
        QCOMPARE(QString::fromStdString(store.integrityCheck()), QString("ok"));
    }

    void resumesAfterReopen() {
        const auto file = path("resume.sqlite");
        int64_t run_id = 0;
        int64_t last = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "r";
            run_id = store.addRun(run);
            for (int i = 0; i < 3; ++i) {
                Candidate c = make_candidate("first session " + std::to_string(i), last, i);
                last = store.addCandidate(run_id, c);
            }
        }
        auto store = RunStore::open(file);
        Candidate next = make_candidate("second session", last, 3);
        const int64_t id = store.addCandidate(run_id, next);
        QVERIFY(id > last);
        const auto all = store.candidates(run_id);
        QCOMPARE(all.size(), size_t{4});
        QCOMPARE(all.back().parent_id, last);
        QCOMPARE(all.back().generation, 3);

        RunStore moved = std::move(store);  // the owner may hand the store over, e.g. to the runner thread
        QCOMPARE(moved.candidates(run_id).size(), size_t{4});
    }

    // Viewing and export open a run read-only: the file's bytes stay as they were, writes are refused with a clear
    // error, and a run whose folder does not let SQLite make its WAL index (read-only storage; here a directory
    // stands where the index file would go) still opens for reading.
    void readOnlyOpenWritesNothing() {
        const auto file = path("readonly.sqlite");
        int64_t run_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "archived";
            run_id = store.addRun(run);
            Candidate c = make_candidate("kept");
            store.addCandidate(run_id, c);
        }
        auto bytes = [&] {
            QFile f(QString::fromStdString(file));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray before = bytes();
        QVERIFY(!before.isEmpty());
        {
            auto store = RunStore::openReadOnly(file);
            QCOMPARE(store.candidates(run_id).size(), size_t{1});
            QCOMPARE(store.runs().front().name, std::string("archived"));
            try {
                store.addEvent(run_id, "note", {});
                QFAIL("a write through a read-only store succeeded");
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find("read-only") != std::string::npos, e.what());
            }
        }
        QCOMPARE(bytes(), before);

        // A reader leaves no WAL files beside the file; a directory takes the index's place.
        QVERIFY(!QFile::exists(QString::fromStdString(file + "-wal")));
        QVERIFY(!QFile::exists(QString::fromStdString(file + "-shm")));
        QVERIFY(QDir().mkpath(QString::fromStdString(file + "-shm")));
        QVERIFY_THROWS_EXCEPTION(Error, RunStore::open(file));
        {
            auto store = RunStore::openReadOnly(file);
            QCOMPARE(store.candidates(run_id).front().label, std::string("kept"));
        }
        QCOMPARE(bytes(), before);
        QVERIFY(QDir().rmdir(QString::fromStdString(file + "-shm")));

        QVERIFY_THROWS_EXCEPTION(Error, RunStore::openReadOnly(path("no-such-run.sqlite")));
        std::ofstream(path("not-a-store.sqlite")) << "hello";
        QVERIFY_THROWS_EXCEPTION(Error, RunStore::openReadOnly(path("not-a-store.sqlite")));
    }

    // After a clean close the .sqlite alone holds everything, also when a reader (the GUI's views, an export) was
    // open while the writer closed, and no -wal or -shm file stays beside it: the file can be copied or mailed alone.
    void wholeAfterACleanCloseWithAReaderOpen() {
        const auto file = path("whole.sqlite");
        const auto copy = path("whole-copy.sqlite");
        int64_t run_id = 0;
        constexpr int kCandidates = 300;
        std::optional<RunStore> reader;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "whole";
            run_id = store.addRun(run);
            reader.emplace(RunStore::openReadOnly(file));
            for (int i = 0; i < kCandidates; ++i) {
                Candidate c = make_candidate("c" + std::to_string(i));
                store.addCandidate(run_id, c);
                store.addEvent(run_id, "note", {{"i", i}});
            }
            QCOMPARE(reader->candidates(run_id).size(), size_t{kCandidates});
        }
        QVERIFY(std::filesystem::copy_file(file, copy));
        {
            auto alone = RunStore::openReadOnly(copy);
            QCOMPARE(alone.candidates(run_id).size(), size_t{kCandidates});
            QCOMPARE(alone.events(run_id).size(), size_t{kCandidates});
        }
        reader.reset();
        for (const char* suffix : {"-wal", "-shm"})
            QVERIFY2(!std::filesystem::exists(file + suffix), suffix);
    }

    void llmCallsRoundTripAndSum() {
        auto store = RunStore::create(path("llm_calls.sqlite"));
        RunInfo run;
        run.name = "llm";
        const int64_t run_id = store.addRun(run);
        RunInfo other;
        other.name = "other";
        const int64_t other_id = store.addRun(other);
        Candidate seed = make_candidate("seed");
        store.addCandidate(run_id, seed);
        Candidate foreign = make_candidate("foreign");
        store.addCandidate(other_id, foreign);

        LlmCall forecast;
        forecast.kind = "forecast";
        forecast.candidate_id = seed.id;
        forecast.model = "gpt-oss-120b";
        forecast.prompt = "[system] bins...\n[user] candidate";
        forecast.reply = R"({"predicted_bin": 5})";
        forecast.reasoning = "fewer loads; \xff stray byte";  // not UTF-8: stored replaced, not refused
        forecast.tokens_in = 1200;
        forecast.tokens_out = 300;
        forecast.cost_usd = 0.0021;
        forecast.latency_ms = 812.5;
        forecast.outcome = "ok";
        QVERIFY(store.addLlmCall(run_id, forecast) > 0);
        QCOMPARE(forecast.run_id, run_id);

        LlmCall cut;
        cut.kind = "mutate_diff";  // a mutation that produced no candidate
        cut.model = "gpt-oss-120b";
        cut.prompt = "rewrite";
        cut.tokens_in = 900;
        cut.tokens_out = 16384;
        cut.cost_usd = 0.01;
        cut.outcome = "truncated";
        cut.error = "reply cut at 16384 tokens; raise --max-tokens";
        store.addLlmCall(run_id, cut);

        const auto calls = store.llmCalls(run_id);
        QCOMPARE(calls.size(), size_t{2});
        QCOMPARE(calls[0].kind, std::string("forecast"));
        QCOMPARE(calls[0].candidate_id, seed.id);
        QCOMPARE(calls[0].prompt, forecast.prompt);
        QCOMPARE(calls[0].reply, forecast.reply);
        QVERIFY(calls[0].reasoning.find("fewer loads; ") == 0);
        QVERIFY(calls[0].reasoning.find('\xff') == std::string::npos);
        QCOMPARE(calls[0].tokens_out, int64_t{300});
        QCOMPARE(calls[0].latency_ms, 812.5);
        QVERIFY(!calls[0].created_at.empty());
        QCOMPARE(calls[1].candidate_id, int64_t{0});
        QCOMPARE(calls[1].error, cut.error);
        QCOMPARE(store.llmCalls(run_id, seed.id).size(), size_t{1});
        QVERIFY(store.llmCalls(other_id).empty());

        const LlmTotals totals = store.llmTotals(run_id);
        QCOMPARE(totals.calls, int64_t{2});
        QCOMPARE(totals.tokens_in, int64_t{2100});
        QCOMPARE(totals.tokens_out, int64_t{16684});
        QVERIFY(std::abs(totals.cost_usd - 0.0121) < 1e-12);
        QCOMPARE(totals.not_ok, int64_t{1});
        QCOMPARE(totals.truncated, int64_t{1});
        QCOMPARE(totals.deferred, int64_t{0});
        QCOMPARE(store.llmTotals(other_id).calls, int64_t{0});

        // Bad rows are refused with a reason and leave nothing behind.
        LlmCall wrong_kind = forecast;
        wrong_kind.kind = "mutate";
        QVERIFY_THROWS_EXCEPTION(Error, store.addLlmCall(run_id, wrong_kind));
        LlmCall wrong_run = forecast;
        wrong_run.candidate_id = foreign.id;
        QVERIFY_THROWS_EXCEPTION(Error, store.addLlmCall(run_id, wrong_run));
        LlmCall no_outcome = forecast;
        no_outcome.outcome.clear();
        QVERIFY_THROWS_EXCEPTION(Error, store.addLlmCall(run_id, no_outcome));
        QCOMPARE(store.llmTotals(run_id).calls, int64_t{2});
    }

    // A store written before llm_calls existed (schema 3) opens, keeps its rows and gains the table.
    void olderStoreGainsLlmCalls() {
        const auto file = path("schema2.sqlite");
        int64_t run_id = 0;
        {
            auto store = RunStore::create(file);
            RunInfo run;
            run.name = "before";
            run_id = store.addRun(run);
            Candidate c = make_candidate("kept");
            store.addCandidate(run_id, c);
        }
        {
            RawDb raw(file);
            // As schema 3 was: neither llm_calls (4) nor forecasts.uncalibrated (5).
            raw.exec("DROP TABLE llm_calls; ALTER TABLE forecasts DROP COLUMN uncalibrated; PRAGMA user_version = 3");
            QCOMPARE(raw.text("SELECT count(*) FROM sqlite_master WHERE name = 'llm_calls'"), std::string("0"));
        }
        auto store = RunStore::open(file);
        QCOMPARE(store.candidates(run_id).size(), size_t{1});
        LlmCall call;
        call.kind = "mutate_rewrite";
        call.model = "m";
        call.outcome = "ok";
        QVERIFY(store.addLlmCall(run_id, call) > 0);
        RawDb raw(file);
        QCOMPARE(raw.text("PRAGMA user_version"), std::to_string(RunStore::schemaVersion()));
        QCOMPARE(raw.text("SELECT count(*) FROM llm_calls"), std::string("1"));
    }

    void committedRowsSurviveSigkill() {
        const auto file = path("killed.sqlite");
        QProcess writer;
        writer.setProgram(QStringLiteral(KERNCAST_BINARY_DIR "/tests/store_writer"));
        writer.setArguments({QString::fromStdString(file)});
        writer.start();
        QVERIFY2(writer.waitForStarted(), qPrintable(writer.errorString()));

        QByteArray out;
        while (out.count('\n') < 300) {
            if (!writer.waitForReadyRead(30000))
                QFAIL(qPrintable("store_writer stopped early: " + writer.readAllStandardError()));
            out += writer.readAllStandardOutput();
        }
        writer.kill();  // SIGKILL, in the middle of its loop
        QVERIFY(writer.waitForFinished(30000));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
        out += writer.readAllStandardOutput();

        // Every complete line is a row the writer reported committed; a torn last line is not.
        std::map<int64_t, std::pair<int64_t, std::string>> reported;  // candidate id -> (index, measurement JSON)
        std::istringstream lines(out.toStdString());
        std::string line;
        const bool torn = !out.endsWith('\n');
        std::vector<std::string> all_lines;
        while (std::getline(lines, line))
            all_lines.push_back(line);
        if (torn)
            all_lines.pop_back();
        for (const auto& l : all_lines) {
            std::istringstream fields(l);
            int64_t index = 0, candidate_id = 0, measurement_id = 0;
            fields >> index >> candidate_id >> measurement_id;
            std::string json;
            std::getline(fields, json);
            reported[candidate_id] = {index, json};
        }
        QVERIFY(reported.size() >= 300);

        auto store = RunStore::open(file);
        QCOMPARE(store.integrityCheck(), std::string("ok"));
        const auto runs = store.runs();
        QCOMPARE(runs.size(), size_t{1});
        for (const auto& [candidate_id, entry] : reported) {
            const auto c = store.candidate(candidate_id);
            QVERIFY2(c.has_value(), qPrintable(QString("reported row %1 is missing").arg(candidate_id)));
            QVERIFY(c->source.find("// row " + std::to_string(entry.first) + "\n") != std::string::npos);
            QCOMPARE(c->source_hash, content_hash(c->source, c->tunables));  // the text is whole
            const auto ms = store.measurementsFor(candidate_id);
            QCOMPARE(ms.size(), size_t{1});
            QCOMPARE(nlohmann::json(ms[0].measurement).dump(), nlohmann::json::parse(entry.second).dump());
        }
        // At most the row in flight at the kill is on disk but unreported; nothing else appeared.
        const auto stored = store.candidates(runs[0].id);
        QVERIFY(stored.size() >= reported.size() && stored.size() <= reported.size() + 1);

        // The run goes on where it stopped.
        Candidate next = make_candidate("after the kill", stored.back().id, 1000);
        QVERIFY(store.addCandidate(runs[0].id, next) > stored.back().id);
        QCOMPARE(store.candidate(next.id)->parent_id, stored.back().id);
    }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_run_store.moc"
