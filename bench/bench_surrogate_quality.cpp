// Forecast quality of the local surrogate (local-xgb) on recordings, with no leakage of the held-out programs.
//   kerncast-bench-surrogate-quality [--recordings DIR] [--problems DIR] [--repeats K] [--seed S]
//                                    [--train-share 0.3] [--threads N] [--timing-examples N] [--json]
//
// Split, per problem P and repeat r: P's recorded programs (status ok) are shuffled with a generator seeded by
// (seed, P, r); the first train-share of them (rounded, at least one) are learned together with every other
// problem's recording, the rest of P is forecast. The forecaster's own seed is seed + r. Metrics come from
// core/metrics.h: top10_recovery per problem is the mean over its repeats (each repeat's test set is ranked on its
// own); ece and kendall_tau_b per problem pool its repeats; the overall line is the mean top10_recovery over
// problems and ece / kendall_tau_b over every forecast. Then the time to retrain on every recorded example, and on
// timing-examples examples (the recordings' examples repeated, with a small deterministic jitter on the speedup).

#include "core/error.h"
#include "core/metrics.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/local_forecaster.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace kerncast;

namespace {

struct ProblemData {
    std::string name;
    std::vector<LabelledExample> examples;
};

uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    return x ^ (x >> 29);
}

uint64_t name_key(const std::string& s) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ULL;
    return h;
}

// Fisher-Yates with a plain modulo draw: the same order for a seed with every standard library.
template<typename T>
void seeded_shuffle(std::vector<T>& v, uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[rng() % i]);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::string recordings = std::string(KERNCAST_SOURCE_DIR) + "/resources/recordings/nvidia-h200";
    std::string problems_root = std::string(KERNCAST_SOURCE_DIR) + "/resources/problems";
    int repeats = 5;
    uint64_t seed = 1;
    double share = 0.3;
    int threads = 1;
    size_t timing_examples = 2000;
    bool json = false;
    LocalForecasterOptions options;

    CLI::App app{"Forecast quality of the local surrogate on recordings (train on a share of each problem plus "
                 "every other problem, forecast the rest)"};
    app.add_option("--recordings", recordings, "recording folder (<problem>.jsonl files)")->capture_default_str();
    app.add_option("--problems", problems_root, "folder of problem folders")->capture_default_str();
    app.add_option("--repeats", repeats, "random splits per problem")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--seed", seed, "seed of the splits and of the forecaster")->capture_default_str();
    app.add_option("--train-share", share, "share of a problem's programs learned")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 0.95));
    app.add_option("--threads", threads, "members trained at once")->capture_default_str()->check(CLI::Range(1, 64));
    app.add_option("--timing-examples", timing_examples, "examples for the retrain timing (0: skip)")
        ->capture_default_str();
    app.add_option("--members", options.members, "boosters in the ensemble")->capture_default_str();
    app.add_option("--rounds", options.rounds, "boosting rounds")->capture_default_str();
    app.add_option("--max-depth", options.max_depth, "tree depth")->capture_default_str();
    app.add_option("--eta", options.eta, "learning rate")->capture_default_str();
    app.add_option("--subsample", options.subsample, "row share per tree")->capture_default_str();
    app.add_option("--colsample", options.colsample, "column share per tree")->capture_default_str();
    app.add_option("--min-child-weight", options.min_child_weight, "least hessian in a leaf")->capture_default_str();
    app.add_flag("--json", json, "print the result as JSON as well");
    CLI11_PARSE(app, argc, argv);
    options.threads = threads;

    std::vector<ProblemData> data;
    try {
        std::vector<std::string> skipped;
        for (const auto& recorded : recorded_problems(recordings, problems_root, {}, &skipped)) {
            if (recorded.examples.unknown_source > 0)
                std::fprintf(stderr, "%s: %d recorded programs match no program of %s (left out)\n",
                             recorded.recording_file.c_str(), recorded.examples.unknown_source,
                             recorded.problem_dir.c_str());
            ProblemData d;
            d.name = recorded.problem;
            for (const auto& r : recorded.examples.examples)
                d.examples.push_back(r.example);
            if (d.examples.size() >= 2)
                data.push_back(std::move(d));
        }
        for (const auto& file : skipped)
            std::fprintf(stderr, "skipping %s: no problem folder of that name under %s\n", file.c_str(),
                         problems_root.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kerncast-bench-surrogate-quality: %s\n", e.what());
        return 1;
    }
    if (data.size() < 2) {
        std::fprintf(stderr, "kerncast-bench-surrogate-quality: need recordings of at least 2 problems in %s\n",
                     recordings.c_str());
        return 1;
    }

    const BinScheme scheme = BinScheme::gfV2();
    std::vector<ScoredForecast> all;
    std::map<std::string, std::vector<ScoredForecast>> per_problem;
    std::map<std::string, std::pair<size_t, size_t>> sizes;
    const auto bench_started = std::chrono::steady_clock::now();
    double train_seconds = 0;
    int trainings = 0;
    for (size_t p = 0; p < data.size(); ++p) {
        for (int r = 0; r < repeats; ++r) {
            std::vector<size_t> order(data[p].examples.size());
            for (size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            seeded_shuffle(order, mix(mix(seed, name_key(data[p].name)), static_cast<uint64_t>(r)));
            const size_t n_train =
                std::clamp<size_t>(static_cast<size_t>(std::lround(share * order.size())), 1, order.size() - 1);
            LocalForecasterOptions o = options;
            o.seed = seed + static_cast<uint64_t>(r);
            LocalForecaster forecaster(o);
            for (size_t q = 0; q < data.size(); ++q)
                if (q != p)
                    forecaster.learn(data[q].examples);
            std::vector<LabelledExample> train, test;
            for (size_t i = 0; i < order.size(); ++i)
                (i < n_train ? train : test).push_back(data[p].examples[order[i]]);
            forecaster.learn(train);
            std::vector<ForecastQuery> queries;
            for (const auto& e : test)
                queries.push_back(e.query);
            const auto results = forecaster.forecast(queries);
            train_seconds += forecaster.lastRetrainSeconds();
            ++trainings;
            for (size_t i = 0; i < results.size(); ++i) {
                if (!results[i].forecast) {
                    std::fprintf(stderr, "kerncast-bench-surrogate-quality: %s: %s\n", data[p].name.c_str(),
                                 results[i].error.c_str());
                    return 1;
                }
                ScoredForecast s;
                s.probabilities = results[i].forecast->probabilities;
                s.true_speedup = test[i].speedup;
                s.pack = data[p].name + "#" + std::to_string(r);
                per_problem[data[p].name].push_back(s);
                all.push_back(s);
            }
            sizes[data[p].name] = {n_train, test.size()};
        }
    }

    std::printf("local-xgb forecast quality on %s\n", recordings.c_str());
    std::printf("split: per problem, %.0f%% of its ok programs (seeded shuffle) + every other problem's recording "
                "are learned, the other %.0f%% forecast; %d repeats; seeds %llu..%llu; %d members x %d rounds, "
                "depth %d, eta %.3g\n\n",
                share * 100, (1 - share) * 100, repeats, static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed + repeats - 1), options.members, options.rounds, options.max_depth,
                options.eta);
    std::printf("%-16s %7s %6s %9s %7s %9s %8s %7s\n", "problem", "train", "test", "top10_rec", "ece", "kendall",
                "accuracy", "nll");
    nlohmann::json rows = nlohmann::json::array();
    double top10_sum = 0;
    try {
        for (const auto& [name, forecasts] : per_problem) {
            const ForecastMetrics m = compute_metrics(forecasts, scheme);
            top10_sum += m.top10_recovery;
            std::printf("%-16s %7zu %6zu %9.3f %7.3f %9.3f %8.3f %7.3f\n", name.c_str(), sizes[name].first,
                        sizes[name].second, m.top10_recovery, m.ece, m.kendall_tau_b, m.accuracy, m.nll);
            rows.push_back({{"problem", name},
                            {"train", sizes[name].first},
                            {"test", sizes[name].second},
                            {"top10_recovery", m.top10_recovery},
                            {"ece", m.ece},
                            {"kendall_tau_b", m.kendall_tau_b},
                            {"accuracy", m.accuracy},
                            {"nll", m.nll}});
        }
        const ForecastMetrics overall = compute_metrics(all, scheme);
        const double mean_top10 = top10_sum / static_cast<double>(per_problem.size());
        std::printf("%-16s %7s %6lld %9.3f %7.3f %9.3f %8.3f %7.3f\n", "overall", "", static_cast<long long>(overall.n),
                    mean_top10, overall.ece, overall.kendall_tau_b, overall.accuracy, overall.nll);
        std::printf("\nreliability over every forecast (confidence = largest bin probability):\n");
        std::printf("  %-13s %6s %15s %9s\n", "confidence", "count", "mean_confidence", "accuracy");
        for (const ReliabilityBucket& b : overall.reliability)
            if (b.count > 0)
                std::printf("  (%.1f, %.1f]    %6lld %15.3f %9.3f\n", b.lower, b.upper, static_cast<long long>(b.count),
                            b.mean_confidence, b.accuracy);
        std::printf("\ntargets: mean top10_recovery >= 0.95 (%s), ece <= 0.08 (%s)\n",
                    mean_top10 >= 0.95 ? "met" : "NOT met", overall.ece <= 0.08 ? "met" : "NOT met");
        std::printf("mean retrain time: %.3f s over %d trainings (%.1f s in all)\n", train_seconds / trainings,
                    trainings, seconds_since(bench_started));

        // Retrain cost as a search would pay it.
        std::vector<LabelledExample> every;
        for (const auto& d : data)
            every.insert(every.end(), d.examples.begin(), d.examples.end());
        nlohmann::json timing = nlohmann::json::array();
        std::vector<size_t> counts = {every.size()};
        if (timing_examples > 0)
            counts.push_back(timing_examples);
        for (size_t count : counts) {
            std::vector<LabelledExample> set;
            for (size_t i = 0; i < count; ++i) {
                LabelledExample e = every[i % every.size()];
                e.speedup *= std::exp(0.02 * static_cast<double>(i / every.size()));
                set.push_back(std::move(e));
            }
            LocalForecasterOptions o = options;
            o.seed = seed;
            LocalForecaster forecaster(o);
            forecaster.learn(set);
            forecaster.retrain();
            std::printf("retrain on %zu examples: %.3f s (%d members, %d thread(s))\n", count,
                        forecaster.lastRetrainSeconds(), options.members, threads);
            timing.push_back({{"examples", count}, {"seconds", forecaster.lastRetrainSeconds()}});
        }
        if (json) {
            nlohmann::json out = {{"recordings", recordings},
                                  {"repeats", repeats},
                                  {"seed", seed},
                                  {"train_share", share},
                                  {"problems", rows},
                                  {"overall", metrics_json(overall)},
                                  {"mean_top10_recovery", mean_top10},
                                  {"retrain", timing}};
            std::printf("%s\n", out.dump(2).c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kerncast-bench-surrogate-quality: %s\n", e.what());
        return 1;
    }
    return 0;
}
