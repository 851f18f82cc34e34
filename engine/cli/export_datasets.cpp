#include "engine/cli/export_datasets.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/forecasters_datasets.h"
#include "core/forecasters_import.h"
#include "core/problem_library.h"
#include "engine/cli/problem_arg.h"
#include "engine/replay/kernel_tuner_interop.h"

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

// The run's problem folder: the one the store recorded when it still exists, else the problem of that name among
// the resources.
ProblemBundle run_problem(RunStore& store, const RunInfo& run) {
    for (const auto& p : store.problems())
        if (p.name == run.problem && !p.dir.empty() && fs::is_directory(p.dir))
            return load_problem_folder(p.dir);
    return load_problem_folder(resolve_problem_dir(run.problem));
}

// What a forecast of this candidate is a forecast of: the pair's id and pack for an imported pair, else the run's.
struct ForecastSubject {
    std::string comparison_id;
    std::string pack;
};

std::map<int64_t, ForecastSubject> forecast_subjects(RunStore& store, const RunInfo& run,
                                                     const std::vector<Candidate>& candidates) {
    std::map<std::string, std::string> pack_of_pair;
    for (const auto& p : store.importedPairs(run.id))
        pack_of_pair[p.comparison_id] = p.pack;
    std::map<int64_t, ForecastSubject> subjects;
    for (const auto& c : candidates) {
        ForecastSubject s{"run" + std::to_string(run.id) + "-c" + std::to_string(c.id), run.problem};
        if (c.mutator == Mutator::Imported && c.label.rfind("pair:", 0) == 0) {
            s.comparison_id = c.label.substr(5);
            if (const auto it = pack_of_pair.find(s.comparison_id); it != pack_of_pair.end())
                s.pack = it->second;
        }
        subjects[c.id] = s;
    }
    return subjects;
}

}  // namespace

KernelTunerCache kernel_tuner_cache_of_run(RunStore& store, const RunInfo& run) {
    const ProblemBundle bundle = run_problem(store, run);
    if (!bundle.family)
        throw Error("problem '" + run.problem +
                    "' has no family.cu: a Kernel Tuner cache holds configurations of "
                    "a family's tunables");
    std::string device;
    std::optional<DeviceFingerprint> fingerprint;
    std::optional<double> reference_ms;
    std::vector<KernelTunerEntry> entries;
    const auto measurements = store.measurementsOfRun(run.id);
    for (const auto& c : store.candidates(run.id)) {
        if (c.mutator == Mutator::Reference && !reference_ms)
            if (const auto it = measurements.find(c.id); it != measurements.end() && !it->second.empty()) {
                const Measurement& m = it->second.back().measurement;
                if (m.status == Status::Ok && m.candidate && m.device_kind != "compiler")
                    reference_ms = m.candidate->median_us / 1000.0;
            }
        if (c.mutator != Mutator::Parametric || c.tunables.empty() ||
            c.source_hash != content_hash(bundle.family->source, c.tunables))
            continue;
        const auto it = measurements.find(c.id);
        if (it == measurements.end() || it->second.empty())
            continue;
        const StoredMeasurement& last = it->second.back();
        if (last.measurement.status == Status::NotRecorded || last.measurement.device_kind == "compiler")
            continue;
        if (device.empty()) {
            device = last.measurement.device.name;
            fingerprint = last.measurement.device;
        }
        entries.push_back(kernel_tuner_entry(*bundle.family, c.tunables, last.measurement,
                                             kernel_tuner_timestamp_of_iso(last.created_at)));
    }
    if (entries.empty())
        throw Error("the run measured no configuration of " + bundle.family->file +
                    ": a Kernel Tuner cache holds tunable configurations");
    KernelTunerCache cache = kernel_tuner_cache_header(bundle.problem, *bundle.family, device);
    nlohmann::ordered_json own = {{"problem", run.problem}, {"run_id", run.id}};
    if (reference_ms)
        own["reference_time"] = *reference_ms;
    if (fingerprint)
        own["device"] = nlohmann::ordered_json::parse(nlohmann::json(*fingerprint).dump());
    cache.extra["kerncast"] = own;
    cache.entries = std::move(entries);
    return cache;
}

void export_kernel_tuner_run(RunStore& store, const RunInfo& run, std::ostream& out) {
    out << write_kernel_tuner_cache(kernel_tuner_cache_of_run(store, run));
}

KernelTunerCache kernel_tuner_cache_of_recording(const std::string& recording_file, const std::string& problem_arg) {
    if (!fs::exists(recording_file))
        throw Error(SourceLocation{recording_file, 0}, "no such recording");
    const Recording recording = Recording::load(recording_file);
    const ProblemBundle bundle =
        load_problem_folder(resolve_problem_dir(problem_arg.empty() ? recording.header.problem : problem_arg));
    if (bundle.problem.name != recording.header.problem)
        throw Error(SourceLocation{recording_file, 1}, "the recording is of problem '" + recording.header.problem +
                                                           "', not '" + bundle.problem.name + "'");
    if (!bundle.family)
        throw Error("problem '" + bundle.problem.name +
                    "' has no family.cu: a Kernel Tuner cache holds "
                    "configurations of a family's tunables");
    return kernel_tuner_cache_from_recording(recording, bundle.problem, *bundle.family);
}

void export_kernel_tuner_recording(const std::string& recording_file, const std::string& problem_arg,
                                   std::ostream& out) {
    out << write_kernel_tuner_cache(kernel_tuner_cache_of_recording(recording_file, problem_arg));
}

int export_predictions(RunStore& store, const RunInfo& run, std::ostream& out) {
    const auto candidates = store.candidates(run.id);
    const auto subjects = forecast_subjects(store, run, candidates);
    const auto forecasts = store.forecastsOfRun(run.id);
    int lines = 0;
    for (const auto& c : candidates) {
        const auto it = forecasts.find(c.id);
        if (it == forecasts.end())
            continue;
        int repeat = 0;
        for (const auto& f : it->second) {
            const auto& s = subjects.at(c.id);
            out << predictions_row(s.comparison_id, s.pack, f.forecast, repeat++).dump() << "\n";
            ++lines;
        }
    }
    return lines;
}

int export_rewards(RunStore& store, const RunInfo& run, std::ostream& out) {
    const auto candidates = store.candidates(run.id);
    const auto subjects = forecast_subjects(store, run, candidates);
    const auto forecasts = store.forecastsOfRun(run.id);
    const auto measurements = store.measurementsOfRun(run.id);
    int left_out = 0;
    for (const auto& c : candidates) {
        const auto f = forecasts.find(c.id);
        if (f == forecasts.end())
            continue;
        const auto m = measurements.find(c.id);
        const Measurement* measured =
            m == measurements.end() || m->second.empty() ? nullptr : &m->second.back().measurement;
        if (!measured || measured->status != Status::Ok || !(measured->speedup > 0)) {
            left_out += static_cast<int>(f->second.size());
            continue;
        }
        const int true_bin = forecasters_bin(measured->speedup);
        int repeat = 0;
        for (const auto& sf : f->second) {
            const Forecast& fc = sf.forecast;
            const ForecastReward r = forecast_reward(fc.probabilities, fc.predicted_bin, true_bin);
            const auto& s = subjects.at(c.id);
            nlohmann::ordered_json j;
            j["comparison_id"] = s.comparison_id;
            j["pack"] = s.pack;
            j["surrogate_label"] = fc.surrogate_id;
            j["repeat"] = repeat++;
            j["candidate_id"] = c.id;
            j["forecast_id"] = sf.id;
            j["aggregated_speedup"] = measured->speedup;
            j["true_bin"] = true_bin;
            j["predicted_bin"] = fc.predicted_bin;
            j["bin_probabilities"] = fc.probabilities;
            j["correctness"] = r.correctness;
            j["brier"] = r.brier;
            j["crps"] = r.crps;
            j["reward_correctness"] = r.correctness;
            j["reward_correctness_brier"] = r.correctness_brier;
            j["reward_correctness_crps"] = r.correctness_crps;
            j["distance"] = r.distance;
            out << j.dump() << "\n";
        }
    }
    return left_out;
}

}  // namespace kerncast::cli
