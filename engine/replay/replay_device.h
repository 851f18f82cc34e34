#pragma once
// The replay device: answers measure requests from recordings made on a real GPU (docs/formats.md "Recording"), so
// searches, tests and demos run without one. A candidate is found by its content hash; anything absent is
// not_recorded, never invented. Answers are pure look-ups, hence deterministic.

#include "core/kernel_program.h"
#include "core/measurement.h"
#include "core/static_report.h"
#include "engine/device.h"
#include "engine/device_json.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

struct RecordingHeader {
    std::string problem;
    // problem_fingerprint() of the definition that was measured; empty in recordings made before it existed, which
    // the replay device then refuses to answer from.
    std::string problem_fingerprint;
    DeviceFingerprint device;
    DeviceCeilings ceilings;
    std::optional<double> pytorch_eager_us;
};

struct RecordingEntry {
    std::string label;        // "reference", "seed:vec4.cu", "family BLOCK=256 VEC=4"
    std::string source_hash;  // content_hash(source, tunables)
    std::map<std::string, int64_t> tunables;
    std::vector<StaticReport> static_report;
    Measurement measurement;
    int line = 0;  // in the recording file
};

struct Recording {
    std::string file;
    RecordingHeader header;
    std::vector<RecordingEntry> entries;

    // Throws Error "file:line: ..." for a line that is not JSON, a missing header, or a measurement line without
    // its fields. A later line for the same source hash replaces the earlier one (a re-measurement).
    static Recording load(const std::string& path);
    static Recording parse(const std::string& text, const std::string& file_name);
    const RecordingEntry* find(const std::string& source_hash) const;
};

// For a search of `problem` on `device`: the family configurations the device's recording holds and how many the
// family has, where the device answers from recordings and holds only some of them; nullopt where it measures, has
// no recording of the problem, holds every configuration, or the family has too many configurations to enumerate.
struct PartialFamily {
    std::set<Bindings> recorded;
    size_t configurations = 0;
};
std::optional<PartialFamily> partially_recorded_family(const Device& device, const std::string& problem,
                                                       const KernelProgram& family);
// What partially_recorded_family found for one family's text, handed from a search's set-up to the search so that
// it walks the family (hashing every configuration) once.
struct RecordedFamilyCheck {
    std::string family_source;
    std::optional<PartialFamily> partial;
};

nlohmann::json recording_header_json(const RecordingHeader& header);
nlohmann::json recording_entry_json(const RecordingEntry& entry);

class ReplayDevice : public Device {
public:
    // folder: a recording folder, e.g. resources/recordings/nvidia-h100-80gb-hbm3, holding <problem>.jsonl files.
    // Throws Error when the folder does not exist or holds no recording.
    explicit ReplayDevice(std::string folder);

    std::string id() const override;  // "replay:<folder name>"
    DeviceFingerprint fingerprint() const override;
    // Looks the candidate up in <folder>/<problem name>.jsonl. not_recorded when the problem's definition is not the
    // recorded one (problem_fingerprint). Throws Error (file:line) for a malformed recording. The answer is the
    // recorded measurement, its recorded times included: compile_ms, verify_ms and time_ms are what compiling,
    // verifying and benchmarking the program took on the recorded device (for an imported Kernel Tuner cache or
    // T4 file, its compile_time, verification_time and benchmark_time), so time budgets can be compared.
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress = {}) override;
    // The same look-up by the problem's name and the fingerprint of its definition (a replay worker gets problem.json's
    // text and the reference, not the folder); the fingerprint is asked for only when a recording exists.
    MeasureOutcome lookup(const std::string& problem_name, const std::function<std::string()>& problem_fingerprint,
                          const ProgramRef& candidate) const;

    // The recording of a problem (loaded once, then kept), or nullptr when none exists.
    std::shared_ptr<const Recording> recording(const std::string& problem_name) const override;
    // Problem names that have a recording here, sorted.
    std::vector<std::string> problems() const;
    // The header of the first recording (fingerprint, ceilings).
    const RecordingHeader& header() const { return m_header; }
    const std::string& folder() const { return m_folder; }

    DeviceCeilings ceilings() const override { return m_header.ceilings; }
    std::string recordingsFolder() const override { return m_folder; }
    std::optional<std::vector<StaticReport>> recordedStaticReport(const std::string& problem,
                                                                  const std::string& source_hash) const override;

private:
    std::string m_folder;
    std::string m_slug;
    RecordingHeader m_header;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, std::shared_ptr<const Recording>> m_loaded;
};

}  // namespace kerncast
