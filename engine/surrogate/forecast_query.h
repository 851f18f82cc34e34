#pragma once
// Building surrogate queries (engine/surrogate/surrogate.h) from a problem and a candidate, and labelled examples from
// recordings (docs/formats.md "Recording"). The search runner, the CLI and the benchmarks all go through these, so
// a surrogate sees the same fields however a candidate reached it.

#include "core/candidate.h"
#include "core/measurement.h"
#include "core/problem.h"
#include "core/static_report.h"
#include "engine/device_json.h"
#include "engine/replay/replay_device.h"
#include "engine/surrogate/surrogate.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// What is known about the run around one candidate; everything is optional.
struct QueryContext {
    std::vector<StaticReport> reference_static_report;
    std::optional<double> reference_time_us;  // the reference's measured median on this device
    std::optional<double> parent_speedup;     // the parent's measured speedup
    // The anchor when it is not the reference: a measured parent (candidate_id, label, source, tunables,
    // static_report, speedup, time_us; its launches are resolved here). Without one the query is anchored on the
    // reference. parent_speedup is set from it when not given.
    std::optional<ForecastAnchor> anchor;
    std::optional<DeviceFingerprint> device;  // fills hardware and hardware_table
    std::optional<DeviceCeilings> ceilings;   // adds the measured peaks to hardware_table
};

// A measured candidate as the anchor its children are forecast against (ARCHITECTURE §4): its id, label, program,
// static report, measured speedup over the reference and time (the measurement must be ok with a positive speedup).
ForecastAnchor measured_anchor(const Candidate& candidate, const std::vector<StaticReport>& report,
                               const Measurement& measurement);

// "NVIDIA H200 (cc 9.0, 132 SMs)".
std::string hardware_description(const DeviceFingerprint& device);
// {"name", "sm_count", "cc", "l2_bytes", "memory_bytes", "sm_clock_mhz", "mem_clock_mhz"} and, with ceilings,
// {"dram_gbps", "fp32_tflops"}. Zero or empty fingerprint fields are left out.
nlohmann::json hardware_table(const DeviceFingerprint& device, const std::optional<DeviceCeilings>& ceilings = {});

// Fills pack and problem fields (pack = problem name), the anchor (context.anchor, else the reference with its
// static report, plan and time), the reference source (read from the problem folder when it
// has one), the candidate's launch plan evaluated at the benchmark case (KernelProgram::resolve) and the roofline
// numbers (the problem's bytes and flops expressions at the benchmark case). Throws kerncast::Error, naming the
// file and line, when the candidate's plan does not parse or does not resolve: such a candidate cannot be
// launched, so there is nothing to forecast.
ForecastQuery build_forecast_query(const Problem& problem, const std::string& candidate_source,
                                   const std::map<std::string, int64_t>& tunables,
                                   const std::vector<StaticReport>& report, const QueryContext& context = {});

// The speedup an entry counts with: the measurement's reference median over its candidate median (both primary
// timer, timed in the same session), or the recorded speedup when the timings are absent. Empty for a failure.
std::optional<double> entry_speedup(const RecordingEntry& entry);

// A recorded program that became an example, with what the example was made from.
struct RecordedExample {
    LabelledExample example;
    std::string label;  // the recording entry's label ("reference", "seed:x.cu", "family A=1 B=2")
    std::string source_hash;
};

struct RecordingExamples {
    std::vector<RecordedExample> examples;  // in recording order
    int failures = 0;        // entries whose status is not ok: they have no speedup and teach nothing here
    int unknown_source = 0;  // entries whose source hash matches no program of the problem folder (the folder
                             // changed after recording); they are left out because their source is unknown
};

// Every ok entry of a recording as an example: the program's source is found by its source hash among the
// problem folder's reference, seeds and family configurations (engine/replay/recorder.h recording_plan). The
// reference time is the recording's "reference" entry (its primary median); the device is the header's.
// Throws kerncast::Error when the recording is of another problem or the folder is not a valid problem.
RecordingExamples recording_examples(const Recording& recording, const Problem& problem);
std::vector<LabelledExample> examples_from_recording(const Recording& recording, const Problem& problem);

// The examples of every <problem>.jsonl in recordings_dir whose problem has a folder under problems_root (matched by
// the name in problem.json), sorted by file name, except the recording of `excluded_problem` (when not empty).
// Recordings without a problem folder are named in `skipped` (when given). Throws kerncast::Error when the folder
// does not exist, a recording is malformed or its problem folder is not a valid problem.
struct RecordedProblem {
    std::string problem;
    std::string recording_file;
    std::string problem_dir;
    RecordingExamples examples;
};
std::vector<RecordedProblem> recorded_problems(const std::string& recordings_dir, const std::string& problems_root,
                                               const std::string& excluded_problem = {},
                                               std::vector<std::string>* skipped = nullptr);

// Every example of recorded_problems() EXCEPT the recording of `excluded_problem`: a surrogate used on the replay
// device must never learn from the recording the device answers from (ARCHITECTURE §6).
// The recordings of the embedded default replay device (replay:nvidia-h200).
inline constexpr const char* kDefaultRecordings = "nvidia-h200";
// The recording folder a local surrogate learns from when none is named, under <resources_dir>/recordings:
// `preferred` when it is there (the slug of the GPU a search runs on), else kDefaultRecordings, else the first by
// name; "" when there is none.
std::string default_recordings_folder(const std::string& resources_dir, const std::string& preferred = {});

std::vector<LabelledExample> examples_from_recordings_except(const std::string& recordings_dir,
                                                             const std::string& problems_root,
                                                             const std::string& excluded_problem,
                                                             std::vector<std::string>* skipped = nullptr);

}  // namespace kerncast
