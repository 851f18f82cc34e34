#include "engine/cli/export_kernel.h"

#include "engine/cli/problem_arg.h"

#include "core/error.h"
#include "core/kernel_export.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/problem_fingerprint.h"
#include "core/run_store.h"
#include "core/text_util.h"

#include <algorithm>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

std::optional<Measurement> last_ok_measurement(const std::vector<StoredMeasurement>& ms) {
    for (auto it = ms.rbegin(); it != ms.rend(); ++it) {
        const Measurement& m = it->measurement;
        if (m.device_kind == "compiler")
            continue;
        if (m.status == Status::Ok && m.speedup > 0)
            return m;
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

std::vector<ChosenCandidate> best_candidates(RunStore& store, const RunInfo& run, size_t count) {
    const auto measurements = store.measurementsOfRun(run.id);
    std::vector<ChosenCandidate> measured;
    std::vector<std::pair<double, size_t>> order;  // speedup, index: sorted without moving the candidates around
    for (const auto& c : store.candidates(run.id))
        if (const auto it = measurements.find(c.id); it != measurements.end())
            if (auto m = last_ok_measurement(it->second)) {
                order.push_back({m->speedup, measured.size()});
                measured.push_back({c, std::move(m)});
            }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<ChosenCandidate> best;
    for (size_t i = 0; i < order.size() && i < count; ++i)
        best.push_back(std::move(measured[order[i].second]));
    return best;
}

ChosenCandidate choose_candidate(RunStore& store, const RunInfo& run, const std::string& which,
                                 const std::string& file) {
    if (which == "best") {
        auto best = best_candidates(store, run, 1);
        if (best.empty())
            throw Error(SourceLocation{file, 0}, "run " + std::to_string(run.id) +
                                                     " has no candidate measured correct on a device: nothing to "
                                                     "export as its best");
        return best.front();
    }
    int64_t id = 0;
    try {
        size_t used = 0;
        id = std::stoll(which, &used);
        if (used != which.size())
            throw std::invalid_argument(which);
    } catch (const std::exception&) {
        throw Error("--candidate takes a candidate id or 'best', not '" + which + "'");
    }
    const auto c = store.candidate(id);
    if (!c || store.runOfCandidate(id) != run.id)
        throw Error(SourceLocation{file, 0}, "run " + std::to_string(run.id) + " has no candidate " + which);
    const auto ms = store.measurementsFor(id);
    return ChosenCandidate{*c, last_ok_measurement(ms)};
}

std::string problem_dir_of_run(RunStore& store, const RunInfo& run) {
    for (const auto& p : store.problems())
        if (p.name == run.problem && !p.dir.empty() && fs::exists(fs::path(p.dir) / "problem.json"))
            return p.dir;
    return resolve_problem_dir(run.problem);
}

RunStore open_run_store(const std::string& file, bool writable) {
    if (!fs::exists(file))
        throw Error(SourceLocation{file, 0}, "no such run file");
    return writable ? RunStore::open(file) : RunStore::openReadOnly(file);
}

RunInfo select_run(RunStore& store, const std::string& file, int64_t run_id) {
    const auto runs = store.runs();
    if (runs.empty())
        throw Error(SourceLocation{file, 0}, "the file holds no run");
    if (!run_id)
        return runs.back();
    auto r = store.run(run_id);
    if (!r)
        throw Error(SourceLocation{file, 0}, "no run with id " + std::to_string(run_id));
    return *r;
}

nlohmann::json export_kernel(const KernelExportArgs& a) {
    if (a.out.empty() || a.out == "-")
        throw Error("--format " + a.format + " writes a folder of files: give --out DIR");
    std::string problem_dir;
    std::string source, file;
    Bindings tunables;
    KernelExportOptions options;
    options.name_space = a.name_space;
    options.unit = a.unit;
    nlohmann::json summary = {{"ok", true}, {"format", a.format}};
    if (!a.run.empty()) {
        if (!a.kernel.empty() || !a.tunables.empty())
            throw Error("give --run with --candidate, or --problem with --kernel and --tunable, not both");
        RunStore store = open_run_store(a.run);
        const RunInfo run = select_run(store, a.run, a.run_id);
        const ChosenCandidate chosen = choose_candidate(store, run, a.candidate.empty() ? "best" : a.candidate, a.run);
        problem_dir = a.problem.empty() ? problem_dir_of_run(store, run) : resolve_problem_dir(a.problem);
        source = chosen.candidate.source;
        file = chosen.candidate.label.empty() ? "candidate.cu" : chosen.candidate.label;
        tunables = Bindings(chosen.candidate.tunables.begin(), chosen.candidate.tunables.end());
        options.provenance.source = "candidate " + std::to_string(chosen.candidate.id) + " (" + chosen.candidate.label +
                                    ") of run " + std::to_string(run.id) + " in " + fs::path(a.run).filename().string();
        if (chosen.measurement) {
            const Measurement& m = *chosen.measurement;
            options.provenance.speedup = m.speedup;
            if (m.candidate)
                options.provenance.candidate_us = m.candidate->median_us;
            if (m.reference)
                options.provenance.reference_us = m.reference->median_us;
            options.provenance.device = m.device.name;
            summary["speedup"] = m.speedup;
            if (m.candidate)
                summary["candidate_us"] = m.candidate->median_us;
        }
        summary["candidate"] = chosen.candidate.id;
        summary["run_id"] = run.id;
    } else {
        if (a.problem.empty() || a.kernel.empty())
            throw Error("give --run RUN_FILE (with --candidate ID|best), or --problem P --kernel FILE [--tunable "
                        "NAME=VALUE ...]");
        if (!a.candidate.empty())
            throw Error("--candidate goes with --run");
        problem_dir = resolve_problem_dir(a.problem);
        source = read_kernel_file(a.kernel);
        file = fs::path(a.kernel).filename().string();
        const auto given = parse_tunables(a.tunables);
        tunables = Bindings(given.begin(), given.end());
        options.provenance.source = "kernel file " + file;
    }
    const Problem problem = Problem::load(problem_dir);
    options.provenance.problem_fingerprint = problem_fingerprint(problem_dir);
    const KernelProgram program = KernelProgram::parse(source, file);
    const auto files = a.format == "torch" ? export_torch(problem, program, tunables, options)
                                           : export_cuda(problem, program, tunables, options);
    fs::create_directories(a.out);
    nlohmann::json written = nlohmann::json::array();
    for (const auto& f : files) {
        const std::string path = (fs::path(a.out) / f.path).string();
        write_file_atomically(path, f.text);
        written.push_back(path);
    }
    summary["files"] = written;
    summary["problem"] = problem.name;
    summary["tunables"] = tunables;
    summary["problem_fingerprint"] = options.provenance.problem_fingerprint;
    return summary;
}

}  // namespace kerncast::cli
