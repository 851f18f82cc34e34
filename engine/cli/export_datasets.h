#pragma once
// The exports of `kerncast-cli export` that serve other tools: a Kernel Tuner cache or T4 results (of a run or of a
// recording), forecasts in the GPU Forecasters predictions shape, and per-forecast RL reward components.

#include "core/kernel_tuner_cache.h"
#include "core/run_store.h"

#include <iosfwd>
#include <string>

namespace kerncast::cli {

// The family configurations the run measured, as a Kernel Tuner cache (each entry's timestamp is when its
// measurement was stored; the "kerncast" header holds the problem, the run id, the device and the reference's
// time when the run measured the reference). Throws Error when the run's problem has no family or the run measured
// none of its configurations.
KernelTunerCache kernel_tuner_cache_of_run(RunStore& store, const RunInfo& run);
void export_kernel_tuner_run(RunStore& store, const RunInfo& run, std::ostream& out);
// Every family configuration of a recording. problem_arg: the problem folder or name ("" for the recording's own
// problem, looked up among the resources).
KernelTunerCache kernel_tuner_cache_of_recording(const std::string& recording_file, const std::string& problem_arg);
void export_kernel_tuner_recording(const std::string& recording_file, const std::string& problem_arg,
                                   std::ostream& out);
// One line per stored forecast (re-forecasts numbered by "repeat"). Returns the number of lines.
int export_predictions(RunStore& store, const RunInfo& run, std::ostream& out);
// One line per forecast whose candidate was measured with a speedup: the reward components against their bin of
// that speedup. Returns the number of forecasts left out because the candidate failed or was never measured.
int export_rewards(RunStore& store, const RunInfo& run, std::ostream& out);

}  // namespace kerncast::cli
