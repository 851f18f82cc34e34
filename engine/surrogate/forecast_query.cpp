#include "engine/surrogate/forecast_query.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem_library.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

// The reference program's text, or "" when the problem has no folder (parsed from text) or the file is absent:
// a query says what it knows and leaves the rest empty.
std::string reference_source_of(const Problem& problem) {
    if (problem.dir.empty())
        return {};
    std::ifstream in(problem.referencePath(), std::ios::binary);
    if (!in)
        return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

double eval_or_zero(const Expr& e, const Bindings& sizes) {
    return e.empty() ? 0.0 : static_cast<double>(e.eval(sizes));
}

std::vector<LaunchShape> resolved_launches(const Problem& problem, const std::string& source,
                                           const std::map<std::string, int64_t>& tunables, const char* file) {
    std::vector<LaunchShape> out;
    const KernelProgram program = KernelProgram::parse(source, file);
    for (const ResolvedLaunch& r : program.resolve(problem, problem.benchmark, tunables)) {
        LaunchShape shape;
        shape.kernel = r.kernel;
        for (int d = 0; d < 3; ++d) {
            shape.grid[d] = r.grid[d];
            shape.block[d] = r.block[d];
        }
        shape.dynamic_smem = r.smem;
        for (int d = 0; d < 3; ++d)
            shape.cluster[d] = r.cluster[d];
        shape.tensor_maps = static_cast<int>(std::count_if(
            r.args.begin(), r.args.end(), [](const ResolvedArg& a) { return a.kind == ResolvedArg::Kind::TensorMap; }));
        out.push_back(shape);
    }
    return out;
}

ForecastQuery make_query(const Problem& problem, const std::string& reference_source,
                         const std::string& candidate_source, const std::map<std::string, int64_t>& tunables,
                         const std::vector<StaticReport>& report, const QueryContext& context) {
    ForecastQuery q;
    q.pack = problem.name;
    q.problem_name = problem.name;
    q.problem_description = problem.description;
    q.reference_source = reference_source;
    q.candidate_source = candidate_source;
    q.tunables = tunables;
    q.static_report = report;
    q.reference_static_report = context.reference_static_report;
    q.launches = resolved_launches(problem, candidate_source, tunables, "candidate.cu");
    q.problem_bytes = eval_or_zero(problem.bytes, problem.benchmark);
    q.problem_flops = eval_or_zero(problem.flops, problem.benchmark);
    q.reference_time_us = context.reference_time_us;
    q.parent_speedup = context.parent_speedup;
    if (context.anchor && !context.anchor->is_reference) {
        q.anchor = *context.anchor;
        try {
            q.anchor.launches = resolved_launches(problem, q.anchor.source, q.anchor.tunables, "anchor.cu");
        } catch (const Error&) {
            q.anchor.launches.clear();  // a measured anchor ran, so this is only a plan the parser no longer reads
        }
        if (!q.parent_speedup)
            q.parent_speedup = q.anchor.speedup;
    } else {
        q.anchor = ForecastAnchor{};
        q.anchor.label = "reference";
        q.anchor.source = reference_source;
        q.anchor.static_report = context.reference_static_report;
        q.anchor.time_us = context.reference_time_us;
        if (!reference_source.empty()) {
            try {
                q.anchor.launches = resolved_launches(problem, reference_source, {}, "reference.cu");
            } catch (const Error&) {
                q.anchor.launches.clear();
            }
        }
    }
    if (context.device) {
        q.hardware = hardware_description(*context.device);
        q.hardware_table = hardware_table(*context.device, context.ceilings);
    }
    return q;
}

}  // namespace

ForecastAnchor measured_anchor(const Candidate& candidate, const std::vector<StaticReport>& report,
                               const Measurement& measurement) {
    ForecastAnchor a;
    a.candidate_id = candidate.id;
    a.is_reference = false;
    a.label = candidate.label;
    a.source = candidate.source;
    a.tunables = candidate.tunables;
    a.static_report = report;
    a.speedup = measurement.speedup;
    if (measurement.candidate && measurement.candidate->median_us > 0)
        a.time_us = measurement.candidate->median_us;
    return a;
}

std::string hardware_description(const DeviceFingerprint& device) {
    std::string s = device.name.empty() ? "unknown GPU" : device.name;
    std::vector<std::string> details;
    if (device.cc_major > 0)
        details.push_back("cc " + std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor));
    if (device.sm_count > 0)
        details.push_back(std::to_string(device.sm_count) + " SMs");
    for (size_t i = 0; i < details.size(); ++i)
        s += (i == 0 ? " (" : ", ") + details[i];
    if (!details.empty())
        s += ")";
    return s;
}

nlohmann::json hardware_table(const DeviceFingerprint& device, const std::optional<DeviceCeilings>& ceilings) {
    nlohmann::json t = nlohmann::json::object();
    if (!device.name.empty())
        t["name"] = device.name;
    if (device.sm_count > 0)
        t["sm_count"] = device.sm_count;
    if (device.cc_major > 0)
        t["cc"] = std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor);
    if (device.l2_bytes > 0)
        t["l2_bytes"] = device.l2_bytes;
    if (device.memory_bytes > 0)
        t["memory_bytes"] = device.memory_bytes;
    if (device.sm_clock_mhz > 0)
        t["sm_clock_mhz"] = device.sm_clock_mhz;
    if (device.mem_clock_mhz > 0)
        t["mem_clock_mhz"] = device.mem_clock_mhz;
    if (ceilings) {
        if (ceilings->dram_gbps > 0)
            t["dram_gbps"] = ceilings->dram_gbps;
        if (ceilings->fp32_tflops > 0)
            t["fp32_tflops"] = ceilings->fp32_tflops;
    }
    return t;
}

ForecastQuery build_forecast_query(const Problem& problem, const std::string& candidate_source,
                                   const std::map<std::string, int64_t>& tunables,
                                   const std::vector<StaticReport>& report, const QueryContext& context) {
    return make_query(problem, reference_source_of(problem), candidate_source, tunables, report, context);
}

std::optional<double> entry_speedup(const RecordingEntry& entry) {
    const Measurement& m = entry.measurement;
    if (m.status != Status::Ok)
        return std::nullopt;
    if (m.candidate && m.reference && m.candidate->median_us > 0 && m.reference->median_us > 0)
        return m.reference->median_us / m.candidate->median_us;
    if (m.speedup > 0 && std::isfinite(m.speedup))
        return m.speedup;
    return std::nullopt;
}

RecordingExamples recording_examples(const Recording& recording, const Problem& problem) {
    if (recording.header.problem != problem.name)
        throw Error(SourceLocation{recording.file, 1},
                    "this recording is of problem '" + recording.header.problem + "', not of '" + problem.name + "'");
    const ProblemBundle bundle = load_problem_folder(problem.dir);

    // Every program the folder defines, by source hash, except family configurations: those are hashed with each
    // entry's own tunable values rather than enumerating a search space that may be large.
    std::map<std::string, const KernelProgram*> fixed;
    fixed.emplace(content_hash(bundle.reference.source, {}), &bundle.reference);
    for (const auto& seed : bundle.seeds)
        fixed.emplace(content_hash(seed.source, {}), &seed);
    auto program_of = [&](const RecordingEntry& e) -> const KernelProgram* {
        if (auto it = fixed.find(e.source_hash); it != fixed.end() && e.tunables.empty())
            return it->second;
        if (bundle.family && content_hash(bundle.family->source, e.tunables) == e.source_hash)
            return &*bundle.family;
        return nullptr;
    };

    QueryContext context;
    context.device = recording.header.device;
    context.ceilings = recording.header.ceilings;
    std::vector<double> session_reference_us;
    for (const auto& e : recording.entries) {
        if (e.label == "reference" && e.measurement.status == Status::Ok && e.measurement.candidate) {
            context.reference_time_us = e.measurement.candidate->median_us;
            context.reference_static_report = e.static_report;
        }
        if (e.measurement.reference && e.measurement.reference->median_us > 0)
            session_reference_us.push_back(e.measurement.reference->median_us);
    }
    if (!context.reference_time_us && !session_reference_us.empty()) {
        // No reference line: the reference was still timed beside every program; its median time stands in.
        std::nth_element(session_reference_us.begin(), session_reference_us.begin() + session_reference_us.size() / 2,
                         session_reference_us.end());
        context.reference_time_us = session_reference_us[session_reference_us.size() / 2];
    }

    RecordingExamples out;
    for (const auto& e : recording.entries) {
        const auto speedup = entry_speedup(e);
        if (!speedup) {
            ++out.failures;
            continue;
        }
        const KernelProgram* program = program_of(e);
        if (!program) {
            ++out.unknown_source;
            continue;
        }
        RecordedExample r;
        try {
            r.example.query =
                make_query(problem, bundle.reference.source, program->source, e.tunables, e.static_report, context);
        } catch (const Error& ex) {
            throw Error(SourceLocation{recording.file, e.line},
                        "the recorded program '" + e.label + "' does not resolve any more: " + ex.what());
        }
        r.example.speedup = *speedup;
        r.label = e.label;
        r.source_hash = e.source_hash;
        out.examples.push_back(std::move(r));
    }
    return out;
}

std::vector<LabelledExample> examples_from_recording(const Recording& recording, const Problem& problem) {
    std::vector<LabelledExample> out;
    for (auto& r : recording_examples(recording, problem).examples)
        out.push_back(std::move(r.example));
    return out;
}

std::vector<RecordedProblem> recorded_problems(const std::string& recordings_dir, const std::string& problems_root,
                                               const std::string& excluded_problem, std::vector<std::string>* skipped) {
    std::error_code ec;
    if (!fs::is_directory(recordings_dir, ec))
        throw Error("no recording folder '" + recordings_dir + "'");
    // Problem names from problem.json; a folder that does not parse has no name to match and is passed over here
    // (`problems validate` reports it).
    std::map<std::string, std::string> folder_of;
    for (const auto& dir : list_problem_folders(problems_root)) {
        std::vector<Error> errors;
        const Problem p = Problem::load(dir, errors);
        if (!p.name.empty())
            folder_of.emplace(p.name, dir);
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(recordings_dir, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".jsonl")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());

    std::vector<RecordedProblem> out;
    for (const auto& file : files) {
        if (!excluded_problem.empty() && file.stem().string() == excluded_problem)
            continue;
        const Recording recording = Recording::load(file.string());
        if (!excluded_problem.empty() && recording.header.problem == excluded_problem)
            continue;
        const auto it = folder_of.find(recording.header.problem);
        if (it == folder_of.end()) {
            if (skipped)
                skipped->push_back(file.string());
            continue;
        }
        out.push_back({recording.header.problem, file.string(), it->second,
                       recording_examples(recording, Problem::load(it->second))});
    }
    return out;
}

std::vector<LabelledExample> examples_from_recordings_except(const std::string& recordings_dir,
                                                             const std::string& problems_root,
                                                             const std::string& excluded_problem,
                                                             std::vector<std::string>* skipped) {
    std::vector<LabelledExample> out;
    for (auto& recorded : recorded_problems(recordings_dir, problems_root, excluded_problem, skipped))
        for (auto& r : recorded.examples.examples)
            out.push_back(std::move(r.example));
    return out;
}

std::string default_recordings_folder(const std::string& resources_dir, const std::string& preferred) {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(resources_dir) / "recordings";
    std::error_code ec;
    for (const std::string& name : {preferred, std::string(kDefaultRecordings)})
        if (!name.empty() && fs::is_directory(root / name, ec))
            return (root / name).string();
    std::vector<std::string> folders;
    for (const auto& entry : fs::directory_iterator(root, ec))
        if (entry.is_directory(ec))
            folders.push_back(entry.path().string());
    std::sort(folders.begin(), folders.end());
    return folders.empty() ? std::string() : folders.front();
}

}  // namespace kerncast
