// kerncast-cli export --run R --format F [--out FILE] [--run-id N], or export --recording FILE --format
// kernel-tuner|t4: a run (or a recording) as a dataset (ARCHITECTURE §8). pairs-jsonl: every measured candidate becomes
// an (anchor, candidate, hardware, speedup) row of the GPU Forecasters eval set, the anchor being its measured parent,
// else the reference (failed candidates are not rows there); events-jsonl: the run's log (candidates, forecasts,
// gating, measurements, steering commands) in write order; kernel-tuner: the family configurations as a Kernel Tuner
// cache; t4: the same as T4 results (--out) and T4 metadata (--metadata, default <out>-metadata.json);
// predictions-jsonl: the forecasts in the GPU Forecasters predictions shape; rewards-jsonl: the reward components of
// each forecast for RL training. cuda and torch: a candidate (or a kernel file with its tunables) as code a project
// can use, written into the folder --out (engine/cli/export_kernel.h).
#include "engine/cli/cli.h"
#include "engine/cli/export_datasets.h"
#include "engine/cli/export_kernel.h"
#include "engine/cli/problem_arg.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"
#include "core/run_store.h"
#include "core/t4_results.h"
#include "core/text_util.h"
#include "engine/atomic_file.h"
#include "engine/unified_diff.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct ExportArgs {
    std::string run;
    std::string recording;
    std::string problem;
    std::string format;
    std::string out;
    std::string metadata;  // t4: the metadata file
    int64_t run_id = 0;
    // cuda and torch
    std::string candidate;
    std::string kernel;
    std::vector<std::string> tunables;
    std::string name_space;
    std::string unit;
};

// "results.json" -> "results-metadata.json", as Kernel Tuner's examples name the pair.
std::string default_t4_metadata_path(const std::string& results) {
    fs::path p(results);
    std::string stem = p.filename().string();
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
        stem.resize(stem.size() - 5);
    return (p.parent_path() / (stem + "-metadata.json")).string();
}

// The cache as T4 results, written where the command says, and its T4 metadata beside it.
void write_t4(const KernelTunerCache& cache, const ExportArgs& a, std::ostream& text, nlohmann::json& summary) {
    text << python_json_dumps(t4_results_json(cache));
    const std::string metadata = a.metadata.empty() ? default_t4_metadata_path(a.out) : a.metadata;
    write_file_atomically(metadata, t4_metadata_json(cache).dump(2) + "\n");
    summary["metadata_file"] = metadata;
    summary["results"] = cache.entries.size();
}

// Family configurations are compiled with -D defines; a pair must stand alone, so the values become #defines.
std::string program_with_defines_of(const Candidate& c) { return program_with_defines(c.source, c.tunables); }

// A pair is a candidate against its anchor (ARCHITECTURE §4): its parent when the parent was measured correct, else the
// reference. anchor_code is the anchor's program and the speedup is S = t_anchor / t_candidate, which is what the
// GPU Forecasters pair schema means; the speedup over the reference stays in the extra fields.
// Returns the number of failed candidates left out.
int export_pairs(RunStore& store, const RunInfo& run, const std::string& run_file, std::ostream& out) {
    int failed = 0;
    const std::vector<Candidate> candidates = store.candidates(run.id);
    const auto measurements = store.measurementsOfRun(run.id);
    std::map<int64_t, const Candidate*> by_id;
    const Candidate* reference = nullptr;
    for (const auto& c : candidates) {
        by_id[c.id] = &c;
        if (c.mutator == Mutator::Reference && !reference)
            reference = &c;
    }
    auto measured_speedup = [&](int64_t id) -> std::optional<double> {
        const auto it = measurements.find(id);
        if (it == measurements.end() || it->second.empty())
            return std::nullopt;
        const Measurement& m = it->second.back().measurement;
        if (m.status != Status::Ok || !(m.speedup > 0))
            return std::nullopt;
        return m.speedup;
    };
    std::vector<ImportedPair> pairs;
    const BinScheme scheme = BinScheme::gfV2();
    for (const auto& c : candidates) {
        const auto mit = measurements.find(c.id);
        if (mit == measurements.end() || mit->second.empty())
            continue;
        const Measurement& m = mit->second.back().measurement;
        if (m.device_kind == "compiler" || m.status == Status::NotRecorded)
            continue;
        // Their eval-set rows are measured comparisons (a float speedup, a bin of 1..8): a failed candidate is not
        // a row.
        if (m.status != Status::Ok || !(m.speedup > 0)) {
            ++failed;
            continue;
        }
        const Candidate* anchor = reference;
        double anchor_speedup = 1.0;
        if (const auto parent = by_id.find(c.parent_id); parent != by_id.end() && parent->second != reference)
            if (const auto s = measured_speedup(c.parent_id)) {
                anchor = parent->second;
                anchor_speedup = *s;
            }
        ImportedPair p;
        p.comparison_id = "run" + std::to_string(run.id) + "-c" + std::to_string(c.id);
        p.pack = run.problem;
        p.hardware = m.device.name;
        p.anchor_code = anchor ? program_with_defines_of(*anchor) : std::string();
        p.candidate_code = program_with_defines_of(c);
        p.speedup = m.speedup / anchor_speedup;
        p.true_bin = scheme.binOf(*p.speedup);
        p.extra = {{"source_id", c.source_hash},
                   {"source_search", fs::path(run_file).filename().string() + "#run" + std::to_string(run.id)},
                   {"internal_experiment", run.name.empty() ? "kerncast-run" + std::to_string(run.id) : run.name},
                   {"problem_name", run.problem},
                   {"candidate_label", c.label},
                   {"mutator", to_string(c.mutator)},
                   {"status", to_string(m.status)},
                   {"tunables", c.tunables},
                   {"static_report", store.staticReportsFor(c.id)},
                   {"anchor_id", anchor && anchor != reference ? anchor->id : int64_t{0}},
                   {"anchor_label", anchor ? anchor->label : std::string("reference")},
                   {"anchor_tunables", anchor ? anchor->tunables : std::map<std::string, int64_t>{}},
                   {"anchor_speedup", anchor_speedup},
                   {"speedup_over_reference", m.speedup}};
        if (anchor && anchor != reference)
            p.extra["anchor_static_report"] = store.staticReportsFor(anchor->id);
        if (m.candidate)
            p.extra["candidate_time_us"] = m.candidate->median_us;
        if (m.reference)
            p.extra["reference_time_us"] = m.reference->median_us;
        pairs.push_back(std::move(p));
    }
    export_forecasters_jsonl(out, pairs);
    return failed;
}

void export_events(RunStore& store, const RunInfo& run, std::ostream& out) {
    // Rows of several tables, merged by their write time (ties keep table order: candidate before its forecast).
    struct Line {
        std::string ts;
        int order;
        int64_t id;
        nlohmann::json j;
    };
    std::vector<Line> lines;
    nlohmann::json runj = {{"kind", "run"},          {"run_id", run.id},     {"ts", run.created_at},
                           {"problem", run.problem}, {"device", run.device}, {"surrogate", run.surrogate},
                           {"gating", run.gating},   {"seed", run.seed},     {"config", run.config}};
    lines.push_back({run.created_at, 0, 0, runj});
    for (const auto& c : store.candidates(run.id)) {
        lines.push_back({"", 1, c.id, {{"kind", "candidate"}, {"run_id", run.id}, {"candidate", c}}});
        for (const auto& f : store.forecastsFor(c.id))
            lines.push_back({f.created_at,
                             2,
                             f.id,
                             {{"kind", "forecast"},
                              {"run_id", run.id},
                              {"ts", f.created_at},
                              {"candidate_id", c.id},
                              {"forecast", f.forecast}}});
        for (const auto& m : store.measurementsFor(c.id))
            lines.push_back({m.created_at,
                             4,
                             m.id,
                             {{"kind", "measurement"},
                              {"run_id", run.id},
                              {"ts", m.created_at},
                              {"candidate_id", c.id},
                              {"measurement", m.measurement}}});
    }
    for (const auto& e : store.events(run.id))
        lines.push_back(
            {e.ts,
             3,
             e.id,
             {{"kind", "event"}, {"run_id", run.id}, {"ts", e.ts}, {"event", e.kind}, {"payload", e.payload}}});
    // Candidates carry no timestamp of their own: a candidate takes the earliest time of the rows about it (its
    // forecast, gating, measurement), which were all written after it. Then rows go by time, and rows of the same
    // millisecond by table (candidate, forecast, event, measurement) and id.
    std::map<int64_t, std::string> first_ts;
    auto note = [&](int64_t cand, const std::string& ts) {
        auto& t = first_ts[cand];
        if (t.empty() || ts < t)
            t = ts;
    };
    for (const auto& l : lines) {
        if (l.order == 2 || l.order == 4)
            note(l.j.value("candidate_id", int64_t{0}), l.ts);
        else if (l.order == 3 && l.j["payload"].contains("candidate") && l.j["payload"]["candidate"].is_number())
            note(l.j["payload"]["candidate"].get<int64_t>(), l.ts);
    }
    for (auto& l : lines)
        if (l.order == 1)
            l.ts = first_ts.count(l.id) ? first_ts[l.id] : run.created_at;
    std::vector<Line> ordered(lines.begin() + 1, lines.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const Line& a, const Line& b) {
        if (a.ts != b.ts)
            return a.ts < b.ts;
        if (a.order != b.order)
            return a.order < b.order;
        return a.id < b.id;
    });
    ordered.insert(ordered.begin(), lines.front());
    for (const auto& l : ordered)
        out << l.j.dump() << "\n";
}

void run_kernel_export(Context& ctx, const ExportArgs& a) {
    if (!a.recording.empty() || !a.metadata.empty())
        throw Error("--format " + a.format + " exports a candidate of a run or a kernel file, not a recording");
    const nlohmann::json summary = export_kernel(
        {a.format, a.run, a.run_id, a.candidate, a.problem, a.kernel, a.tunables, a.out, a.name_space, a.unit});
    if (ctx.json) {
        *ctx.out << summary.dump() << "\n";
        return;
    }
    for (const auto& f : summary["files"])
        *ctx.out << "wrote " << f.get<std::string>() << "\n";
}

void run_export(Context& ctx, const ExportArgs& a) {
    if (a.format == "cuda" || a.format == "torch")
        return run_kernel_export(ctx, a);
    if (!a.candidate.empty() || !a.kernel.empty() || !a.tunables.empty() || !a.name_space.empty() || !a.unit.empty())
        throw Error("--candidate, --kernel, --tunable, --namespace and --unit go with --format cuda or torch");
    if (a.format == "t4" && (a.out.empty() || a.out == "-"))
        throw Error("--format t4 writes two files: give --out RESULTS.json (and --metadata FILE, default "
                    "RESULTS-metadata.json)");
    if (!a.metadata.empty() && a.format != "t4")
        throw Error("--metadata goes with --format t4");
    std::ostringstream text;
    nlohmann::json summary = {{"ok", true}, {"format", a.format}};
    if (!a.recording.empty()) {
        if (!a.run.empty())
            throw Error("give --run or --recording, not both");
        if (a.format != "kernel-tuner" && a.format != "t4")
            throw Error("--recording exports only --format kernel-tuner or t4 (a recording holds no forecasts)");
        if (a.format == "t4")
            write_t4(kernel_tuner_cache_of_recording(a.recording, a.problem), a, text, summary);
        else
            export_kernel_tuner_recording(a.recording, a.problem, text);
    } else {
        if (a.run.empty())
            throw Error("give --run RUN_FILE (or --recording FILE with --format kernel-tuner or t4)");
        RunStore store = open_run_store(a.run);
        const RunInfo run = select_run(store, a.run, a.run_id);
        if (a.format == "pairs-jsonl") {
            const int failed = export_pairs(store, run, a.run, text);
            summary["failed_candidates_left_out"] = failed;
            if (failed && !ctx.json)
                *ctx.err << failed << " failed candidates left out (an eval-set row is a measured comparison)\n";
        } else if (a.format == "events-jsonl") {
            export_events(store, run, text);
        } else if (a.format == "predictions-jsonl") {
            summary["forecasts"] = export_predictions(store, run, text);
        } else if (a.format == "rewards-jsonl") {
            const int left_out = export_rewards(store, run, text);
            summary["forecasts_left_out"] = left_out;
            if (left_out && !ctx.json)
                *ctx.err << left_out << " forecasts left out: their candidate failed or was never measured\n";
        } else if (a.format == "t4") {
            write_t4(kernel_tuner_cache_of_run(store, run), a, text, summary);
        } else {
            export_kernel_tuner_run(store, run, text);
        }
    }
    if (a.out.empty() || a.out == "-") {
        *ctx.out << text.str();
        return;
    }
    write_file_atomically(a.out, text.str());
    summary["file"] = a.out;
    if (!ctx.json)
        *ctx.err << "wrote " << a.out << "\n";
    else
        *ctx.out << summary.dump() << "\n";
}

}  // namespace

void add_export_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<ExportArgs>();
    auto* cmd = app.add_subcommand("export", "Export a run or a recording (pair JSONL, search events, Kernel Tuner "
                                             "cache, T4 results, predictions, rewards), or a kernel as CUDA or PyTorch "
                                             "code");
    cmd->add_option("--run", args->run, "Run store file");
    cmd->add_option("--recording", args->recording,
                    "Recording (.jsonl) to export every family configuration of, with --format kernel-tuner or t4");
    cmd->add_option("--problem", args->problem,
                    "With --recording: the problem folder or name (default: the "
                    "recording's problem among the resources); with --format cuda|torch and --kernel: the problem");
    cmd->add_option("--format", args->format,
                    "pairs-jsonl, events-jsonl, kernel-tuner, t4, predictions-jsonl, rewards-jsonl, cuda (a CUDA unit "
                    "with a host launch function) or torch (that and a PyTorch extension with its test)")
        ->required()
        ->check(CLI::IsMember({"pairs-jsonl", "events-jsonl", "kernel-tuner", "t4", "predictions-jsonl",
                               "rewards-jsonl", "cuda", "torch"}));
    cmd->add_option("--out", args->out,
                    "Output file (default: standard output; t4: the results file, required; cuda, torch: the folder, "
                    "required)");
    cmd->add_option("--candidate", args->candidate,
                    "With --format cuda|torch and --run: the candidate id, or best (the fastest measured correct)");
    cmd->add_option("--kernel", args->kernel, "With --format cuda|torch: a kernel program file instead of a run");
    cmd->add_option("--tunable", args->tunables, "With --kernel: NAME=VALUE for each tunable the program declares");
    cmd->add_option("--namespace", args->name_space,
                    "With --format cuda|torch: the C++ namespace of the unit (default kerncast_<problem>), so that "
                    "several exported kernels compile into one program");
    cmd->add_option("--unit", args->unit, "With --format cuda|torch: the files' name (default: the problem's)");
    cmd->add_option("--metadata", args->metadata,
                    "With --format t4: the T4 metadata file (default: the results file's name with -metadata.json)");
    cmd->add_option("--run-id", args->run_id, "Which run of the file (default: the last)");
    cmd->callback([&ctx, args] {
        try {
            run_export(ctx, *args);
        } catch (const std::exception& e) {
            report_failure(ctx, "export", e.what());
        }
    });
}

}  // namespace kerncast::cli
