// kerncast-cli export --run R --format pairs-jsonl|events-jsonl|kernel-tuner [--out FILE] [--run-id N]: a run as a
// dataset (ARCHITECTURE §8). pairs-jsonl: every measured candidate becomes a (reference, candidate, hardware, speedup)
// pair in the GPU Forecasters eval-set schema; events-jsonl: the run's log (candidates, forecasts, gating,
// measurements, steering commands) in write order; kernel-tuner: the family configurations as a Kernel Tuner cache.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"

#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"
#include "core/run_store.h"
#include "core/text_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct ExportArgs {
    std::string run;
    std::string format;
    std::string out;
    int64_t run_id = 0;
};

// Family configurations are compiled with -D defines; a pair must stand alone, so the values become #defines.
std::string standalone_source(const Candidate& c) {
    std::string head;
    for (const auto& [k, v] : c.tunables)
        head += "#define " + k + " " + std::to_string(v) + "\n";
    return head + c.source;
}

void export_pairs(RunStore& store, const RunInfo& run, std::ostream& out) {
    std::string anchor;
    for (const auto& c : store.candidates(run.id))
        if (c.mutator == Mutator::Reference)
            anchor = c.source;
    std::vector<ImportedPair> pairs;
    const BinScheme scheme = BinScheme::gfV2();
    for (const auto& c : store.candidates(run.id)) {
        const auto ms = store.measurementsFor(c.id);
        if (ms.empty() || ms.back().measurement.device_kind == "compiler" ||
            ms.back().measurement.status == Status::NotRecorded)
            continue;
        const Measurement& m = ms.back().measurement;
        ImportedPair p;
        p.comparison_id = "run" + std::to_string(run.id) + "-c" + std::to_string(c.id);
        p.pack = run.problem;
        p.hardware = m.device.name;
        p.anchor_code = anchor;
        p.candidate_code = standalone_source(c);
        if (m.status == Status::Ok && m.speedup > 0)
            p.speedup = m.speedup;
        p.true_bin = p.speedup ? scheme.binOf(*p.speedup) : 0;
        p.extra = {{"problem_name", run.problem},
                   {"candidate_label", c.label},
                   {"mutator", to_string(c.mutator)},
                   {"status", to_string(m.status)},
                   {"tunables", c.tunables},
                   {"static_report", store.staticReportsFor(c.id)}};
        if (m.candidate)
            p.extra["candidate_time_us"] = m.candidate->median_us;
        if (m.reference)
            p.extra["reference_time_us"] = m.reference->median_us;
        pairs.push_back(std::move(p));
    }
    export_forecasters_jsonl(out, pairs);
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
    nlohmann::json runj = {{"kind", "run"}, {"run_id", run.id}, {"ts", run.created_at}, {"problem", run.problem},
                           {"device", run.device}, {"surrogate", run.surrogate}, {"gating", run.gating},
                           {"seed", run.seed}, {"config", run.config}};
    lines.push_back({run.created_at, 0, 0, runj});
    for (const auto& c : store.candidates(run.id)) {
        lines.push_back({"", 1, c.id, {{"kind", "candidate"}, {"run_id", run.id}, {"candidate", c}}});
        for (const auto& f : store.forecastsFor(c.id))
            lines.push_back({f.created_at, 2, f.id,
                             {{"kind", "forecast"}, {"run_id", run.id}, {"ts", f.created_at},
                              {"candidate_id", c.id}, {"forecast", f.forecast}}});
        for (const auto& m : store.measurementsFor(c.id))
            lines.push_back({m.created_at, 4, m.id,
                             {{"kind", "measurement"}, {"run_id", run.id}, {"ts", m.created_at},
                              {"candidate_id", c.id}, {"measurement", m.measurement}}});
    }
    for (const auto& e : store.events(run.id))
        lines.push_back({e.ts, 3, e.id,
                         {{"kind", "event"}, {"run_id", run.id}, {"ts", e.ts}, {"event", e.kind},
                          {"payload", e.payload}}});
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

void export_kernel_tuner(RunStore& store, const RunInfo& run, std::ostream& out) {
    nlohmann::ordered_json doc;
    std::vector<std::string> keys;
    std::map<std::string, std::set<int64_t>> values;
    nlohmann::ordered_json cache = nlohmann::ordered_json::object();
    std::string device;
    for (const auto& c : store.candidates(run.id)) {
        if (c.mutator != Mutator::Parametric || c.tunables.empty())
            continue;
        const auto ms = store.measurementsFor(c.id);
        if (ms.empty() || ms.back().measurement.status == Status::NotRecorded)
            continue;
        const Measurement& m = ms.back().measurement;
        if (keys.empty())
            for (const auto& [k, v] : c.tunables)
                keys.push_back(k);
        std::string key;
        nlohmann::ordered_json entry;
        for (const auto& k : keys) {
            const int64_t v = c.tunables.count(k) ? c.tunables.at(k) : 0;
            key += (key.empty() ? "" : ",") + std::to_string(v);
            entry[k] = v;
            values[k].insert(v);
        }
        if (m.status == Status::Ok && m.candidate) {
            entry["time"] = m.candidate->median_us / 1000.0;
            nlohmann::json times = nlohmann::json::array();
            for (double t : m.candidate->samples_us)
                times.push_back(t / 1000.0);
            entry["times"] = times;
        } else {
            entry["time"] = m.status == Status::CompileError ? "CompilationFailedConfig" : "RuntimeFailedConfig";
        }
        entry["compile_time"] = m.compile_ms;
        entry["verification_time"] = m.verify_ms;
        entry["benchmark_time"] = m.time_ms;
        entry["strategy_time"] = 0;
        entry["framework_time"] = 0;
        entry["timestamp"] = ms.back().created_at;
        if (device.empty())
            device = m.device.name;
        cache[key] = entry;
    }
    if (keys.empty())
        throw Error("the run measured no family configuration: a Kernel Tuner cache holds tunable configurations");
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& k : keys)
        params[k] = std::vector<int64_t>(values[k].begin(), values[k].end());
    doc["version"] = "1.0";
    doc["device_name"] = device;
    doc["kernel_name"] = run.problem;
    doc["problem_size"] = run.problem;
    doc["tune_params_keys"] = keys;
    doc["tune_params"] = params;
    doc["objective"] = "time";
    doc["cache"] = cache;
    out << doc.dump(1) << "\n";
}

void run_export(Context& ctx, const ExportArgs& a) {
    if (!fs::exists(a.run))
        throw Error(SourceLocation{a.run, 0}, "no such run file");
    RunStore store = RunStore::open(a.run);
    const auto runs = store.runs();
    if (runs.empty())
        throw Error(SourceLocation{a.run, 0}, "the file holds no run");
    RunInfo run = runs.back();
    if (a.run_id) {
        auto r = store.run(a.run_id);
        if (!r)
            throw Error(SourceLocation{a.run, 0}, "no run with id " + std::to_string(a.run_id));
        run = *r;
    }
    std::ostringstream text;
    if (a.format == "pairs-jsonl")
        export_pairs(store, run, text);
    else if (a.format == "events-jsonl")
        export_events(store, run, text);
    else
        export_kernel_tuner(store, run, text);
    if (a.out.empty() || a.out == "-") {
        *ctx.out << text.str();
        return;
    }
    write_file_atomically(a.out, text.str());
    if (!ctx.json)
        *ctx.err << "wrote " << a.out << "\n";
    else
        *ctx.out << nlohmann::json{{"ok", true}, {"file", a.out}, {"format", a.format}}.dump() << "\n";
}

}  // namespace

void add_export_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<ExportArgs>();
    auto* cmd = app.add_subcommand("export", "Export a run (pair JSONL, search events, Kernel Tuner cache)");
    cmd->add_option("--run", args->run, "Run store file")->required();
    cmd->add_option("--format", args->format, "pairs-jsonl, events-jsonl or kernel-tuner")
        ->required()
        ->check(CLI::IsMember({"pairs-jsonl", "events-jsonl", "kernel-tuner"}));
    cmd->add_option("--out", args->out, "Output file (default: standard output)");
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
