// The measurement pool with real worker processes on this machine: replay workers (kerncast-worker --replay) and the
// fake GPU worker (tests/helpers/fake_worker.cpp) for workers that die. A search measured by a pool must equal the
// same search measured by one worker; a worker lost mid-measurement must cost nothing; one that keeps failing is
// retired; GPU models do not mix unless asked.
#include "../support/pool_search.h"

#include "core/candidate.h"
#include "core/problem_library.h"
#include "engine/gpu/compiler.h"
#include "engine/replay/replay_device.h"
#include "engine/search/mutators.h"
#include "engine/worker/measurement_pool.h"
#include "engine/worker/replay_worker_server.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <tuple>

using namespace kerncast;
using namespace kerncast::test;

namespace {

std::string fake_worker() { return std::string(KERNCAST_BINARY_DIR) + "/tests/fake_worker"; }

// Recorded programs of a problem, as requests (the reference, the seeds, the recorded family configurations).
std::vector<MeasureRequest> recorded_requests(const std::string& problem, size_t n) {
    const ProblemBundle b = load_problem_folder(cli::resources_dir() + "/problems/" + problem);
    ReplayDevice replay(cli::resources_dir() + "/recordings/nvidia-h200");
    const auto rec = replay.recording(problem);
    std::vector<MeasureRequest> out;
    SplitMix rng(3);
    std::vector<Candidate> family = random_family_candidates(b, 400, rng);
    for (const auto& c : family) {
        if (out.size() == n)
            break;
        if (!rec->find(content_hash(c.source, c.tunables)))
            continue;
        MeasureRequest r = reference_request(problem);
        r.candidate.source = c.source;
        r.candidate.tunables = c.tunables;
        out.push_back(r);
    }
    return out;
}

// Replay workers taking the recorded wall time times `wall_time`.
std::unique_ptr<MeasurementPool> replay_pool(int workers, double wall_time) {
    PoolConfig cfg;
    cfg.workers = workers;
    cfg.replay_wall_time = wall_time;
    return MeasurementPool::open(cfg, "replay:nvidia-h200", cli::resources_dir());
}

// Sets a variable for one test and puts back what was there.
class EnvGuard {
public:
    EnvGuard(const char* name, const std::string& value)
        : m_name(name), m_had(qEnvironmentVariableIsSet(name)), m_old(qgetenv(name)) {
        qputenv(name, value.c_str());
    }
    ~EnvGuard() {
        if (m_had)
            qputenv(m_name, m_old);
        else
            qunsetenv(m_name);
    }

private:
    const char* m_name;
    bool m_had;
    QByteArray m_old;
};

}  // namespace

class TestMeasurementPool : public QObject {
    Q_OBJECT

private slots:
    void replayWorkersAnswerAsTheReplayDevice() {
        PoolConfig cfg;
        cfg.workers = 2;
        auto pool = MeasurementPool::open(cfg, "replay:nvidia-h200", cli::resources_dir());
        QCOMPARE(pool->workers(), size_t(2));
        QCOMPARE(pool->id(), std::string("replay:nvidia-h200"));
        QCOMPARE(pool->fingerprint().name, std::string("NVIDIA H200"));
        QCOMPARE(child_pids_with("--replay").size(), size_t(2));
        // Asked through the Device interface: a pool measures batches, and a replay pool has the recordings.
        Device& device = *pool;
        QCOMPARE(device.batchPool(), pool.get());
        QVERIFY(device.recording("softmax"));
        QVERIFY(!device.recording("no_such_problem"));

        const auto requests = recorded_requests("softmax", 6);
        QCOMPARE(requests.size(), size_t(6));
        ReplayDevice local(cli::resources_dir() + "/recordings/nvidia-h200");
        std::vector<MeasurementPool::Job> jobs;
        for (size_t i = 0; i < requests.size(); ++i)
            jobs.push_back({requests[i], int64_t(i + 1)});
        std::vector<size_t> order;
        pool->measureBatch(jobs, [&](size_t i, MeasureOutcome& out) {
            order.push_back(i);
            const Measurement expected = local.measure(requests[i]).measurement;
            QCOMPARE(out.measurement.status, expected.status);
            QCOMPARE(out.measurement.speedup, expected.speedup);
            QCOMPARE(out.measurement.device.uuid, expected.device.uuid);
            QCOMPARE(out.measurement.device_kind, std::string("replay"));
            QVERIFY2(out.measurement.worker.find("replay:nvidia-h200 on local, worker ") == 0,
                     out.measurement.worker.c_str());
        });
        QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));

        // What the recording does not hold is not_recorded through a worker too, never invented.
        MeasureRequest unknown = reference_request("softmax");
        unknown.candidate.source += "\n// not recorded\n";
        QCOMPARE(pool->measure(unknown).measurement.status, Status::NotRecorded);
    }

    // A replay worker answers with the recording's compile, verification and timing figures, but spends its own time:
    // the search's timeline shows that (the recorded verification and timing times the wall-time scale; no compile
    // where it compiles nothing), not the recording's figures laid over the time it slept. softmax's recorded
    // compiles (about 0.3 s each) are longer than its verification and timing together (about 0.2 s).
    void aReplayWorkersTimelineIsTheTimeItSpent() {
        const auto requests = recorded_requests("softmax", 6);
        QCOMPARE(requests.size(), size_t(6));
        auto pool = replay_pool(2, 0.5);
        auto timeline = std::make_shared<Timeline>();
        pool->setTimeline(timeline);
        std::vector<MeasurementPool::Job> jobs;
        for (size_t i = 0; i < requests.size(); ++i)
            jobs.push_back({requests[i], int64_t(i + 1)});
        double recorded_compile = 0, slept = 0;
        pool->measureBatch(jobs, [&](size_t, MeasureOutcome& out) {
            QCOMPARE(out.measurement.status, Status::Ok);
            recorded_compile += out.measurement.compile_ms / 1000;
            slept += 0.5 * (out.measurement.verify_ms + out.measurement.time_ms) / 1000;
        });
        const TimelineSummary t = timeline->summary();
        double compile = 0, verify_time = 0;
        for (const auto& w : t.workers) {
            const auto part = [&](TimelinePhase p) { return w.parts_s.count(p) ? w.parts_s.at(p) : 0.0; };
            compile += part(TimelinePhase::WorkerCompile);
            verify_time += part(TimelinePhase::WorkerVerify) + part(TimelinePhase::WorkerTime);
        }
        QVERIFY(recorded_compile > slept);  // what the old layout would have shown as compiling
        QVERIFY2(compile < 0.05 * 6, qPrintable(QString("compile %1 s").arg(compile)));
        QVERIFY2(std::abs(verify_time - slept) < 0.05 * slept,
                 qPrintable(QString("verification and timing %1 s, slept %2 s").arg(verify_time).arg(slept)));
    }

    // The compiled cost model (PoolConfig::replay_compiles): each replay worker compiles what it measures with NVRTC
    // on the pool's compiler, as a GPU device does, and gives the static report with the recorded answer; a program
    // the search compiled there before is found, not compiled again. Without it nothing is compiled.
    void replayWorkersCompileWhatTheyMeasureInTheCompiledModel() {
        const auto requests = recorded_requests("softmax", 3);
        QCOMPARE(requests.size(), size_t(3));
        {
            auto plain = replay_pool(2, 0);
            QVERIFY(!plain->compilePool());
            QVERIFY(plain->measure(requests[0]).static_report.empty());
        }
        PoolConfig cfg;
        cfg.workers = 2;
        cfg.replay_compiles = true;
        auto pool = MeasurementPool::open(cfg, "replay:nvidia-h200", cli::resources_dir());
        const std::shared_ptr<Compiler> compiler = pool->compilePool();
        QVERIFY(compiler);
        ReplayDevice local(cli::resources_dir() + "/recordings/nvidia-h200");
        std::vector<MeasurementPool::Job> jobs;
        for (size_t i = 0; i < requests.size(); ++i)
            jobs.push_back({requests[i], int64_t(i + 1)});
        pool->measureBatch(jobs, [&](size_t i, MeasureOutcome& out) {
            QCOMPARE(out.measurement.speedup, local.measure(requests[i]).measurement.speedup);
            QCOMPARE(out.static_report.size(), size_t(1));
            QVERIFY(out.static_report.front().registers > 0);
        });
        // Three candidates and the reference, each compiled once; measuring one again finds it.
        QCOMPARE(compiler->stats().compiles, size_t(4));
        QCOMPARE(pool->measure(requests[1]).static_report.size(), size_t(1));
        QCOMPARE(compiler->stats().compiles, size_t(4));
    }

    void batchRunsInParallelAndAppliesInOrder() {
        // Recorded wall times, so that the workers take time; four workers measure eight jobs in about a quarter
        // of the time one takes.
        auto pool = replay_pool(4, 1.0);
        const auto requests = recorded_requests("softmax", 8);
        double serial_s = 0;
        ReplayDevice local(cli::resources_dir() + "/recordings/nvidia-h200");
        for (const auto& r : requests)
            serial_s += ReplayWorkerServer::recordedWallSeconds(local.measure(r).measurement);
        QVERIFY2(serial_s > 0.5, "the recording holds no wall times to take");
        std::vector<MeasurementPool::Job> jobs;
        for (size_t i = 0; i < requests.size(); ++i)
            jobs.push_back({requests[i], int64_t(i + 1)});
        std::vector<size_t> order;
        int64_t busy_seen = 0;
        const auto t0 = std::chrono::steady_clock::now();
        pool->measureBatch(
            jobs, [&](size_t i, MeasureOutcome&) { order.push_back(i); },
            [&](const PoolSnapshot& s) {
            int64_t busy = 0;
            for (const auto& w : s.workers)
                busy += w.state == "busy";
            busy_seen = std::max(busy_seen, busy);
            });
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
        QVERIFY2(busy_seen >= 2, "the pool never had two workers busy at once");
        QVERIFY2(took < 0.6 * serial_s,
                 qPrintable(QString("8 jobs on 4 workers took %1 s; one worker: %2 s").arg(took).arg(serial_s)));
        int64_t measured = 0;
        for (const auto& w : pool->snapshot().workers)
            measured += w.measured;
        QCOMPARE(measured, int64_t(8));
    }

    void nextBatchStartsWhileTheLastOneFinishes() {
        // Two workers, a batch of three, then a batch of two submitted at once: the worker that is done with the
        // first batch takes the second's first job while the other one still measures the first batch's last, so
        // when the first batch is collected the second is already under way.
        auto pool = replay_pool(2, 1.0);
        const auto requests = recorded_requests("softmax", 5);
        std::vector<MeasurementPool::Job> first, second;
        for (size_t i = 0; i < requests.size(); ++i)
            (i < 3 ? first : second).push_back({requests[i], int64_t(i + 1)});
        const auto a = pool->submit(first);
        const auto b = pool->submit(second);
        std::vector<size_t> order_a, order_b;
        pool->collect(a, [&](size_t i, MeasureOutcome&) { order_a.push_back(i); });
        const PoolSnapshot after_first = pool->snapshot();
        QCOMPARE(order_a, (std::vector<size_t>{0, 1, 2}));
        QVERIFY2(after_first.done + after_first.in_flight >= 4,
                 qPrintable(QString("when the first batch was collected the pool had done %1 and had %2 in hand")
                                .arg(after_first.done)
                                .arg(after_first.in_flight)));
        std::vector<Measurement> got;
        pool->collect(b, [&](size_t i, MeasureOutcome& out) {
            order_b.push_back(i);
            got.push_back(out.measurement);
        });
        QCOMPARE(order_b, (std::vector<size_t>{0, 1}));
        ReplayDevice local(cli::resources_dir() + "/recordings/nvidia-h200");
        for (size_t i = 0; i < got.size(); ++i)
            QCOMPARE(got[i].speedup, local.measure(requests[3 + i]).measurement.speedup);
        QCOMPARE(pool->snapshot().done, int64_t(5));
        QVERIFY_THROWS_EXCEPTION(Error, pool->collect(b, [](size_t, MeasureOutcome&) {}));  // collected once
    }

    // An overlapped search (the next batch is chosen and queued before the last one is applied) is deterministic
    // too: measured in-process or by four replay workers, it is the same search.
    void overlappedSearchIsTheSameWithOneWorkerOrFour_data() {
        QTest::addColumn<int>("workers");
        QTest::addColumn<double>("wallTime");
        QTest::addColumn<int>("round");
        QTest::newRow("four replay workers taking recorded time") << 4 << 0.05 << 1;
        QTest::newRow("four replay workers, rounds of 8") << 4 << 0.05 << 8;
    }
    void overlappedSearchIsTheSameWithOneWorkerOrFour() {
        QFETCH(int, workers);
        QFETCH(double, wallTime);
        QFETCH(int, round);
        QTemporaryDir dir;
        SearchConfig single_cfg = pool_search_config("softmax", 24, 5, GatingKind::TopK);
        single_cfg.gating.top_k = 8;
        single_cfg.overlap = true;
        single_cfg.round = round;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        const SearchSummary a = make_search_runner(single_cfg, cli::resources_dir(), single, false)->runHere();
        QVERIFY2(a.state == RunState::Finished, a.reason.c_str());

        SearchConfig cfg = single_cfg;
        cfg.pool.workers = workers;
        cfg.pool.replay_wall_time = wallTime;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), pooled, false);
        // Chosen for a measurement and not yet measured: without overlap at most one batch (top-k), with it the
        // rest of the batch being applied and the whole next one.
        std::set<int64_t> waiting, screened;
        size_t most_waiting = 0;
        // The initial screen's choice is in flight too: once a parent is measured (with rounds of 8, the family
        // configurations that fill the first round), the first iteration chooses its batch before the screened
        // configurations are measured.
        bool child_chosen = false;
        std::optional<bool> child_chosen_before_screen;
        runner->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Gating && e.decision && is_measured(*e.decision)) {
                waiting.insert(e.candidate_id);
                if (e.message.find("initial screening") != std::string::npos)
                    screened.insert(e.candidate_id);
                else if (e.message.find("initial population") == std::string::npos)
                    child_chosen = true;
            }
            if (e.kind == SearchEvent::Kind::Measured) {
                most_waiting = std::max(most_waiting, waiting.size());
                waiting.erase(e.candidate_id);
                if (screened.count(e.candidate_id) && !child_chosen_before_screen)
                    child_chosen_before_screen = child_chosen;
            }
        });
        const SearchSummary b = runner->runHere();
        QVERIFY2(b.state == RunState::Finished, b.reason.c_str());
        QCOMPARE(b.best_speedup, a.best_speedup);
        QCOMPARE(b.best_candidate, a.best_candidate);
        QCOMPARE(b.progress.measurements, int64_t(24));
        const StoreDigest da = store_digest(single), db = store_digest(pooled);
        QCOMPARE(db.measurements, int64_t(24));
        QCOMPARE(db.measured_twice, int64_t(0));
        QCOMPARE(db.text, da.text);
        QVERIFY2(most_waiting > size_t(cfg.gating.top_k),
                 qPrintable(QString("at most %1 candidates waited for a measurement at once: no batch was chosen "
                                    "before the one before it was applied")
                                .arg(most_waiting)));
        QVERIFY2(child_chosen_before_screen.has_value(), "no screened configuration was measured");
        if (round > 1)
            QVERIFY2(*child_chosen_before_screen,
                     "the initial screen's configurations were measured before the first iteration chose its batch");
        QCOMPARE(stored_search_config(pooled).overlap, true);
    }

    // SearchConfig::ahead: an overlapped search applies a batch only once the batches queued behind it hold that many
    // measurements, so that the workers have them to measure while the next batch is chosen; a batch whose gate chose
    // nothing leaves the one before it in flight. The same search with one worker or three; the timeline shows each
    // measurement on the worker that made it, and the search thread's phases add up to its wall time.
    void overlappedSearchKeepsMeasurementsQueuedAhead() {
        QTemporaryDir dir;
        SearchConfig cfg = pool_search_config("rmsnorm", 40, 3, GatingKind::Selective);
        cfg.overlap = true;
        cfg.round = 4;
        cfg.ahead = 12;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        const SearchSummary a = make_search_runner(cfg, cli::resources_dir(), single, false)->runHere();
        QVERIFY2(a.state == RunState::Finished, a.reason.c_str());
        QCOMPARE(stored_search_config(single).ahead, 12);

        cfg.pool.workers = 3;
        cfg.pool.replay_wall_time = 0.02;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), pooled, false);
        std::set<int64_t> waiting;
        size_t most_waiting = 0;
        runner->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Gating && e.decision && is_measured(*e.decision))
                waiting.insert(e.candidate_id);
            if (e.kind == SearchEvent::Kind::Measured) {
                most_waiting = std::max(most_waiting, waiting.size());
                waiting.erase(e.candidate_id);
            }
        });
        const SearchSummary b = runner->runHere();
        QVERIFY2(b.state == RunState::Finished, b.reason.c_str());
        QCOMPARE(store_digest(pooled).text, store_digest(single).text);
        QCOMPARE(b.best_candidate, a.best_candidate);
        QVERIFY2(most_waiting >= size_t(cfg.ahead),
                 qPrintable(QString("at most %1 measurements were queued at once, fewer than ahead = %2")
                                .arg(most_waiting)
                                .arg(cfg.ahead)));

        const TimelineSummary& t = b.timeline;
        QCOMPARE(t.workers.size(), size_t(3));
        int64_t on_workers = 0;
        for (const auto& w : t.workers)
            on_workers += w.measurements;
        QCOMPARE(on_workers, b.progress.measurements);
        QCOMPARE(t.measurements, b.progress.measurements);
        double search = 0;
        for (const auto& [phase, seconds] : t.search_s)
            search += seconds;
        QVERIFY(std::abs(search - t.wall_s) < 1e-6);
        QVERIFY(t.search_s.count(TimelinePhase::Wait) && t.search_s.count(TimelinePhase::OpenDevice));
        QVERIFY(t.workerUtilisation() > 0 && t.workerUtilisation() <= 1);
    }

    void searchIsTheSameWithOneWorkerOrFour_data() {
        QTest::addColumn<int>("workers");
        QTest::addColumn<double>("wallTime");
        QTest::newRow("one replay worker process") << 1 << 0.01;
        QTest::newRow("four replay workers") << 4 << 0.0;
        QTest::newRow("four replay workers taking recorded time") << 4 << 0.05;
    }
    void searchIsTheSameWithOneWorkerOrFour() {
        QFETCH(int, workers);
        QFETCH(double, wallTime);
        QTemporaryDir dir;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        const SearchSummary a =
            make_search_runner(pool_search_config("softmax", 24, 5), cli::resources_dir(), single, false)->runHere();
        QCOMPARE(a.state, RunState::Finished);

        SearchConfig cfg = pool_search_config("softmax", 24, 5);
        cfg.pool.workers = workers;
        cfg.pool.replay_wall_time = wallTime;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), pooled, false);
        int pool_events = 0;
        runner->setEventCallback([&](const SearchEvent& e) { pool_events += e.kind == SearchEvent::Kind::Pool; });
        const SearchSummary b = runner->runHere();
        QCOMPARE(b.state, RunState::Finished);
        QCOMPARE(b.best_speedup, a.best_speedup);
        QCOMPARE(b.best_candidate, a.best_candidate);
        QCOMPARE(b.progress.measurements, a.progress.measurements);
        const StoreDigest da = store_digest(single), db = store_digest(pooled);
        QCOMPARE(db.measurements, int64_t(24));
        QCOMPARE(db.measured_twice, int64_t(0));
        QCOMPARE(db.text, da.text);
        QVERIFY(da.workers.empty());
        QCOMPARE(db.workers.size(), size_t(24));  // every measurement names its worker
        QVERIFY(pool_events > 0);
        // The pool's settings are part of the run, so --resume finds them.
        QCOMPARE(stored_search_config(pooled).pool.workers, workers);
    }

    // Rounds of K are a search setting: one worker and four run the same search. Each batch the gate chose is
    // topped up to a multiple of K (the budget allowing) with candidates it passed over, and the run keeps K.
    void searchInRoundsIsTheSameWithOneWorkerOrFour() {
        QTemporaryDir dir;
        SearchConfig single_cfg = pool_search_config("softmax", 30, 5, GatingKind::TopK);
        single_cfg.gating.top_k = 5;
        single_cfg.round = 4;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        auto first = make_search_runner(single_cfg, cli::resources_dir(), single, false);
        // Measured decisions between two progress events: one expansion's batch. A batch that was topped up must
        // hold a whole number of rounds, unless the budget ended it.
        int in_batch = 0, topped_up = 0, topped_batches = 0;
        int64_t measured = 0;
        QStringList wrong;
        first->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Gating && e.decision && is_measured(*e.decision)) {
                ++in_batch;
                if (e.message.find("to fill a round of 4") != std::string::npos)
                    ++topped_up;
            }
            if (e.kind == SearchEvent::Kind::Measured)
                ++measured;
            if (e.kind == SearchEvent::Kind::Progress) {
                if (topped_up > 0) {
                    ++topped_batches;
                    if (in_batch % 4 != 0 && measured < 30)
                        wrong << QString("a topped-up batch of %1 with %2 measured").arg(in_batch).arg(measured);
                }
                in_batch = topped_up = 0;
            }
        });
        const SearchSummary a = first->runHere();
        QVERIFY2(a.state == RunState::Finished, a.reason.c_str());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("; ")));
        QVERIFY2(topped_batches > 0, "top-k 5 with rounds of 4 never topped a batch up");
        QCOMPARE(stored_search_config(single).round, 4);

        SearchConfig cfg = single_cfg;
        cfg.pool.workers = 4;
        cfg.pool.replay_wall_time = 0.02;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        const SearchSummary b = make_search_runner(cfg, cli::resources_dir(), pooled, false)->runHere();
        QVERIFY2(b.state == RunState::Finished, b.reason.c_str());
        const StoreDigest da = store_digest(single), db = store_digest(pooled);
        // Best, its candidate, the measurement count and every stored candidate, in order, as with one worker.
        QVERIFY2(std::tie(b.best_speedup, b.best_candidate, b.progress.measurements, db.text) ==
                     std::tie(a.best_speedup, a.best_candidate, a.progress.measurements, da.text),
                 qPrintable(QString("4 workers: best %1 (candidate %2) in %3 measurements; 1 worker: %4 (%5) in %6")
                                .arg(b.best_speedup)
                                .arg(b.best_candidate)
                                .arg(b.progress.measurements)
                                .arg(a.best_speedup)
                                .arg(a.best_candidate)
                                .arg(a.progress.measurements)));
        QVERIFY(db.measurements == 30 && db.measured_twice == 0);

        // Rounds of 1 are the search as it was: a different search from rounds of 4 with the same seed.
        SearchConfig plain = single_cfg;
        plain.round = 1;
        const std::string one = dir.filePath("one.sqlite").toStdString();
        QCOMPARE(make_search_runner(plain, cli::resources_dir(), one, false)->runHere().state, RunState::Finished);
        QVERIFY(store_digest(one).text != da.text);
        QVERIFY(!nlohmann::json(plain).contains("round"));
        nlohmann::json bad = single_cfg;
        bad["round"] = 0;
        QVERIFY_THROWS_EXCEPTION(Error, search_config_from_json(bad));
    }

    // A batch whose own children cannot fill a round (3 children per parent, top-k 2, rounds of 4) is filled with
    // candidates earlier batches passed over, so that every batch is a whole number of rounds until the budget ends;
    // four workers still run the same search.
    void roundsAreFilledFromEarlierBatches() {
        QTemporaryDir dir;
        SearchConfig cfg = pool_search_config("softmax", 30, 2, GatingKind::TopK);
        cfg.gating.top_k = 2;
        cfg.batch = 3;
        cfg.round = 4;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), single, false);
        int in_batch = 0, from_earlier = 0, batches = 0;
        int64_t measured = 0;
        QStringList wrong;
        runner->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Gating && e.decision && is_measured(*e.decision) &&
                e.message.find("initial") == std::string::npos) {
                ++in_batch;
                if (e.message.find("passed over by an earlier batch") != std::string::npos)
                    ++from_earlier;
            }
            if (e.kind == SearchEvent::Kind::Measured)
                ++measured;
            if (e.kind == SearchEvent::Kind::Progress && in_batch > 0) {
                ++batches;
                if (in_batch % 4 != 0 && measured < 30)
                    wrong << QString("a batch of %1 with %2 measured").arg(in_batch).arg(measured);
                in_batch = 0;
            }
        });
        const SearchSummary a = runner->runHere();
        QVERIFY2(a.state == RunState::Finished, a.reason.c_str());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("; ")));
        QVERIFY2(batches >= 3, qPrintable(QString("only %1 batches").arg(batches)));
        QVERIFY2(from_earlier > 0, "no batch was filled with candidates an earlier batch passed over");

        SearchConfig pooled_cfg = cfg;
        pooled_cfg.pool.workers = 4;
        pooled_cfg.pool.replay_wall_time = 0.02;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        const SearchSummary b = make_search_runner(pooled_cfg, cli::resources_dir(), pooled, false)->runHere();
        QVERIFY2(b.state == RunState::Finished, b.reason.c_str());
        QCOMPARE(b.best_candidate, a.best_candidate);
        QCOMPARE(store_digest(pooled).text, store_digest(single).text);
    }

    // The first batch (the reference and the seeds) is filled up to a round with random family configurations, so
    // that a pool of K workers starts with K measurements, not the four roots of softmax.
    void firstBatchFillsARound_data() {
        QTest::addColumn<int>("round");
        QTest::addColumn<int>("gating");
        QTest::addColumn<int>("initial");
        QTest::newRow("gated, rounds of 8") << 8 << int(GatingKind::TopK) << 8;
        QTest::newRow("gated, rounds of 1") << 1 << int(GatingKind::TopK) << 4;
        QTest::newRow("measure-all, rounds of 8") << 8 << int(GatingKind::MeasureAll) << 8;
        QTest::newRow("measure-all, rounds of 4") << 4 << int(GatingKind::MeasureAll) << 8;  // 4 roots + 2 family
        QTest::newRow("measure-all, rounds of 1") << 1 << int(GatingKind::MeasureAll) << 6;
    }
    void firstBatchFillsARound() {
        QFETCH(int, round);
        QFETCH(int, gating);
        QFETCH(int, initial);
        QTemporaryDir dir;
        SearchConfig cfg = pool_search_config("softmax", 20, 3, static_cast<GatingKind>(gating));
        cfg.round = round;
        auto runner = make_search_runner(cfg, cli::resources_dir(), dir.filePath("r.sqlite").toStdString(), false);
        int roots = 0, measured_before_anything_else = -1, measured = 0;
        bool other = false;
        runner->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Gating && e.decision && is_measured(*e.decision)) {
                if (e.message == "initial population")
                    ++roots;
                else if (!other) {
                    other = true;
                    measured_before_anything_else = measured;
                }
            }
            if (e.kind == SearchEvent::Kind::Measured)
                ++measured;
        });
        const SearchSummary sum = runner->runHere();
        QVERIFY2(sum.state == RunState::Finished, sum.reason.c_str());
        QCOMPARE(roots, initial);
        QCOMPARE(measured_before_anything_else, initial);  // one batch, measured before anything else is chosen
    }

    void workerKilledMidMeasurementLosesNothing() {
        PoolConfig cfg;
        cfg.workers = 2;
        cfg.replay_wall_time = 4.0;  // about a second per job: the kill lands mid-measurement
        auto pool = MeasurementPool::open(cfg, "replay:nvidia-h200", cli::resources_dir());
        const auto requests = recorded_requests("softmax", 4);
        std::vector<MeasurementPool::Job> jobs;
        for (size_t i = 0; i < requests.size(); ++i)
            jobs.push_back({requests[i], int64_t(i + 1)});
        const pid_t victim = pool->workerPid(0);
        QVERIFY(victim > 0);
        std::thread killer([victim] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            ::kill(victim, SIGKILL);
        });
        std::vector<size_t> order;
        std::vector<Measurement> got;
        pool->measureBatch(jobs, [&](size_t i, MeasureOutcome& out) {
            order.push_back(i);
            got.push_back(out.measurement);
        });
        killer.join();
        QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3}));
        ReplayDevice local(cli::resources_dir() + "/recordings/nvidia-h200");
        for (size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(got[i].status, Status::Ok);
            QCOMPARE(got[i].speedup, local.measure(requests[i]).measurement.speedup);
        }
        const auto notes = pool->takeNotes();
        QCOMPARE(notes.size(), size_t(1));
        QCOMPARE(notes[0].kind, std::string("requeued"));
        QVERIFY2(notes[0].message.find("worker 1") != std::string::npos, notes[0].message.c_str());
        QVERIFY2(notes[0].message.find("SIGKILL") != std::string::npos, notes[0].message.c_str());
        QCOMPARE(pool->liveWorkers(), size_t(2));  // one loss does not retire a worker; it was restarted
    }

    void searchWithAWorkerKilledEqualsTheUndisturbedSearch() {
        QTemporaryDir dir;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        make_search_runner(pool_search_config("gelu", 20, 3), cli::resources_dir(), single, false)->runHere();

        SearchConfig cfg = pool_search_config("gelu", 20, 3);
        cfg.pool.workers = 3;
        cfg.pool.replay_wall_time = 0.5;
        const std::string pooled = dir.filePath("pool.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), pooled, false);
        int measured = 0, killed = 0;
        runner->setEventCallback([&](const SearchEvent& e) {
            if (e.kind != SearchEvent::Kind::Measured || ++measured % 6 != 0)
                return;
            // Between results of a batch the other workers are mid-measurement: pull one away.
            const auto pids = child_pids_with("--replay");
            if (!pids.empty() && ::kill(pids.front(), SIGKILL) == 0)
                ++killed;
        });
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QVERIFY(killed >= 2);
        const StoreDigest a = store_digest(single), b = store_digest(pooled);
        QCOMPARE(b.measured_twice, int64_t(0));
        QCOMPARE(b.measurements, a.measurements);
        QCOMPARE(b.text, a.text);
    }

    void workerThatKeepsFailingIsRetired() {
        EnvGuard worker("KERNCAST_WORKER", fake_worker());
        EnvGuard doomed("KERNCAST_FAKE_DOOMED_GPU", "1");
        // The healthy worker takes its time, so the doomed one (restarted at once) comes back for more jobs.
        EnvGuard slow("KERNCAST_FAKE_SLOW_MS", "400");
        PoolConfig cfg;
        cfg.devices = {"cuda:0", "cuda:1"};
        cfg.allow_mixed = true;  // the fake GPUs have different names
        cfg.max_failures = 2;
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        std::vector<MeasurementPool::Job> jobs;
        for (int i = 0; i < 6; ++i)
            jobs.push_back({reference_request("saxpy"), i + 1});
        std::vector<Measurement> got;
        pool->measureBatch(jobs, [&](size_t, MeasureOutcome& out) { got.push_back(out.measurement); });
        QCOMPARE(got.size(), size_t(6));
        for (const auto& m : got) {
            QCOMPARE(m.status, Status::Ok);  // each one the healthy worker measured, once
            QVERIFY2(m.worker.find("cuda:0 on local") == 0, m.worker.c_str());
        }
        QCOMPARE(pool->liveWorkers(), size_t(1));
        bool retired = false;
        for (const auto& n : pool->takeNotes())
            if (n.kind == "worker_retired") {
                retired = true;
                QVERIFY2(n.message.find("cuda:1 on local, worker 2 retired after losing 2 requests") == 0,
                         n.message.c_str());
            }
        QVERIFY(retired);
        const auto snap = pool->snapshot();
        QCOMPARE(snap.workers[1].state, std::string("retired"));
        QCOMPARE(snap.workers[0].measured, int64_t(6));
    }

    void candidateThatKillsEveryWorkerIsRecordedAsCrashed() {
        EnvGuard worker("KERNCAST_WORKER", fake_worker());
        PoolConfig cfg;
        cfg.devices = {"cuda:0"};
        cfg.workers = 2;
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        MeasureRequest r = reference_request("saxpy");
        r.candidate.source += "\n// FAKE:segv\n";
        const Measurement m = pool->measure(r).measurement;
        QCOMPARE(m.status, Status::Crashed);
        QVERIFY2(m.reason.find("SIGSEGV") != std::string::npos, m.reason.c_str());
        QVERIFY2(m.reason.find("lost 2 workers") != std::string::npos, m.reason.c_str());
        QCOMPARE(pool->liveWorkers(), size_t(2));
    }

    void everyWorkerRetiredFailsTheBatchClearly() {
        EnvGuard worker("KERNCAST_WORKER", fake_worker());
        EnvGuard doomed("KERNCAST_FAKE_DOOMED_GPU", "0");
        PoolConfig cfg;
        cfg.devices = {"cuda:0"};
        cfg.max_failures = 1;
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        std::vector<MeasurementPool::Job> jobs{{reference_request("saxpy"), 1}, {reference_request("saxpy"), 2}};
        try {
            pool->measureBatch(jobs, [](size_t, MeasureOutcome&) { QFAIL("nothing can be measured"); });
            QFAIL("expected an error");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("every worker of the pool was retired; 2 candidates") == 0, e.what());
        }
    }

    void mixedModelsAreRefusedUnlessAllowed() {
        EnvGuard worker("KERNCAST_WORKER", fake_worker());
        PoolConfig cfg;
        cfg.devices = {"cuda:0", "cuda:1"};
        try {
            MeasurementPool::open(cfg, "", cli::resources_dir());
            QFAIL("a pool of two models opened");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("the pool mixes GPU models") == 0, e.what());
            QVERIFY2(what.find("Fake GPU 0: cuda:0 on local, worker 1") != std::string::npos, e.what());
            QVERIFY2(what.find("--allow-mixed") != std::string::npos, e.what());
        }
        cfg.allow_mixed = true;
        QCOMPARE(MeasurementPool::open(cfg, "", cli::resources_dir())->workers(), size_t(2));
        // Two workers of one GPU are one model.
        cfg = PoolConfig{};
        cfg.devices = {"cuda:1"};
        cfg.workers = 2;
        QCOMPARE(MeasurementPool::open(cfg, "", cli::resources_dir())->fingerprint().name, std::string("Fake GPU 1"));
    }

    void badSpecsSayWhatIsExpected_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("launcher");
        QTest::addColumn<QString>("expected");
        QTest::newRow("device") << "gpu0"
                                << "local"
                                << "unknown device 'gpu0': expected cuda:<ordinal>";
        QTest::newRow("ordinal") << "cuda:x"
                                 << "local"
                                 << "bad device 'cuda:x': expected cuda:<ordinal>";
        QTest::newRow("recordings") << "replay:nowhere"
                                    << "local"
                                    << "no recordings for device 'replay:nowhere'";
        QTest::newRow("launcher") << "replay:nvidia-h200"
                                  << "pbs"
                                  << "unknown launcher 'pbs': expected local, ssh:HOST";
        QTest::newRow("ssh host") << "replay:nvidia-h200"
                                  << "ssh:"
                                  << "bad launcher 'ssh:': expected ssh:HOST";
        QTest::newRow("per device") << "replay:nvidia-h200@ssh:-oProxyCommand=x"
                                    << "local"
                                    << "bad launcher";
    }
    void badSpecsSayWhatIsExpected() {
        QFETCH(QString, device);
        QFETCH(QString, launcher);
        QFETCH(QString, expected);
        PoolConfig cfg;
        cfg.devices = {device.toStdString()};
        cfg.launcher = launcher.toStdString();
        try {
            MeasurementPool::open(cfg, "", cli::resources_dir());
            QFAIL("opened");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) == 0, e.what());
        }
    }

    void workerThatCannotStartNamesItself() {
        PoolConfig cfg;
        cfg.workers = 2;
        cfg.launcher = "local";
        cfg.remote_resources = "/nonexistent";
        cfg.devices = {"replay:nvidia-h200"};
        EnvGuard worker("KERNCAST_WORKER", "/nonexistent/kerncast-worker");
        try {
            MeasurementPool::open(cfg, "", cli::resources_dir());
            QFAIL("opened");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("workers of the pool did not start:\n  replay:nvidia-h200 on local, worker 1: ") == 0,
                     e.what());
            QVERIFY2(what.find("/nonexistent/kerncast-worker") != std::string::npos, e.what());
        }
    }

    void launcherCommandLines() {
        const std::vector<std::string> worker{"/opt/kc/kerncast-worker", "--gpu", "0", "--die-with-parent"};
        const WorkerCommand ssh = WorkerLauncher::parse("ssh:gpu-a").command(worker, true, "w");
        QCOMPARE(ssh.argv.front(), std::string("ssh"));
        QCOMPARE(ssh.argv[ssh.argv.size() - 2], std::string("gpu-a"));
        QCOMPARE(ssh.argv.back(), std::string("exec /opt/kc/kerncast-worker --gpu 0 --die-with-parent"));
        QVERIFY(std::find(ssh.argv.begin(), ssh.argv.end(), "BatchMode=yes") != ssh.argv.end());
        QVERIFY(ssh.term_grace_s > 0);
        QCOMPARE(shell_quote("it's here"), std::string("'it'\\''s here'"));

        qunsetenv("SLURM_JOB_ID");
        const WorkerCommand srun = WorkerLauncher::parse("slurm:--partition=gpu --time=30").command(worker, true, "w");
        const std::vector<std::string> expected{"srun",
                                                "--ntasks=1",
                                                "--nodes=1",
                                                "--quiet",
                                                "--unbuffered",
                                                "--kill-on-bad-exit=1",
                                                "--gres=gpu:1",
                                                "--partition=gpu",
                                                "--time=30",
                                                "/opt/kc/kerncast-worker",
                                                "--gpu",
                                                "0",
                                                "--die-with-parent"};
        QCOMPARE(srun.argv, expected);
        QCOMPARE(WorkerLauncher::parse("slurm:--partition=gpu --time=30").text(),
                 std::string("slurm:--partition=gpu --time=30"));
        EnvGuard job("SLURM_JOB_ID", "42");
        const WorkerCommand step = WorkerLauncher::parse("slurm").command(worker, false, "w");
        QVERIFY(std::find(step.argv.begin(), step.argv.end(), "--exact") != step.argv.end());
        QVERIFY(std::find(step.argv.begin(), step.argv.end(), "--gres=gpu:1") == step.argv.end());
    }

    void poolConfigRoundTripsAndIsChecked() {
        PoolConfig c;
        QVERIFY(!pool_requested(c));
        c.devices = {"replay:nvidia-h200"};
        QVERIFY(!pool_requested(c));
        c.workers = 3;
        QVERIFY(pool_requested(c));
        c.launcher = "ssh:h";
        c.allow_mixed = true;
        const PoolConfig back = pool_config_from_json(nlohmann::json(c));
        QCOMPARE(back.workers, 3);
        QCOMPARE(back.launcher, std::string("ssh:h"));
        QVERIFY(back.allow_mixed);
        PoolConfig one;
        one.launcher = "slurm";
        QVERIFY(pool_requested(one));
        nlohmann::json bad = nlohmann::json(c);
        bad["workers"] = 0;
        QVERIFY_THROWS_EXCEPTION(Error, pool_config_from_json(bad));
    }
};

QTEST_GUILESS_MAIN(TestMeasurementPool)
#include "tst_measurement_pool.moc"
