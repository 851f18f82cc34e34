#pragma once
// export --format cuda|torch: a run's candidate, or a kernel file with its tunables, as code a project can use
// (core/kernel_export.h).

#include "engine/cli/cli.h"

#include "core/run_store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kerncast::cli {

struct KernelExportArgs {
    std::string format;                 // "cuda" or "torch"
    std::string run;                    // a run file, with candidate
    int64_t run_id = 0;                 // 0: the file's last run
    std::string candidate;              // a candidate id or "best"
    std::string problem;                // without a run: the problem (name or folder) ...
    std::string kernel;                 // ... and the kernel program file
    std::vector<std::string> tunables;  // NAME=VALUE
    std::string out;                    // the folder to write into
    std::string name_space;
    std::string unit;
};

// The run file, read-only unless `writable`; throws Error naming it when it does not exist.
RunStore open_run_store(const std::string& file, bool writable = false);
// The run of that id in the file, the file's last run when run_id is 0; throws Error naming the file.
RunInfo select_run(RunStore& store, const std::string& file, int64_t run_id);

struct ChosenCandidate {
    Candidate candidate;
    std::optional<Measurement> measurement;  // its last measurement on a device, when that was correct
};
// The run's `count` fastest candidates measured correct on a device, the fastest first.
std::vector<ChosenCandidate> best_candidates(RunStore& store, const RunInfo& run, size_t count);
// A candidate of the run by id, or "best": the fastest measured correct on a device. Throws Error naming the file.
ChosenCandidate choose_candidate(RunStore& store, const RunInfo& run, const std::string& which,
                                 const std::string& file);
// The run's problem folder: where the run found it when it is still there, else the name among the resources.
std::string problem_dir_of_run(RunStore& store, const RunInfo& run);

// Writes the unit's files into args.out (created when missing) and returns the summary ({"files": [...], ...}).
// Throws Error with what is wrong (no such candidate, a failed candidate, no pytorch expression for torch, ...).
nlohmann::json export_kernel(const KernelExportArgs& args);

}  // namespace kerncast::cli
