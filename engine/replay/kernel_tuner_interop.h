#pragma once
// A problem's family (family.cu) as a Kernel Tuner search space, both ways (docs/formats.md "Kernel Tuner cache"):
// a recording or a run becomes a cache that Kernel Tuner's own reader and simulation mode accept, and a Kernel
// Tuner cache becomes a replay recording whose family configurations a search can replay.
//
// The cache's kernel_name is the family's (first) kernel function, problem_size the benchmark case's sizes in the
// order problem.json declares them, tune_params_keys the family's tunables in declared order with their full value
// lists. Kerncast keeps what Kernel Tuner has no field for (the reference's time, the device fingerprint) in a
// header field "kerncast", which Kernel Tuner ignores; an import without it takes the reference's time from the
// cache's entry for the problem's reference_configuration (a T1-imported problem's reference is the family at the
// T1 defaults), or needs it given.
//
// Each configuration's recorded times are kept in its measurement: compile_time as compile_ms, verification_time
// as verify_ms and benchmark_time as time_ms (all ms), so the replay device answers with the time Kernel Tuner spent
// compiling and benchmarking it, and time budgets can be compared.

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

// One configuration's measurement as a cache entry (times in ms; a failure's name for a failed one), with every
// field Kernel Tuner writes (strategy_time and framework_time are 0: Kerncast has neither) and the given timestamp
// (Kernel Tuner's form, see kernel_tuner_timestamp). The entry's "kerncast_status" keeps the exact status, so an
// import gives it back.
KernelTunerEntry kernel_tuner_entry(const KernelProgram& family, const Bindings& tunables, const Measurement& m,
                                    const std::string& timestamp);

// Every family configuration the recording holds (not_recorded ones left out). A recording keeps no time of each
// measurement: every entry's timestamp is the recording file's last change (when the last line was written).
// Throws Error when it holds none.
KernelTunerCache kernel_tuner_cache_from_recording(const Recording& recording, const Problem& problem,
                                                   const KernelProgram& family);

struct KernelTunerImport {
    Recording recording;  // header, the reference, then one entry per configuration in the cache's order
    int configurations = 0;
    int failed = 0;           // configurations Kernel Tuner recorded as failed
    int compile_failed = 0;   // of those, failed to compile (CompilationFailedConfig)
    std::string reference;    // where the reference's time came from, for the summary
    double reference_ms = 0;  // the reference's time
    // The recorded times per configuration (every configuration, failed ones too), ms.
    double median_compile_ms = 0;
    double median_benchmark_ms = 0;
    double total_compile_ms = 0;
    double total_benchmark_ms = 0;
};

// A cache for this problem's family as a replay recording. The reference's time is, in this order: reference_ms
// (the reference kernel's time on the same device), the cache's "kerncast" header field, or the cache's entry for
// the problem's reference_configuration (its time and samples). Throws Error (file:line) when the cache is for
// another kernel (a cache without a kernel name, as T4 results are, is not checked), other sizes or other
// tunables, when a configuration is not valid for the family (naming it and the value or `where` condition that
// rules it out), when the reference configuration's entry is missing or failed, or when no reference time is
// known.
KernelTunerImport recording_from_kernel_tuner_cache(const KernelTunerCache& cache, const std::string& cache_file,
                                                    const ProblemBundle& bundle, std::optional<double> reference_ms);

// Why the family rules a configuration out: "BLOCK = 2048 is not among the values family.cu:5 declares", "the
// condition `where VEC * ITEMS <= 32` of tunable ITEMS (family.cu:7) does not hold", ...; empty when it is valid.
std::string why_configuration_is_invalid(const KernelProgram& family, const Bindings& tunables);

// stats::summarize of one configuration's runs (no events cross-check), the same numbers, several times faster:
// its bootstrap interval of the median is drawn as stats::bootstrap_median_ci draws it (tst_kernel_tuner_interop
// checks that they agree), but each resample's median is found by counting ranks rather than by sorting.
TimingStats summarize_recorded_runs(const std::vector<double>& samples_us);

// The recording as JSON lines (header first), as the replay device reads it.
std::string recording_jsonl(const Recording& recording);

}  // namespace kerncast
