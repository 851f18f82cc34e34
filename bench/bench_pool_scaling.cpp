// How a search's measurement rate scales with the size of the measurement pool. Replay workers (kerncast-worker
// --replay) take each measurement's recorded wall time (verification and timing on the GPU it was recorded on), so a
// pool of N behaves in time like N GPUs; the same gated search of a fixed budget and seed runs with each pool size.
// measurements/minute counts device measurements over the search's whole wall time (forecasting, surrogate
// training and the store included); efficiency = rate(N) / (N * rate(1)), 1.0 being perfect scaling. The engine's
// own work between batches (forecasting, retraining the surrogate) does not shrink with more workers, so the table
// also gives the batch efficiency: the same ratio over the time the pool had a batch in hand (from dispatch to the
// last result applied), which is what the pool itself can improve. Every run must
// end with the same best and measurement count as the one-worker run (the pool applies results in candidate order),
// else the command fails.
//
// Every row runs the same search: the search measures in rounds of K (SearchConfig::round: each batch topped up to
// a multiple of K with candidates its gate passed over), K the same for every row, by default the largest pool size
// in the table. Only the pool differs from row to row; --round 1 gives batches exactly as the gate chose them.
//
// Two cost models, both reported: "recorded" reads every static report from the recording, as a replay search does;
// "compiled" compiles every candidate's static report with NVRTC on this machine's CPUs, and each replay worker
// compiles the program it measures (found compiled when the search compiled it), as a search on a real GPU does
// (PoolConfig::replay_compiles), so that its figure predicts a real run on a machine with these CPUs. The workers
// take the recorded wall time of verification and timing either way. --static-reports measured: the search compiles
// a family configuration only when it measures it (SearchConfig::static_reports).
//
// The search overlaps by default (SearchConfig::overlap: each iteration queues its batch before it applies the one
// before, so the workers measure while the engine forecasts and retrains); --no-overlap gives the search that
// waits for every batch.
//
// The default budget, 64, is about a quarter of softmax's 242 recorded programs: the search still has parents to
// expand and batches to measure. Near the end of a small space a search's batches shrink to a few candidates
// (most children are programs it measured already), and once no parent is left it measures a round of trusted
// candidates at a time (Loop::rescue); a budget of 256 on softmax measures all 242 programs, its last ~50 that way.
//
//   kerncast-bench-pool-scaling [--problem softmax] [--budget 64] [--seed 1] [--workers 1,2,4,8] [--wall-time 1]
//                               [--gating top-k] [--top-k 16] [--batch 24] [--round K] [--ahead N] [--no-overlap]
//                               [--cost recorded,compiled] [--launcher local] [--phases] [--repeat N]
//                               [--trace-dir DIR] [--json]

#include "core/text_util.h"
#include "engine/cli/cli.h"
#include "engine/search/search_runner.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace kerncast;

namespace {

struct Row {
    std::string cost;  // recorded | compiled
    int workers = 0;
    double seconds = 0;
    int64_t measurements = 0;
    double best = 0;
    double per_minute = 0;
    double efficiency = 0;
    double batch_seconds = 0;  // time with a batch in the pool
    double batch_efficiency = 0;
    double setup_seconds = 0;  // starting the workers, reading the recordings, the surrogate's base model
    double efficiency_with_setup = 0;
    std::string phases;  // the search's timeline summary (--phases)
    // --repeat: the row is the run of median seconds; the fastest and slowest runs give the efficiency's range.
    int runs = 1;
    double seconds_min = 0, seconds_max = 0;
    double efficiency_low = 0, efficiency_high = 0;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Measurement rate of a gated search against the size of the measurement pool (replay workers)",
                 "kerncast-bench-pool-scaling"};
    std::string problem = "softmax", gating = "top-k", launcher = "local", device = "replay:nvidia-h200";
    std::string static_reports = "auto";
    int64_t budget = 64;
    uint64_t seed = 1;
    int top_k = 16;
    int batch = 24;
    int round = 0;
    int ahead = 0;
    std::vector<std::string> costs{"recorded", "compiled"};
    bool overlap = true;
    double wall = 1.0;
    std::vector<int> sizes{1, 2, 4, 8};
    bool json = false;
    bool phases = false;
    int repeat = 1;
    std::string trace_dir;
    app.add_option("--problem", problem, "Problem with a recording on the device")->capture_default_str();
    app.add_option("--device", device, "Replay device")->capture_default_str();
    app.add_option("--budget", budget, "Device measurements per search")->capture_default_str();
    app.add_option("--seed", seed, "Search seed")->capture_default_str();
    app.add_option("--workers", sizes, "Pool sizes")->delimiter(',')->capture_default_str();
    app.add_option("--wall-time", wall, "Scale of the recorded wall time each replay measurement takes")
        ->check(CLI::Range(0.01, 100.0))
        ->capture_default_str();
    app.add_option("--gating", gating, "measure-all, top-k or selective")
        ->check(CLI::IsMember({"measure-all", "top-k", "selective"}))
        ->capture_default_str();
    app.add_option("--top-k", top_k, "top-k: children measured per parent (one batch)")->capture_default_str();
    app.add_option("--batch", batch, "Children proposed per parent (forecast, then gated)")->capture_default_str();
    app.add_option("--round", round,
                   "Measure in rounds of K, the same for every row (0: the largest pool size in --workers)")
        ->check(CLI::Range(0, 1024))
        ->capture_default_str();
    app.add_option("--ahead", ahead,
                   "Measurements kept queued behind a batch before it is applied (0: twice the round)")
        ->check(CLI::Range(0, 4096))
        ->capture_default_str();
    app.add_option("--cost", costs,
                   "Cost models: recorded (static reports read from the recording) and/or compiled (compiled with "
                   "NVRTC as on a real GPU)")
        ->delimiter(',')
        ->check(CLI::IsMember({"recorded", "compiled"}))
        ->capture_default_str();
    app.add_option("--static-reports", static_reports,
                   "Which candidates the search compiles for their static report when proposed (all, measured, "
                   "auto; with the compiled cost model, replay workers compile what they measure, as a GPU does)")
        ->check(CLI::IsMember({"all", "measured", "auto"}))
        ->capture_default_str();
    app.add_flag("!--no-overlap", overlap, "Wait for every batch before choosing the next (no overlap)");
    app.add_option("--launcher", launcher, "How the replay workers start (local, ssh:HOST, slurm)")
        ->capture_default_str();
    app.add_flag("--phases", phases,
                 "After the table, where each row's wall time went: the search thread's phases and each worker's "
                 "busy share (the timeline of `search --trace`)");
    app.add_option("--trace-dir", trace_dir,
                   "Writes each run's timeline there (COST-WORKERS-RUN.json, the Trace Event format of `search "
                   "--trace`)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--repeat", repeat,
                   "Runs of each row: the row shows the run of median seconds and the efficiency's range over them "
                   "(at 8 workers a search of 64 measurements varies by a few hundredths from run to run)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app.add_flag("--json", json, "Print one JSON object {workers, measurements_per_minute, efficiency}");
    CLI11_PARSE(app, argc, argv);
    if (round == 0)
        round = sizes.empty() ? 1 : std::max(1, *std::max_element(sizes.begin(), sizes.end()));

    const std::string resources = cli::resources_dir();
    const fs::path tmp = fs::temp_directory_path() / ("kerncast-bench-pool-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    std::vector<Row> rows;
    int rc = 0;
    // Every row's search reads the surrogate's base model from its cache: one search is set up first (and not run),
    // which trains and saves it if no earlier search did.
    try {
        SearchConfig warm;
        warm.problem_dir = resources + "/problems/" + problem;
        warm.device = device;
        warm.surrogate = "local";
        warm.seed = seed;
        make_search_runner(warm, resources, (tmp / "warm.sqlite").string(), false);
    } catch (const std::exception& e) {
        std::cerr << "kerncast-bench-pool-scaling: " << e.what() << "\n";
        return 1;
    }
    // One search of the given cost model and pool size; nullopt (said on stderr) when it failed.
    const auto run_once = [&](const std::string& cost, int n, int rep) -> std::optional<Row> {
        SearchConfig cfg;
        cfg.problem_dir = resources + "/problems/" + problem;
        cfg.device = device;
        cfg.surrogate = "local";
        cfg.gating.kind = gating_kind_from_string(gating);
        cfg.gating.top_k = top_k;
        cfg.batch = batch;
        cfg.overlap = overlap;
        cfg.round = round;
        cfg.ahead = ahead;
        cfg.budgets.measurements = budget;
        cfg.seed = seed;
        cfg.pool.workers = n;
        cfg.pool.replay_wall_time = wall;
        cfg.pool.launcher = launcher;
        cfg.pool.replay_compiles = cost == "compiled";
        cfg.static_reports = static_reports;
        const std::string run =
            (tmp / ("pool-" + cost + "-" + std::to_string(n) + "-" + std::to_string(rep) + ".sqlite")).string();
        fs::remove(run);
        Row r;
        r.cost = cost;
        r.workers = n;
        try {
            const auto opened = std::chrono::steady_clock::now();
            auto runner = make_search_runner(cfg, resources, run, false);
            r.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
            // A batch is in hand from the snapshot that shows work queued until the one that shows none left.
            std::optional<std::chrono::steady_clock::time_point> batch_start;
            runner->setEventCallback([&](const SearchEvent& e) {
                if (e.kind != SearchEvent::Kind::Pool || !e.pool)
                    return;
                const bool busy = e.pool->queued + e.pool->in_flight > 0;
                const auto now = std::chrono::steady_clock::now();
                if (busy && !batch_start)
                    batch_start = now;
                if (!busy && batch_start) {
                    r.batch_seconds += std::chrono::duration<double>(now - *batch_start).count();
                    batch_start.reset();
                }
            });
            const auto t0 = std::chrono::steady_clock::now();
            const SearchSummary s = runner->runHere();
            r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (s.state != RunState::Finished)
                throw std::runtime_error(s.reason);
            r.measurements = s.progress.measurements;
            r.best = s.best_speedup;
            r.phases = format_summary(s.timeline);  // with the static reports' compile counts
            if (!trace_dir.empty()) {
                nlohmann::json trace = runner->timeline()->traceEvents();
                trace["run"] = r.cost + ", " + std::to_string(n) + " workers, run " + std::to_string(rep + 1);
                write_file_atomically(
                    (fs::path(trace_dir) / (r.cost + "-" + std::to_string(n) + "-" + std::to_string(rep + 1) + ".json"))
                        .string(),
                    trace.dump());
            }
        } catch (const std::exception& e) {
            std::cerr << "kerncast-bench-pool-scaling: " << n << " workers: " << e.what() << "\n";
            return std::nullopt;
        }
        r.per_minute = r.seconds > 0 ? 60.0 * double(r.measurements) / r.seconds : 0;
        return r;
    };
    for (const std::string& cost : costs)
        for (int n : sizes) {
            std::vector<Row> runs;
            for (int rep = 0; rep < repeat; ++rep) {
                std::optional<Row> r = run_once(cost, n, rep);
                if (!r) {
                    rc = 1;
                    continue;
                }
                const auto first = std::find_if(rows.begin(), rows.end(), [&](const Row& o) { return o.cost == cost; });
                const Row& same = first != rows.end() ? *first : runs.empty() ? *r : runs.front();
                if (r->measurements != same.measurements || r->best != same.best) {
                    std::cerr << "kerncast-bench-pool-scaling: " << n << " workers ended with " << r->measurements
                              << " measurements and best " << r->best << ", the first search with " << same.measurements
                              << " and " << same.best << ": the pool changed the search\n";
                    rc = 1;
                }
                runs.push_back(std::move(*r));
            }
            if (runs.empty())
                continue;
            std::sort(runs.begin(), runs.end(), [](const Row& x, const Row& y) { return x.seconds < y.seconds; });
            Row r = runs[runs.size() / 2];
            r.runs = static_cast<int>(runs.size());
            r.seconds_min = runs.front().seconds;
            r.seconds_max = runs.back().seconds;
            rows.push_back(r);
        }
    fs::remove_all(tmp);
    if (rows.empty())
        return 1;
    for (auto& r : rows) {
        // Against the first row of the same cost model (the smallest pool).
        const Row& one = *std::find_if(rows.begin(), rows.end(), [&](const Row& o) { return o.cost == r.cost; });
        const double base = one.per_minute / one.workers;
        const double batch_base = one.batch_seconds * one.workers;
        const double with_setup = one.seconds + one.setup_seconds;
        r.efficiency = base > 0 ? r.per_minute / (base * r.workers) : 0;
        r.efficiency_low = r.seconds_max > 0 ? one.seconds / (r.seconds_max * r.workers) : 0;
        r.efficiency_high = r.seconds_min > 0 ? one.seconds / (r.seconds_min * r.workers) : 0;
        r.efficiency_with_setup = with_setup / ((r.seconds + r.setup_seconds) * r.workers);
        r.batch_efficiency = r.batch_seconds > 0 ? batch_base / (r.batch_seconds * r.workers) : 0;
    }

    if (json) {
        // One object per cost model: {"recorded": {workers: [...], ...}, "compiled": {...}, "round": K}.
        nlohmann::json j = {{"round", round}, {"static_reports", static_reports}};
        for (const auto& r : rows) {
            nlohmann::json& m = j[r.cost];
            m["workers"].push_back(r.workers);
            m["measurements_per_minute"].push_back(r.per_minute);
            m["efficiency"].push_back(r.efficiency);
            m["batch_efficiency"].push_back(r.batch_efficiency);
            m["setup_seconds"].push_back(r.setup_seconds);
            m["efficiency_with_setup"].push_back(r.efficiency_with_setup);
            m["best"].push_back(r.best);
            m["runs"].push_back(r.runs);
            m["efficiency_range"].push_back({r.efficiency_low, r.efficiency_high});
        }
        std::cout << j.dump() << "\n";
        return rc;
    }
    std::printf("pool scaling: %s on %s, %s gating (top-k %d of %d children per parent), budget %lld, seed %llu, "
                "measured in rounds of %d (every row), %s, recorded wall time x %g, launcher %s, static reports %s\n",
                problem.c_str(), device.c_str(), gating.c_str(), top_k, batch, (long long)budget,
                (unsigned long long)seed, round, overlap ? "overlapped batches" : "no overlap", wall, launcher.c_str(),
                static_reports.c_str());
    std::printf("%9s %8s %10s %13s %10s %12s %11s %14s %17s %14s %22s%s\n", "reports", "workers", "seconds",
                "measurements", "best", "meas/minute", "efficiency", "batch seconds", "batch efficiency",
                "setup seconds", "efficiency with setup", repeat > 1 ? "   runs  efficiency range" : "");
    for (const auto& r : rows) {
        std::printf("%9s %8d %10.2f %13lld %10.3f %12.1f %11.3f %14.2f %17.3f %14.2f %22.3f", r.cost.c_str(), r.workers,
                    r.seconds, (long long)r.measurements, r.best, r.per_minute, r.efficiency, r.batch_seconds,
                    r.batch_efficiency, r.setup_seconds, r.efficiency_with_setup);
        if (repeat > 1)
            std::printf(" %6d  %.3f - %.3f", r.runs, r.efficiency_low, r.efficiency_high);
        std::printf("\n");
    }
    if (repeat > 1)
        std::printf("each row: the run of median seconds of %d; efficiency range: the slowest and the fastest run "
                    "against the median run of the smallest pool\n",
                    repeat);
    std::printf("reports: recorded = static reports read from the recording; compiled = every static report compiled "
                "with NVRTC on this machine's %u CPUs, and every measured program compiled by its replay worker, as "
                "on a real GPU (the figure that predicts a real run)\n",
                std::thread::hardware_concurrency());
    std::printf("perfect scaling: efficiency 1.000 (N workers measure N times as fast as one); target >= 0.85 at 8.\n"
                "efficiency counts the whole search (the engine's serial work included); batch efficiency only the "
                "time a batch was in the pool;\nsetup (starting the workers, reading the recordings, the surrogate's "
                "base model: trained, or read from its cache) comes before the search and is counted only in "
                "efficiency with setup\n");
    if (phases)
        for (const auto& r : rows)
            std::printf("\n%s reports, %d workers: %s", r.cost.c_str(), r.workers, r.phases.c_str());
    return rc;
}
