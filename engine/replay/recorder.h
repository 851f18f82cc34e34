#pragma once
// Records a problem on a device: the reference, every seed and every valid family configuration, one line each, in
// the recording format the replay device reads (docs/formats.md "Recording"). Lines are appended and flushed one by
// one, so a crash or a kill loses at most the program being measured; recording again resumes where it stopped.

#include "core/kernel_program.h"
#include "engine/device.h"
#include "engine/device_json.h"
#include "engine/replay/replay_device.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace kerncast {

struct RecordOptions {
    std::string out_dir;                     // the file goes to <out_dir>/<device slug>/<problem>.jsonl
    std::optional<double> pytorch_eager_us;  // measured elsewhere (PyTorch), kept in the header
    DeviceCeilings ceilings;                 // of the device, kept in the header
    size_t limit = 0;                        // at most this many family configurations (0: all)
    // Go on with a recording started on another GPU of the same model (name, compute capability, SMs, memory): a
    // recording made over several short leases. The header keeps the GPU it was started on; every entry holds the
    // GPU that measured it, and each speedup pairs a program with the reference timed on that GPU.
    bool continue_on_another_gpu = false;
    MeasureOptions measure;
};

struct RecordProgress {
    size_t index = 0;  // 1-based position of this program
    size_t total = 0;
    std::string label;
    bool skipped = false;  // already in the file from an earlier, interrupted recording
    Measurement measurement;
};

struct RecordSummary {
    std::string file;
    size_t measured = 0;
    size_t skipped = 0;
    size_t ok = 0;
    size_t failed = 0;  // bin 0 statuses
};

// The programs a recording holds, in order: "reference", "seed:<file>" for each seed, then "family K=V ..." for
// each valid configuration (at most `limit`, 0 = all, sampled evenly), in spread_order. Throws Error when the folder
// is not a valid problem.
struct RecordItem {
    std::string label;
    ProgramRef program;
};
std::vector<RecordItem> recording_plan(const std::string& problem_dir, size_t limit);
// 0..n-1 in the order recording_plan records a family's configurations: every prefix is spread evenly over them (van
// der Corput: by bit-reversed position; exactly evenly where n is a power of two), so that a recording stopped early
// holds a sample of the space rather than its first corner.
std::vector<size_t> spread_order(size_t n);

// "family K=V ..." with the tunables in the family's declared order: how a recording labels a configuration.
std::string family_label(const KernelProgram& family, const Bindings& config);

// Throws Error when the problem is invalid or the file cannot be written, or when an existing file was recorded on
// another device (another GPU of the same model only with RecordOptions::continue_on_another_gpu).
RecordSummary record_problem(Device& device, const std::string& problem_dir, const RecordOptions& options,
                             const std::function<void(const RecordProgress&)>& progress = {});

}  // namespace kerncast
