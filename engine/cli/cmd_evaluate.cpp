// kerncast-cli evaluate --pairs F.jsonl --surrogate llm|local [--endpoint URL --model M --llm-profile P] [--samples n]
// [--abstain] [--concurrency c] [--report DIR] [--store FILE] [--true-bins file|scheme] [--dataset D] [--json]: scores
// a surrogate on a labelled pair set (the GPU Forecasters eval-set schema or their other datasets, or our own
// `export --format pairs-jsonl`). Prints the metrics over all pairs and per
// pack; --report writes the reliability and risk-coverage tables; every forecast (distribution, reasoning, prompt)
// is stored in a run file the GUI opens. Exit 0 when every pair was forecast, 2 when some forecasts failed, 1 when
// nothing could be evaluated.
#include "engine/cli/cli.h"
#include "engine/cli/llm_options.h"
#include "engine/cli/problem_arg.h"
#include "engine/surrogate/evaluation.h"

#include "core/metrics.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <ostream>

namespace kerncast::cli {

namespace {

void run_evaluate(Context& ctx, EvaluationOptions a, const LlmOptionArgs& llm) {
    a.resources_dir = resources_dir();
    a.llm = llm_overrides(llm);
    const EvaluationResult r = evaluate_pairs(a, [&ctx](const std::string& line) { *ctx.err << line << "\n"; });
    nlohmann::json out = r.json;
    // The same pairs score lower here than in the calibration line of the search they were exported from, and
    // that is no mistake: say why, where the numbers are.
    const std::string why_not_the_run =
        a.surrogate == "local"
            ? "scored as a search starts: the local surrogate learned from the recordings without each pack's problem "
              "and learns nothing from these pairs while it forecasts them; the calibration line of the search the "
              "pairs came from scored forecasts made while the surrogate learned from that run's earlier "
              "measurements of the same problem, so it is higher on the same pairs"
            : "";
    if (!why_not_the_run.empty())
        out["compared_with_the_search"] = why_not_the_run;
    if (ctx.json) {
        *ctx.out << out.dump(2) << "\n";
    } else {
        const auto& m = out["metrics"];
        char buf[512];
        if (r.deferred > 0)
            *ctx.out << r.deferred << " pairs deferred to a measurement (abstain rate "
                     << out.value("abstain_rate", 0.0) << "), scored without them\n";
        std::snprintf(buf, sizeof buf,
                      "%s on %lld pairs (%d forecasts failed, %d failed candidates left out)\n"
                      "accuracy %.3f  off-by-one %.3f  brier %.3f  crps %.4f  nll %.3f\n"
                      "ece %.3f  aurc %.3f  kendall tau-b %.3f  top-10%% recovery %.3f\n"
                      "baselines on the same pairs: majority-bin accuracy %.3f  climatology brier %.3f, crps %.4f\n"
                      "skill over climatology: brier %s  crps %s\n",
                      r.surrogate_id.c_str(), static_cast<long long>(r.metrics.n), r.failed_forecasts,
                      r.failed_candidates, m["accuracy"].get<double>(), m["off_by_one"].get<double>(),
                      m["brier"].get<double>(), m["crps"].get<double>(), m["nll"].get<double>(), m["ece"].get<double>(),
                      m["aurc"].get<double>(), m["kendall_tau_b"].get<double>(), m["top10_recovery"].get<double>(),
                      m["majority_accuracy"].get<double>(), m["brier_climatology"].get<double>(),
                      m["crps_climatology"].get<double>(), skill_text(m["brier_skill"]).c_str(),
                      skill_text(m["crps_skill"]).c_str());
        *ctx.out << buf;
        *ctx.out << "true bins: " << out["true_bins_rule"].get<std::string>() << "\n";
        if (!why_not_the_run.empty())
            *ctx.out << "compared with the search: " << why_not_the_run << "\n";
        for (const auto& [pack, pj] : out["per_pack"].items()) {
            std::snprintf(buf, sizeof buf, "  %-24s n=%-5d accuracy %.3f  top-10%% recovery %.3f\n", pack.c_str(),
                          pj["n"].get<int>(), pj["metrics"]["accuracy"].get<double>(),
                          pj["metrics"]["top10_recovery"].get<double>());
            *ctx.out << buf;
        }
        *ctx.out << "forecasts stored in " << r.store_path << "\n";
        if (!a.report.empty())
            *ctx.out << "tables written to " << a.report << "\n";
    }
    ctx.exit_code = r.failed_forecasts ? 2 : 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<EvaluationOptions>();
    auto* cmd = app.add_subcommand("evaluate", "Score a surrogate on pair JSONL (calibration, ranking)");
    cmd->add_option("--pairs", args->pairs, "Pair JSONL (GPU Forecasters eval-set schema or our export)")->required();
    cmd->add_option("--surrogate", args->surrogate, "local or llm")
        ->check(CLI::IsMember({"local", "llm"}))
        ->capture_default_str();
    auto llm = std::make_shared<LlmOptionArgs>();
    add_llm_options(cmd, *llm);
    cmd->add_option("--samples", args->samples, "Requests per pair, averaged")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    cmd->add_flag("--abstain", args->abstain,
                  "Predict or defer: the model may ask for a measurement; deferrals count as abstentions");
    cmd->add_option("--report", args->report, "Folder for metrics.json, reliability and risk-coverage tables");
    cmd->add_option("--store", args->store, "Run file for the forecasts (default: beside the pairs file)");
    cmd->add_option("--recordings", args->recordings, "Recording folder the local surrogate learns from");
    cmd->add_flag("--strict", args->strict, "Stop at the first malformed line instead of skipping it");
    cmd->add_option("--true-bins", args->true_bins,
                    "Score against the file's own true_bin (file: their formula, as the paper's tables) or the bin "
                    "of the speedup under our scheme (scheme)")
        ->check(CLI::IsMember({"file", "scheme"}))
        ->capture_default_str();
    cmd->add_option("--dataset", args->dataset, "What --pairs holds: eval-set, rl-pool, discovery-pairs or puct-events")
        ->check(CLI::IsMember({"eval-set", "rl-pool", "discovery-pairs", "puct-events"}))
        ->capture_default_str();
    cmd->callback([&ctx, args, llm] {
        try {
            run_evaluate(ctx, *args, *llm);
        } catch (const std::exception& e) {
            report_failure(ctx, "evaluate", e.what());
        }
    });
}

}  // namespace kerncast::cli
