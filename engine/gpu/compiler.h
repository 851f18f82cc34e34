#pragma once
// NVRTC compilation of kernel programs, a cubin cache, and the static report through nvJitLink. Needs the CUDA
// toolkit libraries only, never a GPU or driver.

#include "core/static_report.h"
#include "engine/device.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kerncast {

struct CompileRequest {
    std::string source;                      // the kernel program text (device code + @kerncast lines)
    std::string file_name = "kernel.cu";     // shown in diagnostics
    std::map<std::string, int64_t> defines;  // tunables -> -D NAME=value
    std::string arch = "sm_90";              // sm_NN[a|f] gives a cubin; compute_NN gives PTX only
    std::vector<std::string> kernel_names;   // kernels to report on (from the launch plan); empty: all found
    std::vector<std::string> extra_options;
};

// One compiler message mapped to the kernel file's own line numbers.
struct CompileDiagnostic {
    std::string file;
    int line = 0;
    std::string severity;  // "error" or "warning"
    std::string message;
};

struct CompileResult {
    bool ok = false;
    std::string key;  // cache key: hash of source + options + arch
    std::string log;  // full NVRTC/nvJitLink log
    std::vector<CompileDiagnostic> diagnostics;
    std::vector<char> cubin;  // loadable with cuModuleLoadData
    std::string ptx;
    std::vector<StaticReport> kernels;  // the request's kernel_names in order, or every kernel entry
    double compile_ms = 0;              // compiling (or reading the cache) for this result; excludes queueing
    bool from_cache = false;
};

// One fresh compile's outcome: every kernel entry reported (the request's kernel selection comes later), and whether
// it depends on the inputs alone (only such outcomes are cached).
struct CompileOutcome {
    CompileResult result;
    bool cacheable = false;
};

// NVRTC and nvJitLink in this process, no cache. Never throws for the program's sake.
CompileOutcome compile_here(const CompileRequest& request, const std::string& key);
// A compile that failed for a reason outside the program (not cacheable): `why` as its one error diagnostic.
CompileOutcome compile_failure(const CompileRequest& request, const std::string& key, const std::string& why);

// Where the compiles of a Compiler run when not in its own process (CompileHelpers, engine/worker/compile_helpers.h).
class CompileBackend {
public:
    virtual ~CompileBackend() = default;
    // A fresh compile of the request; never throws.
    virtual CompileOutcome compile(const CompileRequest& request, const std::string& key) = 0;
    // The processes that compiled so far (0: every compile ran in the engine's process).
    virtual size_t processes() const = 0;
};

// The compile helpers a Compiler of `threads` threads uses by default (CompileHelpers; defined with them), one a
// thread, or null: with KERNCAST_COMPILE_IN_PROCESS=1, or where kerncast-worker is not found.
std::unique_ptr<CompileBackend> default_compile_backend(unsigned threads);

// A compile request and a fresh outcome as JSON, as they travel to and from a compile helper (the cubin in base64).
nlohmann::json compile_request_to_json(const CompileRequest& request);
CompileRequest compile_request_from_json(const nlohmann::json& j);
nlohmann::json compile_outcome_to_json(const CompileOutcome& outcome);
// Throws Error on a malformed outcome. key: the request's cache key, which the outcome must name.
CompileOutcome compile_outcome_from_json(const nlohmann::json& j, const std::string& key);

class Compiler {
public:
    // cache_dir: where cubins and reports persist between runs ("" = memory only). threads: pool size (0 = auto).
    // The compiles run in helper processes, one a thread (default_compile_backend): NVRTC takes one compile at a
    // time in a process, so that on a 16-CPU H200 host 16 threads compiled only 1.2 times as fast as one, where 8
    // processes compiled 4.4 times as fast; and a helper compiles each program in a fork of itself, so that its
    // machine code does not depend on what was compiled before and a compile that crashes takes no engine with it.
    explicit Compiler(std::string cache_dir = "", unsigned threads = 0);
    // The same with the compiles run by `backend` (null: in this process).
    Compiler(std::string cache_dir, unsigned threads, std::unique_ptr<CompileBackend> backend);
    ~Compiler();
    Compiler(const Compiler&) = delete;
    Compiler& operator=(const Compiler&) = delete;

    // Synchronous compile (uses the cache).
    CompileResult compile(const CompileRequest& request);
    // Queues a compile on the pool so it overlaps with measurement.
    std::shared_future<CompileResult> compileAsync(CompileRequest request);
    // A compile that may turn out useful: queued behind every other (ThreadPool::postSpare), on at most half the
    // pool's threads, and kept in the cache. A compile or compileAsync of the same program before it started takes
    // its place in the ordinary queue; one after it started joins it.
    void compileSpare(CompileRequest request);

    static std::string cacheKey(const CompileRequest& request);
    // NVRTC's version, e.g. "13.0".
    static std::string nvrtcVersion();
    // The toolkit header folders handed to NVRTC (CCCL first), found next to the NVRTC library that is loaded.
    static std::vector<std::string> includePaths();

    // Counters since construction: what the cache and the in-flight dedupe saved.
    struct Stats {
        size_t compiles = 0;  // NVRTC + nvJitLink runs
        size_t memory_hits = 0;
        size_t disk_hits = 0;
        size_t joined = 0;            // requests that waited on an identical compile already in flight
        size_t spare = 0;             // spare compiles that ran (compileSpare), counted in compiles too
        size_t corrupt_entries = 0;   // disk entries ignored because they were unreadable or inconsistent
        size_t helper_processes = 0;  // compile helpers started (CompileBackend::processes); 0: in this process
    };
    Stats stats() const;
    unsigned threads() const;
    // Whether the compiles run in helper processes (a CompileBackend) rather than in this one.
    bool inHelpers() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

void to_json(nlohmann::json& j, const CompileDiagnostic& d);
void from_json(const nlohmann::json& j, CompileDiagnostic& d);

// What a device compiles to measure a program (a search's static report of the same program has the same cache key).
CompileRequest measure_compile_request(const ProgramRef& program, const std::string& arch);

}  // namespace kerncast
