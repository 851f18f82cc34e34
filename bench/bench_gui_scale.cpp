// The workbench window at scale: 100k synthetic candidates in the population, and a stream of engine events through
// the engine bridge while the window shows them. Everything runs through the real MainWindow (its population model,
// sort/filter proxy and table, its plots), shown offscreen at its default size.
//   QT_QPA_PLATFORM=offscreen kerncast-bench-gui-scale [--rows 100000] [--events-per-s 1000] [--seconds 5]
//                                                      [--probe-ms 5] [--repeats 3] [--resources DIR]
// Targets: load + sort of the population < 50 ms, scatter replot < 100 ms, event-loop latency p99 < 20 ms while
// the events stream in. Latency is measured with a QTimer::singleShot(0) probe posted every few ms (the delay until
// it runs) and, because a probe only waits for what is already queued, also as the lateness of the periodic probe
// timer itself (how long the GUI thread was busy between two probes).

#include "app/gui/engine_bridge.h"
#include "app/gui/main_window.h"
#include "app/gui/run_data.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace kerncast;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A run's worth of candidates: every one forecast (an 8-bin distribution peaked around its expected bin), a third
// measured with a speedup near the forecast's.
std::vector<CandidateRow> syntheticRun(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0, 0.4);
    std::uniform_real_distribution<double> unit(0, 1);
    const BinScheme scheme = BinScheme::gfV2();
    std::vector<CandidateRow> rows(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        CandidateRow& r = rows[static_cast<size_t>(i)];
        r.id = i + 1;
        r.run_id = 1;
        r.parent_id = i < 3 ? 0 : 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(i));
        r.generation = i < 3 ? 0 : 1 + static_cast<int>(rng() % 25);
        r.mutator = i < 3 ? Mutator::Seed : Mutator::Parametric;
        r.label = QStringLiteral("family BLOCK=%1 VEC=%2").arg(64 << (rng() % 5)).arg(1 << (rng() % 3));
        r.source_hash = QString::number(static_cast<qulonglong>(rng()), 16);
        const double mu = noise(rng) * 2;
        std::array<double, kBinCount> raw{};
        for (int b = 0; b < kBinCount; ++b) {
            const double centre = std::log(b == 0               ? 0.18
                                           : b == kBinCount - 1 ? 5.6
                                                                : std::sqrt(scheme.edges()[static_cast<size_t>(b - 1)] *
                                                                            scheme.edges()[static_cast<size_t>(b)]));
            raw[static_cast<size_t>(b)] = std::exp(-(centre - mu) * (centre - mu)) + 0.01;
        }
        applyForecast(r, Forecast::fromRaw(raw), scheme);
        if (rng() % 3 == 0) {
            Measurement m;
            m.status = Status::Ok;
            m.speedup = std::exp(mu + noise(rng));
            applyMeasurement(r, m);
        } else {
            applyGating(r, unit(rng) < 0.8 ? GatingDecision::Trust : GatingDecision::Discard, QStringLiteral("sure"));
        }
    }
    return rows;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p / 100.0 * v.size())) - 1);
    return v[k];
}

double median(std::vector<double> v) { return percentile(std::move(v), 50); }

void waitMs(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

struct Row {
    std::string what;
    std::string value;
    std::string target;
    bool ok;
};

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("KerncastBench"));
    QCoreApplication::setApplicationName(QStringLiteral("kerncast-bench-gui-scale"));
    QStandardPaths::setTestModeEnabled(true);

    int rows = 100000;
    int eventsPerSecond = 1000;
    double seconds = 5;
    int probeMs = 5;
    int repeats = 3;
    QString resources = QStringLiteral(KERNCAST_SOURCE_DIR "/resources");
    for (int i = 1; i < argc; ++i) {
        const auto next = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "kerncast-bench-gui-scale: %s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (!std::strcmp(argv[i], "--rows"))
            rows = std::atoi(next("--rows"));
        else if (!std::strcmp(argv[i], "--events-per-s"))
            eventsPerSecond = std::atoi(next("--events-per-s"));
        else if (!std::strcmp(argv[i], "--seconds"))
            seconds = std::atof(next("--seconds"));
        else if (!std::strcmp(argv[i], "--probe-ms"))
            probeMs = std::atoi(next("--probe-ms"));
        else if (!std::strcmp(argv[i], "--repeats"))
            repeats = std::atoi(next("--repeats"));
        else if (!std::strcmp(argv[i], "--resources"))
            resources = QString::fromLocal8Bit(next("--resources"));
        else {
            std::fprintf(stderr,
                         "usage: kerncast-bench-gui-scale [--rows N] [--events-per-s N] [--seconds S] [--probe-ms MS] "
                         "[--repeats N] [--resources DIR]\n");
            return 2;
        }
    }
    if (rows < 10 || eventsPerSecond < 1 || seconds <= 0 || probeMs < 1 || repeats < 1) {
        std::fprintf(stderr, "kerncast-bench-gui-scale: values must be positive (and --rows at least 10)\n");
        return 2;
    }

    MainWindow window({resources, false});
    window.show();
    {
        QElapsedTimer ready;
        ready.start();
        while (!window.isReady() && ready.elapsed() < 60000)
            waitMs(20);
    }
    const std::vector<CandidateRow> run = syntheticRun(rows, 42);
    std::vector<Row> table;

    // 1. The population: all rows into the model, the proxy sorting them by speedup (the table's default view). First
    //    the model and its proxy alone, then in the window, where the table view and the lineage tree follow too.
    std::vector<double> bareLoads;
    for (int r = 0; r < repeats; ++r) {
        PopulationModel model;
        PopulationFilterProxy proxy;
        proxy.setSourceModel(&model);
        proxy.sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        const auto t0 = Clock::now();
        model.setRows(run);
        proxy.index(0, 0);  // the proxy maps (and sorts) on first use
        bareLoads.push_back(msSince(t0));
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.1f ms", median(bareLoads));
    table.push_back({"model + proxy: load " + std::to_string(rows) + " rows sorted by speedup", buf, "< 50 ms",
                     median(bareLoads) < 50});
    std::vector<double> loads, sorts;
    for (int r = 0; r < repeats; ++r) {
        window.populationModel()->clear();
        QCoreApplication::processEvents();
        auto t0 = Clock::now();
        window.populationModel()->setRows(run);
        loads.push_back(msSince(t0));
        t0 = Clock::now();
        window.populationProxy()->sort(PopulationModel::IdColumn, Qt::AscendingOrder);
        window.populationProxy()->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        sorts.push_back(msSince(t0) / 2);
        QCoreApplication::processEvents();
    }
    const double loadSort = median(loads);
    std::snprintf(buf, sizeof buf, "%.1f ms (+ %.1f ms per re-sort)", loadSort, median(sorts));
    table.push_back({"window: load into table + lineage tree, sorted", buf, "< 50 ms", loadSort < 50});

    // 2. The forecast-vs-measured scatter of the run: points from the rows, set and replotted.
    std::vector<double> replots;
    const std::vector<ForecastPoint> points = forecastPoints(window.populationModel()->rows());
    for (int r = 0; r < repeats; ++r) {
        window.scatterPlot()->clear();
        QCoreApplication::processEvents();
        const auto t0 = Clock::now();
        window.scatterPlot()->setPoints(points);
        QCoreApplication::processEvents();  // the queued repaint
        replots.push_back(msSince(t0));
    }
    std::snprintf(buf, sizeof buf, "%.1f ms", median(replots));
    table.push_back(
        {"scatter: set + replot " + std::to_string(points.size()) + " points", buf, "< 100 ms", median(replots) < 100});

    // 3. Latency while a thread streams events through the bridge into the window: forecasts, gating decisions and
    //    measurements of existing candidates, and new candidates.
    EngineBridge* bridge = window.bridge();
    bridge->beginManualSession();
    std::atomic<bool> streaming{true};
    std::atomic<int64_t> pushed{0};
    std::thread producer([&] {
        std::mt19937 rng(7);
        const auto period = std::chrono::nanoseconds(1000000000LL / eventsPerSecond);
        auto next = Clock::now();
        int64_t seq = 0;
        int64_t newId = rows + 1;
        while (streaming) {
            SearchEvent e;
            e.run_id = 0;
            e.seq = ++seq;
            const int kind = static_cast<int>(rng() % 10);
            if (kind == 0) {
                Candidate c;
                c.id = newId++;
                c.parent_id = 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(rows));
                c.mutator = Mutator::Parametric;
                c.label = "family streamed";
                e.kind = SearchEvent::Kind::CandidateProposed;
                e.candidate_id = c.id;
                e.candidate = c;
            } else {
                e.candidate_id = 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(rows));
                if (kind < 5) {
                    std::array<double, kBinCount> raw{};
                    for (auto& p : raw)
                        p = 0.05 + (rng() % 100) / 100.0;
                    e.kind = SearchEvent::Kind::Forecast;
                    e.forecast = Forecast::fromRaw(raw);
                } else if (kind < 8) {
                    e.kind = SearchEvent::Kind::Gating;
                    e.decision = GatingDecision::Trust;
                    e.message = "confident";
                } else {
                    Measurement m;
                    m.status = Status::Ok;
                    m.speedup = 0.5 + (rng() % 300) / 100.0;
                    m.device_kind = "replay";
                    e.kind = SearchEvent::Kind::Measured;
                    e.measurement = m;
                    e.speedup = m.speedup;
                }
            }
            e.progress.state = RunState::Running;
            e.progress.measurements = seq / 5;
            e.progress.budget_measurements = 1000000;
            bridge->pushEvent(e);
            ++pushed;
            next += period;
            std::this_thread::sleep_until(next);
        }
    });
    std::vector<double> probeDelays, probeLateness;
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = -1;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(probeMs);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (lastTick >= 0)
            probeLateness.push_back(std::max(0.0, (now - lastTick) / 1e6 - probeMs));
        lastTick = now;
        QTimer::singleShot(0, [&, now] { probeDelays.push_back((clock.nsecsElapsed() - now) / 1e6); });
    });
    int batches = 0;
    QObject::connect(bridge, &EngineBridge::eventsReady, [&] { ++batches; });
    probe.start();
    waitMs(static_cast<int>(seconds * 1000));
    probe.stop();
    streaming = false;
    producer.join();
    const double elapsed = clock.elapsed() / 1000.0;

    const double p99 = percentile(probeDelays, 99);
    std::snprintf(buf, sizeof buf, "p50 %.2f ms, p99 %.2f ms, max %.2f ms", percentile(probeDelays, 50), p99,
                  percentile(probeDelays, 100));
    table.push_back({"event loop: singleShot(0) probe delay", buf, "p99 < 20 ms", p99 < 20});
    const double lateP99 = percentile(probeLateness, 99);
    std::snprintf(buf, sizeof buf, "p50 %.2f ms, p99 %.2f ms, max %.2f ms", percentile(probeLateness, 50), lateP99,
                  percentile(probeLateness, 100));
    table.push_back(
        {"event loop: " + std::to_string(probeMs) + " ms probe timer lateness", buf, "p99 < 20 ms", lateP99 < 20});
    std::snprintf(buf, sizeof buf, "%.0f events/s in %.1f batches/s", pushed / elapsed, batches / elapsed);
    table.push_back({"stream through the bridge", buf, "<= 20 batches/s", batches / elapsed <= 20.5});

    std::printf("kerncast-bench-gui-scale: %d rows, %d events/s for %.1f s, probe every %d ms, window %dx%d\n\n", rows,
                eventsPerSecond, seconds, probeMs, window.width(), window.height());
    std::printf("| %-58s | %-40s | %-15s | %-4s |\n", "measurement", "result", "target", "ok");
    std::printf("|%s|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(42, '-').c_str(),
                std::string(17, '-').c_str(), std::string(6, '-').c_str());
    for (const Row& r : table)
        std::printf("| %-58s | %-40s | %-15s | %-4s |\n", r.what.c_str(), r.value.c_str(), r.target.c_str(),
                    r.ok ? "yes" : "NO");
    window.close();
    return 0;
}
