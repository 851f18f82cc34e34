// Incremental training of the local surrogate (LocalForecaster::freezeBase()): the frozen base and its cache, the
// correction that brings later programs in, and resuming at a checkpoint. Synthetic packs whose relation between
// the tunables and the speedup is known: the base packs speed up with X, the new pack slows down with it.
#include "core/error.h"
#include "engine/surrogate/local_forecaster.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

using namespace kerncast;
namespace fs = std::filesystem;

namespace {

const std::string kSource = "// @kerncast tunable X ...\nextern \"C\" __global__ void k(float* y) {}\n";

// log speedup over the reference of configuration (x, y) in a pack whose X trend is `trend`.
double truth(double trend, int64_t x, int64_t y) {
    return trend * std::log2(static_cast<double>(x)) / 6.0 - 0.2 * static_cast<double>(y) / 8.0;
}

// Configuration (x, y) of `pack`, forecast against its measured configuration X = 1, Y = 1.
LabelledExample example(const std::string& pack, double trend, int64_t x, int64_t y) {
    LabelledExample e;
    ForecastQuery& q = e.query;
    q.pack = q.problem_name = pack;
    q.candidate_source = kSource;
    q.tunables = {{"X", x}, {"Y", y}};
    q.launches.push_back(LaunchShape{"k", {4096 / x, 1, 1}, {x * 4, 1, 1}, 0});
    q.problem_bytes = 4e7 * (1 + static_cast<double>(pack.size()));
    q.problem_flops = 1e7;
    q.reference_time_us = 50;
    q.anchor.is_reference = false;
    q.anchor.candidate_id = 1;
    q.anchor.source = kSource;
    q.anchor.tunables = {{"X", 1}, {"Y", 1}};
    q.anchor.launches.push_back(LaunchShape{"k", {4096, 1, 1}, {4, 1, 1}, 0});
    q.anchor.speedup = std::exp(truth(trend, 1, 1));
    e.speedup = std::exp(truth(trend, x, y));
    return e;
}

// Every configuration of a pack with X in 1..64 (powers of two) and Y in 1..8; `odd`: only odd Y (the rest held out).
std::vector<LabelledExample> pack(const std::string& name, double trend, int parity = -1) {
    std::vector<LabelledExample> out;
    for (int64_t x = 1; x <= 64; x *= 2)
        for (int64_t y = 1; y <= 8; ++y)
            if (parity < 0 || y % 2 == parity)
                out.push_back(example(name, trend, x, y));
    return out;
}

std::vector<LabelledExample> base_packs() {
    std::vector<LabelledExample> out;
    for (const char* name : {"alpha", "beta", "gamma", "delta"})
        for (auto& e : pack(name, 0.9))
            out.push_back(std::move(e));
    return out;
}

LocalForecasterOptions options(uint64_t seed = 5) {
    LocalForecasterOptions o;
    o.seed = seed;
    o.members = 3;
    o.rounds = 60;
    o.retrain_after = 1;
    return o;
}

std::vector<ForecastQuery> queries_of(const std::vector<LabelledExample>& examples) {
    std::vector<ForecastQuery> out;
    for (const auto& e : examples)
        out.push_back(e.query);
    return out;
}

// Every forecast's distribution and mean, for exact comparison.
std::vector<double> forecast_numbers(LocalForecaster& f, const std::vector<ForecastQuery>& queries) {
    std::vector<double> out;
    for (const ForecastResult& r : f.forecast(queries)) {
        if (!r.forecast)
            throw Error("a forecast failed: " + r.error);
        out.push_back(r.forecast->log_mean.value_or(NAN));
        out.push_back(r.forecast->log_sigma.value_or(NAN));
        out.insert(out.end(), r.forecast->probabilities.begin(), r.forecast->probabilities.end());
    }
    return out;
}

// RMS error of the predicted log S against the truth over the held-out examples.
double rms_error(LocalForecaster& f, const std::vector<LabelledExample>& held) {
    double sum = 0;
    for (const auto& e : held) {
        const double err = f.predict(e.query).log_speedup - (std::log(e.speedup) - std::log(e.query.anchor.speedup));
        sum += err * err;
    }
    return std::sqrt(sum / static_cast<double>(held.size()));
}

size_t files_in(const std::string& dir) {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        n += entry.path().extension() == ".json" ? 1 : 0;
    return n;
}

// The cache's one base file (beside it, its lock file).
fs::path base_file(const std::string& dir) {
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".json")
            return entry.path();
    return {};
}

}  // namespace

class TestIncrementalForecaster : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A second forecaster of the same programs and options reads the base from the cache and forecasts exactly as
    // the one that trained it, before and after its own programs came in.
    void cachedBaseForecastsExactlyAsATrainedOne() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        const auto late = pack("novel", -0.9, 1);
        const auto held = queries_of(pack("novel", -0.9, 0));
        std::vector<std::vector<double>> seen[2];
        for (int run = 0; run < 2; ++run) {
            LocalForecaster f(options());
            f.learn(base_packs());
            f.freezeBase(cache);
            QCOMPARE(f.baseExampleCount(), base_packs().size());
            if (run == 0)
                QCOMPARE(f.baseSource(), std::string("trained"));
            else
                QVERIFY2(f.baseSource().rfind("cache ", 0) == 0, f.baseSource().c_str());
            seen[run].push_back(forecast_numbers(f, held));
            f.learn(late);
            seen[run].push_back(forecast_numbers(f, held));
        }
        QCOMPARE(files_in(cache), size_t{1});
        QCOMPARE(seen[1], seen[0]);
        QVERIFY(seen[0][0] != seen[0][1]);  // the late programs changed the forecasts
    }

    // Two forecasters of the same programs and options freezing at once against a fresh cache (two searches, or the
    // workbench and the CLI, started together): one trains, the other waits for it and reads the base it wrote.
    void concurrentFreezesTrainOnce() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        const auto held = queries_of(pack("novel", -0.9, 0));
        LocalForecaster a(options()), b(options());
        a.learn(base_packs());
        b.learn(base_packs());
        std::thread other([&] { b.freezeBase(cache); });
        a.freezeBase(cache);
        other.join();
        const std::vector<std::string> sources = {a.baseSource(), b.baseSource()};
        QCOMPARE(std::count(sources.begin(), sources.end(), std::string("trained")), 1L);
        QCOMPARE(std::count_if(sources.begin(), sources.end(),
                               [](const std::string& s) { return s.rfind("cache ", 0) == 0; }),
                 1L);
        QCOMPARE(files_in(cache), size_t{1});
        QCOMPARE(forecast_numbers(a, held), forecast_numbers(b, held));
    }

    // The base knows packs that speed up with X; the new pack slows down with it. Its own measurements, brought in
    // by the correction alone (the base is not retrained), must turn the forecasts of its held-out configurations
    // around.
    void correctionBringsLaterProgramsIn() {
        LocalForecaster f(options());
        f.learn(base_packs());
        f.freezeBase();
        QCOMPARE(f.baseSource(), std::string("trained"));
        const auto held = pack("novel", -0.9, 0);
        const double before = rms_error(f, held);
        const size_t base_pairs = f.pairCount();
        f.learn(pack("novel", -0.9, 1));
        const double after = rms_error(f, held);
        QVERIFY2(after < 0.4 * before, (std::to_string(after) + " vs " + std::to_string(before)).c_str());
        QVERIFY(f.pairCount() > base_pairs);
        QCOMPARE(f.packPrograms().at("novel"), 28);
        // The trend itself, not just the level: the largest X is forecast slower than the smallest.
        const double slow = f.predict(example("novel", -0.9, 64, 2).query).log_speedup;
        const double fast = f.predict(example("novel", -0.9, 2, 2).query).log_speedup;
        QVERIFY2(slow < fast, (std::to_string(slow) + " vs " + std::to_string(fast)).c_str());
        // It holds up on configurations it did not learn, so forecasts take (nearly) all of it.
        QVERIFY2(f.correctionShare() > 0.7, std::to_string(f.correctionShare()).c_str());
    }

    // The base knows the pack's relation; its measured configurations are each off by a fixed amount that no
    // feature tells (timing, and effects the features do not carry). A correction taken whole learns those offsets
    // by heart and forecasts the pack's other configurations worse than the base alone. Judged on configurations
    // it did not learn, only part of it holds up (a child's forecast against a measured parent does gain from
    // knowing the parent's own offset), and the forecasts get better, not worse.
    void correctionThatDoesNotHoldUpIsNotTaken() {
        auto off = [](int64_t x, int64_t y) {
            if (x == 1 && y == 1)
                return 0.0;  // the anchor
            std::mt19937 rng(static_cast<uint32_t>(x * 131 + y * 7));
            return std::uniform_real_distribution<double>(-0.8, 0.8)(rng);
        };
        auto noisy = [&](int parity) {
            std::vector<LabelledExample> out;
            for (int64_t x = 1; x <= 64; x *= 2)
                for (int64_t y = 1; y <= 8; ++y)
                    if (y % 2 == parity) {
                        LabelledExample e = example("noisy", 0.9, x, y);
                        e.speedup *= std::exp(off(x, y));
                        out.push_back(e);
                    }
            return out;
        };
        const auto held = noisy(0);
        LocalForecaster f(options());
        f.learn(base_packs());
        f.learn(pack("noisy", 0.9));  // the relation, without the offsets
        f.freezeBase();
        const double before = rms_error(f, held);
        QCOMPARE(f.correctionShare(), 1.0);  // no correction yet
        f.learn(noisy(1));
        const double after = rms_error(f, held);
        QVERIFY2(f.correctionShare() < 0.6, std::to_string(f.correctionShare()).c_str());
        QVERIFY2(after < before, (std::to_string(after) + " vs " + std::to_string(before)).c_str());
    }

    // A run of a few programs holds out too few pairs to judge its correction by: a least-squares share of a handful
    // of pairs says more about their offsets than about the correction, so the whole correction is taken. Several
    // runs of four programs with arbitrary offsets; judged on their few held-out pairs, some would keep only part.
    void fewProgramsTakeTheWholeCorrection() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        for (uint32_t seed = 1; seed <= 6; ++seed) {
            std::mt19937 rng(seed);
            std::uniform_real_distribution<double> offset(-0.8, 0.8);
            std::vector<LabelledExample> run;
            for (const auto& [x, y] : {std::pair<int64_t, int64_t>{1, 1}, {4, 3}, {16, 5}, {64, 7}}) {
                LabelledExample e = example("noisy", 0.9, x, y);
                if (x != 1)
                    e.speedup *= std::exp(offset(rng));
                run.push_back(e);
            }
            LocalForecaster f(options());
            f.learn(base_packs());
            f.freezeBase(cache);  // trained once, then read from the cache
            const ForecastQuery query = example("noisy", 0.9, 8, 2).query;
            const double base = f.predict(query).log_speedup;
            f.learn(run);
            QVERIFY(f.predict(query).log_speedup != base);  // a correction was learned, and it counts
            QVERIFY2(f.correctionShare() == 1.0,
                     ("seed " + std::to_string(seed) + ": share " + std::to_string(f.correctionShare())).c_str());
        }
    }

    // A cache file that does not hold this base (damaged, or written for other programs) is replaced, and says so.
    void unreadableCacheIsReplaced_data() {
        QTest::addColumn<QString>("content");
        QTest::newRow("garbage") << "not json at all {";
        QTest::newRow("other key") << R"({"format": 1, "key": "0000000000000000"})";
        QTest::newRow("truncated") << "";
    }
    void unreadableCacheIsReplaced() {
        QFETCH(QString, content);
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        std::vector<double> trained;
        {
            LocalForecaster f(options());
            f.learn(base_packs());
            f.freezeBase(cache);
            trained = forecast_numbers(f, queries_of(pack("novel", -0.9, 0)));
        }
        QCOMPARE(files_in(cache), size_t{1});
        const fs::path file = base_file(cache);
        std::ofstream(file, std::ios::trunc) << content.toStdString();  // the same file name, damaged
        LocalForecaster f(options());
        f.learn(base_packs());
        f.freezeBase(cache);
        QVERIFY2(f.baseSource().find("unreadable, replaced") != std::string::npos, f.baseSource().c_str());
        QCOMPARE(forecast_numbers(f, queries_of(pack("novel", -0.9, 0))), trained);
        LocalForecaster again(options());
        again.learn(base_packs());
        again.freezeBase(cache);
        QVERIFY2(again.baseSource().rfind("cache ", 0) == 0, again.baseSource().c_str());
    }

    // A cache whose climatology is one no calibration writes (a share beyond the fitted range, frequencies that are
    // not a distribution) is replaced too: forecasts from it would not be distributions, or would be only after a
    // silent renormalisation.
    void cacheWithADamagedClimatologyIsReplaced_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::newRow("share above the range") << "climatology_share"
                                               << "[0.0, 7.0]";
        QTest::newRow("negative share") << "climatology_share"
                                        << "[-0.1, 0.1]";
        QTest::newRow("share missing a side") << "climatology_share"
                                              << "[0.1]";
        QTest::newRow("negative frequency") << "climatology"
                                            << "[[0.5, 0.5, 0, 0, 0, 0, 0, 0], [1.5, -0.5, 0, 0, 0, 0, 0, 0]]";
        QTest::newRow("not summing to 1") << "climatology"
                                          << "[[0.5, 0.5, 0, 0, 0, 0, 0, 0], [0.5, 0.4, 0, 0, 0, 0, 0, 0]]";
        QTest::newRow("a bin short") << "climatology"
                                     << "[[0.5, 0.5, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]]";
    }
    void cacheWithADamagedClimatologyIsReplaced() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        {
            LocalForecaster f(options());
            f.learn(base_packs());
            f.freezeBase(cache);
        }
        const fs::path file = base_file(cache);
        nlohmann::json saved = nlohmann::json::parse(std::ifstream(file));
        saved["pair"][field.toStdString()] = nlohmann::json::parse(value.toStdString());
        std::ofstream(file, std::ios::trunc) << saved.dump();
        LocalForecaster f(options());
        f.learn(base_packs());
        f.freezeBase(cache);
        QVERIFY2(f.baseSource().find("unreadable, replaced") != std::string::npos, f.baseSource().c_str());
        QVERIFY2(f.baseSource().find("climatolog") != std::string::npos, f.baseSource().c_str());
    }

    // Other options or other programs make another base: the cache does not answer for them.
    void otherOptionsOrProgramsTrainAnew() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        LocalForecaster first(options(5));
        first.learn(base_packs());
        first.freezeBase(cache);
        LocalForecaster seed(options(6));
        seed.learn(base_packs());
        seed.freezeBase(cache);
        QCOMPARE(seed.baseSource(), std::string("trained"));
        LocalForecasterOptions deeper = options(5);
        deeper.max_depth = 4;
        LocalForecaster depth(deeper);
        depth.learn(base_packs());
        depth.freezeBase(cache);
        QCOMPARE(depth.baseSource(), std::string("trained"));
        auto programs = base_packs();
        programs.back().speedup *= 1.01;  // one measurement differs
        LocalForecaster measured(options(5));
        measured.learn(programs);
        measured.freezeBase(cache);
        QCOMPARE(measured.baseSource(), std::string("trained"));
        QCOMPARE(files_in(cache), size_t{4});
    }

    // A resumed search learns the same programs again and restores the checkpoint: it forecasts as the search did
    // at the checkpoint, with programs learned after it still pending.
    void restoreAtACheckpointWithAFrozenBase() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("forecaster").toStdString();
        const auto late = pack("novel", -0.9, 1);
        const std::vector<LabelledExample> first(late.begin(), late.begin() + 12), rest(late.begin() + 12, late.end());
        const auto held = queries_of(pack("novel", -0.9, 0));
        LocalForecasterOptions o = options();
        o.retrain_after = 100;  // what is pending stays pending
        LocalForecaster search(o);
        search.learn(base_packs());
        search.freezeBase(cache);
        search.learn(first);
        search.retrain();
        search.learn(rest);
        const nlohmann::json state = search.checkpointState();
        QCOMPARE(state["trained_on"].get<size_t>(), base_packs().size() + first.size());
        const auto at_checkpoint = forecast_numbers(search, held);

        LocalForecaster resumed(o);
        resumed.learn(base_packs());
        resumed.freezeBase(cache);
        resumed.learn(late);
        resumed.restoreState(state);
        QCOMPARE(forecast_numbers(resumed, held), at_checkpoint);
        QVERIFY(resumed.checkpointState() == state);
    }

    // With nothing learned there is nothing to freeze: the forecaster stays on full retrains.
    void nothingLearnedFreezesNothing() {
        LocalForecaster f(options());
        f.freezeBase();
        QCOMPARE(f.baseExampleCount(), size_t{0});
        QCOMPARE(f.baseSource(), std::string());
        f.learn(pack("novel", -0.9));
        QVERIFY(!f.predict(example("novel", -0.9, 8, 2).query).prior);
    }
};

QTEST_GUILESS_MAIN(TestIncrementalForecaster)
#include "tst_incremental_forecaster.moc"
