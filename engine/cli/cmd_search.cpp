// kerncast-cli search --problem P --device D --surrogate local|llm|none --gating measure-all|top-k|selective
// --budget N --seed K --run FILE [--resume] [--json]: a forecast-gated evolutionary search. A progress bar on a
// terminal; with --json one summary object on stdout. Exit 0 when the search finished, 1 when it failed.
#include "engine/cli/cli.h"
#include "engine/cli/llm_options.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"
#include "engine/llm/llm_client.h"
#include "engine/replay/replay_device.h"
#include "engine/search/llm_spend.h"
#include "engine/search/search_runner.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/worker/measurement_pool.h"

#include "core/error.h"
#include "core/fast_p.h"
#include "core/metrics.h"
#include "core/run_store.h"
#include "core/text_util.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <limits>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct SearchArgs {
    std::string problem;
    std::vector<std::string> devices;  // empty: replay:<default recordings>
    PoolConfig pool;
    std::string surrogate = "local";
    std::string gating = "selective";
    std::string strategy = "puct";
    std::vector<std::string> mutators{"parametric"};
    std::string run;
    LlmOptionArgs llm;
    int samples = 1;
    double llm_per_measurement = LlmPacing{}.per_measurement;
    std::string llm_parents = LlmPacing{}.parents;
    bool abstain = false;
    bool overlap = false;
    int round = 1;
    int ahead = 0;
    int64_t budget = 40;
    int64_t forecasts = 0;
    int64_t tokens = 0;
    double cost = 0;
    double wall = 0;
    uint64_t seed = 1;
    int batch = 0;
    int measure_per_parent = 0;
    int space_picks = -1;
    std::string static_reports = "auto";
    bool no_recalibrate = false;
    int top_k = GatingConfig{}.top_k;
    double tau = GatingConfig{}.tau;
    double pi = GatingConfig{}.pi;
    double epsilon = GatingConfig{}.epsilon;
    bool resume = false;
    bool quiet = false;
    std::string trace;  // --trace FILE: the timeline in the Trace Event format
};

void progress_line(std::ostream& err, const SearchProgress& p) {
    const int width = 30;
    const double frac =
        p.budget_measurements > 0 ? std::min(1.0, double(p.measurements) / double(p.budget_measurements)) : 0;
    const int filled = static_cast<int>(frac * width + 0.5);
    char buf[256];
    std::snprintf(buf, sizeof buf, "\r[%-*s] %lld/%lld measured, %lld forecast, %lld proposed, best %.3fx, %.0f s",
                  width, std::string(static_cast<size_t>(filled), '#').c_str(), (long long)p.measurements,
                  (long long)p.budget_measurements, (long long)p.forecasts, (long long)p.candidates, p.best_speedup,
                  p.elapsed_s);
    std::string line = buf;
    if (p.llm_calls > 0) {
        // What the LLM costs per measurement, the number a budget is planned with.
        std::snprintf(buf, sizeof buf, ", %.1fk tokens/measurement", p.tokensPerMeasurement() / 1000);
        line += buf;
        if (p.cost_usd > 0) {
            std::snprintf(buf, sizeof buf, " ($%.3f)", p.costPerMeasurement());
            line += buf;
        }
    }
    err << line << "   " << std::flush;
}

// --device (repeatable), --workers, --launcher ...: one device measured in-process as before, or a pool.
void apply_pool_args(SearchConfig& cfg, const std::vector<std::string>& devices, PoolConfig pool) {
    const std::vector<std::string> given =
        devices.empty() ? std::vector<std::string>{std::string("replay:") + kDefaultRecordings} : devices;
    cfg.device = given.front().substr(0, given.front().find('@'));
    pool.devices = given;
    pool_config_from_json(nlohmann::json(pool));  // the same checks as a stored config gets
    if (pool_requested(pool))
        cfg.pool = pool;
}

// With --resume the run's stored settings hold: the flags that would change them are named, and a budget flag
// counts only when it extends the run's budget. Returns what is ignored, e.g. "--gating", "--budget 20 (the run's
// budget is 40; a budget only grows)".
std::vector<std::string> ignored_with_resume(const CLI::App& cmd, const SearchArgs& a, const SearchBudgets& stored) {
    std::vector<std::string> ignored;
    for (const char* flag : {"--problem",
                             "--device",
                             "--surrogate",
                             "--gating",
                             "--strategy",
                             "--mutator",
                             "--seed",
                             "--batch",
                             "--overlap",
                             "--round",
                             "--ahead",
                             "--measure-per-parent",
                             "--top-k",
                             "--tau",
                             "--pi",
                             "--epsilon",
                             "--endpoint",
                             "--model",
                             "--llm-per-measurement",
                             "--llm-parents",
                             "--max-prompt-tokens",
                             "--space-picks"})
        if (cmd.count(flag) > 0)
            ignored.push_back(flag);
    SearchBudgets given = stored;
    given.measurements = a.budget;
    given.forecasts = a.forecasts;
    given.tokens = a.tokens;
    given.cost_usd = a.cost;
    given.wall_s = a.wall;
    const SearchBudgets extended = extended_budgets(stored, given);
    const auto check = [&](const char* flag, auto given_value, auto stored_value, auto extended_value) {
        if (cmd.count(flag) == 0 || extended_value == given_value)
            return;
        std::ostringstream text;
        text << flag << " " << given_value << " (the run's budget is "
             << (stored_value == 0 ? std::string("no limit") : nlohmann::json(stored_value).dump())
             << "; a budget only grows)";
        ignored.push_back(text.str());
    };
    check("--budget", a.budget, stored.measurements, extended.measurements);
    check("--forecast-budget", a.forecasts, stored.forecasts, extended.forecasts);
    check("--token-budget", a.tokens, stored.tokens, extended.tokens);
    check("--cost-budget", a.cost, stored.cost_usd, extended.cost_usd);
    check("--time-budget", a.wall, stored.wall_s, extended.wall_s);
    return ignored;
}

// KernelBench's fast_p for this one problem, against its reference and against PyTorch eager (the time the
// recording holds for the problem's `pytorch` expression; unknown on a GPU or for a recording without it).
nlohmann::json search_fast_p(const SearchConfig& cfg, const SearchSummary& s, const std::string& run_path) {
    std::optional<double> vs_reference, vs_eager;
    if (s.best_candidate && s.best_speedup > 0)
        vs_reference = s.best_speedup;
    std::vector<std::optional<double>> eager;
    try {
        RunStore store = RunStore::open(run_path);
        const auto runs = store.runs();
        const std::string device = cfg.device.empty() && !runs.empty() ? runs.back().device : cfg.device;
        const std::string problem = runs.empty() ? "" : runs.back().problem;
        std::optional<double> eager_us;
        if (device.rfind("replay:", 0) == 0)
            if (auto rec = open_device(device, resources_dir())->recording(problem);
                rec && rec->header.pytorch_eager_us)
                eager_us = rec->header.pytorch_eager_us;
        if (eager_us) {
            std::optional<double> best_us;
            if (s.best_candidate)
                for (const auto& m : store.measurementsFor(s.best_candidate))
                    if (m.measurement.status == Status::Ok && m.measurement.candidate)
                        best_us = m.measurement.candidate->median_us;
            eager.push_back(best_us && *best_us > 0 ? std::optional<double>(*eager_us / *best_us) : std::nullopt);
        }
    } catch (const std::exception&) {
        // fast_p against eager is left unknown; the search itself succeeded
    }
    return {{"reference", fast_p_json({vs_reference})}, {"pytorch_eager", fast_p_json(eager)}};
}

void run_search(Context& ctx, SearchArgs& a, const CLI::App& cmd) {
    if (a.run.empty())
        throw Error("--run FILE is required: the run store every step is written to");
    SearchConfig cfg;
    std::vector<std::string> ignored;
    std::optional<SearchBudgets> stored_budgets;
    if (!a.resume) {
        cfg.problem_dir = fs::absolute(resolve_problem_dir(a.problem)).string();
    } else if (!fs::exists(a.run)) {
        throw Error(SourceLocation{a.run, 0}, "no run file to resume");
    } else if (RunStore::open(a.run).runs().empty()) {
        // Killed before it stored its settings: the flags start it over (they need --problem).
        if (a.problem.empty())
            throw Error(SourceLocation{a.run, 0},
                        "the run file holds no run (the search was stopped before it stored "
                        "its settings): start it again with --problem and the other settings");
        cfg.problem_dir = fs::absolute(resolve_problem_dir(a.problem)).string();
    } else {
        stored_budgets = stored_search_config(a.run).budgets;
        ignored = ignored_with_resume(cmd, a, *stored_budgets);
    }
    apply_pool_args(cfg, a.devices, a.pool);
    cfg.surrogate = a.surrogate;
    cfg.mutators = a.mutators;
    cfg.gating.kind = gating_kind_from_string(a.gating);
    cfg.gating.top_k = a.top_k;
    cfg.gating.tau = a.tau;
    cfg.gating.pi = a.pi;
    cfg.gating.epsilon = a.epsilon;
    cfg.strategy.kind = strategy_kind_from_string(a.strategy);
    cfg.budgets.measurements = a.budget;
    cfg.budgets.forecasts = a.forecasts;
    cfg.budgets.tokens = a.tokens;
    cfg.budgets.cost_usd = a.cost;
    cfg.budgets.wall_s = a.wall;
    cfg.seed = a.seed;
    cfg.batch = a.batch;
    cfg.measure_per_parent = a.measure_per_parent;
    cfg.space_picks = a.space_picks;
    cfg.static_reports = a.static_reports;
    cfg.recalibrate = !a.no_recalibrate;
    cfg.samples = a.samples;
    cfg.llm_pacing.per_measurement = a.llm_per_measurement;
    cfg.llm_pacing.parents = a.llm_parents;
    cfg.abstain = a.abstain;
    cfg.overlap = a.overlap;
    cfg.round = a.round;
    cfg.ahead = a.ahead;
    const bool uses_llm = cfg.surrogate == "llm" || std::any_of(cfg.mutators.begin(), cfg.mutators.end(),
                                                                [](auto& m) { return m.rfind("llm-", 0) == 0; });
    // The settings file, then the command line; the run stores the result (never the key).
    if (uses_llm && !a.resume)
        cfg.llm = LlmConfig::loadSettings(llm_overrides(a.llm));
    // Said before the search starts: what its LLM settings may spend against its budgets (the defaults included).
    std::string spend_warning;
    if (uses_llm && !a.resume) {
        SearchConfig planned = cfg;
        planned.budgets = default_llm_budgets(cfg);
        spend_warning = llm_spend_warning(planned, estimate_llm_spend(planned));
        if (!spend_warning.empty() && !ctx.json)
            *ctx.err << "kerncast-cli search: warning: " << spend_warning << "\n";
    }
    if (stored_budgets) {
        // Only the budget flags given extend the run; the defaults of the others must not.
        const SearchBudgets given = cfg.budgets;
        cfg.budgets = *stored_budgets;
        if (cmd.count("--budget"))
            cfg.budgets.measurements = given.measurements;
        if (cmd.count("--forecast-budget"))
            cfg.budgets.forecasts = given.forecasts;
        if (cmd.count("--token-budget"))
            cfg.budgets.tokens = given.tokens;
        if (cmd.count("--cost-budget"))
            cfg.budgets.cost_usd = given.cost_usd;
        if (cmd.count("--time-budget"))
            cfg.budgets.wall_s = given.wall_s;
    }
    if (!ignored.empty() && !ctx.json) {
        std::string list;
        for (const auto& i : ignored)
            list += (list.empty() ? "" : ", ") + i;
        *ctx.err << "kerncast-cli search: --resume continues the run with its stored settings; ignored: " << list
                 << "\n";
    }

    // The set-up before the first candidate (starting workers, the forecaster's base model) says what it does: on a
    // fresh machine it takes a while.
    SetupHooks hooks;
    hooks.timeline = std::make_shared<Timeline>();
    if (!ctx.json && !a.quiet)
        hooks.progress = [&ctx](const std::string& step) { *ctx.err << "kerncast-cli search: " << step << "\n"; };
    auto runner = make_search_runner(cfg, resources_dir(), a.run, a.resume, hooks);
    const bool bar = !ctx.json && !a.quiet && isatty(STDERR_FILENO);
    auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    std::ostream& err = *ctx.err;
    runner->setEventCallback([&](const SearchEvent& e) {
        if (e.kind == SearchEvent::Kind::NewBest && !ctx.json && !a.quiet) {
            if (bar)
                err << "\r" << std::string(150, ' ') << "\r";
            char buf[128];
            std::snprintf(buf, sizeof buf, "new best %.3fx: candidate #%lld after %lld measurements\n", e.speedup,
                          (long long)e.candidate_id, (long long)e.progress.measurements);
            err << buf;
        }
        if (e.kind == SearchEvent::Kind::Pool && !e.message.empty() && !ctx.json && !a.quiet) {
            if (bar)
                err << "\r" << std::string(150, ' ') << "\r";
            err << "pool: " << e.message << "\n";
        }
        if (!bar)
            return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last >= std::chrono::milliseconds(100) || e.kind == SearchEvent::Kind::Finished) {
            last = now;
            progress_line(err, e.progress);
        }
    });
    const SearchSummary s = runner->runHere();
    if (bar)
        err << "\n";
    if (!a.trace.empty()) {
        nlohmann::json trace = runner->timeline()->traceEvents();
        trace["run"] = a.run;
        write_file_atomically(a.trace, trace.dump());
    }
    if (ctx.json) {
        nlohmann::json j = summary_json(s);
        j["run"] = a.run;
        if (a.resume)
            j["ignored_flags"] = ignored;
        j["fast_p"] = search_fast_p(cfg, s, a.run);
        if (!spend_warning.empty())
            j["spend_warning"] = spend_warning;
        *ctx.out << j.dump(2) << "\n";
    } else if (s.state == RunState::Failed && s.progress.candidates == 0) {
        // Stopped before the search began (e.g. a problem the replay device has no recording of): no best to speak of.
        *ctx.out << to_string(s.state) << ": " << s.reason << "\n";
    } else {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%s: %s\nbest %.3fx (candidate #%lld, %s)\n%lld measurements, %lld forecasts, %lld candidates "
                      "in %.1f s\nrun stored in %s (continue with --resume)\n",
                      to_string(s.state), s.reason.c_str(), s.best_speedup, (long long)s.best_candidate,
                      s.best_label.c_str(), (long long)s.progress.measurements, (long long)s.progress.forecasts,
                      (long long)s.progress.candidates, s.progress.elapsed_s, a.run.c_str());
        *ctx.out << buf;
        if (!a.trace.empty()) {
            *ctx.out << format_summary(s.timeline);
            *ctx.out << "  timeline written to " << a.trace << " (Trace Event format: chrome://tracing, Perfetto)\n";
        }
        if (s.progress.llm_calls > 0) {
            std::snprintf(buf, sizeof buf,
                          "%lld LLM calls, %lld tokens, $%.4f; %lld cut at the token limit, %lld forecasts deferred "
                          "to a measurement, %lld duplicates skipped\n",
                          (long long)s.progress.llm_calls, (long long)s.progress.tokens, s.progress.cost_usd,
                          (long long)s.progress.llm_truncated, (long long)s.progress.abstained,
                          (long long)s.progress.duplicates);
            *ctx.out << buf;
            std::string per_kind;
            for (const auto& [name, spend] :
                 {std::pair{"forecasts", s.progress.llm_forecast}, std::pair{"rewrites", s.progress.llm_rewrite},
                  std::pair{"diffs", s.progress.llm_diff}}) {
                if (spend.calls == 0)
                    continue;
                std::snprintf(buf, sizeof buf, "%s%s %lld calls, %lld tokens", per_kind.empty() ? "" : "; ", name,
                              (long long)spend.calls, (long long)spend.tokens);
                per_kind += buf;
            }
            std::snprintf(buf, sizeof buf, "per measurement: %.0f tokens, $%.4f (%s)\n",
                          s.progress.tokensPerMeasurement(), s.progress.costPerMeasurement(), per_kind.c_str());
            *ctx.out << buf;
        }
        if (s.calibration.value("n", 0) > 0) {
            const auto& mm = s.calibration["metrics"];
            std::snprintf(buf, sizeof buf,
                          "surrogate on measured candidates (n=%d): accuracy %.2f (majority bin %.2f), brier skill %s, "
                          "crps skill %s, ECE %.3f, AURC %.3f\n",
                          s.calibration.value("n", 0), mm.value("accuracy", 0.0), mm.value("majority_accuracy", 0.0),
                          skill_text(mm["brier_skill"]).c_str(), skill_text(mm["crps_skill"]).c_str(),
                          mm.value("ece", 0.0), mm.value("aurc", 0.0));
            *ctx.out << buf;
        }
        // In a gated search the line above is of the candidates the gate chose to measure, mostly those whose
        // forecast was unsure or promising; the audited ones are a random share of those it trusted.
        if (s.calibration.value("n", 0) > 0 || s.calibration_audited.value("n", 0) > 0) {
            const int n = s.calibration_audited.value("n", 0);
            if (n == 0) {
                *ctx.out << "surrogate on audited candidates (a random share of the trusted ones): no audited "
                            "candidates yet\n";
            } else {
                const auto& mm = s.calibration_audited["metrics"];
                std::snprintf(buf, sizeof buf,
                              "surrogate on audited candidates (a random share of the trusted ones, n=%d): accuracy "
                              "%.2f (majority bin %.2f), brier skill %s, crps skill %s, ECE %.3f, AURC %.3f\n",
                              n, mm.value("accuracy", 0.0), mm.value("majority_accuracy", 0.0),
                              skill_text(mm["brier_skill"]).c_str(), skill_text(mm["crps_skill"]).c_str(),
                              mm.value("ece", 0.0), mm.value("aurc", 0.0));
                *ctx.out << buf;
            }
        }
    }
    ctx.exit_code = s.state == RunState::Finished ? 0 : 1;
    if (s.state != RunState::Finished && !ctx.json)
        *ctx.err << "kerncast-cli search: " << s.reason << "\n";
}

}  // namespace

void add_search_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<SearchArgs>();
    auto* cmd = app.add_subcommand("search", "Run a forecast-gated evolutionary search");
    cmd->add_option("--problem", args->problem, "Problem name or folder (not needed with --resume)");
    cmd->add_option("--device", args->devices,
                    "cuda:N, cuda:all or replay:<recording folder>, optionally @local, @ssh:HOST or @slurm[:ARGS]; "
                    "repeat for a pool (default: replay:" +
                        std::string(kDefaultRecordings) + ")");
    cmd->add_option("--workers", args->pool.workers, "Worker processes per device (replay: replay workers)")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    cmd->add_option("--launcher", args->pool.launcher,
                    "How workers start: local, ssh:HOST or slurm[:SRUN OPTIONS] (srun job steps)")
        ->capture_default_str();
    cmd->add_option("--remote-worker", args->pool.remote_worker,
                    "Path of kerncast-worker on ssh hosts and Slurm nodes (default: this one's path)");
    cmd->add_option("--remote-resources", args->pool.remote_resources,
                    "Resources folder on ssh hosts and Slurm nodes, for replay workers (default: this one's)");
    cmd->add_flag("--allow-mixed", args->pool.allow_mixed, "Let one search measure on several GPU models");
    cmd->add_flag("--replay-compiles", args->pool.replay_compiles,
                  "Replay workers: compile every static report, and every program they measure, with NVRTC as a "
                  "search on a real GPU does, instead of reading the recording's (with --replay-wall-time 1 the "
                  "search then costs what it costs on a GPU)");
    cmd->add_option("--replay-wall-time", args->pool.replay_wall_time,
                    "Replay workers take each measurement's recorded wall time times this (0: answer at once)")
        ->check(CLI::Range(0.0, 1000.0));
    cmd->add_option("--trace", args->trace,
                    "Write the search's timeline to FILE (Trace Event format, for chrome://tracing or Perfetto): "
                    "each batch's proposal, static reports, forecasting, gating, store writes and waiting, and each "
                    "worker's measurements");
    cmd->add_flag("--overlap", args->overlap,
                  "Choose the next batch while the last ones are measured (keeps a pool busy; the search learns from "
                  "a batch once --ahead measurements are queued behind it)");
    cmd->add_option("--round", args->round,
                    "Measure in rounds of K: each batch is topped up to a multiple of K with the candidates its gate "
                    "passed over, the most promising first (never past the budget; K workers then measure full "
                    "rounds). The same search with 1 or N workers")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    cmd->add_option("--ahead", args->ahead,
                    "With --overlap: measurements kept queued behind a batch before it is applied, so that the workers "
                    "measure them while the next batch is chosen (0: twice --round). The same search with 1 or N "
                    "workers")
        ->check(CLI::Range(0, 4096))
        ->capture_default_str();
    cmd->add_option("--max-worker-failures", args->pool.max_failures,
                    "Requests a worker may lose in a row before it is retired")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd->add_option("--surrogate", args->surrogate, "local, llm or none")
        ->check(CLI::IsMember({"local", "llm", "none"}))
        ->capture_default_str();
    cmd->add_option("--gating", args->gating, "measure-all, top-k or selective")
        ->check(CLI::IsMember({"measure-all", "top-k", "selective"}))
        ->capture_default_str();
    cmd->add_option("--strategy", args->strategy, "puct, islands or greedy")
        ->check(CLI::IsMember({"puct", "islands", "greedy"}))
        ->capture_default_str();
    cmd->add_option("--mutator", args->mutators, "parametric, llm-rewrite, llm-diff (repeat for several)")
        ->capture_default_str();
    // Out-of-range values are usage errors (CLI11 names the option and the range), never silently clamped.
    cmd->add_option("--budget", args->budget, "Device measurements")
        ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()))
        ->capture_default_str();
    cmd->add_option("--forecast-budget", args->forecasts, "Forecasts (0: 100 per measurement)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--token-budget", args->tokens,
                    "LLM tokens (0: 40,000 per measurement of --budget when the search uses an LLM)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--cost-budget", args->cost,
                    "LLM cost in USD (0: $0.10 per measurement of --budget when prices are set, else no limit)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--time-budget", args->wall, "Wall time in seconds (0: no limit)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--seed", args->seed, "Random seed (deterministic on the replay device)")->capture_default_str();
    cmd->add_option("--batch", args->batch, "Children proposed per parent (0: 8 for measure-all, 24 when gated)")
        ->check(CLI::Range(0, 100000))
        ->capture_default_str();
    cmd->add_option("--space-picks", args->space_picks,
                    "gated: family configurations per iteration chosen over the whole space by the space model's "
                    "expected improvement (-1: 2 for a family of 1,000 configurations or more, else none; 0: none)")
        ->check(CLI::Range(-1, 64))
        ->capture_default_str();
    cmd->add_option("--static-reports", args->static_reports,
                    "which candidates are compiled for their static report when proposed: all, or measured (a family "
                    "configuration only when it is measured, forecast without one); auto: measured for a family of "
                    "1,000 configurations or more, else all")
        ->check(CLI::IsMember({"auto", "all", "measured"}))
        ->capture_default_str();
    cmd->add_flag("--no-recalibrate", args->no_recalibrate,
                  "leave forecasts as the surrogate gives them (default: once 16 forecasts came true, each forecast's "
                  "bins are recalibrated against the run's measured outcomes where a recalibration fitted without "
                  "the newest quarter of them scores those better, the surrogate's kept beside them)");
    cmd->add_option("--measure-per-parent", args->measure_per_parent,
                    "selective: most children of one parent measured per batch (0: 4)")
        ->check(CLI::Range(0, 100000))
        ->capture_default_str();
    cmd->add_option("--top-k", args->top_k, "top-k: measured per parent")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd->add_option("--tau", args->tau, "selective: measure when confidence < tau")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_option("--pi", args->pi, "selective: measure when P(S > best) >= pi")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_option("--epsilon", args->epsilon,
                    "Audit share: trusted candidates measured anyway, drawn at random. Their calibration "
                    "(calibration_audited) is reported beside that of every measured candidate, which the gate's "
                    "choice of unsure and promising children skews; 0 turns auditing off")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    add_llm_options(cmd, args->llm);
    cmd->add_option("--samples", args->samples, "LLM forecaster: requests per candidate, averaged")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    cmd->add_option("--llm-per-measurement", args->llm_per_measurement,
                    "LLM mutators: proposals earned by each measurement (the LLM is asked only for the best parents, "
                    "and no more for a parent whose answers repeat programs; 0: not tied to measurements)")
        ->check(CLI::Range(0.0, 1000.0))
        ->capture_default_str();
    cmd->add_option("--llm-parents", args->llm_parents,
                    "LLM mutators: which of the parents the strategy expands are asked: best (the 4 best measured) "
                    "or forecast (the 4 whose children the forecaster expects to be fastest)")
        ->check(CLI::IsMember({"best", "forecast"}))
        ->capture_default_str();
    cmd->add_flag("--abstain", args->abstain,
                  "LLM forecaster: predict or defer (a second tool lets the model ask for a measurement instead)");
    cmd->add_option("--run", args->run, "Run store file (SQLite)")->required();
    cmd->add_flag("--resume", args->resume, "Continue the run in --run");
    cmd->add_flag("--quiet", args->quiet, "No progress output");
    cmd->callback([&ctx, args, cmd] {
        try {
            if (args->problem.empty() && !args->resume)
                throw Error("--problem is required (a name from `kerncast-cli problems list` or a folder)");
            run_search(ctx, *args, *cmd);
        } catch (const std::exception& e) {
            report_failure(ctx, "search", e.what());
        }
    });
}

}  // namespace kerncast::cli
