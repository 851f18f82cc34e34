#pragma once
// A problem's family (family.cu) as a Kernel Tuner search space, both ways (docs/formats.md "Kernel Tuner cache"):
// a recording or a run becomes a cache that Kernel Tuner's own reader and simulation mode accept, and a Kernel
// Tuner cache becomes a replay recording whose family configurations a search can replay.
//
// The cache's kernel_name is the family's (first) kernel function, problem_size the benchmark case's sizes in the
// order problem.json declares them, tune_params_keys the family's tunables in declared order with their full value
// lists. Kerncast keeps what Kernel Tuner has no field for (the reference's time, the device fingerprint) in a
// header field "kerncast", which Kernel Tuner ignores; an import without it needs the reference's time given.

#include "core/kernel_program.h"
#include "core/kernel_tuner_cache.h"
#include "core/measurement.h"
#include "core/problem.h"
#include "core/problem_library.h"
#include "engine/replay/replay_device.h"

#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// The header of a cache for this family (no entries): kernel name, problem sizes, tunables and their values.
KernelTunerCache kernel_tuner_cache_header(const Problem& problem, const KernelProgram& family,
                                           const std::string& device_name);
// The benchmark case's sizes in problem.json's order.
std::vector<int64_t> problem_size_in_declared_order(const Problem& problem);

// One configuration's measurement as a cache entry (times in ms; a failure's name for a failed one). The entry's
// "kerncast_status" keeps the exact status, so an import gives it back.
KernelTunerEntry kernel_tuner_entry(const KernelProgram& family, const Bindings& tunables, const Measurement& m,
                                    const std::string& timestamp);

// Every family configuration the recording holds (not_recorded ones left out). Throws Error when it holds none.
KernelTunerCache kernel_tuner_cache_from_recording(const Recording& recording, const Problem& problem,
                                                   const KernelProgram& family);

struct KernelTunerImport {
    Recording recording;  // header, the reference, then one entry per configuration in the cache's order
    int configurations = 0;
    int failed = 0;  // configurations Kernel Tuner recorded as failed
};

// A cache for this problem's family as a replay recording. reference_ms: the reference kernel's time on the same
// device, when the cache has no "kerncast" header field holding it. Throws Error (file:line) when the cache is for
// another kernel, other sizes or other tunables, when a configuration is not valid for the family, or when no
// reference time is known.
KernelTunerImport recording_from_kernel_tuner_cache(const KernelTunerCache& cache, const std::string& cache_file,
                                                    const ProblemBundle& bundle, std::optional<double> reference_ms);

// The recording as JSON lines (header first), as the replay device reads it.
std::string recording_jsonl(const Recording& recording);

}  // namespace kerncast
