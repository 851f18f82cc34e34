#include "engine/surrogate/evaluation.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_datasets.h"
#include "core/forecasters_import.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/text_util.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/llm_forecaster.h"
#include "engine/surrogate/local_forecaster.h"
#include "engine/unified_diff.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

// Our exports prepend a family configuration's tunables as #define lines so that a pair stands alone; the program
// the problem knows is the text after them (the tunables come back as -D defines).
std::string without_defines(const std::string& code, const std::map<std::string, int64_t>& tunables) {
    const std::string head = program_with_defines("", tunables);
    return !head.empty() && code.rfind(head, 0) == 0 ? code.substr(head.size()) : code;
}

// The anchor of one of our exported pairs when it is not the reference (extra: anchor_id, anchor_label,
// anchor_tunables, anchor_speedup, anchor_static_report).
std::optional<ForecastAnchor> exported_anchor(const ImportedPair& p) {
    const auto& x = p.extra;
    if (!x.contains("anchor_id") || !x["anchor_id"].is_number_integer() || x["anchor_id"].get<int64_t>() <= 0)
        return std::nullopt;
    ForecastAnchor a;
    a.is_reference = false;
    a.candidate_id = x["anchor_id"].get<int64_t>();
    a.label = x.value("anchor_label", std::string("parent"));
    if (x.contains("anchor_tunables") && x["anchor_tunables"].is_object())
        a.tunables = x["anchor_tunables"].get<std::map<std::string, int64_t>>();
    a.source = without_defines(p.anchor_code, a.tunables);
    if (x.contains("anchor_speedup") && x["anchor_speedup"].is_number() && x["anchor_speedup"].get<double>() > 0)
        a.speedup = x["anchor_speedup"].get<double>();
    if (x.contains("anchor_static_report") && x["anchor_static_report"].is_array())
        a.static_report = x["anchor_static_report"].get<std::vector<StaticReport>>();
    return a;
}

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
            if (const auto anchor = exported_anchor(p))
                ctx.anchor = anchor;
            ForecastQuery q =
                build_forecast_query(it->second, without_defines(p.candidate_code, tunables), tunables, report, ctx);
            q.hardware = p.hardware;
            return q;
        } catch (const std::exception&) {
            // fall through: the pair's own fields
        }
    }
    ForecastQuery q;
    q.pack = p.pack;
    q.problem_name = p.pack;
    if (p.extra.contains("problem_name")) {
        if (!p.extra["problem_name"].is_string())
            throw Error("\"problem_name\" must be a string, found " + std::string(p.extra["problem_name"].type_name()));
        q.problem_name = p.extra["problem_name"].get<std::string>();
    }
    if (p.extra.contains("problem_description") && p.extra["problem_description"].is_string())
        q.problem_description = p.extra["problem_description"].get<std::string>();
    q.reference_source = p.anchor_code;
    q.candidate_source = p.candidate_code;
    q.hardware = p.hardware;
    // A foreign pair's anchor is its anchor_code; what it was measured against is all the pair says of it.
    q.anchor.label = "anchor";
    q.anchor.source = p.anchor_code;
    return q;
}

std::string default_store_path(const std::string& pairs, const std::string& surrogate) {
    const std::string stem = pairs + "." + surrogate + "-eval";
    std::string path = stem + ".sqlite";
    for (int i = 2; fs::exists(path); ++i)
        path = stem + "-" + std::to_string(i) + ".sqlite";
    return path;
}

}  // namespace

EvaluationResult evaluate_pairs(const EvaluationOptions& a, const EvaluationMessageFn& message,
                                const EvaluationProgressFn& progress) {
    const auto say = [&](const std::string& text) {
        if (message)
            message(text);
    };
    const auto report_progress = [&](const char* stage, size_t done, size_t total) {
        if (progress)
            progress(stage, done, total);
    };
    const BinScheme scheme = BinScheme::gfV2();
    report_progress("import", 0, 1);
    if (a.true_bins != "scheme" && a.true_bins != "file")
        throw Error("--true-bins must be \"file\" or \"scheme\", found \"" + a.true_bins + "\"");
    const ImportResult imported = import_forecasters_dataset_file(
        a.pairs, forecasters_dataset_from_string(a.dataset), scheme, a.strict ? ImportMode::Strict : ImportMode::Skip);
    for (const auto& issue : imported.issues)
        say(a.pairs + ":" + std::to_string(issue.line) + ": skipped: " + issue.message);
    EvaluationResult result;
    std::vector<ImportedPair> pairs;
    for (const auto& p : imported.pairs) {
        if (p.speedup)
            pairs.push_back(p);
        else
            ++result.failed_candidates;  // a failed candidate has no speedup bin to forecast
    }
    if (pairs.empty())
        throw Error(SourceLocation{a.pairs, 0}, "no pair with a measured speedup to evaluate on");
    report_progress("import", 1, 1);

    std::map<std::string, Problem> problems;
    const std::string problems_root = a.resources_dir + "/problems";
    for (const auto& dir : list_problem_folders(problems_root)) {
        try {
            Problem pr = Problem::load((fs::path(dir) / "problem.json").string());
            problems[pr.name] = pr;
        } catch (const std::exception&) {}
    }
    // One malformed pair fails its own forecast, never the evaluation: only the pairs whose query could be built
    // are asked (`asked[k]` is the pair of queries[k]).
    std::vector<ForecastResult> results(pairs.size());
    std::vector<std::string> prompts(pairs.size());
    std::vector<ForecastQuery> queries;
    std::vector<size_t> asked;
    for (size_t i = 0; i < pairs.size(); ++i) {
        try {
            queries.push_back(query_for(pairs[i], problems));
            asked.push_back(i);
        } catch (const std::exception& e) {
            results[i].error = std::string("the pair cannot be asked: ") + e.what();
        }
    }
    std::string surrogate_id;
    LlmConfig llm_cfg;
    if (a.surrogate == "llm") {
        nlohmann::json overrides = a.llm.is_object() ? a.llm : nlohmann::json::object();
        if (!a.endpoint.empty())
            overrides["endpoint"] = a.endpoint;
        if (!a.model.empty())
            overrides["model"] = a.model;
        if (a.concurrency > 0)
            overrides["concurrency"] = a.concurrency;
        if (a.timeout_s > 0)
            overrides["timeout_s"] = a.timeout_s;
        LlmConfig cfg = LlmConfig::loadSettings(overrides);
        llm_cfg = cfg;
        if (cfg.endpoint.empty() || cfg.model.empty())
            throw Error("--surrogate llm needs --endpoint URL and --model NAME (or both in " +
                        LlmConfig::settingsPath() + ")");
        LlmForecasterOptions options;
        options.samples = a.samples;
        options.abstain = a.abstain;
        LlmForecaster llm(cfg, a.resources_dir + "/prompts", options);
        surrogate_id = llm.id();
        report_progress("forecast", 0, 1);
        auto outcomes = llm.forecastWithDetails(queries);
        for (size_t k = 0; k < outcomes.size() && k < asked.size(); ++k) {
            results[asked[k]] = outcomes[k].result;
            prompts[asked[k]] = outcomes[k].prompt.text();
        }
        report_progress("forecast", 1, 1);
    } else {
        // One model per pack, each trained without the recording of that pack's problem (no leakage).
        const std::string folder = a.recordings.empty() ? default_recordings_folder(a.resources_dir) : a.recordings;
        std::map<std::string, std::vector<size_t>> by_pack;
        for (size_t i = 0; i < queries.size(); ++i)
            by_pack[queries[i].pack].push_back(i);
        size_t done = 0;
        report_progress("forecast", 0, by_pack.size());
        for (const auto& [pack, idx] : by_pack) {
            LocalForecaster local;
            surrogate_id = local.id();
            if (!folder.empty())
                local.learn(examples_from_recordings_except(folder, problems_root, pack));
            local.freezeBase(forecaster_cache_dir());  // the same model, read from the cache when trained before
            std::vector<ForecastQuery> qs;
            for (size_t i : idx)
                qs.push_back(queries[i]);
            auto rs = local.forecast(qs);
            for (size_t k = 0; k < idx.size() && k < rs.size(); ++k)
                results[asked[idx[k]]] = rs[k];
            report_progress("forecast", ++done, by_pack.size());
        }
    }

    std::vector<ScoredForecast> scored;
    std::map<std::string, std::vector<ScoredForecast>> per_pack;
    for (size_t i = 0; i < pairs.size(); ++i) {
        if (results[i].deferred) {
            ++result.deferred;  // an abstention: measured, not forecast
            continue;
        }
        if (!results[i].forecast) {
            ++result.failed_forecasts;
            say("pair " + pairs[i].comparison_id + " (line " + std::to_string(pairs[i].line) +
                "): forecast failed: " + results[i].error);
            continue;
        }
        ScoredForecast s{results[i].forecast->probabilities, *pairs[i].speedup, pairs[i].pack};
        if (a.true_bins == "file") {
            if (!pairs[i].source_true_bin || *pairs[i].source_true_bin < 1 || *pairs[i].source_true_bin > kBinCount) {
                ++result.unlabelled;
                say("pair " + pairs[i].comparison_id + " (line " + std::to_string(pairs[i].line) +
                    "): left out: --true-bins file needs a true_bin of 1..8 in the file");
                continue;
            }
            s.true_bin = *pairs[i].source_true_bin;
        }
        scored.push_back(s);
        per_pack[s.pack].push_back(s);
    }
    if (scored.empty())
        throw Error("every forecast failed; nothing to score (see the errors above)");
    result.metrics = compute_metrics(scored, scheme);
    nlohmann::json out = metrics_json(result.metrics);
    out["per_pack"] = nlohmann::json::object();
    for (const auto& [pack, items] : per_pack) {
        nlohmann::json pj = metrics_json(compute_metrics(items, scheme));
        out["per_pack"][pack] = pj;
    }
    out["surrogate"] = surrogate_id;
    out["true_bins"] = a.true_bins;
    out["true_bins_rule"] = a.true_bins == "file"
                                ? "the file's true_bin (clamp(floor(2*log2 S)+4, 1, 8), as the GPU Forecasters paper)"
                                : "the bin of S under " + scheme.id() + " (edges 0.25 0.5 0.71 1 1.41 2 4)";
    out["unlabelled_pairs"] = result.unlabelled;
    out["failed_forecasts"] = result.failed_forecasts;
    out["deferred"] = result.deferred;
    // Abstentions over the pairs asked; beside it the trivial baseline: abstaining on nothing scores every pair.
    out["abstain_rate"] = pairs.empty() ? 0.0 : double(result.deferred) / double(pairs.size());
    int64_t tokens = 0, truncated = 0;
    double cost = 0;
    for (const auto& r : results)
        for (const auto& call : r.calls) {
            tokens += call.tokens_in + call.tokens_out;
            cost += call.cost_usd;
            truncated += call.outcome == "truncated";
        }
    out["llm"] = {{"tokens", tokens}, {"cost_usd", cost}, {"truncated", truncated}};
    out["skipped_lines"] = imported.issues.size();
    out["failed_candidates"] = result.failed_candidates;

    // Every forecast goes into a run file: the GUI shows the pairs as a population with their forecasts.
    report_progress("store", 0, 1);
    const std::string store_path = a.store.empty() ? default_store_path(a.pairs, a.surrogate) : a.store;
    {
        RunStore store = RunStore::create(store_path);
        RunInfo run;
        run.name = "evaluation of " + fs::path(a.pairs).filename().string();
        run.problem = per_pack.size() == 1 ? per_pack.begin()->first : "";
        run.device = "imported";
        run.surrogate = surrogate_id;
        run.gating = "evaluation";
        run.config = {{"kind", "evaluation"},     {"pairs", fs::absolute(a.pairs).string()},
                      {"surrogate", a.surrogate}, {"endpoint", llm_cfg.endpoint},
                      {"model", llm_cfg.model},   {"samples", a.samples},
                      {"abstain", a.abstain}};
        if (a.surrogate == "llm")
            run.config["llm"] = llm_cfg;
        store.addRun(run);
        auto tx = store.transaction();
        store.addImportedPairs(run.id, imported.pairs, scheme.id());
        for (size_t i = 0; i < pairs.size(); ++i) {
            Candidate c;
            c.mutator = Mutator::Imported;
            c.label = "pair:" + pairs[i].comparison_id;
            c.source = pairs[i].candidate_code;
            store.addCandidate(run.id, c);
            // The store holds speedups over the reference, as a search's does; a forecast is of S against its
            // anchor, so an anchored pair's measurement is the anchor's speedup times S (the GUI divides it back).
            const auto anchor = exported_anchor(pairs[i]);
            Measurement m;
            m.status = Status::Ok;
            m.speedup = *pairs[i].speedup * (anchor && anchor->speedup > 0 ? anchor->speedup : 1.0);
            m.device_kind = "imported";
            m.device.name = pairs[i].hardware;
            store.addMeasurement(c.id, m);
            if (results[i].forecast)
                store.addForecast(c.id, *results[i].forecast);
            else
                store.addEvent(run.id, results[i].deferred ? "forecast_deferred" : "forecast_failed",
                               {{"candidate", c.id}, {"error", results[i].error}});
            for (LlmCall call : results[i].calls) {
                call.candidate_id = c.id;
                store.addLlmCall(run.id, call);
            }
            if (!prompts[i].empty())
                store.addEvent(run.id, "prompt", {{"candidate", c.id}, {"prompt", prompts[i]}});
        }
        tx.commit();
    }
    out["store"] = store_path;
    report_progress("store", 1, 1);

    if (!a.report.empty()) {
        fs::create_directories(a.report);
        auto write = [&](const char* name, const std::string& text) {
            write_file_atomically((fs::path(a.report) / name).string(), text);
        };
        write("metrics.json", out.dump(2) + "\n");
        write("reliability.json", reliability_json(result.metrics).dump(2) + "\n");
        write("reliability.csv", reliability_csv(result.metrics));
        write("risk_coverage.json", risk_coverage_json(result.metrics).dump(2) + "\n");
        write("risk_coverage.csv", risk_coverage_csv(result.metrics));
        out["report"] = a.report;
    }
    result.json = std::move(out);
    result.surrogate_id = surrogate_id;
    result.store_path = store_path;
    return result;
}

}  // namespace kerncast
