#pragma once
// Reading what NVRTC, ptxas and nvJitLink say about a program (compiler.cpp): the PTX's entries, the linker's
// verbose report as static reports, and the diagnostics; private to engine/gpu.

#include "engine/gpu/compiler.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast::compile_log {

inline bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

struct PtxEntry {
    std::string name;
    int barrier_instructions = 0;
    int max_threads = 0;
};
std::vector<PtxEntry> parsePtxEntries(const std::string& ptx);

struct LinkFacts {
    struct Kernel {
        long registers = -1, smem = -1, frame = -1, spill_stores = -1, spill_loads = -1, barriers = -1;
        long total_stack = -1;  // linker summary: the frame plus what callees need
        int cmem = -1;
    };
    std::unordered_map<std::string, Kernel> kernels;
    int module_cmem = 0;  // __constant__ data of the module (all kernels may read it)
};
// Two layouts arrive in one log: ptxas's own lines ("ptxas info : Used 32 registers, used 1 barriers, 1024 bytes
// smem") and nvJitLink's summary ("info : used 32 registers, used 1 barriers, 0 stack, 2048 bytes smem, 536 bytes
// cmem[0], 0 bytes lmem"). The summary's smem includes the block's system-reserved shared memory (1 KiB on sm_90),
// so static shared memory comes from ptxas; total stack and constant banks come from the summary.
LinkFacts parseLinkLog(const std::string& log);

std::vector<StaticReport> buildReports(const std::vector<PtxEntry>& entries, const LinkFacts& facts);

std::vector<CompileDiagnostic> parseNvrtcLog(const std::string& log, const std::string& fileName);
std::vector<CompileDiagnostic> parseLinkerErrors(const std::string& log, const std::string& fileName);

// The line of "// @kerncast launch <kernel> ..." so a missing kernel points at the plan line that names it.
int launchLine(const std::string& source, const std::string& kernel);

}  // namespace kerncast::compile_log
