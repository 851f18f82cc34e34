// kerncast-cli forecast --problem P --kernel F --surrogate local|llm [--tunable NAME=V ...] [--endpoint URL
// --model M --samples n --llm-profile P --abstain] [--device D] [--json]: one kernel's speedup forecast as a
// distribution over the bins. The kernel is compiled here (NVRTC) for its static report; the local surrogate learns
// from every recording except this problem's. Exit 0 with a forecast, 2 when the surrogate failed for this kernel, 1 on
// bad input.
#include "engine/cli/cli.h"
#include "engine/cli/llm_options.h"
#include "engine/cli/problem_arg.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/problem_library.h"
#include "engine/gpu/compiler.h"
#include "engine/replay/replay_device.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/llm_forecaster.h"
#include "engine/surrogate/local_forecaster.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct ForecastArgs {
    std::string problem;
    std::string kernel;
    std::string surrogate = "local";
    std::vector<std::string> tunables;
    LlmOptionArgs llm;
    int samples = 1;
    bool abstain = false;
    bool show_prompt = false;
};

// The speedups bin b holds, e.g. "1.00-1.41x", "<= 0.25x", "> 4.00x": a bin number or name alone says too little.
std::string bin_range(const BinScheme& scheme, int b) {
    char buf[64];
    const double lo = scheme.lowerEdge(b), hi = scheme.upperEdge(b);
    if (lo <= 0)
        std::snprintf(buf, sizeof buf, "<= %.2fx", hi);
    else if (!std::isfinite(hi))
        std::snprintf(buf, sizeof buf, "> %.2fx", lo);
    else
        std::snprintf(buf, sizeof buf, "%.2f-%.2fx", lo, hi);
    return buf;
}

// What the default recordings measured for this very program, to hold the forecast against.
std::optional<double> recorded_speedup(const std::string& problem, const std::string& source,
                                       const std::map<std::string, int64_t>& tunables, std::string& where) {
    const std::string folder = default_recordings_folder(resources_dir());
    const fs::path file = fs::path(folder) / (problem + ".jsonl");
    std::error_code ec;
    if (folder.empty() || !fs::is_regular_file(file, ec))
        return std::nullopt;
    try {
        const Recording rec = Recording::load(file.string());
        const RecordingEntry* entry = rec.find(content_hash(source, tunables));
        if (!entry || entry->measurement.status != Status::Ok || !(entry->measurement.speedup > 0))
            return std::nullopt;
        where = rec.header.device.name.empty() ? fs::path(folder).filename().string() : rec.header.device.name;
        return entry->measurement.speedup;
    } catch (const Error&) {
        return std::nullopt;  // a broken recording is `record`'s and `search`'s to report
    }
}

void run_forecast(Context& ctx, const ForecastArgs& a) {
    const std::string dir = resolve_problem_dir(a.problem);
    const ProblemBundle bundle = load_problem_folder(dir);
    const std::string source = read_kernel_file(a.kernel);
    const KernelProgram program = KernelProgram::parse(source, a.kernel);
    program.validate(bundle.problem);
    std::map<std::string, int64_t> tunables = parse_tunables(a.tunables);
    if (tunables.empty() && !program.tunables.empty()) {
        auto configs = program.configurations(1);
        if (!configs.empty())
            tunables = configs.front();
    }
    if (!program.tunables.empty() && !program.isValid(tunables))
        throw Error("the tunable values are not a valid configuration of " + a.kernel);

    Compiler compiler;
    CompileRequest req;
    req.source = source;
    req.file_name = fs::path(a.kernel).filename().string();
    req.defines = tunables;
    req.kernel_names = program.kernelNames();
    const CompileResult compiled = compiler.compile(req);
    if (!compiled.ok)
        throw Error("the kernel does not compile, so there is nothing to forecast:\n" + compiled.log);
    CompileRequest ref_req;
    ref_req.source = bundle.reference.source;
    ref_req.file_name = "reference.cu";
    ref_req.kernel_names = bundle.reference.kernelNames();
    const CompileResult ref = compiler.compile(ref_req);
    QueryContext qctx;
    if (ref.ok)
        qctx.reference_static_report = ref.kernels;
    const ForecastQuery query = build_forecast_query(bundle.problem, source, tunables, compiled.kernels, qctx);

    ForecastResult result;
    std::string prompt;
    std::string surrogate_id;
    std::string model_reasoning;  // the reasoning field of the answer, when the server returns one
    if (a.surrogate == "llm") {
        const LlmConfig cfg = LlmConfig::loadSettings(llm_overrides(a.llm));
        if (cfg.endpoint.empty() || cfg.model.empty())
            throw Error("--surrogate llm needs --endpoint URL and --model NAME (or both in " +
                        LlmConfig::settingsPath() + ")");
        LlmForecasterOptions options;
        options.samples = a.samples;
        options.abstain = a.abstain;
        LlmForecaster llm(cfg, resources_dir() + "/prompts", options);
        surrogate_id = llm.id();
        auto outcome = llm.forecastWithDetails({query});
        result = outcome.at(0).result;
        prompt = outcome.at(0).prompt.text();
        for (const auto& sample : outcome.at(0).samples)
            if (!sample.reply.reasoning.empty())
                model_reasoning = sample.reply.reasoning;
    } else {
        LocalForecaster local;
        surrogate_id = local.id();
        if (const std::string folder = default_recordings_folder(resources_dir()); !folder.empty())
            local.learn(examples_from_recordings_except(folder, resources_dir() + "/problems", bundle.problem.name));
        local.freezeBase(forecaster_cache_dir());  // the same model; a second forecast of the problem starts at once
        result = local.forecast({query}).at(0);
    }
    const BinScheme scheme = BinScheme::gfV2();
    if (result.deferred) {
        // Predict-or-defer: the model asks for a measurement. Not a failure: exit 0, and the output says so.
        if (ctx.json)
            *ctx.out << nlohmann::json{{"ok", true},
                                       {"surrogate", surrogate_id},
                                       {"deferred", true},
                                       {"reason", result.error}}
                            .dump(2)
                     << "\n";
        else
            *ctx.out << "surrogate  " << surrogate_id << "\n" << result.error << "\n";
        return;
    }
    if (!result.forecast) {
        if (ctx.json)
            *ctx.out << nlohmann::json{{"ok", false}, {"surrogate", surrogate_id}, {"error", result.error}}.dump(2)
                     << "\n";
        else
            *ctx.err << "kerncast-cli forecast: the surrogate failed: " << result.error << "\n";
        ctx.exit_code = 2;
        return;
    }
    const Forecast& f = *result.forecast;
    std::string recorded_on;
    const auto recorded = recorded_speedup(bundle.problem.name, source, tunables, recorded_on);
    if (ctx.json) {
        nlohmann::json j = {{"ok", true},
                            {"surrogate", surrogate_id},
                            {"forecast", f},
                            {"bins", nlohmann::json::array()},
                            {"confidence", f.maxProbability()},
                            {"expected_speedup", std::exp(f.expectedLogSpeedup(scheme))},
                            {"static_report", compiled.kernels}};
        for (int b = 1; b <= kBinCount; ++b)
            j["bins"].push_back(
                {{"bin", b}, {"name", scheme.name(b)}, {"range", bin_range(scheme, b)}, {"p", f.probabilities[b - 1]}});
        if (recorded)
            j["recorded"] = {{"speedup", *recorded}, {"bin", scheme.binOf(*recorded)}, {"device", recorded_on}};
        if (a.show_prompt)
            j["prompt"] = prompt;
        if (!model_reasoning.empty())
            j["model_reasoning"] = model_reasoning;
        *ctx.out << j.dump(2) << "\n";
        return;
    }
    std::ostream& out = *ctx.out;
    out << "surrogate  " << surrogate_id << "\n";
    for (int b = 1; b <= kBinCount; ++b) {
        char buf[160];
        const double p = f.probabilities[b - 1];
        std::snprintf(buf, sizeof buf, "%s %d %-22s %-12s %5.1f%% %s\n", b == f.predicted_bin ? ">" : " ", b,
                      scheme.name(b).c_str(), bin_range(scheme, b).c_str(), 100 * p,
                      std::string(static_cast<size_t>(p * 40 + 0.5), '#').c_str());
        out << buf;
    }
    char buf[200];
    std::snprintf(buf, sizeof buf, "predicted  bin %d %s (%s, confidence %.2f), expected speedup %.2fx\n",
                  f.predicted_bin, scheme.name(f.predicted_bin).c_str(), bin_range(scheme, f.predicted_bin).c_str(),
                  f.maxProbability(), std::exp(f.expectedLogSpeedup(scheme)));
    out << buf;
    if (recorded) {
        const int bin = scheme.binOf(*recorded);
        std::snprintf(buf, sizeof buf, "recorded   %.2fx on %s: bin %d %s (%s)\n", *recorded, recorded_on.c_str(), bin,
                      scheme.name(bin).c_str(), bin_range(scheme, bin).c_str());
        out << buf;
    }
    if (!f.reasoning.empty())
        out << "reasoning  " << f.reasoning << "\n";
    if (a.show_prompt && !prompt.empty())
        out << "prompt:\n" << prompt << "\n";
}

}  // namespace

void add_forecast_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<ForecastArgs>();
    auto* cmd = app.add_subcommand("forecast", "Forecast a kernel's speedup bin with a surrogate");
    cmd->add_option("--problem", args->problem, "Problem name or folder")->required();
    cmd->add_option("--kernel", args->kernel, "Kernel program (.cu)")->required();
    cmd->add_option("--surrogate", args->surrogate, "local or llm")
        ->check(CLI::IsMember({"local", "llm"}))
        ->capture_default_str();
    cmd->add_option("--tunable", args->tunables, "NAME=VALUE for a tunable of the kernel (repeat)");
    add_llm_options(cmd, args->llm);
    cmd->add_option("--samples", args->samples, "Requests averaged")->check(CLI::Range(1, 64))->capture_default_str();
    cmd->add_flag("--abstain", args->abstain, "Predict or defer: the model may ask for a measurement instead");
    cmd->add_flag("--prompt", args->show_prompt, "Also print the prompt (LLM surrogate)");
    cmd->callback([&ctx, args] {
        try {
            run_forecast(ctx, *args);
        } catch (const std::exception& e) {
            report_failure(ctx, "forecast", e.what());
        }
    });
}

}  // namespace kerncast::cli
