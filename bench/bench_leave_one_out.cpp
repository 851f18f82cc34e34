// Leave one problem out: how well the local surrogate forecasts the parent -> child pairs of a problem it never
// learned, against two baselines that know nothing about the programs.
//
//   kerncast-bench-leave-one-out --device replay:<slug> [--json] [--problems a,b] [--min-pairs 200] [--budget 60]
//                                [--max-seeds 16] [--seed 1] [--members N] [--rounds N] [--no-siblings] [--no-timing]
//
// For each problem P recorded for the device: measure-all searches of P on the replay device (parametric mutator,
// no surrogate; seeds 1, 2, ... until at least --min-pairs pairs) give the pairs (measured parent, measured child)
// and their true S = t_parent / t_child. A local surrogate learns the OTHER problems' recordings only (P's is held
// out: nothing of P is learned) and forecasts every child against its parent. Reported per problem and over all
// pairs: kendall_tau_b of the expected log S against the true log S, brier, crps and their skill against
// climatology (1 - score / climatology's), ece, accuracy, majority_accuracy and top10_recovery; and the same for two
// baselines: "always S = 1" (all mass on the bin holding 1.0) and climatology (the problem's own true-bin
// frequencies, known only after the fact). Then the time of one retrain on every recording of the device.
// Beside it, "in search": the same pairs forecast as a search of P forecasts them, the frozen base (the same other
// problems' recordings) plus the search's own earlier measurements through the correction, each batch forecast
// before it is learned. The targets are judged on the first figures; the second say how far a search's own
// measurements take a new problem. Then "recalibrated": those forecasts' bins as a search shows and scores them, each
// through the recalibration the search chooses on its forecasts measured before it (choose_recalibration with the
// search's half-life, SearchConfig::recalibrate; the ranking is the same, so only Brier and CRPS skill are given).
// --json prints {"device", "problems": {P: {metric: value, ..., "baselines": {...}, "in_search": {...}}},
// "overall": {...}}, "in_search" holding "recalibrated": {...}.

#include "core/error.h"
#include "core/metrics.h"
#include "core/recalibration.h"
#include "core/run_store.h"
#include "engine/cli/cli.h"
#include "engine/search/search_runner.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/local_forecaster.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace kerncast;

namespace {

struct ParentChild {
    ForecastAnchor parent;  // the measured parent: the child's anchor
    Candidate child;
    std::vector<StaticReport> child_report;
    double child_speedup = 0;
};

// One measured candidate of a search, in the order the search measured them.
struct Step {
    Candidate candidate;
    std::vector<StaticReport> report;
    Measurement measurement;
    int64_t order = 0;  // the measurement's row id
    bool ok = false;    // measured correct with a finite speedup
};

struct ProblemPairs {
    std::vector<ParentChild> pairs;
    std::vector<std::vector<Step>> steps;  // per search, in measurement order
    std::vector<StaticReport> reference_report;
    std::optional<double> reference_us;
    std::optional<DeviceFingerprint> device;
    int searches = 0;
};

// Measure-all searches of one problem until enough parent -> child pairs are measured.
ProblemPairs collect_pairs(const std::string& problem_dir, const std::string& device, size_t min_pairs, int64_t budget,
                           int max_seeds, const fs::path& scratch) {
    ProblemPairs out;
    for (int seed = 1; seed <= max_seeds && out.pairs.size() < min_pairs; ++seed) {
        SearchConfig c;
        c.problem_dir = problem_dir;
        c.device = device;
        c.surrogate = "none";
        c.gating.kind = GatingKind::MeasureAll;
        c.budgets.measurements = budget;
        c.seed = static_cast<uint64_t>(seed);
        const fs::path run =
            scratch / ("run-" + fs::path(problem_dir).filename().string() + "-" + std::to_string(seed) + ".sqlite");
        fs::remove(run);
        const SearchSummary summary = make_search_runner(c, cli::resources_dir(), run.string(), false)->runHere();
        if (summary.state != RunState::Finished)
            throw Error("the measure-all search of " + problem_dir + " (seed " + std::to_string(seed) +
                        ") failed: " + summary.reason);
        ++out.searches;
        {
            RunStore store = RunStore::open(run.string());
            const int64_t run_id = summary.run_id;
            const auto measurements = store.measurementsOfRun(run_id);
            const auto reports = store.staticReportsOfRun(run_id);
            std::map<int64_t, Candidate> by_id;
            std::map<int64_t, Measurement> measured;
            std::map<int64_t, int64_t> order;
            for (Candidate& cand : store.candidates(run_id)) {
                if (const auto it = measurements.find(cand.id); it != measurements.end() && !it->second.empty()) {
                    measured[cand.id] = it->second.back().measurement;
                    order[cand.id] = it->second.back().id;
                }
                by_id[cand.id] = cand;
            }
            auto report_of = [&](int64_t id) {
                const auto it = reports.find(id);
                return it == reports.end() ? std::vector<StaticReport>{} : it->second;
            };
            auto ok = [&](int64_t id) {
                const auto it = measured.find(id);
                return it != measured.end() && it->second.status == Status::Ok && it->second.speedup > 0 &&
                       std::isfinite(it->second.speedup);
            };
            for (const auto& [id, cand] : by_id) {
                if (cand.mutator == Mutator::Reference && ok(id) && measured[id].candidate && !out.reference_us) {
                    out.reference_us = measured[id].candidate->median_us;
                    out.reference_report = report_of(id);
                    out.device = measured[id].device;
                }
                if (!cand.parent_id || !ok(id) || !ok(cand.parent_id))
                    continue;
                ParentChild pc;
                pc.parent =
                    measured_anchor(by_id.at(cand.parent_id), report_of(cand.parent_id), measured[cand.parent_id]);
                pc.child = cand;
                pc.child_report = report_of(id);
                pc.child_speedup = measured[id].speedup;
                out.pairs.push_back(std::move(pc));
            }
            std::vector<Step> steps;
            for (const auto& [id, m] : measured)
                if (m.device_kind != "compiler")
                    steps.push_back({by_id.at(id), report_of(id), m, order.at(id), ok(id)});
            std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.order < b.order; });
            out.steps.push_back(std::move(steps));
        }
        fs::remove(run);
    }
    return out;
}

// A forecast set's metrics with its climatology: the same set's true-bin frequencies forecast for every member.
struct Scored {
    ForecastMetrics m;   // with the climatology and skill scores of core/metrics.h
    double kendall = 0;  // expected log S against true log S
};

std::array<double, kBinCount> climatology_of(const std::vector<ScoredForecast>& set, const BinScheme& scheme) {
    std::array<double, kBinCount> p{};
    for (const auto& s : set)
        p[static_cast<size_t>(scheme.binOf(s.true_speedup) - 1)] += 1.0;
    for (auto& v : p)
        v /= static_cast<double>(set.size());
    return p;
}

Scored score(const std::vector<ScoredForecast>& set, const std::vector<double>& expected_log, const BinScheme& scheme) {
    Scored s;
    s.m = compute_metrics(set, scheme);
    std::vector<double> truth;
    for (const auto& f : set)
        truth.push_back(std::log(f.true_speedup));
    s.kendall = kendall_tau_b(expected_log, truth);
    return s;
}

nlohmann::json metrics_object(const Scored& s) {
    return {{"kendall_tau_b", s.kendall},
            {"brier", s.m.brier},
            {"brier_climatology", s.m.brier_climatology},
            {"brier_skill", s.m.brier_skill},
            {"crps", s.m.crps},
            {"crps_climatology", s.m.crps_climatology},
            {"crps_skill", s.m.crps_skill},
            {"ece", s.m.ece},
            {"accuracy", s.m.accuracy},
            {"majority_accuracy", s.m.majority_accuracy},
            {"top10_recovery", s.m.top10_recovery}};
}

// The scores that depend on the bins alone (recalibration keeps the ranking).
nlohmann::json skill_object(const Scored& s) {
    return {{"brier", s.m.brier}, {"brier_skill", s.m.brier_skill}, {"crps", s.m.crps}, {"crps_skill", s.m.crps_skill},
            {"ece", s.m.ece},     {"accuracy", s.m.accuracy}};
}

// The two baselines on the same pairs: every forecast the bin holding 1.0, or the set's own bin frequencies.
std::pair<Scored, Scored> baselines(const std::vector<ScoredForecast>& set,
                                    const std::map<std::string, std::array<double, kBinCount>>& climatology,
                                    const BinScheme& scheme) {
    std::vector<ScoredForecast> one = set, clim = set;
    std::vector<double> zero(set.size(), 0.0), clim_log(set.size(), 0.0);
    const int bin_of_one = scheme.binOf(1.0);
    for (size_t i = 0; i < set.size(); ++i) {
        one[i].probabilities.fill(0.0);
        one[i].probabilities[static_cast<size_t>(bin_of_one - 1)] = 1.0;
        clim[i].probabilities = climatology.at(set[i].pack);
        Forecast f = Forecast::fromRaw(clim[i].probabilities);
        clim_log[i] = f.expectedLogSpeedup(scheme);
    }
    return {score(one, zero, scheme), score(clim, clim_log, scheme)};
}

// The same pairs as a search forecasts them: the base trained on the other problems' recordings and frozen (as a
// search freezes it), then the search's own measurements learned batch by batch through the correction, each child
// forecast before its batch (the children of one parent, measured together) is learned. Nothing of the held-out
// recording is learned beyond the measurements the search itself had made before the forecast.
struct InSearch {
    std::vector<ScoredForecast> set;
    std::vector<double> expected;
    std::vector<ScoredForecast> recalibrated;  // set's bins as the search's recalibration shows them
};
InSearch in_search_forecasts(const ProblemPairs& pp, const Problem& problem, const DeviceCeilings& ceilings,
                             const std::vector<LabelledExample>& others, const LocalForecasterOptions& options,
                             const std::string& cache_dir, bool verbose) {
    InSearch out;
    for (const std::vector<Step>& steps : pp.steps) {
        LocalForecaster f(options);
        f.learn(others);
        f.freezeBase(cache_dir);
        std::vector<RecalibrationOutcome> outcomes;  // this search's forecasts measured so far, in order
        std::map<int64_t, const Step*> done;         // measured correct so far, by candidate id
        auto anchor_of = [&](const Step& st) -> const Step* {
            const auto it = done.find(st.candidate.parent_id);
            return it == done.end() || it->second->candidate.mutator == Mutator::Reference ? nullptr : it->second;
        };
        auto query_of = [&](const Step& st) {
            QueryContext ctx;
            ctx.reference_static_report = pp.reference_report;
            ctx.reference_time_us = pp.reference_us;
            ctx.device = pp.device;
            ctx.ceilings = ceilings;
            if (const Step* a = anchor_of(st))
                ctx.anchor = measured_anchor(a->candidate, a->report, a->measurement);
            return build_forecast_query(problem, st.candidate.source, st.candidate.tunables, st.report, ctx);
        };
        for (size_t i = 0; i < steps.size();) {
            size_t j = i;
            while (j < steps.size() && steps[j].candidate.parent_id == steps[i].candidate.parent_id)
                ++j;
            // The batch's measured programs, each as a query against its anchor: forecast (those with a measured
            // parent), then learned.
            std::vector<LabelledExample> learned;
            std::vector<ForecastQuery> queries;
            std::vector<size_t> asked;
            for (size_t k = i; k < j; ++k) {
                if (!steps[k].ok)
                    continue;
                learned.push_back({query_of(steps[k]), steps[k].measurement.speedup});
                if (anchor_of(steps[k])) {
                    queries.push_back(learned.back().query);
                    asked.push_back(k);
                }
            }
            const auto results = f.forecast(queries);
            const std::optional<BinRecalibration> recalibration =
                choose_recalibration(outcomes, SearchConfig::kRecalibrationHalfLife).fit;
            for (size_t r = 0; r < results.size(); ++r) {
                if (!results[r].forecast)
                    throw Error(problem.name + ": a forecast in the search failed: " + results[r].error);
                const Forecast& fc = *results[r].forecast;
                const Step& child = steps[asked[r]];
                ScoredForecast sf;
                sf.probabilities = fc.probabilities;
                sf.true_speedup = child.measurement.speedup / anchor_of(child)->measurement.speedup;
                sf.pack = problem.name;
                out.set.push_back(sf);
                out.expected.push_back(fc.log_mean ? *fc.log_mean : fc.expectedLogSpeedup(options.scheme));
                outcomes.push_back({fc.probabilities, options.scheme.binOf(sf.true_speedup)});  // for later batches
                if (recalibration)
                    sf.probabilities = Forecast::fromRaw(recalibration->apply(fc.probabilities)).probabilities;
                out.recalibrated.push_back(sf);
                if (verbose)
                    std::fprintf(stderr, "in search\t%s\t%s -> %s\tmu %.3f sigma %.3f true %.3f bin %d/%d\n",
                                 problem.name.c_str(), anchor_of(child)->candidate.label.c_str(),
                                 child.candidate.label.c_str(), fc.log_mean.value_or(NAN), fc.log_sigma.value_or(NAN),
                                 std::log(sf.true_speedup), fc.predicted_bin, options.scheme.binOf(sf.true_speedup));
            }
            for (size_t k = i; k < j; ++k)
                if (steps[k].ok)
                    done[steps[k].candidate.id] = &steps[k];
            f.learn(learned);
            i = j;
        }
    }
    return out;
}

std::string f3(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    std::string device = "replay:nvidia-h200";
    std::vector<std::string> wanted;
    size_t min_pairs = 200;
    int64_t budget = 60;
    int max_seeds = 16;
    bool json = false;
    bool timing = true;
    bool verbose = false;
    LocalForecasterOptions options = search_forecaster_options(1);

    CLI::App app{"Leave one problem out: the local surrogate learns every other problem's recording and forecasts "
                 "the parent -> child pairs of measure-all searches of the held-out one"};
    app.add_option("--device", device, "replay:<slug> (its recordings are the problems and the training data)")
        ->capture_default_str();
    app.add_option("--problems", wanted, "comma-separated problems (default: every recorded one)")->delimiter(',');
    app.add_option("--min-pairs", min_pairs, "parent -> child pairs per problem (searches are added until reached)")
        ->capture_default_str();
    app.add_option("--budget", budget, "measurements per measure-all search")->capture_default_str();
    app.add_option("--max-seeds", max_seeds, "most searches per problem")->capture_default_str();
    app.add_option("--seed", options.seed, "the forecaster's seed")->capture_default_str();
    app.add_option("--members", options.members, "boosters in the ensemble")->capture_default_str();
    app.add_option("--rounds", options.rounds, "boosting rounds")->capture_default_str();
    app.add_option("--max-depth", options.max_depth, "tree depth")->capture_default_str();
    app.add_option("--eta", options.eta, "learning rate")->capture_default_str();
    app.add_flag("!--no-siblings", options.siblings,
                 "forecast without sibling packs (other problems of a family measured at the same launch shapes)");
    app.add_flag("--json", json, "print one JSON object instead of the table");
    app.add_flag("!--no-timing", timing, "skip the retrain timing with every recording");
    app.add_flag("--verbose", verbose, "every forecast on stderr (mu, sigma, true log S, bins)");
    CLI11_PARSE(app, argc, argv);

    if (device.rfind("replay:", 0) != 0) {
        std::fprintf(stderr, "kerncast-bench-leave-one-out: --device must be replay:<slug>, found '%s'\n",
                     device.c_str());
        return 2;
    }
    const std::string resources = cli::resources_dir();
    const std::string recordings = resources + "/recordings/" + device.substr(7);
    const std::string problems_root = resources + "/problems";
    const BinScheme scheme = BinScheme::gfV2();
    const fs::path scratch = fs::temp_directory_path() / ("kerncast-loo-" + std::to_string(::getpid()));
    fs::create_directories(scratch);

    nlohmann::json result = {{"device", device}, {"problems", nlohmann::json::object()}};
    std::vector<ScoredForecast> all, all_in_search, all_recalibrated;
    std::vector<double> all_expected, all_in_search_expected;
    int in_search_skill_both = 0, recalibrated_skill_both = 0;
    std::map<std::string, std::array<double, kBinCount>> climatology;
    int skill_both = 0, problems_done = 0;
    try {
        std::vector<RecordedProblem> recorded = recorded_problems(recordings, problems_root);
        if (!json)
            std::printf("Leave one problem out on %s: the local surrogate learns the other problems' recordings only "
                        "and forecasts each child of a measure-all search against its measured parent.\n\n",
                        device.c_str());
        if (!json)
            std::printf("| problem | pairs | searches | kendall_tau_b | brier_skill | crps_skill | ece | accuracy | "
                        "majority | top10 | S=1: brier_skill | S=1: crps_skill | S=1: top10 | clim: top10 | "
                        "retrain s | in search: kendall_tau_b | in search: brier_skill | in search: crps_skill "
                        "| recalibrated: brier_skill | recalibrated: crps_skill "
                        "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (const RecordedProblem& held_out : recorded) {
            if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), held_out.problem) == wanted.end())
                continue;
            const ProblemPairs pp = collect_pairs(held_out.problem_dir, device, min_pairs, budget, max_seeds, scratch);
            if (pp.pairs.empty()) {
                std::fprintf(stderr, "%s: no parent -> child pair measured (no family?); skipped\n",
                             held_out.problem.c_str());
                continue;
            }
            // Every other problem's recording, and nothing of this one.
            LocalForecaster forecaster(options);
            std::vector<LabelledExample> others;
            for (const RecordedProblem& other : recorded)
                if (other.problem != held_out.problem)
                    for (const auto& r : other.examples.examples)
                        others.push_back(r.example);
            forecaster.learn(others);
            // Trained here and cached for the in-search forecasters below (a frozen base forecasts exactly as the
            // trained model does), so each held-out problem is trained on once.
            const std::string cache_dir = (scratch / "forecaster-cache").string();
            forecaster.freezeBase(cache_dir);
            if (forecaster.packPrograms().count(held_out.problem))
                throw Error("leakage: the forecaster learned programs of the held-out problem " + held_out.problem);

            const Problem problem = Problem::load(held_out.problem_dir);
            const DeviceCeilings held_out_ceilings = Recording::load(held_out.recording_file).header.ceilings;
            std::vector<ForecastQuery> queries;
            for (const ParentChild& pc : pp.pairs) {
                QueryContext ctx;
                ctx.reference_static_report = pp.reference_report;
                ctx.reference_time_us = pp.reference_us;
                ctx.device = pp.device;
                ctx.ceilings = held_out_ceilings;
                ctx.anchor = pc.parent;
                queries.push_back(
                    build_forecast_query(problem, pc.child.source, pc.child.tunables, pc.child_report, ctx));
            }
            const auto results = forecaster.forecast(queries);
            std::vector<ScoredForecast> set;
            std::vector<double> expected;
            for (size_t i = 0; i < results.size(); ++i) {
                if (!results[i].forecast)
                    throw Error(held_out.problem + ": a forecast failed: " + results[i].error);
                const Forecast& f = *results[i].forecast;
                ScoredForecast s;
                s.probabilities = f.probabilities;
                s.true_speedup = pp.pairs[i].child_speedup / pp.pairs[i].parent.speedup;
                s.pack = held_out.problem;
                set.push_back(s);
                expected.push_back(f.log_mean ? *f.log_mean : f.expectedLogSpeedup(scheme));
                if (verbose)
                    std::fprintf(stderr, "%s\t%s -> %s\tmu %.3f sigma %.3f true %.3f bin %d/%d\t%s\n",
                                 held_out.problem.c_str(), pp.pairs[i].parent.label.c_str(),
                                 pp.pairs[i].child.label.c_str(), f.log_mean.value_or(NAN), f.log_sigma.value_or(NAN),
                                 std::log(s.true_speedup), f.predicted_bin, scheme.binOf(s.true_speedup),
                                 f.reasoning.c_str());
            }
            climatology[held_out.problem] = climatology_of(set, scheme);
            const Scored mine = score(set, expected, scheme);
            const auto [one, clim] = baselines(set, climatology, scheme);
            const InSearch ins =
                in_search_forecasts(pp, problem, held_out_ceilings, others, options, cache_dir, verbose);
            const Scored in_search = score(ins.set, ins.expected, scheme);
            if (in_search.m.brier_skill > 0 && in_search.m.crps_skill > 0)
                ++in_search_skill_both;
            all_in_search.insert(all_in_search.end(), ins.set.begin(), ins.set.end());
            all_in_search_expected.insert(all_in_search_expected.end(), ins.expected.begin(), ins.expected.end());
            const Scored recalibrated = score(ins.recalibrated, ins.expected, scheme);
            if (recalibrated.m.brier_skill > 0 && recalibrated.m.crps_skill > 0)
                ++recalibrated_skill_both;
            all_recalibrated.insert(all_recalibrated.end(), ins.recalibrated.begin(), ins.recalibrated.end());
            nlohmann::json row = metrics_object(mine);
            row["in_search"] = metrics_object(in_search);
            row["in_search"]["pairs"] = ins.set.size();
            row["in_search"]["recalibrated"] = skill_object(recalibrated);
            row["pairs"] = set.size();
            row["searches"] = pp.searches;
            row["baselines"] = {{"always_1", metrics_object(one)}, {"climatology", metrics_object(clim)}};
            result["problems"][held_out.problem] = row;
            if (mine.m.brier_skill > 0 && mine.m.crps_skill > 0)
                ++skill_both;
            ++problems_done;
            all.insert(all.end(), set.begin(), set.end());
            all_expected.insert(all_expected.end(), expected.begin(), expected.end());
            if (!json) {
                std::printf("| %s | %zu | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f "
                            "| %s | %s | %s | %s | %s |\n",
                            held_out.problem.c_str(), set.size(), pp.searches, f3(mine.kendall).c_str(),
                            f3(mine.m.brier_skill).c_str(), f3(mine.m.crps_skill).c_str(), f3(mine.m.ece).c_str(),
                            f3(mine.m.accuracy).c_str(), f3(mine.m.majority_accuracy).c_str(),
                            f3(mine.m.top10_recovery).c_str(), f3(one.m.brier_skill).c_str(),
                            f3(one.m.crps_skill).c_str(), f3(one.m.top10_recovery).c_str(),
                            f3(clim.m.top10_recovery).c_str(), forecaster.lastRetrainSeconds(),
                            f3(in_search.kendall).c_str(), f3(in_search.m.brier_skill).c_str(),
                            f3(in_search.m.crps_skill).c_str(), f3(recalibrated.m.brier_skill).c_str(),
                            f3(recalibrated.m.crps_skill).c_str());
                std::fflush(stdout);
            }
        }
        if (all.empty())
            throw Error("no problem gave pairs to forecast");
        const Scored overall = score(all, all_expected, scheme);
        const auto [one, clim] = baselines(all, climatology, scheme);
        nlohmann::json o = metrics_object(overall);
        o["pairs"] = all.size();
        o["problems"] = problems_done;
        o["problems_with_positive_brier_and_crps_skill"] = skill_both;
        o["baselines"] = {{"always_1", metrics_object(one)}, {"climatology", metrics_object(clim)}};
        const Scored in_search = score(all_in_search, all_in_search_expected, scheme);
        o["in_search"] = metrics_object(in_search);
        o["in_search"]["pairs"] = all_in_search.size();
        o["in_search"]["problems_with_positive_brier_and_crps_skill"] = in_search_skill_both;
        const Scored recalibrated = score(all_recalibrated, all_in_search_expected, scheme);
        o["in_search"]["recalibrated"] = skill_object(recalibrated);
        o["in_search"]["recalibrated"]["problems_with_positive_brier_and_crps_skill"] = recalibrated_skill_both;
        if (timing) {
            LocalForecaster every(options);
            for (const RecordedProblem& r : recorded)
                for (const auto& e : r.examples.examples)
                    every.learn({e.example});
            const std::clock_t cpu0 = std::clock();
            every.retrain();
            o["retrain_every_recording_cpu_s"] = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
            o["retrain_every_recording_s"] = every.lastRetrainSeconds();
            o["retrain_programs"] = every.exampleCount();
            o["retrain_pairs"] = every.pairCount();
        }
        result["overall"] = o;
        if (json) {
            std::printf("%s\n", result.dump(2).c_str());
        } else {
            std::printf("\noverall (%zu pairs of %d problems): kendall_tau_b %.3f (target >= 0.4), brier_skill %.3f, "
                        "crps_skill %.3f, ece %.3f, accuracy %.3f (majority %.3f), top10_recovery %.3f\n",
                        all.size(), problems_done, overall.kendall, overall.m.brier_skill, overall.m.crps_skill,
                        overall.m.ece, overall.m.accuracy, overall.m.majority_accuracy, overall.m.top10_recovery);
            std::printf("baseline always S = 1: kendall_tau_b %.3f, brier_skill %.3f, crps_skill %.3f, top10 %.3f\n",
                        one.kendall, one.m.brier_skill, one.m.crps_skill, one.m.top10_recovery);
            std::printf("baseline climatology (each problem's own bin frequencies): brier_skill %.3f, crps_skill "
                        "%.3f, top10 %.3f\n",
                        clim.m.brier_skill, clim.m.crps_skill, clim.m.top10_recovery);
            std::printf("problems with brier_skill > 0 and crps_skill > 0: %d of %d (target: at least 10 of 13)\n",
                        skill_both, problems_done);
            std::printf("in a search (the same pairs, each forecast with the search's own earlier measurements learned "
                        "through the correction, as a search on this problem forecasts it): kendall_tau_b %.3f, "
                        "brier_skill %.3f, crps_skill %.3f, ece %.3f; problems with both skills > 0: %d of %d\n",
                        in_search.kendall, in_search.m.brier_skill, in_search.m.crps_skill, in_search.m.ece,
                        in_search_skill_both, problems_done);
            std::printf("recalibrated as the search shows them (each forecast's bins through the recalibration the "
                        "search chose on its forecasts measured before it, where that held up on the newest of them): "
                        "brier_skill %.3f, crps_skill %.3f, ece %.3f; problems with both skills > 0: %d of %d\n",
                        recalibrated.m.brier_skill, recalibrated.m.crps_skill, recalibrated.m.ece,
                        recalibrated_skill_both, problems_done);
            if (timing)
                std::printf("one retrain on every recording of %s (%zu programs, %zu pairs, %d members x %d "
                            "rounds, one thread): %.2f s wall, %.2f s CPU (target < 2 s)\n",
                            device.c_str(), static_cast<size_t>(o["retrain_programs"]),
                            static_cast<size_t>(o["retrain_pairs"]), options.members, options.rounds,
                            o["retrain_every_recording_s"].get<double>(),
                            o["retrain_every_recording_cpu_s"].get<double>());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kerncast-bench-leave-one-out: %s\n", e.what());
        fs::remove_all(scratch);
        return 1;
    }
    fs::remove_all(scratch);
    return 0;
}
