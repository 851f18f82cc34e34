#pragma once
// Puts right the static reports (registers, shared memory, spills... per kernel) of a recording that a driver's cache
// left incomplete, compiling each program at hand again for the recorded GPU's architecture; nothing is measured. A
// recording keeps the report its GPU's compile gave, and where a driver is installed nvJitLink answered a program it
// had compiled before from the driver's compute cache, without ptxas's lines, so the static shared memory and the
// spills read as 0 (engine/gpu/compiler.cpp now asks for no cache). ptxas does not allocate registers the same way
// every time, so a line takes the fresh report whole only where it is in that cache's form (no shared memory, no
// spills) and the fresh compile allocated the registers it records; elsewhere only a static shared memory read as 0
// is put right (the source's declarations fix it). The programs at hand are the problem folder's reference, seeds and
// family configurations, matched to lines by their source hash; other lines (and the header) stay byte for byte.

#include <cstddef>
#include <string>
#include <vector>

namespace kerncast {

class Compiler;

struct StaticRefresh {
    std::string file;
    std::string arch;                // what the programs were compiled for (from the header's compute capability)
    size_t updated = 0;              // lines whose report was put right
    size_t same = 0;                 // the report was already the compiler's
    size_t allocated_otherwise = 0;  // compiled here to other registers or spills: the recorded report is kept
    size_t not_compiled = 0;         // the program did not compile here (its line is kept; `failures` says why)
    size_t other = 0;                // lines of programs the folder no longer holds: kept
    size_t without_report = 0;       // lines that record no static report (imported caches): kept, not compiled
    size_t changed_shared = 0, changed_spills = 0;  // kernels among `updated` lines where that changed
    std::vector<std::string> failures;              // "label: first diagnostic"
    std::vector<std::string> changes;  // "label: kernel shared_bytes 0 -> 8448 ..." for each line put right
    std::vector<std::string> kept;     // "label: kernel registers 244 (here 223) ..." for each line allocated otherwise
};

// Refreshes the recording at `path` (a problem's <problem>.jsonl) from the problem folder `problem_dir`, writing it
// again (atomically) when a line changed, unless `dry_run`. Throws Error when the recording is of another problem or of
// another definition of it (its problem fingerprint is not the folder's).
StaticRefresh refresh_static_reports(const std::string& path, const std::string& problem_dir, Compiler& compiler,
                                     bool dry_run = false);

}  // namespace kerncast
