// kerncast-cli evaluate --pairs F.jsonl --surrogate llm|local [--endpoint URL --model M] [--samples n]
// [--concurrency c] [--report DIR] [--store FILE] [--json]: scores a surrogate on a labelled pair set (the GPU
// Forecasters eval-set schema, or our own `export --format pairs-jsonl`). Prints the metrics over all pairs and per
// pack; --report writes the reliability and risk-coverage tables; every forecast (distribution, reasoning, prompt)
// is stored in a run file the GUI opens. Exit 0 when every pair was forecast, 2 when some forecasts failed, 1 when
// nothing could be evaluated.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"
#include "core/metrics.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "engine/forecast_query.h"
#include "engine/llm_forecaster.h"
#include "engine/local_forecaster.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct EvaluateArgs {
    std::string pairs;
    std::string surrogate = "local";
    std::string endpoint;
    std::string model;
    int samples = 1;
    int concurrency = 8;
    double timeout_s = 120;
    std::string report;
    std::string store;
    std::string recordings;
    bool strict = false;
};

// A pair of one of our problems (our own exports) gets the full query; any other pair what its fields say.
ForecastQuery query_for(const ImportedPair& p, const std::map<std::string, Problem>& problems) {
    auto it = problems.find(p.pack);
    if (it != problems.end()) {
        try {
            std::map<std::string, int64_t> tunables;
            if (p.extra.contains("tunables") && p.extra["tunables"].is_object())
                tunables = p.extra["tunables"].get<std::map<std::string, int64_t>>();
            std::vector<StaticReport> report;
            if (p.extra.contains("static_report") && p.extra["static_report"].is_array())
                report = p.extra["static_report"].get<std::vector<StaticReport>>();
            QueryContext ctx;
            if (p.extra.contains("reference_time_us") && p.extra["reference_time_us"].is_number())
                ctx.reference_time_us = p.extra["reference_time_us"].get<double>();
            ForecastQuery q = build_forecast_query(it->second, p.candidate_code, tunables, report, ctx);
            q.hardware = p.hardware;
            return q;
        } catch (const std::exception&) {
            // fall through: the pair's own fields
        }
    }
    ForecastQuery q;
    q.pack = p.pack;
    q.problem_name = p.extra.value("problem_name", p.pack);
    if (p.extra.contains("problem_description") && p.extra["problem_description"].is_string())
        q.problem_description = p.extra["problem_description"].get<std::string>();
    q.reference_source = p.anchor_code;
    q.candidate_source = p.candidate_code;
    q.hardware = p.hardware;
    return q;
}

std::string default_store_path(const std::string& pairs, const std::string& surrogate) {
    const std::string stem = pairs + "." + surrogate + "-eval";
    std::string path = stem + ".sqlite";
    for (int i = 2; fs::exists(path); ++i)
        path = stem + "-" + std::to_string(i) + ".sqlite";
    return path;
}

void write_file(const fs::path& path, const std::string& text) {
    const fs::path tmp = path.string() + ".partial";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.flush();
        if (!f)
            throw Error(SourceLocation{path.string(), 0}, "cannot write (disk full or no permission)");
    }
    fs::rename(tmp, path);
}

void run_evaluate(Context& ctx, const EvaluateArgs& a) {
    const BinScheme scheme = BinScheme::gfV2();
    const ImportResult imported =
        import_forecasters_jsonl_file(a.pairs, scheme, a.strict ? ImportMode::Strict : ImportMode::Skip);
    for (const auto& issue : imported.issues)
        *ctx.err << a.pairs << ":" << issue.line << ": skipped: " << issue.message << "\n";
    std::vector<ImportedPair> pairs;
    int failures = 0;
    for (const auto& p : imported.pairs) {
        if (p.speedup)
            pairs.push_back(p);
        else
            ++failures;  // a failed candidate has no speedup bin to forecast
    }
    if (pairs.empty())
        throw Error(SourceLocation{a.pairs, 0}, "no pair with a measured speedup to evaluate on");

    std::map<std::string, Problem> problems;
    const std::string problems_root = resources_dir() + "/problems";
    for (const auto& dir : list_problem_folders(problems_root)) {
        try {
            Problem pr = Problem::load((fs::path(dir) / "problem.json").string());
            problems[pr.name] = pr;
        } catch (const std::exception&) {
        }
    }
    std::vector<ForecastQuery> queries;
    for (const auto& p : pairs)
        queries.push_back(query_for(p, problems));

    std::vector<ForecastResult> results(pairs.size());
    std::vector<std::string> prompts(pairs.size());
    std::string surrogate_id;
    if (a.surrogate == "llm") {
        LlmConfig cfg;
        cfg.endpoint = a.endpoint;
        cfg.model = a.model;
        cfg.concurrency = a.concurrency;
        cfg.timeout_s = a.timeout_s;
        cfg.api_key = LlmConfig::resolveApiKey();
        if (cfg.endpoint.empty() || cfg.model.empty())
            throw Error("--surrogate llm needs --endpoint URL and --model NAME");
        LlmForecasterOptions options;
        options.samples = a.samples;
        LlmForecaster llm(cfg, resources_dir() + "/prompts", options);
        surrogate_id = llm.id();
        auto outcomes = llm.forecastWithDetails(queries);
        for (size_t i = 0; i < outcomes.size(); ++i) {
            results[i] = outcomes[i].result;
            prompts[i] = outcomes[i].prompt.text();
        }
    } else {
        // One model per pack, each trained without the recording of that pack's problem (no leakage).
        std::string folder = a.recordings;
        if (folder.empty())
            for (const auto& e : fs::directory_iterator(resources_dir() + "/recordings"))
                if (e.is_directory()) {
                    folder = e.path().string();
                    break;
                }
        std::map<std::string, std::vector<size_t>> by_pack;
        for (size_t i = 0; i < queries.size(); ++i)
            by_pack[queries[i].pack].push_back(i);
        for (const auto& [pack, idx] : by_pack) {
            LocalForecaster local;
            surrogate_id = local.id();
            if (!folder.empty())
                local.learn(examples_from_recordings_except(folder, problems_root, pack));
            std::vector<ForecastQuery> qs;
            for (size_t i : idx)
                qs.push_back(queries[i]);
            auto rs = local.forecast(qs);
            for (size_t k = 0; k < idx.size() && k < rs.size(); ++k)
                results[idx[k]] = rs[k];
        }
    }

    std::vector<ScoredForecast> scored;
    std::map<std::string, std::vector<ScoredForecast>> per_pack;
    int failed = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
        if (!results[i].forecast) {
            ++failed;
            *ctx.err << "pair " << pairs[i].comparison_id << " (line " << pairs[i].line
                     << "): forecast failed: " << results[i].error << "\n";
            continue;
        }
        ScoredForecast s{results[i].forecast->probabilities, *pairs[i].speedup, pairs[i].pack};
        scored.push_back(s);
        per_pack[s.pack].push_back(s);
    }
    if (scored.empty())
        throw Error("every forecast failed; nothing to score (see the errors above)");
    const ForecastMetrics metrics = compute_metrics(scored, scheme);
    nlohmann::json out = metrics_json(metrics);
    out["per_pack"] = nlohmann::json::object();
    for (const auto& [pack, items] : per_pack) {
        nlohmann::json pj = metrics_json(compute_metrics(items, scheme));
        out["per_pack"][pack] = pj;
    }
    out["surrogate"] = surrogate_id;
    out["failed_forecasts"] = failed;
    out["skipped_lines"] = imported.issues.size();
    out["failed_candidates"] = failures;

    // Every forecast goes into a run file: the GUI shows the pairs as a population with their forecasts.
    const std::string store_path = a.store.empty() ? default_store_path(a.pairs, a.surrogate) : a.store;
    {
        RunStore store = RunStore::create(store_path);
        RunInfo run;
        run.name = "evaluation of " + fs::path(a.pairs).filename().string();
        run.problem = per_pack.size() == 1 ? per_pack.begin()->first : "";
        run.device = "imported";
        run.surrogate = surrogate_id;
        run.gating = "evaluation";
        run.config = {{"kind", "evaluation"}, {"pairs", fs::absolute(a.pairs).string()}, {"surrogate", a.surrogate},
                      {"endpoint", a.endpoint}, {"model", a.model}, {"samples", a.samples}};
        store.addRun(run);
        auto tx = store.transaction();
        store.addImportedPairs(run.id, imported.pairs, scheme.id());
        for (size_t i = 0; i < pairs.size(); ++i) {
            Candidate c;
            c.mutator = Mutator::Imported;
            c.label = "pair:" + pairs[i].comparison_id;
            c.source = pairs[i].candidate_code;
            store.addCandidate(run.id, c);
            Measurement m;
            m.status = Status::Ok;
            m.speedup = *pairs[i].speedup;
            m.device_kind = "imported";
            m.device.name = pairs[i].hardware;
            store.addMeasurement(c.id, m);
            if (results[i].forecast)
                store.addForecast(c.id, *results[i].forecast);
            else
                store.addEvent(run.id, "forecast_failed", {{"candidate", c.id}, {"error", results[i].error}});
            if (!prompts[i].empty())
                store.addEvent(run.id, "prompt", {{"candidate", c.id}, {"prompt", prompts[i]}});
        }
        tx.commit();
    }
    out["store"] = store_path;

    if (!a.report.empty()) {
        fs::create_directories(a.report);
        write_file(fs::path(a.report) / "metrics.json", out.dump(2) + "\n");
        write_file(fs::path(a.report) / "reliability.json", reliability_json(metrics).dump(2) + "\n");
        write_file(fs::path(a.report) / "reliability.csv", reliability_csv(metrics));
        write_file(fs::path(a.report) / "risk_coverage.json", risk_coverage_json(metrics).dump(2) + "\n");
        write_file(fs::path(a.report) / "risk_coverage.csv", risk_coverage_csv(metrics));
        out["report"] = a.report;
    }

    if (ctx.json) {
        *ctx.out << out.dump(2) << "\n";
    } else {
        const auto& m = out["metrics"];
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%s on %lld pairs (%d forecasts failed, %d failed candidates left out)\n"
                      "accuracy %.3f  off-by-one %.3f  brier %.3f  crps %.4f  nll %.3f\n"
                      "ece %.3f  aurc %.3f  kendall tau-b %.3f  top-10%% recovery %.3f\n",
                      surrogate_id.c_str(), static_cast<long long>(metrics.n), failed, failures,
                      m["accuracy"].get<double>(), m["off_by_one"].get<double>(), m["brier"].get<double>(),
                      m["crps"].get<double>(), m["nll"].get<double>(), m["ece"].get<double>(),
                      m["aurc"].get<double>(), m["kendall_tau_b"].get<double>(), m["top10_recovery"].get<double>());
        *ctx.out << buf;
        for (const auto& [pack, pj] : out["per_pack"].items()) {
            std::snprintf(buf, sizeof buf, "  %-24s n=%-5d accuracy %.3f  top-10%% recovery %.3f\n", pack.c_str(),
                          pj["n"].get<int>(), pj["metrics"]["accuracy"].get<double>(),
                          pj["metrics"]["top10_recovery"].get<double>());
            *ctx.out << buf;
        }
        *ctx.out << "forecasts stored in " << store_path << "\n";
        if (!a.report.empty())
            *ctx.out << "tables written to " << a.report << "\n";
    }
    ctx.exit_code = failed ? 2 : 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<EvaluateArgs>();
    auto* cmd = app.add_subcommand("evaluate", "Score a surrogate on pair JSONL (calibration, ranking)");
    cmd->add_option("--pairs", args->pairs, "Pair JSONL (GPU Forecasters eval-set schema or our export)")
        ->required();
    cmd->add_option("--surrogate", args->surrogate, "local or llm")
        ->check(CLI::IsMember({"local", "llm"}))
        ->capture_default_str();
    cmd->add_option("--endpoint", args->endpoint, "OpenAI-compatible base URL, e.g. http://localhost:8000/v1");
    cmd->add_option("--model", args->model, "Model name at the endpoint");
    cmd->add_option("--samples", args->samples, "Requests per pair, averaged")->capture_default_str();
    cmd->add_option("--concurrency", args->concurrency, "Requests in flight")->capture_default_str();
    cmd->add_option("--timeout", args->timeout_s, "Seconds per request attempt")->capture_default_str();
    cmd->add_option("--report", args->report, "Folder for metrics.json, reliability and risk-coverage tables");
    cmd->add_option("--store", args->store, "Run file for the forecasts (default: beside the pairs file)");
    cmd->add_option("--recordings", args->recordings, "Recording folder the local surrogate learns from");
    cmd->add_flag("--strict", args->strict, "Stop at the first malformed line instead of skipping it");
    cmd->callback([&ctx, args] {
        try {
            run_evaluate(ctx, *args);
        } catch (const std::exception& e) {
            report_failure(ctx, "evaluate", e.what());
        }
    });
}

}  // namespace kerncast::cli
