// The search runner on the replay device with real problems and recordings: events, the store, determinism,
// steering commands, budgets and resume.
#include "core/problem_library.h"
#include "core/recalibration.h"
#include "core/run_store.h"
#include "engine/cli/cli.h"
#include "engine/device.h"
#include "engine/gpu/compiler.h"
#include "engine/search/mutators.h"
#include "engine/search/search_loop.h"
#include "engine/search/search_runner.h"
#include "engine/surrogate/local_forecaster.h"
#include "engine/worker/gpu_device.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

using namespace kerncast;
namespace fs = std::filesystem;

namespace {

using Tunables = std::map<std::string, int64_t>;  // one configuration of a family

SearchConfig config(const std::string& problem, GatingKind gating, std::string surrogate, int64_t budget,
                    uint64_t seed = 1) {
    SearchConfig c;
    c.problem_dir = cli::resources_dir() + "/problems/" + problem;
    c.device = "replay:nvidia-h200";
    c.surrogate = std::move(surrogate);
    c.gating.kind = gating;
    c.budgets.measurements = budget;
    c.seed = seed;
    return c;
}

struct Recorder {
    std::mutex mutex;
    std::vector<SearchEvent> events;
    SearchEventFn fn() {
        return [this](const SearchEvent& e) {
            std::lock_guard<std::mutex> lock(mutex);
            events.push_back(e);
        };
    }
    int count(SearchEvent::Kind k) {
        std::lock_guard<std::mutex> lock(mutex);
        int n = 0;
        for (const auto& e : events)
            n += e.kind == k;
        return n;
    }
};

std::vector<std::string> hashes(const std::string& path) {
    RunStore store = RunStore::open(path);
    std::vector<std::string> out;
    for (const auto& c : store.candidates(store.runs().back().id))
        out.push_back(c.source_hash);
    return out;
}

// The replay device, remembering every request's re-verification threshold and the speedup it came back with.
class ThresholdDevice : public Device {
public:
    explicit ThresholdDevice(std::unique_ptr<Device> inner) : m_inner(std::move(inner)) {}
    std::string id() const override { return m_inner->id(); }
    DeviceFingerprint fingerprint() const override { return m_inner->fingerprint(); }
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress) override {
        MeasureOutcome o = m_inner->measure(request, progress);
        std::lock_guard<std::mutex> lock(mutex);
        seen.emplace_back(request.options.reverify_above,
                          o.measurement.status == Status::Ok ? o.measurement.speedup : 0.0);
        return o;
    }
    std::mutex mutex;
    std::vector<std::pair<double, double>> seen;  // (reverify_above, speedup), in measurement order

private:
    std::unique_ptr<Device> m_inner;
};

// The replay device, compiling each candidate it measures on a real compile pool (NVRTC) as a GPU device does: what
// the search compiled there beforehand is found or joined, not compiled again.
class CompilingReplayDevice : public Device {
public:
    explicit CompilingReplayDevice(std::unique_ptr<Device> inner)
        : m_inner(std::move(inner)), m_compiler(std::make_shared<Compiler>("", 2)) {}
    std::string id() const override { return m_inner->id(); }
    DeviceFingerprint fingerprint() const override { return m_inner->fingerprint(); }
    DeviceCeilings ceilings() const override { return m_inner->ceilings(); }
    std::string recordingsFolder() const override { return m_inner->recordingsFolder(); }
    std::optional<std::vector<StaticReport>> recordedStaticReport(const std::string& problem,
                                                                  const std::string& hash) const override {
        return m_inner->recordedStaticReport(problem, hash);
    }
    std::shared_ptr<const Recording> recording(const std::string& problem) const override {
        return m_inner->recording(problem);
    }
    std::shared_ptr<Compiler> compilePool() const override { return m_compiler; }
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress) override {
        const Compiler::Stats before = m_compiler->stats();
        const CompileResult compiled = m_compiler->compile(measure_compile_request(request.candidate, compileArch()));
        const Compiler::Stats after = m_compiler->stats();
        MeasureOutcome o = m_inner->measure(request, progress);
        o.static_report = compiled.kernels;
        found[content_hash(request.candidate.source, request.candidate.tunables)] =
            after.memory_hits + after.joined > before.memory_hits + before.joined;
        return o;
    }
    std::map<std::string, bool> found;  // measured program -> its compile was found or joined
    std::shared_ptr<Compiler> compiler() const { return m_compiler; }

private:
    std::unique_ptr<Device> m_inner;
    std::shared_ptr<Compiler> m_compiler;
};

// A search of config `c` on a CompilingReplayDevice, ready to run; the device, which stays with the runner, is
// returned beside it. compile_first: its first batch compiled first, as make_search_runner does.
std::pair<std::unique_ptr<SearchRunner>, CompilingReplayDevice*> compilingSearch(const SearchConfig& c,
                                                                                 const std::string& path,
                                                                                 bool compile_first) {
    auto device = std::make_unique<CompilingReplayDevice>(open_device(c.device, cli::resources_dir()));
    CompilingReplayDevice* seen = device.get();
    if (compile_first)
        compile_first_programs(*device, load_problem_folder(c.problem_dir), c);
    std::vector<std::unique_ptr<CandidateMutator>> mutators;
    mutators.push_back(std::make_unique<ParametricMutator>());
    std::unique_ptr<Surrogate> surrogate = make_local_surrogate(*seen, cli::resources_dir(), "softmax", c.seed);
    return {
        std::make_unique<SearchRunner>(c, path, false, std::move(device), std::move(surrogate), std::move(mutators)),
        seen};
}

}  // namespace

class TestSearchRunner : public QObject {
    Q_OBJECT

private slots:
    // Every measurement that beats the best so far goes through the worker's re-verification: the threshold
    // sent with each request is never above the best speedup measured before it (10x only at the start).
    void everyNewBestIsReverified() {
        QTemporaryDir dir;
        auto device = std::make_unique<ThresholdDevice>(open_device("replay:nvidia-h200", cli::resources_dir()));
        ThresholdDevice* seen = device.get();
        std::vector<std::unique_ptr<CandidateMutator>> mutators;
        mutators.push_back(std::make_unique<ParametricMutator>());
        SearchRunner runner(config("saxpy", GatingKind::MeasureAll, "none", 14),
                            dir.filePath("run.sqlite").toStdString(), false, std::move(device), nullptr,
                            std::move(mutators));
        QCOMPARE(runner.runHere().state, RunState::Finished);
        double best = 0;
        int beat = 0;
        QVERIFY(seen->seen.size() >= 10);
        for (const auto& [threshold, speedup] : seen->seen) {
            QVERIFY2(threshold <= (best > 0 ? best : MeasureOptions{}.reverify_above),
                     qPrintable(QStringLiteral("threshold %1 with a best of %2").arg(threshold).arg(best)));
            if (best > 0 && speedup > best)
                ++beat;
            best = std::max(best, speedup);
        }
        QVERIFY2(beat > 0, "no measurement beat an earlier best: the test shows nothing");
    }

    void measureAllRunStoresEverythingItReports() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        auto runner =
            make_search_runner(config("saxpy", GatingKind::MeasureAll, "none", 14), cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QVERIFY2(s.reason.find("measurement budget") != std::string::npos, s.reason.c_str());
        QCOMPARE(s.progress.measurements, int64_t(14));
        QCOMPARE(rec.events.front().kind, SearchEvent::Kind::RunStarted);
        QCOMPARE(rec.events.back().kind, SearchEvent::Kind::Finished);
        QCOMPARE(rec.count(SearchEvent::Kind::Finished), 1);
        QCOMPARE(rec.count(SearchEvent::Kind::Measured), 14);
        for (size_t i = 1; i < rec.events.size(); ++i) {
            QCOMPARE(rec.events[i].seq, rec.events[i - 1].seq + 1);
            QCOMPARE(rec.events[i].run_id, s.run_id);
        }
        // The trajectory never goes down and ends at the best.
        QCOMPARE(s.trajectory.size(), size_t(14));
        for (size_t i = 1; i < s.trajectory.size(); ++i)
            QVERIFY(s.trajectory[i].best_speedup >= s.trajectory[i - 1].best_speedup);
        QCOMPARE(s.trajectory.back().best_speedup, s.best_speedup);
        QVERIFY(s.best_speedup > 1.0);  // saxpy's family beats its reference on the H200 recording

        // What the events reported is in the store.
        RunStore store = RunStore::open(path);
        QCOMPARE(store.runs().size(), size_t(1));
        const auto cands = store.candidates(s.run_id);
        QCOMPARE(int64_t(cands.size()), s.progress.candidates);
        int measured = 0;
        std::set<std::string> unique;
        for (const auto& c : cands) {
            measured += !store.measurementsFor(c.id).empty();
            QVERIFY2(unique.insert(c.source_hash).second, "a candidate was proposed twice");
        }
        QCOMPARE(measured, 14);
        const auto best = store.measurementsFor(s.best_candidate);
        QCOMPARE(best.size(), size_t(1));
        QCOMPARE(best[0].measurement.speedup, s.best_speedup);
        QCOMPARE(QString::fromStdString(store.integrityCheck()), QString("ok"));
        QVERIFY(cands[0].mutator == Mutator::Reference);
        QCOMPARE(cands[1].mutator, Mutator::Seed);
    }

    // A recording that holds only some of a family's configurations (record --limit, or a recording cut short): the
    // replay device answers only those, so the search draws from them alone, says so in the run's events, and spends
    // no measurement on a not_recorded answer; measure-all and a gated search with the local forecaster alike.
    void aPartialRecordingRestrictsTheFamily_data() {
        QTest::addColumn<int>("gating");
        QTest::addColumn<QString>("surrogate");
        QTest::addColumn<int>("workers");
        QTest::addColumn<bool>("none");  // no family configuration recorded (a recording of an earlier family)
        QTest::newRow("measure-all") << int(GatingKind::MeasureAll) << "none" << 1 << false;
        QTest::newRow("selective, local forecaster") << int(GatingKind::Selective) << "local" << 1 << false;
        QTest::newRow("selective, a pool of 2 replay workers") << int(GatingKind::Selective) << "local" << 2 << false;
        QTest::newRow("none recorded: the reference and the seeds")
            << int(GatingKind::Selective) << "local" << 1 << true;
    }
    void aPartialRecordingRestrictsTheFamily() {
        QFETCH(int, gating);
        QFETCH(QString, surrogate);
        QFETCH(int, workers);
        QFETCH(bool, none);
        QTemporaryDir dir;
        const fs::path folder = fs::path(dir.path().toStdString()) / "partial-h200";
        fs::create_directories(folder);
        const fs::path shipped = fs::path(cli::resources_dir()) / "recordings" / "nvidia-h200";
        for (const auto& f : fs::directory_iterator(shipped))
            if (f.path().filename() != "saxpy.jsonl")
                fs::copy_file(f.path(), folder / f.path().filename());
        // Every other family configuration of saxpy's recording is left out.
        std::ifstream in(shipped / "saxpy.jsonl");
        std::ofstream out(folder / "saxpy.jsonl");
        std::set<Tunables> kept;
        size_t family = 0;
        for (std::string line; std::getline(in, line);) {
            const auto j = nlohmann::json::parse(line);
            if (j.value("label", "").rfind("family", 0) == 0) {
                if (family++ % 2 || none)
                    continue;
                kept.insert(j.at("tunables").get<Tunables>());
            }
            out << line << "\n";
        }
        out.close();
        const size_t all = load_problem_folder(cli::resources_dir() + "/problems/saxpy").family->configurationCount();
        QCOMPARE(family, all);
        SearchConfig c = config("saxpy", GatingKind(gating), surrogate.toStdString(), 30);
        c.device = "replay:" + folder.string();
        std::string single;
        if (workers > 1) {
            // The same search on one worker, to compare with the pool's.
            single = dir.filePath("single.sqlite").toStdString();
            QCOMPARE(make_search_runner(c, cli::resources_dir(), single, false)->runHere().state, RunState::Finished);
            c.pool.workers = workers;
        }
        const std::string path = dir.filePath("run.sqlite").toStdString();
        const SearchSummary s = make_search_runner(c, cli::resources_dir(), path, false)->runHere();
        if (workers > 1)
            QCOMPARE(hashes(path), hashes(single));  // a pool keeps to the same configurations, in the same order
        QCOMPARE(s.state, RunState::Finished);
        const size_t seeds = load_problem_folder(cli::resources_dir() + "/problems/saxpy").seeds.size();
        QCOMPARE(s.progress.measurements, none ? int64_t(1 + seeds) : int64_t(30));
        RunStore store = RunStore::open(path);
        int family_measured = 0;
        for (const auto& cand : store.candidates(s.run_id)) {
            for (const auto& m : store.measurementsFor(cand.id))
                QVERIFY2(m.measurement.status == Status::Ok, (cand.label + ": " + m.measurement.reason).c_str());
            if (cand.mutator == Mutator::Parametric) {
                QVERIFY2(kept.count(cand.tunables), cand.label.c_str());
                family_measured += !store.measurementsFor(cand.id).empty();
            }
        }
        QVERIFY(none ? family_measured == 0 : family_measured > 20);
        int said = 0;
        for (const auto& e : store.events(s.run_id))
            if (e.kind == "family_restricted") {
                ++said;
                QCOMPARE(e.payload["recorded"].get<size_t>(), kept.size());
                QCOMPARE(e.payload["configurations"].get<size_t>(), all);
            }
        QCOMPARE(said, 1);
    }

    // The set-up's finding is handed to the search (so that the family is walked once) and used only for the family
    // text it was made for: a finding for other text is worked out again from the recording.
    void theSetUpsRecordedFamilyIsUsedForItsOwnText_data() {
        QTest::addColumn<bool>("sameText");
        QTest::newRow("the same family text: used") << true;
        QTest::newRow("other text: worked out again") << false;
    }
    void theSetUpsRecordedFamilyIsUsedForItsOwnText() {
        QFETCH(bool, sameText);
        const SearchConfig c = config("saxpy", GatingKind::MeasureAll, "none", 12);
        const ProblemBundle bundle = load_problem_folder(c.problem_dir);
        const Tunables only = bundle.family->configurations().front();
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        runner->setRecordedFamilyCheck(
            {sameText ? bundle.family->source : std::string("// another family"), PartialFamily{{only}, 70}});
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        RunStore store = RunStore::open(path);
        std::set<Tunables> family;
        for (const auto& cand : store.candidates(s.run_id))
            if (cand.mutator == Mutator::Parametric && !store.measurementsFor(cand.id).empty())
                family.insert(cand.tunables);
        if (sameText)
            QCOMPARE(family, std::set<Tunables>{only});
        else
            QVERIFY(family.size() > 1);  // the shipped recording holds every configuration
    }

    void sameSeedSameSearch() {
        QTemporaryDir dir;
        std::vector<std::vector<std::string>> runs;
        std::vector<double> bests;
        for (int i = 0; i < 2; ++i) {
            const std::string path = dir.filePath(QString("run%1.sqlite").arg(i)).toStdString();
            auto runner = make_search_runner(config("gelu", GatingKind::Selective, "local", 12, 7),
                                             cli::resources_dir(), path, false);
            bests.push_back(runner->runHere().best_speedup);
            runs.push_back(hashes(path));
        }
        QCOMPARE(runs[0], runs[1]);
        QCOMPARE(bests[0], bests[1]);
        const std::string other = dir.filePath("other.sqlite").toStdString();
        make_search_runner(config("gelu", GatingKind::Selective, "local", 12, 8), cli::resources_dir(), other, false)
            ->runHere();
        QVERIFY(hashes(other) != runs[0]);
    }

    void selectiveGatingForecastsMoreThanItMeasures() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        auto runner = make_search_runner(config("softmax", GatingKind::Selective, "local", 16), cli::resources_dir(),
                                         path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(s.progress.measurements, int64_t(16));
        QVERIFY2(s.progress.forecasts > 2 * s.progress.measurements,
                 (std::to_string(s.progress.forecasts) + " forecasts").c_str());
        std::map<int64_t, GatingDecision> decision;
        std::set<int64_t> measured;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::Gating)
                decision[e.candidate_id] = *e.decision;
            if (e.kind == SearchEvent::Kind::Measured)
                measured.insert(e.candidate_id);
            // Nothing unmeasured becomes the best.
            if (e.kind == SearchEvent::Kind::NewBest)
                QVERIFY(measured.count(e.candidate_id));
        }
        int trusted = 0;
        for (const auto& [id, d] : decision) {
            if (d == GatingDecision::Trust || d == GatingDecision::Discard) {
                ++trusted;
                QVERIFY(!measured.count(id));
            }
        }
        QVERIFY(trusted > 0);
        // Live calibration over the measured, forecast candidates.
        QVERIFY(rec.events.back().progress.calibration_n > 0);
        QCOMPARE(s.calibration.value("n", 0), int(rec.events.back().progress.calibration_n));
        // Every gating decision is an event in the store.
        RunStore store = RunStore::open(path);
        int stored = 0;
        for (const auto& e : store.events(s.run_id))
            stored += e.kind == "gating";
        QCOMPARE(stored, int(rec.count(SearchEvent::Kind::Gating)));
    }

    // The calibration a selective search shows is of the candidates its gate chose to measure, mostly those whose
    // forecast was unsure or promising. Beside it the runner reports the calibration on the epsilon-audited
    // candidates alone (drawn at random from those the gate trusted): exactly the measured candidates whose decision
    // was Audit, scored like the others, live in the progress and in the summary, and again after a resume.
    void auditedCalibrationCountsOnlyTheAuditedCandidates() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig cfg = config("softmax", GatingKind::Selective, "local", 30);
        cfg.gating.epsilon = 0.2;  // enough audits in 30 measurements to compare against a hand computation
        auto runner = make_search_runner(cfg, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);

        // By hand from the events: the last decision and forecast of each candidate, and its measured speedup.
        std::map<int64_t, GatingDecision> decision;
        std::map<int64_t, Forecast> forecast;
        std::vector<std::pair<int64_t, double>> measured;  // in measurement order, correct ones only
        int audits_measured = 0;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::Gating)
                decision[e.candidate_id] = *e.decision;
            else if (e.kind == SearchEvent::Kind::Forecast && e.forecast)
                forecast[e.candidate_id] = *e.forecast;
            else if (e.kind == SearchEvent::Kind::Measured) {
                audits_measured += decision.count(e.candidate_id) && decision[e.candidate_id] == GatingDecision::Audit;
                if (e.speedup > 0)
                    measured.push_back({e.candidate_id, e.speedup});
            }
        }
        const BinScheme scheme = BinScheme::gfV2();
        std::vector<ScoredForecast> audited;
        int64_t all_scored = 0;
        int hits = 0;
        std::map<int, int> true_bins;
        for (const auto& [id, speedup] : measured) {
            const auto f = forecast.find(id);
            if (f == forecast.end())
                continue;
            ++all_scored;
            if (decision.at(id) != GatingDecision::Audit)
                continue;
            ScoredForecast sf;
            sf.probabilities = f->second.probabilities;
            sf.true_speedup = speedup / f->second.anchor_speedup;  // S against the forecast's anchor
            audited.push_back(sf);
            const auto& p = sf.probabilities;
            const int predicted = int(std::max_element(p.begin(), p.end()) - p.begin()) + 1;  // ties to the lower bin
            const int truth = scheme.binOf(sf.true_speedup);
            hits += predicted == truth;
            ++true_bins[truth];
        }
        QVERIFY2(audited.size() >= 3, std::to_string(audited.size()).c_str());
        QVERIFY2(int64_t(audited.size()) < all_scored, "the audited candidates are a part of the measured ones");
        QVERIFY(int(audited.size()) <= audits_measured);  // an audited candidate that failed has no speedup to score
        const int64_t n = int64_t(audited.size());
        QCOMPARE(s.calibration.value("n", int64_t{0}), all_scored);

        // The summary (what `search --json` prints) and the last live progress agree with the hand computation.
        QCOMPARE(s.calibration_audited.value("n", int64_t{0}), n);
        const auto& m = s.calibration_audited.at("metrics");
        const double accuracy = double(hits) / double(n);
        int most = 0;
        for (const auto& [bin, count] : true_bins)
            most = std::max(most, count);
        QCOMPARE(m.at("accuracy").get<double>(), accuracy);
        QCOMPARE(m.at("majority_accuracy").get<double>(), double(most) / double(n));
        const ForecastMetrics expected = compute_metrics(audited, scheme);
        QCOMPARE(nlohmann::json(m), metrics_json(expected).at("metrics"));
        const SearchProgress& live = rec.events.back().progress;
        QCOMPARE(live.calibration_audited_n, n);
        QCOMPARE(live.calibration_audited_accuracy, accuracy);
        QCOMPARE(live.calibration_audited_majority_accuracy, expected.majority_accuracy);
        QCOMPARE(live.calibration_audited_ece, expected.ece);
        QCOMPARE(live.calibration_audited_aurc, expected.aurc);
        QCOMPARE(std::isnan(live.calibration_audited_brier_skill), std::isnan(expected.brier_skill));
        if (!std::isnan(expected.brier_skill))
            QCOMPARE(live.calibration_audited_brier_skill, expected.brier_skill);
        summary_json(s).at("calibration_audited");  // in the JSON summary beside "calibration"

        // The decisions are stored: the store alone gives the same audited candidates (what an opened run shows).
        {
            RunStore store = RunStore::open(path);
            std::map<int64_t, std::string> stored_decision;
            for (const auto& e : store.events(s.run_id))
                if (e.kind == "gating")
                    stored_decision[e.payload.value("candidate", int64_t{0})] = e.payload.value("decision", "");
            const auto measurements = store.measurementsOfRun(s.run_id);
            const auto forecasts = store.forecastsOfRun(s.run_id);
            int64_t stored_audited = 0;
            for (const auto& [id, ms] : measurements)
                stored_audited +=
                    stored_decision[id] == "audit" && ms.back().measurement.status == Status::Ok && forecasts.count(id);
            QCOMPARE(stored_audited, n);
        }

        // A resumed run rebuilds the same figure from the store before it goes on.
        runner.reset();
        auto resumed = make_search_runner(cfg, cli::resources_dir(), path, true);
        Recorder again;
        resumed->setEventCallback(again.fn());
        const SearchSummary r = resumed->runHere();
        QCOMPARE(r.progress.measurements, int64_t(30));
        QCOMPARE(r.calibration_audited, s.calibration_audited);
        QCOMPARE(again.events.back().progress.calibration_audited_n, n);
    }

    // With no audit share nothing is audited: the figure is absent (n 0, no metrics), never a number.
    void noAuditShareGivesNoAuditedFigure() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig cfg = config("softmax", GatingKind::Selective, "local", 16);
        cfg.gating.epsilon = 0;
        Recorder rec;
        auto runner = make_search_runner(cfg, cli::resources_dir(), path, false);
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QVERIFY(s.calibration.value("n", 0) > 0);
        QCOMPARE(s.calibration_audited, nlohmann::json({{"n", 0}}));
        for (const auto& e : rec.events) {
            QVERIFY(!(e.decision && *e.decision == GatingDecision::Audit));
            QCOMPARE(e.progress.calibration_audited_n, int64_t(0));
        }
    }

    // ARCHITECTURE §4: a child of a measured parent is forecast against that parent (S = t_parent / t_child); the
    // reference, the seeds and the initial family configurations against the reference. The stored forecast names its
    // anchor and the anchor's measured speedup, and the live calibration scores S, not the speedup over the
    // reference. The replayed problem's recording never teaches its own forecasts: the first forecast of a program of
    // softmax comes from a model that knows no softmax program, and later ones know the run's own measurements.
    void forecastsAreAnchoredOnTheMeasuredParent() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        const SearchSummary s =
            make_search_runner(config("softmax", GatingKind::Selective, "local", 16), cli::resources_dir(), path, false)
                ->runHere();
        QCOMPARE(s.state, RunState::Finished);
        RunStore store = RunStore::open(path);
        std::map<int64_t, Candidate> cands;
        for (const Candidate& c : store.candidates(s.run_id))
            cands[c.id] = c;
        const auto forecasts = store.forecastsOfRun(s.run_id);
        const auto measurements = store.measurementsOfRun(s.run_id);
        int against_parent = 0, against_reference = 0;
        std::vector<std::pair<int64_t, std::string>> reasoning;  // (forecast id, text)
        for (const auto& [id, list] : forecasts) {
            const Candidate& c = cands.at(id);
            for (const StoredForecast& f : list) {
                reasoning.push_back({f.id, f.forecast.reasoning});
                if (f.forecast.anchor_id == 0) {
                    ++against_reference;
                    QCOMPARE(f.forecast.anchor_speedup, 1.0);
                    // Only a root, or a child whose parent was not measured correct, is forecast against the reference.
                    if (c.parent_id) {
                        const auto m = measurements.find(c.parent_id);
                        QVERIFY(m == measurements.end() || m->second.back().measurement.status != Status::Ok);
                    }
                    continue;
                }
                ++against_parent;
                QCOMPARE(f.forecast.anchor_id, c.parent_id);
                const auto m = measurements.find(c.parent_id);
                QVERIFY(m != measurements.end());
                QCOMPARE(f.forecast.anchor_speedup, m->second.back().measurement.speedup);
            }
        }
        QVERIFY(against_reference >= 2);  // the reference and the seeds at least
        QVERIFY2(against_parent > against_reference, std::to_string(against_parent).c_str());
        QVERIFY(s.calibration.value("n", 0) > 0);

        std::sort(reasoning.begin(), reasoning.end());
        std::vector<std::string> with_count;
        for (const auto& [id, text] : reasoning)
            if (text.find("of pack 'softmax'") != std::string::npos)
                with_count.push_back(text);
        QVERIFY(with_count.size() > 2);
        QVERIFY2(with_count.front().find(" 0 of pack 'softmax'") != std::string::npos, with_count.front().c_str());
        QVERIFY2(with_count.back().find(" 0 of pack 'softmax'") == std::string::npos, with_count.back().c_str());
    }

    // An unsure surrogate would have a selective search measure every child of a parent. A batch measures at most
    // measure_per_parent of them, the most likely to beat the best first; the others wait, trusted.
    void selectiveBatchMeasuresAtMostItsShare() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 20);
        c.gating.tau = 0.99;  // every child is unsure
        c.gating.epsilon = 0;
        c.batch = 12;
        c.measure_per_parent = 3;
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(s.progress.measurements, int64_t(20));
        int batches = 0, waited = 0, unsure = 0;
        std::map<int64_t, double> p_above;  // of the batch being gated
        std::set<int64_t> chosen, measured;
        auto close_batch = [&] {
            if (p_above.empty())
                return;
            ++batches;
            QVERIFY2(chosen.size() <= 3, std::to_string(chosen.size()).c_str());
            // No waiting child was more likely to beat the best than a measured one.
            double lowest_chosen = 2;
            for (int64_t id : chosen)
                lowest_chosen = std::min(lowest_chosen, p_above.at(id));
            for (const auto& [id, p] : p_above)
                if (!chosen.count(id))
                    QVERIFY(p <= lowest_chosen + 1e-12);
            p_above.clear();
            chosen.clear();
        };
        std::map<int64_t, Forecast> forecasts;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::Progress)
                close_batch();
            if (e.kind == SearchEvent::Kind::Forecast && e.forecast)
                forecasts[e.candidate_id] = *e.forecast;
            if (e.kind != SearchEvent::Kind::Gating)
                continue;
            if (e.message.rfind("unsure", 0) != 0)
                continue;  // the initial population and screening, or a rescue
            ++unsure;
            QVERIFY(forecasts.count(e.candidate_id));
            p_above[e.candidate_id] =
                forecasts.at(e.candidate_id).probabilityAbove(BinScheme::gfV2(), e.progress.best_speedup);
            if (*e.decision == GatingDecision::Measure)
                chosen.insert(e.candidate_id);
            if (e.message.find("waits") != std::string::npos) {
                ++waited;
                QCOMPARE(*e.decision, GatingDecision::Trust);
            }
        }
        QVERIFY(batches > 0);
        QVERIFY2(waited > 0, std::to_string(unsure).c_str());
    }

    // The default cap (kMeasurePerParent) is stored with a new run as a number; a run stored before that (0) keeps
    // the cap it was started with, 8, when it is resumed.
    void defaultCapIsStoredWithTheRun() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 16);
        c.gating.tau = 0.99;  // every child is unsure: each batch would measure all 12
        c.gating.epsilon = 0;
        c.batch = 12;
        auto largest_batch = [](const std::vector<SearchEvent>& events) {
            int largest = 0, in_batch = 0;
            for (const auto& e : events) {
                if (e.kind == SearchEvent::Kind::Progress)
                    in_batch = 0;
                if (e.kind == SearchEvent::Kind::Gating && e.message.rfind("unsure", 0) == 0 &&
                    *e.decision == GatingDecision::Measure)
                    largest = std::max(largest, ++in_batch);
            }
            return largest;
        };
        Recorder first;
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        runner->setEventCallback(first.fn());
        QCOMPARE(runner->runHere().state, RunState::Finished);
        QCOMPARE(stored_search_config(path).measure_per_parent, kMeasurePerParent);
        QCOMPARE(largest_batch(first.events), kMeasurePerParent);

        // As a run stored before the cap was: 0.
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "UPDATE runs SET config = json_set(config, '$.measure_per_parent', 0)", nullptr,
                                  nullptr, nullptr),
                     SQLITE_OK);
            sqlite3_close(db);
        }
        QCOMPARE(stored_search_config(path).measure_per_parent, 0);
        SearchConfig more = c;
        more.budgets.measurements = 40;
        Recorder resumed;
        auto again = make_search_runner(more, cli::resources_dir(), path, true);
        again->setEventCallback(resumed.fn());
        QCOMPARE(again->runHere().state, RunState::Finished);
        QCOMPARE(largest_batch(resumed.events), 8);
    }

    // Once the run has measured kSpaceModelAfter family configurations, each iteration of a selective search also
    // measures the space model's choice over the whole space: configurations nobody proposed before, measured
    // whatever their forecast, with the reason on their gating decision. Measure-all and space_picks 0 choose none.
    void spaceModelChoosesOverTheWholeSpace_data() {
        QTest::addColumn<int>("gating");
        QTest::addColumn<int>("picks");
        QTest::addColumn<int>("stored");
        // softmax's family holds fewer than kSpaceModelFrom configurations: by default none.
        QTest::newRow("selective, default") << int(GatingKind::Selective) << -1 << 0;
        QTest::newRow("selective, 2") << int(GatingKind::Selective) << 2 << 2;
        QTest::newRow("selective, 3") << int(GatingKind::Selective) << 3 << 3;
        QTest::newRow("selective, none") << int(GatingKind::Selective) << 0 << 0;
        QTest::newRow("measure-all") << int(GatingKind::MeasureAll) << -1 << 0;
    }
    void spaceModelChoosesOverTheWholeSpace() {
        QFETCH(int, gating);
        QFETCH(int, picks);
        QFETCH(int, stored);
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", static_cast<GatingKind>(gating), "local", 30);
        c.space_picks = picks;
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary s = runner->runHere();
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(stored_search_config(path).space_picks, stored);
        std::set<int64_t> chosen, measured, refining;
        int measured_before_first = -1, measurements = 0;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::Measured) {
                ++measurements;
                measured.insert(e.candidate_id);
            }
            if (e.kind == SearchEvent::Kind::Gating && e.message.rfind("space model:", 0) == 0) {
                QCOMPARE(*e.decision, GatingDecision::Measure);
                QVERIFY2(chosen.insert(e.candidate_id).second, "a configuration chosen twice");
                QVERIFY2(!measured.count(e.candidate_id), "a measured configuration chosen");
                if (e.message.rfind("space model: the fastest predicted of", 0) == 0)
                    refining.insert(e.candidate_id);
                if (measured_before_first < 0)
                    measured_before_first = measurements;
            }
        }
        if (stored == 0) {
            QVERIFY(chosen.empty());
            return;
        }
        QVERIFY2(chosen.size() >= 4, std::to_string(chosen.size()).c_str());
        QVERIFY(measured_before_first >= static_cast<int>(kSpaceModelAfter));
        size_t measured_chosen = 0;
        for (int64_t id : chosen)
            measured_chosen += measured.count(id);
        // The budget may end a batch before its picks are measured: the expected-improvement picks and the refining
        // one.
        QVERIFY2(measured_chosen + static_cast<size_t>(stored) + 1 >= chosen.size(),
                 (std::to_string(measured_chosen) + " of " + std::to_string(chosen.size())).c_str());
        // Each is a family configuration. One per iteration may refine the best (a neighbour of it, which a parent's
        // child the gate trusted may already hold); the others are children of the best measured candidate, unknown
        // to the run before.
        QVERIFY2(!refining.empty(), "no pick refined the best");
        RunStore store = RunStore::open(path);
        std::set<std::map<std::string, int64_t>> before;
        for (const auto& cand : store.candidates(s.run_id)) {
            if (chosen.count(cand.id)) {
                QVERIFY(!cand.tunables.empty());
                // A mutator may propose the same configuration in the same batch: the run keeps one candidate, under
                // the mutator's label.
                if (!refining.count(cand.id) || cand.label.find("(space model)") != std::string::npos) {
                    QVERIFY2(!before.count(cand.tunables), (cand.label + " #" + std::to_string(cand.id)).c_str());
                }
            }
            before.insert(cand.tunables);
        }
    }

    // The refining pick climbs best-first: it measures an unmeasured neighbour (one tunable moved to the adjacent value
    // of its list) of the fastest measured configuration, and once every neighbour of that one is measured or waiting
    // for a measurement, of the next fastest whose neighbours are not. softmax's family is small enough that a
    // 60-measurement search exhausts the best's neighbours.
    void refiningPicksClimbBestFirst() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 60);
        c.space_picks = 2;
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary summary = runner->runHere();
        QCOMPARE(summary.state, RunState::Finished);
        const KernelProgram family = *load_problem_folder(c.problem_dir).family;
        const std::vector<Tunables> all = family.configurations();
        const std::set<Tunables> space(all.begin(), all.end());
        const auto neighbours = [&](const Tunables& of) {
            std::vector<Tunables> out;
            for (const Tunable& t : family.tunables) {
                const auto v = std::find(t.values.begin(), t.values.end(), of.at(t.name));
                for (const auto next : {v == t.values.begin() ? t.values.end() : v - 1, v + 1}) {
                    if (v == t.values.end() || next == t.values.end())
                        continue;
                    Tunables n = of;
                    n[t.name] = *next;
                    if (space.count(n))
                        out.push_back(n);
                }
            }
            return out;
        };
        std::map<int64_t, Candidate> proposed;
        std::map<int64_t, double> measured;  // candidate -> speedup, in the order measured
        std::set<Tunables> known;
        int best_first = 0, of_the_best = 0;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::CandidateProposed && e.candidate) {
                proposed[e.candidate_id] = *e.candidate;
                known.insert(e.candidate->tunables);
            }
            if (e.kind == SearchEvent::Kind::Measured && e.speedup > 0)
                measured[e.candidate_id] = e.speedup;
            if (e.kind != SearchEvent::Kind::Gating || e.message.rfind("space model: the fastest predicted of", 0) != 0)
                continue;
            const Candidate& pick = proposed.at(e.candidate_id);
            const bool ranked = e.message.find("neighbours of the measured configuration ranked ") != std::string::npos;
            QVERIFY2(ranked || e.message.find("neighbours of the best configuration") != std::string::npos,
                     e.message.c_str());
            std::optional<int64_t> fastest;
            for (const auto& [id, speedup] : measured)
                if (proposed.at(id).source == family.source && space.count(proposed.at(id).tunables) &&
                    (!fastest || speedup > measured.at(*fastest)))
                    fastest = id;
            QVERIFY(fastest);
            const auto is_near = [&](int64_t origin) {
                const Candidate& o = proposed.at(origin);
                if (o.source != family.source || !space.count(o.tunables))
                    return false;
                const std::vector<Tunables> near = neighbours(o.tunables);
                return std::find(near.begin(), near.end(), pick.tunables) != near.end();
            };
            // A configuration the space model proposed itself descends from the one it climbs from; one that a child
            // the gate trusted held keeps the mutator's parent.
            if (pick.label.find("(space model)") != std::string::npos) {
                QVERIFY2(measured.count(pick.parent_id), e.message.c_str());
                QVERIFY2(is_near(pick.parent_id), e.message.c_str());
                QCOMPARE(ranked, pick.parent_id != *fastest);
            }
            if (!ranked) {
                QVERIFY2(is_near(*fastest), e.message.c_str());
                ++of_the_best;
                continue;
            }
            // From a runner-up: the best has no neighbour the run has not proposed.
            ++best_first;
            bool from_measured = false;
            for (const auto& [id, speedup] : measured)
                from_measured = from_measured || (id != *fastest && is_near(id));
            QVERIFY2(from_measured, e.message.c_str());
            for (const Tunables& n : neighbours(proposed.at(*fastest).tunables))
                QVERIFY2(known.count(n), e.message.c_str());
        }
        QVERIFY(of_the_best > 0);
        QVERIFY2(best_first > 0, "the search never climbed from a runner-up");
    }

    // SearchConfig::static_reports: "measured" compiles a family configuration only when it is measured. Its proposal
    // carries no static report, its measurement does (here the recording's, as a GPU's compile would), and the store
    // holds reports for the measured configurations and the programs outside the family only; "all" reports every
    // candidate when proposed. "auto" chooses "all" for softmax's family (fewer than kSpaceModelFrom
    // configurations) and stores the choice.
    void staticReportsComeWithTheMeasurement_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("stored");
        QTest::newRow("measured") << "measured"
                                  << "measured";
        QTest::newRow("all") << "all"
                             << "all";
        QTest::newRow("auto") << "auto"
                              << "all";
    }
    void staticReportsComeWithTheMeasurement() {
        QFETCH(QString, mode);
        QFETCH(QString, stored);
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 30);
        c.space_picks = 2;
        c.static_reports = mode.toStdString();
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        QCOMPARE(runner->runHere().state, RunState::Finished);
        QCOMPARE(QString::fromStdString(stored_search_config(path).static_reports), stored);
        const bool lazy = stored == "measured";
        const KernelProgram family = *load_problem_folder(c.problem_dir).family;
        std::map<int64_t, bool> in_family;
        std::set<int64_t> measured;
        int proposed_family = 0, measured_family = 0;
        for (const auto& e : rec.events) {
            if (e.kind == SearchEvent::Kind::CandidateProposed && e.candidate) {
                const bool of_family = e.candidate->source == family.source;
                in_family[e.candidate_id] = of_family;
                proposed_family += of_family;
                QVERIFY(e.compile_error.empty());
                QCOMPARE(e.static_report.empty(), lazy && of_family);
            }
            if (e.kind == SearchEvent::Kind::Measured && e.measurement && e.measurement->status == Status::Ok) {
                measured.insert(e.candidate_id);
                const bool of_family = in_family.at(e.candidate_id);
                measured_family += of_family;
                QCOMPARE(!e.static_report.empty(), lazy && of_family);
            }
        }
        QVERIFY(measured_family >= 8);
        QVERIFY(proposed_family > measured_family + 20);  // most family configurations were only forecast
        RunStore store = RunStore::open(path);
        const auto reports = store.staticReportsOfRun(store.runs().back().id);
        for (const auto& [id, of_family] : in_family) {
            const auto r = reports.find(id);
            const bool has = r != reports.end() && !r->second.empty();
            QCOMPARE(has, !lazy || !of_family || measured.count(id) > 0);
        }
        if (!lazy)
            return;
        // A resumed run keeps the mode and goes on without compiling the configurations it only forecasts.
        SearchConfig more = c;
        more.budgets.measurements = 40;
        auto again = make_search_runner(more, cli::resources_dir(), path, true);
        Recorder resumed;
        again->setEventCallback(resumed.fn());
        QCOMPARE(again->runHere().state, RunState::Finished);
        int later = 0;
        for (const auto& e : resumed.events)
            if (e.kind == SearchEvent::Kind::CandidateProposed && e.candidate && e.candidate->source == family.source) {
                QVERIFY(e.static_report.empty());
                ++later;
            }
        QVERIFY(later > 0);
    }

    // With static reports at measurement, the configurations a batch will measure are compiled together on the
    // device's compile pool as soon as the batch is chosen: the device finds every one compiled (or in flight) when it
    // measures it, and nothing the search only forecast is compiled.
    void aBatchIsCompiledAheadOfItsMeasurements() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 20);
        c.static_reports = "measured";
        auto [runner, seen] = compilingSearch(c, path, false);
        QCOMPARE(runner->runHere().state, RunState::Finished);
        const KernelProgram family = *load_problem_folder(c.problem_dir).family;
        RunStore store = RunStore::open(path);
        int family_measured = 0, proposed = 0;
        for (const Candidate& cand : store.candidates(store.runs().back().id)) {
            ++proposed;
            const auto f = seen->found.find(content_hash(cand.source, cand.tunables));
            if (cand.source != family.source || f == seen->found.end())
                continue;
            ++family_measured;
            QVERIFY2(f->second, cand.label.c_str());
        }
        QVERIFY(family_measured >= 8);
        QVERIFY(proposed > family_measured + 8);
        // One compile per program measured, none for those only proposed.
        QCOMPARE(seen->compiler()->stats().compiles, seen->found.size());
    }

    // The first batch (the reference, the seeds and, in rounds of 8, the random family configurations that fill the
    // round), compiled during the set-up (compile_first_programs), is found compiled when the search measures it: the
    // set-up draws the configurations the search draws, and its requests' keys are the search's.
    void theFirstProgramsAreCompiledDuringTheSetUp() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 16);
        c.static_reports = "measured";
        c.round = 8;
        const ProblemBundle bundle = load_problem_folder(c.problem_dir);
        auto [runner, seen] = compilingSearch(c, path, true);
        QCOMPARE(runner->runHere().state, RunState::Finished);
        // The first batch as the search measured it: its first 8 candidates (the screened ones come after them).
        RunStore store = RunStore::open(path);
        std::vector<Candidate> first = store.candidates(store.runs().back().id);
        std::sort(first.begin(), first.end(), [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
        QVERIFY(first.size() > 8);
        first.resize(8);
        QCOMPARE(
            std::count_if(first.begin(), first.end(), [](const Candidate& x) { return x.mutator == Mutator::Seed; }),
            static_cast<std::ptrdiff_t>(bundle.seeds.size()));
        QVERIFY2(first.back().source == bundle.family->source, "the round is filled with family configurations");
        // A fresh device given the same set-up compiles those programs (and the paired reference): asked for them
        // again, it finds every one (compiled or in flight).
        CompilingReplayDevice fresh(open_device(c.device, cli::resources_dir()));
        compile_first_programs(fresh, bundle, c);
        const Compiler::Stats set_up = fresh.compiler()->stats();
        for (const Candidate& x : first)
            QVERIFY2(fresh.compiler()
                         ->compile(measure_compile_request(search_loop::measured_program(x), fresh.compileArch()))
                         .ok,
                     x.label.c_str());
        fresh.compiler()->compile(measure_compile_request(search_loop::paired_reference(bundle), fresh.compileArch()));
        const Compiler::Stats asked = fresh.compiler()->stats();
        QCOMPARE(asked.memory_hits + asked.joined - set_up.memory_hits - set_up.joined, size_t{9});
        // The initial screen's configurations (the next 32 candidates) are compiled in the pool's spare time.
        QTRY_VERIFY2_WITH_TIMEOUT(fresh.compiler()->stats().spare > 0, "no spare compile ran during the set-up", 60000);
        std::vector<Candidate> all = store.candidates(store.runs().back().id);
        std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
        QVERIFY(all.size() >= 8 + 32);
        for (size_t i = 8; i < 8 + 32; ++i)
            QVERIFY(fresh.compiler()
                        ->compile(measure_compile_request(search_loop::measured_program(all[i]), fresh.compileArch()))
                        .ok);
        QVERIFY2(fresh.compiler()->stats().compiles <= 8 + 32 + 1, "the set-up compiled other programs");
        const auto reference = seen->found.find(content_hash(bundle.reference.source, {}));
        QVERIFY(reference != seen->found.end());
        QVERIFY2(reference->second, "the reference's own measurement compiled it again");
        for (const auto& seed : bundle.seeds) {
            const auto f = seen->found.find(content_hash(seed.source, {}));
            QVERIFY(f != seen->found.end());
            QVERIFY2(f->second, seed.file.c_str());
        }
        // Nothing compiled twice: one compile per program measured, the reference beside them once more, and the
        // screen's configurations compiled in spare time that it did not measure.
        const Compiler::Stats run = seen->compiler()->stats();
        QVERIFY(run.compiles <= seen->found.size() + 1 + run.spare);
    }

    // An overlapped search compiles the initial screen's configurations in the compile pool's spare time while its
    // first batch is measured (a pool measures the screen's choice at once, and would otherwise wait for NVRTC); a
    // search that measures one batch at a time has no such wait, and compiles nothing it may not measure.
    void theScreenIsCompiledInSpareTimeWhenOverlapped_data() {
        QTest::addColumn<bool>("overlap");
        QTest::newRow("overlapped") << true;
        QTest::newRow("one batch at a time") << false;
    }
    void theScreenIsCompiledInSpareTimeWhenOverlapped() {
        QFETCH(bool, overlap);
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 12);
        c.static_reports = "measured";
        c.overlap = overlap;
        auto [runner, seen] = compilingSearch(c, path, false);
        QCOMPARE(runner->runHere().state, RunState::Finished);
        const Compiler::Stats stats = seen->compiler()->stats();
        if (overlap)
            QVERIFY(stats.spare > 0);
        else
            QCOMPARE(stats.spare, size_t{0});
    }

    // An overlapped search's initial screen measures at least SearchConfig::ahead configurations (whole rounds, at
    // most half of the budget left after the first batch), so that the workers have them while the first iteration
    // compiles and forecasts its children; without overlap it measures initial_family, topped up to a round.
    void overlappedScreenMeasuresWhatIsKeptAhead_data() {
        QTest::addColumn<bool>("overlap");
        QTest::addColumn<int>("round");
        QTest::addColumn<int>("budget");
        QTest::addColumn<int>("screened");
        QTest::newRow("overlapped, rounds of 8") << true << 8 << 64 << 16;
        QTest::newRow("overlapped, rounds of 4") << true << 4 << 64 << 8;
        QTest::newRow("overlapped, rounds of 8, half of a small budget") << true << 8 << 24 << 8;
        QTest::newRow("overlapped, no rounds") << true << 0 << 64 << 2;
        QTest::newRow("not overlapped, rounds of 8") << false << 8 << 64 << 8;
    }
    void overlappedScreenMeasuresWhatIsKeptAhead() {
        QFETCH(bool, overlap);
        QFETCH(int, round);
        QFETCH(int, budget);
        QFETCH(int, screened);
        QTemporaryDir dir;
        SearchConfig c = config("softmax", GatingKind::TopK, "local", budget);
        c.overlap = overlap;
        c.round = round;
        c.space_picks = 0;
        auto runner = make_search_runner(c, cli::resources_dir(), dir.filePath("run.sqlite").toStdString(), false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        QCOMPARE(runner->runHere().state, RunState::Finished);
        int measured = 0, forecast = 0;
        for (const auto& e : rec.events)
            if (e.kind == SearchEvent::Kind::Gating && e.message.rfind("initial screening: rank ", 0) == 0) {
                ++forecast;
                measured += *e.decision == GatingDecision::Measure;
            }
        QCOMPARE(forecast, c.initial_family * c.initial_screen);
        QCOMPARE(measured, screened);
    }

    // Where the space model chooses (space_picks > 0), the initial screen measures kInitialSpread of its forecast
    // configurations beside the most promising ones, each the farthest (mean distance of the tunables' positions in
    // their lists) from those chosen before it: the greedy farthest-point order, whose distances never grow. Without
    // the space model the screen measures its top ranks only.
    void initialScreenSpreadsWhereTheSpaceModelChooses_data() {
        QTest::addColumn<int>("picks");
        QTest::newRow("space model") << 2;
        QTest::newRow("no space model") << 0;
    }
    void initialScreenSpreadsWhereTheSpaceModelChooses() {
        QFETCH(int, picks);
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("softmax", GatingKind::Selective, "local", 12);
        c.space_picks = picks;
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        runner->setEventCallback(rec.fn());
        const SearchSummary summary = runner->runHere();
        QCOMPARE(summary.state, RunState::Finished);
        std::map<size_t, int64_t> by_rank;                    // every screened configuration, by forecast rank
        std::map<size_t, std::pair<int64_t, double>> spread;  // pick K -> (candidate, the distance its reason says)
        std::vector<int64_t> top;
        for (const auto& e : rec.events) {
            if (e.kind != SearchEvent::Kind::Gating || e.message.rfind("initial screening: rank ", 0) != 0)
                continue;
            by_rank[std::stoul(e.message.substr(std::string("initial screening: rank ").size()))] = e.candidate_id;
            const std::string marker = "spread the first measurements across the space (pick ";
            const auto at = e.message.find(marker);
            if (at != std::string::npos) {
                QCOMPARE(*e.decision, GatingDecision::Measure);
                // "(pick K of N, D from the nearest chosen before it)"
                size_t end = 0;
                const size_t k = std::stoul(e.message.substr(at + marker.size()), &end);
                const auto comma = e.message.find(", ", at + marker.size() + end);
                QVERIFY(comma != std::string::npos);
                QVERIFY2(
                    spread.emplace(k, std::make_pair(e.candidate_id, std::stod(e.message.substr(comma + 2)))).second,
                    "two spread picks with one number");
            } else if (*e.decision == GatingDecision::Measure) {
                top.push_back(e.candidate_id);
            }
        }
        QCOMPARE(int(by_rank.size()), c.initial_family * c.initial_screen);
        QCOMPARE(top.size(), size_t(c.initial_family));
        if (picks == 0) {
            QVERIFY(spread.empty());
            return;
        }
        QCOMPARE(spread.size(), kInitialSpread);
        QCOMPARE(spread.begin()->first, size_t(1));
        QCOMPARE(spread.rbegin()->first, kInitialSpread);
        // The same order worked out here from the stored configurations and the family's tunables: each pick is, of
        // the screened configurations not chosen yet, the one whose nearest chosen configuration is farthest (mean
        // over tunables of the difference of their positions in the tunable's list), the lower rank on a tie.
        RunStore store = RunStore::open(path);
        std::map<int64_t, std::map<std::string, int64_t>> tunables;
        for (const auto& cand : store.candidates(summary.run_id))
            tunables[cand.id] = cand.tunables;
        const std::vector<Tunable> family = load_problem_folder(c.problem_dir).family->tunables;
        const auto distance = [&](int64_t a, int64_t b) {
            double d = 0;
            for (const Tunable& t : family) {
                const auto pos = [&](int64_t id) {
                    const auto v = std::find(t.values.begin(), t.values.end(), tunables.at(id).at(t.name));
                    return double(v - t.values.begin()) / double(std::max<size_t>(1, t.values.size() - 1));
                };
                d += std::abs(pos(a) - pos(b));
            }
            return d / double(family.size());
        };
        std::vector<int64_t> chosen = top;
        for (const auto& [k, pick] : spread) {
            std::optional<int64_t> expected;
            double farthest = -1;
            for (const auto& [rank, id] : by_rank) {
                if (std::find(chosen.begin(), chosen.end(), id) != chosen.end())
                    continue;
                double nearest = std::numeric_limits<double>::infinity();
                for (int64_t other : chosen)
                    nearest = std::min(nearest, distance(id, other));
                if (nearest > farthest) {
                    farthest = nearest;
                    expected = id;
                }
            }
            QVERIFY(expected);
            QVERIFY2(pick.first == *expected, ("pick " + std::to_string(k) + " is #" + std::to_string(pick.first) +
                                               ", the farthest is #" + std::to_string(*expected))
                                                  .c_str());
            QVERIFY2(std::abs(pick.second - farthest) < 0.006, std::to_string(farthest).c_str());  // printed as %.2f
            QVERIFY(farthest > 0);  // a distinct configuration
            chosen.push_back(pick.first);
        }
    }

    // Recalibration (SearchConfig::recalibrate, core/recalibration.h) changes what a run shows, never what it
    // measures. Once 2 * BinRecalibration::kMinOutcomes forecasts came true, every new forecast is either
    // recalibrated (its bins are the recalibrated ones, the surrogate's are kept in `uncalibrated`, and the reasoning
    // says against how many outcomes) or says why not (the check on the newest outcomes, choose_recalibration); none
    // before. Without recalibration the same search measures the same candidates in the same order with the same
    // speedups, and its forecasts are what the recalibrated run kept as the surrogate's.
    void recalibrationChangesForecastsNotMeasurements() {
        QTemporaryDir dir;
        struct Run {
            std::string path;
            SearchSummary summary;
            std::vector<SearchEvent> events;
            std::vector<std::tuple<int64_t, std::string, int, double>> measured;  // id, label, status, speedup
            std::vector<std::pair<int64_t, GatingDecision>> decisions;
        };
        auto search = [&](bool recalibrate) {
            Run run;
            run.path = dir.filePath(recalibrate ? "recalibrated.sqlite" : "plain.sqlite").toStdString();
            SearchConfig c = config("softmax", GatingKind::Selective, "local", 30);
            c.recalibrate = recalibrate;
            auto runner = make_search_runner(c, cli::resources_dir(), run.path, false);
            Recorder rec;
            runner->setEventCallback(rec.fn());
            run.summary = runner->runHere();
            run.events = rec.events;
            RunStore store = RunStore::open(run.path);
            std::map<int64_t, std::string> labels;
            for (const Candidate& cand : store.candidates(run.summary.run_id))
                labels[cand.id] = cand.label;
            for (const SearchEvent& e : run.events) {
                if (e.kind == SearchEvent::Kind::Measured)
                    run.measured.emplace_back(e.candidate_id, labels.at(e.candidate_id),
                                              e.measurement ? static_cast<int>(e.measurement->status) : -1, e.speedup);
                if (e.kind == SearchEvent::Kind::Gating)
                    run.decisions.emplace_back(e.candidate_id, *e.decision);
            }
            return run;
        };
        const Run with = search(true), without = search(false);
        QCOMPARE(with.summary.state, RunState::Finished);
        QCOMPARE(without.summary.state, RunState::Finished);
        QCOMPARE(with.summary.progress.measurements, int64_t(30));

        // The same measurements, in the same order.
        QCOMPARE(with.measured.size(), without.measured.size());
        for (size_t i = 0; i < with.measured.size(); ++i) {
            const auto& [id, label, status, speedup] = with.measured[i];
            const auto& [other_id, other_label, other_status, other_speedup] = without.measured[i];
            QVERIFY2(id == other_id && label == other_label && status == other_status && speedup == other_speedup,
                     qPrintable(QStringLiteral("measurement %1: %2 '%3' %4x with recalibration, %5 '%6' %7x without")
                                    .arg(i + 1)
                                    .arg(id)
                                    .arg(QString::fromStdString(label))
                                    .arg(speedup)
                                    .arg(other_id)
                                    .arg(QString::fromStdString(other_label))
                                    .arg(other_speedup)));
        }
        QVERIFY(with.decisions == without.decisions);
        QCOMPARE(with.summary.best_candidate, without.summary.best_candidate);
        QCOMPARE(with.summary.best_speedup, without.summary.best_speedup);

        // With recalibration, from the events in the order they happened: no forecast is recalibrated or declined
        // before 2 * kMinOutcomes forecasts came true, and every one after the first that is, each against no more
        // outcomes than had come true.
        std::map<int64_t, Forecast> latest;  // each candidate's forecast, as the loop keeps it
        size_t outcomes = 0, recalibrated = 0, declined = 0, plain_after = 0, last_n = 0;
        std::optional<size_t> first_recalibrated_after;
        const std::string note = "Recalibrated against the ", not_note = "Not recalibrated against the ";
        for (const SearchEvent& e : with.events) {
            if (e.kind == SearchEvent::Kind::Measured && e.speedup > 0 && latest.count(e.candidate_id))
                ++outcomes;
            if (e.kind != SearchEvent::Kind::Forecast || !e.forecast)
                continue;
            const Forecast& f = *e.forecast;
            latest[e.candidate_id] = f;
            const size_t at = f.reasoning.find(note);
            QCOMPARE(f.uncalibrated.has_value(), at != std::string::npos);
            if (const size_t no = f.reasoning.find(not_note); no != std::string::npos) {
                QVERIFY(!f.uncalibrated);
                const size_t n = std::stoul(f.reasoning.substr(no + not_note.size()));
                QVERIFY2(n >= 2 * BinRecalibration::kMinOutcomes && n <= outcomes && n >= last_n,
                         qPrintable(QStringLiteral("declined against %1 with %2 come true (%3 before)")
                                        .arg(n)
                                        .arg(outcomes)
                                        .arg(last_n)));
                last_n = n;
                QVERIFY2(f.reasoning.find("(Brier + RPS, lower is better)", no) != std::string::npos,
                         f.reasoning.c_str());
                if (!first_recalibrated_after)
                    first_recalibrated_after = outcomes;
                ++declined;
                continue;
            }
            if (!f.uncalibrated) {
                QVERIFY2(!first_recalibrated_after, qPrintable(QStringLiteral("candidate %1 was not recalibrated "
                                                                              "after %2 outcomes")
                                                                   .arg(e.candidate_id)
                                                                   .arg(outcomes)));
                plain_after += first_recalibrated_after.has_value();
                continue;
            }
            ++recalibrated;
            if (!first_recalibrated_after)
                first_recalibrated_after = outcomes;
            const size_t n = std::stoul(f.reasoning.substr(at + note.size()));
            QVERIFY2(n >= 2 * BinRecalibration::kMinOutcomes && n <= outcomes && n >= last_n,
                     qPrintable(
                         QStringLiteral("against %1 with %2 come true (%3 before)").arg(n).arg(outcomes).arg(last_n)));
            last_n = n;
            QVERIFY2(f.reasoning.find(" measured forecasts of the run", at) != std::string::npos, f.reasoning.c_str());
            // Both are distributions, and the recalibration moved something.
            double sum = 0, sum_given = 0, moved = 0;
            for (size_t b = 0; b < kBinCount; ++b) {
                QVERIFY(f.probabilities[b] >= 0 && (*f.uncalibrated)[b] >= 0);
                sum += f.probabilities[b];
                sum_given += (*f.uncalibrated)[b];
                moved += std::abs(f.probabilities[b] - (*f.uncalibrated)[b]);
            }
            QVERIFY(std::abs(sum - 1) < 1e-9 && std::abs(sum_given - 1) < 1e-9);
            QVERIFY2(moved > 1e-6, f.reasoning.c_str());
            const auto argmax = std::max_element(f.probabilities.begin(), f.probabilities.end());
            QCOMPARE(f.predicted_bin, int(argmax - f.probabilities.begin()) + 1);
        }
        QVERIFY(first_recalibrated_after.has_value());
        QVERIFY(*first_recalibrated_after >= 2 * BinRecalibration::kMinOutcomes);
        QCOMPARE(plain_after, size_t{0});
        const std::string counts =
            std::to_string(recalibrated) + " recalibrated, " + std::to_string(declined) + " declined";
        QVERIFY2(recalibrated > 10 && recalibrated + declined > 20, counts.c_str());  // most of the run's forecasts

        // The store holds the same: with recalibration, the surrogate's bins beside the recalibrated ones, and they
        // are exactly the bins the run without recalibration stored for the same candidate; without, no
        // `uncalibrated` and no note at all.
        {
            RunStore store_with = RunStore::open(with.path), store_without = RunStore::open(without.path);
            const auto stored_with = store_with.forecastsOfRun(with.summary.run_id);
            const auto stored_without = store_without.forecastsOfRun(without.summary.run_id);
            size_t stored_recalibrated = 0, compared = 0;
            bool first_plain = false;
            std::vector<std::pair<int64_t, const Forecast*>> in_order;  // by forecast id
            for (const auto& [id, list] : stored_with)
                for (const StoredForecast& f : list)
                    in_order.emplace_back(f.id, &f.forecast);
            std::sort(in_order.begin(), in_order.end());
            for (const auto& [forecast_id, f] : in_order) {
                QCOMPARE(f->uncalibrated.has_value(), f->reasoning.find(note) != std::string::npos);
                stored_recalibrated += f->uncalibrated.has_value();
                if (forecast_id == in_order.front().first)
                    first_plain = !f->uncalibrated;
            }
            QVERIFY(first_plain);
            QCOMPARE(stored_recalibrated, recalibrated);
            for (const auto& [id, list] : stored_without) {
                const auto other = stored_with.find(id);
                QVERIFY(other != stored_with.end());
                QCOMPARE(other->second.size(), list.size());
                for (size_t i = 0; i < list.size(); ++i) {
                    const Forecast& plain = list[i].forecast;
                    const Forecast& rec = other->second[i].forecast;
                    QVERIFY(!plain.uncalibrated.has_value());
                    QVERIFY2(plain.reasoning.find("Recalibrated") == std::string::npos, plain.reasoning.c_str());
                    QCOMPARE(rec.uncalibrated.value_or(rec.probabilities), plain.probabilities);
                    QCOMPARE(rec.log_mean, plain.log_mean);
                    QCOMPARE(rec.anchor_id, plain.anchor_id);
                    compared += rec.uncalibrated.has_value();
                }
            }
            QCOMPARE(compared, recalibrated);

            // The stored run config says which it was, and a run stored before the setting reads as without.
            QCOMPARE(store_with.run(with.summary.run_id)->config.at("recalibrate"), nlohmann::json(true));
            QCOMPARE(store_without.run(without.summary.run_id)->config.at("recalibrate"), nlohmann::json(false));
            QVERIFY(stored_search_config(with.path).recalibrate);
            QVERIFY(!stored_search_config(without.path).recalibrate);
        }
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(with.path.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "UPDATE runs SET config = json_remove(config, '$.recalibrate')", nullptr, nullptr,
                                  nullptr),
                     SQLITE_OK);
            sqlite3_close(db);
        }
        QVERIFY(!stored_search_config(with.path).recalibrate);
    }

    void steeringCommandsAreAppliedAndStored() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c = config("saxpy", GatingKind::Selective, "local", 100);
        c.initial_family = 2;
        c.batch = 4;  // three steps must not spend the budget
        auto runner = make_search_runner(c, cli::resources_dir(), path, false);
        Recorder rec;
        std::mutex m;
        std::condition_variable cv;
        bool paused_seen = false;
        std::optional<int64_t> unmeasured;
        runner->setEventCallback([&](const SearchEvent& e) {
            rec.fn()(e);
            std::lock_guard<std::mutex> lock(m);
            if (e.kind == SearchEvent::Kind::Command && e.message == "pause")
                paused_seen = true;
            // A candidate the screening left unmeasured (not the hand-written kernel, which the replay device cannot
            // measure at all).
            if (e.kind == SearchEvent::Kind::Gating && !is_measured(*e.decision) &&
                e.message.rfind("not measured", 0) != 0)
                unmeasured = e.candidate_id;
            cv.notify_all();
        });
        SearchCommand pause;
        pause.kind = SearchCommand::Kind::Pause;
        runner->post(pause);
        runner->start();
        {
            std::unique_lock<std::mutex> lock(m);
            QVERIFY(cv.wait_for(lock, std::chrono::seconds(60), [&] { return paused_seen; }));
        }
        // Paused: nothing moves.
        const size_t before = rec.events.size();
        QTest::qWait(300);
        QCOMPARE(rec.events.size(), before);

        SearchCommand gating;
        gating.kind = SearchCommand::Kind::SetGating;
        gating.gating.kind = GatingKind::Selective;
        gating.gating.tau = 0.99;  // almost everything is unsure now
        gating.gating.pi = 0.9;
        gating.gating.epsilon = 0;
        runner->post(gating);
        SearchCommand submit;
        submit.kind = SearchCommand::Kind::SubmitKernel;
        submit.source = "// @kerncast launch k grid(ceil_div(N, 256)) block(256) args(x, y, a, N)\n"
                        "extern \"C\" __global__ void k(const float* x, float* y, float a, int N) {\n"
                        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                        "    if (i < N) y[i] = a * x[i] + y[i];\n}\n";
        runner->post(submit);
        for (int i = 0; i < 3; ++i) {
            SearchCommand step;
            step.kind = SearchCommand::Kind::Step;
            runner->post(step);
        }
        QTRY_VERIFY_WITH_TIMEOUT(rec.count(SearchEvent::Kind::Progress) >= 3, 60000);
        // The initial screening leaves unmeasured candidates (it measures 2 of the 32 it forecasts).
        QVERIFY(unmeasured.has_value());
        {
            SearchCommand force;
            force.kind = SearchCommand::Kind::ForceMeasure;
            force.candidate_id = *unmeasured;
            runner->post(force);
        }
        SearchCommand stop;
        stop.kind = SearchCommand::Kind::Stop;
        runner->post(stop);
        runner->wait();
        const SearchSummary s = runner->summary();
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(s.reason, std::string("stopped by request"));

        RunStore store = RunStore::open(path);
        std::multiset<std::string> kinds;
        for (const auto& e : store.events(s.run_id))
            kinds.insert(e.kind);
        QCOMPARE(kinds.count("pause"), size_t(1));
        QCOMPARE(kinds.count("gating_changed"), size_t(1));
        QCOMPARE(kinds.count("submit_kernel"), size_t(1));
        QCOMPARE(kinds.count("step"), size_t(3));
        QCOMPARE(kinds.count("stop"), size_t(1));
        // The hand-written kernel is a candidate like any other: compiled here with NVRTC (the recording does not
        // know it) and forecast; the replay device, which could only answer not_recorded, is not asked, and no
        // measurement is spent on it.
        bool human = false;
        for (const auto& cand : store.candidates(s.run_id)) {
            if (cand.mutator != Mutator::Human)
                continue;
            human = true;
            QVERIFY(!store.staticReportsFor(cand.id).empty());
            QVERIFY(store.measurementsFor(cand.id).empty());
        }
        QVERIFY(human);
        // The summary counts that compile (the recording held every other program's static report).
        QVERIFY2(s.timeline.compiles.compiled >= 1, format_summary(s.timeline).c_str());
        QVERIFY(format_summary(s.timeline).find("programs compiled with NVRTC") != std::string::npos);
        {
            QCOMPARE(kinds.count("force_measure"), size_t(1));
            QCOMPARE(store.measurementsFor(*unmeasured).size(), size_t(1));
        }
    }

    void resumeContinuesTheSameRun() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        auto first = make_search_runner(config("row_sum", GatingKind::Selective, "local", 10), cli::resources_dir(),
                                        path, false);
        const SearchSummary a = first->runHere();
        QCOMPARE(a.progress.measurements, int64_t(10));
        first.reset();
        const auto before = hashes(path);
        // A new run in the same file is refused: it would mix two searches.
        auto again = make_search_runner(config("row_sum", GatingKind::Selective, "local", 10), cli::resources_dir(),
                                        path, false);
        QCOMPARE(again->runHere().state, RunState::Failed);
        auto second =
            make_search_runner(config("row_sum", GatingKind::Selective, "local", 18), cli::resources_dir(), path, true);
        const SearchSummary b = second->runHere();
        QCOMPARE(b.state, RunState::Finished);
        QCOMPARE(b.run_id, a.run_id);
        QCOMPARE(b.progress.measurements, int64_t(18));
        QVERIFY(b.best_speedup >= a.best_speedup);
        // Everything from before is still there, first and unchanged; the resumed session may add candidates or
        // measure ones gating trusted before.
        const auto after = hashes(path);
        QVERIFY(after.size() >= before.size());
        QVERIFY(std::equal(before.begin(), before.end(), after.begin()));
        QCOMPARE(std::set<std::string>(after.begin(), after.end()).size(), after.size());
        RunStore store = RunStore::open(path);
        QCOMPARE(store.runs().size(), size_t(1));
        int resumed = 0;
        for (const auto& e : store.events(a.run_id))
            resumed += e.kind == "resumed";
        QCOMPARE(resumed, 1);
    }
};

QTEST_GUILESS_MAIN(TestSearchRunner)
#include "tst_search_runner.moc"
