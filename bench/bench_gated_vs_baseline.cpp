// Gated search against the measure-all baseline on the replay device, at an equal GPU-measurement budget.
// For each problem and seed both searches run from the same seed; the table reports, per problem and overall, the
// median of (measurements the gated search needed to reach the baseline's final best) / budget, and the best
// speedup each reached. The local surrogate never sees the replayed problem's recording: it starts from the other
// problems' recordings and learns from the run's own measurements only.
//
//   kerncast-bench-gated-vs-baseline [--problems a,b,c] [--seeds 20] [--first-seed 1] [--budget 30] [--jobs 2]
//                                    [--device replay:nvidia-h200] [--tau T] [--pi P] [--epsilon E]
//                                    [--initial-screen N] [--batch N] [--measure-per-parent N] [--round K]
//                                    [--top-k K] [--static-reports all|measured|auto] [--overlap] [--json FILE]
//
// --round K: the gated search measures in rounds of K (SearchConfig::round); --top-k K: it gates with top-k (K
// children measured per parent) instead of selective gating; --overlap: it overlaps its batches
// (SearchConfig::overlap, what a search on a pool of workers does; the search is the same with one worker or many).
//
// audited/run: the median count of the gated search's epsilon-audited candidates, the sample its audited calibration
// is computed on; "accuracy measured / audited": the surrogate's accuracy pooled over the seeds on every measured
// candidate (mostly chosen by the gate) and on the audited ones alone (a random share of the trusted), with their
// count.

#include "core/fast_p.h"
#include "engine/cli/cli.h"
#include "engine/device.h"
#include "engine/replay/replay_device.h"
#include "engine/search/search_runner.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace kerncast;

namespace {

struct Pair {
    std::string problem;
    uint64_t seed = 0;
    double baseline_best = 0, gated_best = 0;
    double ratio = std::numeric_limits<double>::infinity();  // inf: the gated search never reached the baseline
    int64_t gated_forecasts = 0;
    int64_t gated_audited = 0;  // the gated search's audited candidates its audited calibration is computed on
    int64_t gated_scored = 0;   // ... and all its measured candidates with a forecast
    double gated_hits = 0, gated_audited_hits = 0;  // forecasts whose most likely bin was right, of each set
    double seconds = 0;
    std::string error;
};

double median(std::vector<double> v) {
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

// The gated search's settings: the defaults, changed by --tau, --pi, --epsilon, --initial-screen, --batch,
// --measure-per-parent, --round, --top-k, --static-reports and --overlap. The baseline is a default search with
// measure-all gating and no surrogate.
SearchConfig g_gated;
GatingKind g_gated_kind = GatingKind::Selective;

SearchSummary run_one(const std::string& problem, const std::string& device, GatingKind gating, uint64_t seed,
                      int64_t budget, const std::string& path) {
    SearchConfig c = gating == GatingKind::MeasureAll ? SearchConfig{} : g_gated;
    c.problem_dir = cli::resources_dir() + "/problems/" + problem;
    c.device = device;
    c.surrogate = gating == GatingKind::MeasureAll ? "none" : "local";
    c.gating.kind = gating;
    c.budgets.measurements = budget;
    c.seed = seed;
    return make_search_runner(c, cli::resources_dir(), path, false)->runHere();
}

std::string fmt(double v, const char* f = "%.3f") {
    if (std::isinf(v))
        return "not reached";
    if (std::isnan(v))
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// KernelBench's fast_p per problem (the share of seeds whose best is correct and more than p times as fast as the
// baseline), against the reference and against PyTorch eager, as recorded in the replayed recording's header. Both
// searches' bests are in the table: a metric that looks good alone is shown beside the measure-all baseline's.
void print_fast_p(const std::vector<std::string>& problems, const std::vector<Pair>& pairs, const std::string& device,
                  nlohmann::json& out) {
    std::unique_ptr<Device> replay;
    try {
        replay = open_device(device, cli::resources_dir());
    } catch (const std::exception&) {}
    std::printf("\nfast_p over seeds (share whose best is correct and > p x the baseline), p = 1 and 1.5:\n\n");
    std::printf("| problem | gated vs reference | measure-all vs reference | gated vs PyTorch eager | measure-all vs "
                "PyTorch eager |\n|---|---|---|---|---|\n");
    for (const auto& p : problems) {
        // Eager time over the reference's, both from the recording: best x this is the speedup over eager.
        std::optional<double> eager_over_ref;
        if (replay)
            if (auto rec = replay->recording(p); rec && rec->header.pytorch_eager_us)
                for (const auto& e : rec->entries)
                    if (e.label == "reference" && e.measurement.candidate && e.measurement.candidate->median_us > 0)
                        eager_over_ref = *rec->header.pytorch_eager_us / e.measurement.candidate->median_us;
        std::vector<std::optional<double>> g_ref, b_ref, g_eager, b_eager;
        for (const auto& pr : pairs) {
            if (pr.problem != p || !pr.error.empty())
                continue;
            auto opt = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
            g_ref.push_back(opt(pr.gated_best));
            b_ref.push_back(opt(pr.baseline_best));
            if (eager_over_ref) {
                g_eager.push_back(opt(pr.gated_best * *eager_over_ref));
                b_eager.push_back(opt(pr.baseline_best * *eager_over_ref));
            }
        }
        auto cell = [](const std::vector<std::optional<double>>& v) {
            if (v.empty())
                return std::string("-");
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.2f / %.2f", fast_p(v, 1.0), fast_p(v, 1.5));
            return std::string(buf);
        };
        std::printf("| %s | %s | %s | %s | %s |\n", p.c_str(), cell(g_ref).c_str(), cell(b_ref).c_str(),
                    cell(g_eager).c_str(), cell(b_eager).c_str());
        if (out.contains(p))
            out[p]["fast_p"] = {{"gated_vs_reference", fast_p_json(g_ref)},
                                {"baseline_vs_reference", fast_p_json(b_ref)},
                                {"gated_vs_pytorch_eager", fast_p_json(g_eager)},
                                {"baseline_vs_pytorch_eager", fast_p_json(b_eager)}};
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> problems{"softmax", "rmsnorm", "gemv", "histogram", "stencil2d"};
    int seeds = 20;
    int first_seed = 1;
    int64_t budget = 30;
    int jobs = 2;
    std::string device = "replay:nvidia-h200";
    std::string json_out;
    for (int i = 1; i < argc; ++i) {
        auto next = [&](const char* name) -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (!std::strcmp(argv[i], "--problems"))
            problems = split(next("--problems"));
        else if (!std::strcmp(argv[i], "--seeds"))
            seeds = std::stoi(next("--seeds"));
        else if (!std::strcmp(argv[i], "--budget"))
            budget = std::stoll(next("--budget"));
        else if (!std::strcmp(argv[i], "--jobs"))
            jobs = std::max(1, std::stoi(next("--jobs")));
        else if (!std::strcmp(argv[i], "--device"))
            device = next("--device");
        else if (!std::strcmp(argv[i], "--tau"))
            g_gated.gating.tau = std::stod(next("--tau"));
        else if (!std::strcmp(argv[i], "--pi"))
            g_gated.gating.pi = std::stod(next("--pi"));
        else if (!std::strcmp(argv[i], "--epsilon"))
            g_gated.gating.epsilon = std::stod(next("--epsilon"));
        else if (!std::strcmp(argv[i], "--first-seed"))
            first_seed = std::stoi(next("--first-seed"));
        else if (!std::strcmp(argv[i], "--initial-screen"))
            g_gated.initial_screen = std::stoi(next("--initial-screen"));
        else if (!std::strcmp(argv[i], "--measure-per-parent"))
            g_gated.measure_per_parent = std::stoi(next("--measure-per-parent"));
        else if (!std::strcmp(argv[i], "--round"))
            g_gated.round = std::max(1, std::stoi(next("--round")));
        else if (!std::strcmp(argv[i], "--top-k")) {
            g_gated.gating.top_k = std::max(1, std::stoi(next("--top-k")));
            g_gated_kind = GatingKind::TopK;
        } else if (!std::strcmp(argv[i], "--batch"))
            g_gated.batch = std::stoi(next("--batch"));
        else if (!std::strcmp(argv[i], "--static-reports")) {
            g_gated.static_reports = next("--static-reports");
            if (g_gated.static_reports != "all" && g_gated.static_reports != "measured" &&
                g_gated.static_reports != "auto") {
                std::fprintf(stderr, "--static-reports: expected all, measured or auto, found '%s'\n",
                             g_gated.static_reports.c_str());
                return 2;
            }
        } else if (!std::strcmp(argv[i], "--overlap"))
            g_gated.overlap = true;
        else if (!std::strcmp(argv[i], "--json"))
            json_out = next("--json");
        else {
            std::fprintf(stderr,
                         "usage: kerncast-bench-gated-vs-baseline [--problems a,b] [--seeds N] [--first-seed K] "
                         "[--budget N] [--jobs N] [--device D] [--tau T] [--pi P] [--epsilon E] "
                         "[--initial-screen N] [--batch N] [--measure-per-parent N] [--round K] [--top-k K] "
                         "[--static-reports all|measured|auto] [--overlap] [--json FILE]\n");
            return 2;
        }
    }
    const fs::path tmp = fs::temp_directory_path() / ("kerncast-bench-gated-" + std::to_string(getpid()));
    fs::create_directories(tmp);

    std::vector<Pair> pairs;
    for (const auto& p : problems)
        for (int s = first_seed; s < first_seed + seeds; ++s) {
            Pair pr;
            pr.problem = p;
            pr.seed = static_cast<uint64_t>(s);
            pairs.push_back(pr);
        }
    std::atomic<size_t> next{0};
    std::mutex print;
    size_t done = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto worker = [&] {
        for (size_t i = next++; i < pairs.size(); i = next++) {
            Pair& pr = pairs[i];
            const auto start = std::chrono::steady_clock::now();
            const std::string stem = (tmp / (pr.problem + "-" + std::to_string(pr.seed))).string();
            const SearchSummary base =
                run_one(pr.problem, device, GatingKind::MeasureAll, pr.seed, budget, stem + "-baseline.sqlite");
            const SearchSummary gated =
                run_one(pr.problem, device, g_gated_kind, pr.seed, budget, stem + "-gated.sqlite");
            if (base.state != RunState::Finished || gated.state != RunState::Finished) {
                pr.error = base.state != RunState::Finished ? base.reason : gated.reason;
            } else {
                pr.baseline_best = base.best_speedup;
                pr.gated_best = gated.best_speedup;
                pr.gated_forecasts = gated.progress.forecasts;
                pr.gated_audited = gated.calibration_audited.value("n", int64_t{0});
                pr.gated_scored = gated.calibration.value("n", int64_t{0});
                const auto accuracy = [](const nlohmann::json& c) {
                    return c.contains("metrics") ? c["metrics"].value("accuracy", 0.0) : 0.0;
                };
                pr.gated_hits = accuracy(gated.calibration) * static_cast<double>(pr.gated_scored);
                pr.gated_audited_hits = accuracy(gated.calibration_audited) * static_cast<double>(pr.gated_audited);
                for (const auto& t : gated.trajectory)
                    if (t.best_speedup >= base.best_speedup * (1 - 1e-12)) {
                        pr.ratio = static_cast<double>(t.measurements) / static_cast<double>(budget);
                        break;
                    }
            }
            pr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::lock_guard<std::mutex> lock(print);
            ++done;
            std::fprintf(stderr, "\r%zu/%zu search pairs", done, pairs.size());
        }
    };
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j)
        threads.emplace_back(worker);
    for (auto& t : threads)
        t.join();
    std::fprintf(stderr, "\n");
    std::error_code ec;
    fs::remove_all(tmp, ec);

    char gating_text[96];
    if (g_gated_kind == GatingKind::TopK)
        std::snprintf(gating_text, sizeof gating_text, "top-k %d", g_gated.gating.top_k);
    else
        std::snprintf(gating_text, sizeof gating_text, "selective tau=%.2f pi=%.2f eps=%.2f", g_gated.gating.tau,
                      g_gated.gating.pi, g_gated.gating.epsilon);
    std::printf("Gated (%s, rounds of %d%s, local surrogate) vs measure-all on %s: %zu problems x %d seeds (%d to "
                "%d), budget %lld measurements each.\n",
                gating_text, g_gated.round, g_gated.overlap ? ", overlapped batches" : "", device.c_str(),
                problems.size(), seeds, first_seed, first_seed + seeds - 1, static_cast<long long>(budget));
    std::printf("The replayed problem's recording was held out: the surrogate learned only from the other problems' "
                "recordings and from the run's own measurements.\n");
    std::printf("ratio = measurements the gated search needed to reach the baseline's final best / budget "
                "(a pair that never reached it counts as not reached, above every ratio).\n\n");
    std::printf("| problem | pairs | median ratio | reached | median gated best | median baseline best | gated >= "
                "baseline | forecasts/run | audited/run | accuracy measured / audited | s/pair |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<double> all_ratios;
    bool every_problem_ok = true;
    nlohmann::json out = nlohmann::json::object();
    for (const auto& p : problems) {
        std::vector<double> ratios, gb, bb, fc, au, secs;
        int reached = 0, not_worse = 0, n = 0;
        double scored = 0, hits = 0, audited = 0, audited_hits = 0;  // pooled over the seeds
        for (const auto& pr : pairs) {
            if (pr.problem != p)
                continue;
            if (!pr.error.empty()) {
                std::printf("error: %s seed %llu: %s\n", p.c_str(), (unsigned long long)pr.seed, pr.error.c_str());
                continue;
            }
            ++n;
            ratios.push_back(pr.ratio);
            all_ratios.push_back(pr.ratio);
            gb.push_back(pr.gated_best);
            bb.push_back(pr.baseline_best);
            fc.push_back(static_cast<double>(pr.gated_forecasts));
            au.push_back(static_cast<double>(pr.gated_audited));
            scored += static_cast<double>(pr.gated_scored);
            hits += pr.gated_hits;
            audited += static_cast<double>(pr.gated_audited);
            audited_hits += pr.gated_audited_hits;
            secs.push_back(pr.seconds);
            reached += std::isfinite(pr.ratio);
            not_worse += pr.gated_best >= pr.baseline_best * (1 - 1e-12);
        }
        const double mg = median(gb), mb = median(bb);
        every_problem_ok = every_problem_ok && mg >= mb;
        // Accuracy pooled over the seeds' forecasts: on every measured candidate (mostly chosen by the gate for an
        // unsure or promising forecast) and on the audited ones alone (a random share of the trusted).
        const double acc_all = scored > 0 ? hits / scored : std::nan(""),
                     acc_aud = audited > 0 ? audited_hits / audited : std::nan("");
        std::printf("| %s | %d | %s | %d/%d | %s | %s | %d/%d | %.0f | %.1f | %s / %s (%.0f) | %.1f |\n", p.c_str(), n,
                    fmt(median(ratios)).c_str(), reached, n, fmt(mg).c_str(), fmt(mb).c_str(), not_worse, n, median(fc),
                    median(au), fmt(acc_all, "%.2f").c_str(), fmt(acc_aud, "%.2f").c_str(), audited, median(secs));
        out[p] = {{"median_ratio", std::isfinite(median(ratios)) ? nlohmann::json(median(ratios)) : nlohmann::json()},
                  {"reached", reached},
                  {"pairs", n},
                  {"median_gated_best", mg},
                  {"median_baseline_best", mb},
                  {"median_audited", median(au)},
                  {"audited", audited},
                  {"accuracy_measured", std::isfinite(acc_all) ? nlohmann::json(acc_all) : nlohmann::json()},
                  {"accuracy_audited", std::isfinite(acc_aud) ? nlohmann::json(acc_aud) : nlohmann::json()}};
    }
    print_fast_p(problems, pairs, device, out);
    const double overall = median(all_ratios);
    std::printf("\noverall median ratio: %s (target <= 0.5); median gated best >= median baseline best on every "
                "problem: %s; %.0f s in all\n",
                fmt(overall).c_str(), every_problem_ok ? "yes" : "no",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!json_out.empty()) {
        out["overall_median_ratio"] = std::isfinite(overall) ? nlohmann::json(overall) : nlohmann::json();
        std::ofstream(json_out) << out.dump(2) << "\n";
    }
    return 0;
}
