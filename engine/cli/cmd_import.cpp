// kerncast-cli import --pairs F.jsonl --store OUT.sqlite [--dataset D] [--strict]: GPU Forecasters pairs (their eval
// set, RL training pool, discovery pairs or a PUCT search's events.jsonl) into a run store.
// kerncast-cli import --kernel-tuner CACHE.json[.gz] --problem P --out RECORDING.jsonl [--reference-ms T]: a Kernel
// Tuner cache of a problem's family as a replay recording.
// kerncast-cli import --t4 RESULTS.json[.gz] --problem P --out RECORDING.jsonl [--reference-ms T] [--device-name D]:
// T4 results of a problem's family as a replay recording.

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_datasets.h"
#include "core/forecasters_import.h"
#include "core/kernel_tuner_cache.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/t4_results.h"
#include "core/text_util.h"
#include "engine/cli/cli.h"
#include "engine/cli/cmd_import_t1.h"
#include "engine/cli/problem_arg.h"
#include "engine/replay/kernel_tuner_interop.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <ostream>

namespace kerncast::cli {

namespace {

struct ImportOptions {
    std::string pairs;
    std::string store;
    std::string dataset = "eval-set";
    bool strict = false;
    std::string kernel_tuner;  // a Kernel Tuner cache to turn into a recording
    std::string t4;            // T4 results to turn into a recording
    std::string device_name;   // with --t4: the device the results were measured on
    std::string problem;
    std::string out;
    double reference_ms = 0;
};

void report_failure(Context& ctx, const std::string& message) {
    if (ctx.json)
        *ctx.out << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
    else
        *ctx.err << "kerncast-cli import: " << message << "\n";
    ctx.exit_code = 1;
}

// "1.2 h", "9.1 min", "41 s", "250 ms": a total time for a person.
std::string human_duration(double ms) {
    char buf[32];
    if (ms >= 3.6e6)
        std::snprintf(buf, sizeof buf, "%.1f h", ms / 3.6e6);
    else if (ms >= 60e3)
        std::snprintf(buf, sizeof buf, "%.1f min", ms / 60e3);
    else if (ms >= 1e3)
        std::snprintf(buf, sizeof buf, "%.1f s", ms / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0f ms", ms);
    return buf;
}

// The device of results that do not name it (T4 results never do; some of the benchmark hub's caches have an empty
// device_name): the file's name without ".json[.gz]" and a trailing "_T4", as the hub names them (A100_T4.json.gz,
// MI250X.json.gz: "A100", "MI250X").
std::string device_from_file_name(const std::string& path) {
    std::string name = std::filesystem::path(path).filename().string();
    for (const char* suffix : {".gz", ".json", "_T4", "-T4", "_t4"})
        if (name.size() > std::string(suffix).size() &&
            name.compare(name.size() - std::strlen(suffix), std::strlen(suffix), suffix) == 0)
            name.resize(name.size() - std::strlen(suffix));
    return name;
}

// --kernel-tuner CACHE or --t4 RESULTS (each plain or gzip-compressed) as a replay recording of --problem's family.
void run_kernel_tuner_import(Context& ctx, const ImportOptions& options) {
    const bool t4 = !options.t4.empty();
    const std::string& file = t4 ? options.t4 : options.kernel_tuner;
    const char* option = t4 ? "--t4" : "--kernel-tuner";
    if (!options.kernel_tuner.empty() && t4)
        throw Error("give --kernel-tuner CACHE or --t4 RESULTS, not both");
    if (options.problem.empty() || options.out.empty())
        throw Error(std::string(option) + " needs --problem (the family's problem) and --out (the recording to write)");
    const ProblemBundle bundle = load_problem_folder(resolve_problem_dir(options.problem));
    KernelTunerCache cache;
    int benchmark_from_runtimes = 0;
    if (t4) {
        std::vector<std::string> order;
        if (bundle.family)
            for (const auto& t : bundle.family->tunables)
                order.push_back(t.name);
        T4Results results = load_t4_results(file, order);
        cache = std::move(results.cache);
        benchmark_from_runtimes = results.benchmark_from_runtimes;
    } else {
        cache = load_kernel_tuner_cache(file);
    }
    // Kerncast's own exports name their device, and Kernel Tuner's caches mostly do; T4 results by others do not.
    if (cache.device_name.empty())
        cache.device_name = options.device_name.empty() ? device_from_file_name(file) : options.device_name;
    const KernelTunerImport imported = recording_from_kernel_tuner_cache(
        cache, file, bundle, options.reference_ms > 0 ? std::optional<double>(options.reference_ms) : std::nullopt);
    write_file_atomically(options.out, recording_jsonl(imported.recording));
    if (ctx.json) {
        nlohmann::json j = {{"ok", true},
                            {t4 ? "t4" : "cache", file},
                            {"recording", options.out},
                            {"problem", bundle.problem.name},
                            {"device", cache.device_name},
                            {"configurations", imported.configurations},
                            {"failed", imported.failed},
                            {"compile_failed", imported.compile_failed},
                            {"runtime_failed", imported.failed - imported.compile_failed},
                            {"reference_ms", imported.reference_ms},
                            {"reference_from", imported.reference},
                            {"median_compile_ms", imported.median_compile_ms},
                            {"median_benchmark_ms", imported.median_benchmark_ms},
                            {"total_compile_ms", imported.total_compile_ms},
                            {"total_benchmark_ms", imported.total_benchmark_ms}};
        if (t4)
            j["benchmark_from_runtimes"] = benchmark_from_runtimes;
        *ctx.out << j.dump(2) << "\n";
        return;
    }
    char times[256];
    std::snprintf(times, sizeof times, "median compile %.1f ms, median benchmark %.1f ms", imported.median_compile_ms,
                  imported.median_benchmark_ms);
    char reference[64];
    std::snprintf(reference, sizeof reference, "%.6g ms", imported.reference_ms);
    *ctx.out << "Wrote " << options.out << ": the reference and " << imported.configurations << " configurations of "
             << bundle.problem.name << "'s family on " << cache.device_name << " (" << imported.failed
             << " failed: " << imported.compile_failed << " to compile, " << imported.failed - imported.compile_failed
             << " at run time).\n"
             << "The reference: " << reference << " (" << imported.reference << ").\n"
             << "Recorded time per configuration: " << times << " (in all " << human_duration(imported.total_compile_ms)
             << " compiling, " << human_duration(imported.total_benchmark_ms) << " benchmarking).\n";
    if (benchmark_from_runtimes > 0)
        *ctx.out << benchmark_from_runtimes << " results have no times.benchmark (Kernel Tuner before 1.1): their "
                 << "benchmark time is the sum of their runtimes.\n";
    *ctx.out << "Replay it from a folder named after the device, e.g. <folder>/" << bundle.problem.name
             << ".jsonl, with --device replay:<folder>.\n";
}

void run_import(Context& ctx, const ImportOptions& options) {
    if (options.pairs.empty() || options.store.empty()) {
        report_failure(
            ctx, "give --pairs FILE --store RUN_FILE (or --kernel-tuner CACHE / --t4 RESULTS --problem P --out FILE)");
        return;
    }
    const BinScheme scheme = BinScheme::gfV2();
    ImportResult result;
    std::string version;
    try {
        result =
            import_forecasters_dataset_file(options.pairs, forecasters_dataset_from_string(options.dataset), scheme,
                                            options.strict ? ImportMode::Strict : ImportMode::Skip, &version);
    } catch (const Error& e) {
        // Strict mode: nothing is stored from a file with a malformed line.
        report_failure(ctx, std::string(e.what()) + (options.strict ? " (--strict: nothing was imported)" : ""));
        return;
    }
    if (result.pairs.empty()) {
        report_failure(ctx, options.pairs + ": no valid pair in " + std::to_string(result.lines_read) + " lines" +
                                (result.issues.empty()
                                     ? ""
                                     : "; first problem on line " + std::to_string(result.issues.front().line) + ": " +
                                           result.issues.front().message));
        return;
    }

    int64_t run_id = 0;
    try {
        auto store = RunStore::openOrCreate(options.store);
        RunInfo run;
        run.name = "import " + std::filesystem::path(options.pairs).filename().string();
        run.config = {{"pairs", options.pairs},
                      {"dataset", options.dataset},
                      {"scheme", scheme.id()},
                      {"strict", options.strict}};
        if (!version.empty())
            run.config["event_log_version"] = version;
        // One transaction: a store never holds half an import.
        auto tx = store.transaction();
        run_id = store.addRun(run);
        store.addImportedPairs(run_id, result.pairs, scheme.id());
        nlohmann::json skipped = nlohmann::json::array();
        for (const auto& issue : result.issues)
            skipped.push_back(issue.line);
        store.addEvent(run_id, "import",
                       {{"file", options.pairs}, {"imported", result.pairs.size()}, {"skipped_lines", skipped}});
        tx.commit();
    } catch (const Error& e) {
        report_failure(ctx, e.what());
        return;
    }

    const int differ = result.binDisagreements();
    if (ctx.json) {
        nlohmann::json skipped = nlohmann::json::array();
        for (const auto& issue : result.issues)
            skipped.push_back({{"line", issue.line}, {"message", issue.message}});
        *ctx.out << nlohmann::json{{"ok", true},
                                   {"pairs", options.pairs},
                                   {"dataset", options.dataset},
                                   {"store", options.store},
                                   {"run_id", run_id},
                                   {"lines_read", result.lines_read},
                                   {"imported", result.pairs.size()},
                                   {"skipped", skipped},
                                   {"scheme", scheme.id()},
                                   {"bin_differs_from_source", differ}}
                        .dump(2)
                 << "\n";
        return;
    }
    *ctx.out << "Imported " << result.pairs.size() << " pairs from " << options.pairs << " into " << options.store
             << " (run " << run_id << ").\n";
    if (!result.issues.empty()) {
        *ctx.out << "Skipped " << result.issues.size() << " malformed lines:\n";
        for (const auto& issue : result.issues)
            *ctx.out << "  " << options.pairs << ":" << issue.line << ": " << issue.message << "\n";
    }
    if (differ > 0)
        *ctx.out << differ << " pairs have a " << scheme.id()
                 << " bin that differs from the file's true_bin (their bins are floor(2*log2 S)+4; both are "
                    "stored).\n";
}

}  // namespace

void add_import_command(CLI::App& app, Context& ctx) {
    auto options = std::make_shared<ImportOptions>();
    auto t1 = std::make_shared<T1ImportArgs>();
    auto* cmd = app.add_subcommand(
        "import", "Import GPU Forecasters pairs into a run store, or a Kernel Tuner cache as a replay recording");
    cmd->add_option("--pairs", options->pairs, "Pairs file (.jsonl)")->check(CLI::ExistingFile);
    cmd->add_option("--store", options->store, "Run store to write (created if missing)");
    cmd->add_option("--dataset", options->dataset,
                    "What --pairs holds: eval-set, rl-pool, discovery-pairs or puct-events (v2 or v3 events.jsonl)")
        ->check(CLI::IsMember({"eval-set", "rl-pool", "discovery-pairs", "puct-events"}))
        ->capture_default_str();
    cmd->add_flag("--strict", options->strict, "Stop at the first malformed line and import nothing");
    cmd->add_option("--kernel-tuner", options->kernel_tuner,
                    "Kernel Tuner cache (.json, or .json.gz) to turn into a recording")
        ->check(CLI::ExistingFile);
    cmd->add_option("--t4", options->t4, "T4 results (.json, or .json.gz) to turn into a recording")
        ->check(CLI::ExistingFile);
    cmd->add_option("--device-name", options->device_name,
                    "With --t4 or --kernel-tuner: the device the results were measured on, when the file does not "
                    "name it (T4 results by other tools; default: the file's name without _T4.json.gz)");
    cmd->add_option("--problem", options->problem,
                    "With --kernel-tuner or --t4: the problem whose family.cu was tuned");
    cmd->add_option("--out", options->out,
                    "With --kernel-tuner or --t4: the recording (.jsonl) to write; with --t1: the problem folder");
    cmd->add_option("--reference-ms", options->reference_ms,
                    "With --kernel-tuner or --t4: the reference kernel's time in ms on the cache's device (default: "
                    "the cache's Kerncast header, else its entry for problem.json's reference_configuration)");
    cmd->add_option("--t1", t1->t1, "A T1 problem file (.json) to turn into a problem folder (--out DIR)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--kernel-file", t1->kernel_file,
                    "With --t1: the CUDA kernel source to use instead of the file's KernelFile")
        ->check(CLI::ExistingFile);
    cmd->add_option("--name", t1->name, "With --t1: the problem's name (default: the file's BenchmarkName)");
    cmd->add_option("--reference-config", t1->reference,
                    "With --t1: NAME=VALUE to change the reference configuration (default: the T1 defaults; repeat)");
    cmd->callback([&ctx, options, t1] {
        if (!t1->t1.empty()) {
            t1->out = options->out;
            try {
                run_t1_import(ctx, *t1);
            } catch (const std::exception& e) {
                report_failure(ctx, e.what());
            }
            return;
        }
        if (options->kernel_tuner.empty() && options->t4.empty()) {
            run_import(ctx, *options);
            return;
        }
        try {
            run_kernel_tuner_import(ctx, *options);
        } catch (const std::exception& e) {
            report_failure(ctx, e.what());
        }
    });
}

}  // namespace kerncast::cli
