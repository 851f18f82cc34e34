// kerncast-cli import --pairs F.jsonl --store OUT.sqlite [--dataset D] [--strict]: GPU Forecasters pairs (their eval
// set, RL training pool, discovery pairs or a PUCT search's events.jsonl) into a run store.
// kerncast-cli import --kernel-tuner CACHE.json --problem P --out RECORDING.jsonl [--reference-ms T]: a Kernel Tuner
// cache of a problem's family as a replay recording.

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_datasets.h"
#include "core/forecasters_import.h"
#include "core/kernel_tuner_cache.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/text_util.h"
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/replay/kernel_tuner_interop.h"

#include <nlohmann/json.hpp>

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

void run_kernel_tuner_import(Context& ctx, const ImportOptions& options) {
    if (options.problem.empty() || options.out.empty())
        throw Error("--kernel-tuner needs --problem (the family's problem) and --out (the recording to write)");
    const KernelTunerCache cache = load_kernel_tuner_cache(options.kernel_tuner);
    const ProblemBundle bundle = load_problem_folder(resolve_problem_dir(options.problem));
    const KernelTunerImport imported = recording_from_kernel_tuner_cache(
        cache, options.kernel_tuner, bundle,
        options.reference_ms > 0 ? std::optional<double>(options.reference_ms) : std::nullopt);
    write_file_atomically(options.out, recording_jsonl(imported.recording));
    if (ctx.json) {
        *ctx.out << nlohmann::json{{"ok", true},
                                   {"cache", options.kernel_tuner},
                                   {"recording", options.out},
                                   {"problem", bundle.problem.name},
                                   {"device", cache.device_name},
                                   {"configurations", imported.configurations},
                                   {"failed", imported.failed}}
                        .dump(2)
                 << "\n";
        return;
    }
    *ctx.out << "Wrote " << options.out << ": the reference and " << imported.configurations << " configurations of "
             << bundle.problem.name << "'s family on " << cache.device_name << " (" << imported.failed << " failed).\n"
             << "Replay it from a folder named after the device, e.g. <folder>/" << bundle.problem.name
             << ".jsonl, with --device replay:<folder>.\n";
}

void run_import(Context& ctx, const ImportOptions& options) {
    if (options.pairs.empty() || options.store.empty()) {
        report_failure(ctx, "give --pairs FILE --store RUN_FILE (or --kernel-tuner CACHE --problem P --out FILE)");
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
    auto* cmd = app.add_subcommand(
        "import", "Import GPU Forecasters pairs into a run store, or a Kernel Tuner cache as a replay recording");
    cmd->add_option("--pairs", options->pairs, "Pairs file (.jsonl)")->check(CLI::ExistingFile);
    cmd->add_option("--store", options->store, "Run store to write (created if missing)");
    cmd->add_option("--dataset", options->dataset,
                    "What --pairs holds: eval-set, rl-pool, discovery-pairs or puct-events (v2 or v3 events.jsonl)")
        ->check(CLI::IsMember({"eval-set", "rl-pool", "discovery-pairs", "puct-events"}))
        ->capture_default_str();
    cmd->add_flag("--strict", options->strict, "Stop at the first malformed line and import nothing");
    cmd->add_option("--kernel-tuner", options->kernel_tuner, "Kernel Tuner cache (.json) to turn into a recording")
        ->check(CLI::ExistingFile);
    cmd->add_option("--problem", options->problem, "With --kernel-tuner: the problem whose family.cu was tuned");
    cmd->add_option("--out", options->out, "With --kernel-tuner: the recording (.jsonl) to write");
    cmd->add_option("--reference-ms", options->reference_ms,
                    "With --kernel-tuner: the reference kernel's time in ms on the cache's device (when the cache "
                    "does not hold it)");
    cmd->callback([&ctx, options] {
        if (options->kernel_tuner.empty()) {
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
