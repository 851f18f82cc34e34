#pragma once
// The in-process GPU runner: one context on one device, the problem's buffers for a case, seeded inputs, poisoned
// outputs and the launch of a kernel program's plan. Used by kerncast-worker (which adds verification and timing)
// and directly by GPU tests, which compare runOnce() with fp64 CPU code.
//
// Inputs come from a counter-based generator (splitmix64 of seed, buffer name and element index) evaluated on the
// GPU by a small NVRTC-compiled kernel: the same seed gives the same inputs on any run, and benchmark buffers of
// hundreds of MB fill in milliseconds. Outputs and scratch are poisoned with 0xFF bytes before every run
// (engine/gpu/verifier.h explains why that pattern).

#include "core/kernel_program.h"
#include "core/measurement.h"
#include "core/problem.h"
#include "engine/device_json.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/guarded_memory.h"
#include "engine/gpu/verifier.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kerncast {

struct RunOutput {
    BufferValues buffers;        // every buffer after the run, inputs included
    BufferValues inputs_before;  // inputs and inouts as initialised, before the run
};

// The kernel program cannot be launched as planned (a kernel missing from the cubin, too much shared memory, a
// parameter-count mismatch...). The context stays usable: the candidate's status is launch_error.
class LaunchError : public Error {
public:
    using Error::Error;
};

class GpuSession;

// A loaded cubin.
class GpuModule {
public:
    ~GpuModule();
    GpuModule(const GpuModule&) = delete;
    GpuModule& operator=(const GpuModule&) = delete;
    CUmodule handle() const { return m_module; }
    // Throws LaunchError "kernel 'k' is not in <what>" when absent.
    CUfunction function(const std::string& name) const;
    // The device address and size of a module-scope variable (a __constant__ symbol); throws LaunchError when absent.
    std::pair<CUdeviceptr, size_t> global(const std::string& name) const;

private:
    friend class GpuSession;
    GpuModule(CUmodule module, std::string what) : m_module(module), m_what(std::move(what)) {}
    CUmodule m_module = nullptr;
    std::string m_what;
};

// Which program a buffer copy belongs to: the reference and the candidate never share an output (or inout), so
// neither can find the other's answer already in place. Inputs are shared.
enum class Side { Reference, Candidate };

struct DeviceVerdict {
    bool ok = false;
    double max_abs = 0;
    double max_rel = 0;
    std::string reason;  // when not ok and the counters say why ("output y: 12 of 4096 elements ...")
};

// Per-buffer input distributions that replace the problem's own for one case (problem.json's per-case "init").
using InitOverrides = std::map<std::string, InitSpec>;

// Device memory for counters the check kernels add to, cleared on allocation; read back in one copy.
class DeviceCounters {
public:
    DeviceCounters(GpuSession& session, size_t count);
    ~DeviceCounters();
    DeviceCounters(const DeviceCounters&) = delete;
    DeviceCounters& operator=(const DeviceCounters&) = delete;
    CUdeviceptr at(size_t index) const { return m_ptr + 8 * index; }
    size_t size() const { return m_count; }
    // Synchronises and copies every counter back.
    std::vector<uint64_t> read() const;
    void clear();

private:
    GpuSession& m_session;
    CUdeviceptr m_ptr = 0;
    size_t m_count = 0;
};

// A list of guard regions on the device, checked by one kernel launch.
class GuardTable {
public:
    GuardTable(GpuSession& session, const std::vector<GuardRegion>& regions);
    ~GuardTable();
    GuardTable(const GuardTable&) = delete;
    GuardTable& operator=(const GuardTable&) = delete;
    // Enqueues the check on the utility stream: the number of changed guard bytes is added to `counter`.
    void enqueueCheck(CUdeviceptr counter);

private:
    GpuSession& m_session;
    CUdeviceptr m_table = 0;
    unsigned m_count = 0;
};

// Device memory for every buffer of a problem at one case's sizes: inputs once, outputs and inouts once per side,
// each followed by a guard zone.
class CaseBuffers {
public:
    ~CaseBuffers();
    CaseBuffers(const CaseBuffers&) = delete;
    CaseBuffers& operator=(const CaseBuffers&) = delete;

    const Bindings& sizes() const { return m_sizes; }
    // The candidate's copy by default; inputs are the same on both sides.
    CUdeviceptr pointer(const std::string& name, Side side = Side::Candidate) const;
    // Fills inputs and both sides' inouts from the seed (asynchronous on the session's utility stream).
    void fillInputs(uint64_t seed);
    // 0xFF bytes into every out buffer of one side, or of both.
    void poisonOutputs(Side side);
    void poisonOutputs();
    // Synchronises and copies one buffer (of one side) back, widened to double.
    std::vector<double> read(const std::string& name, Side side = Side::Candidate) const;
    BufferValues readAll(Side side = Side::Candidate) const;
    BufferValues readInputs() const;  // in and inout

    // Verification on the device, by the Verifier's rules, after both programs ran on the inputs of `seed`:
    // every output (and inout) of the candidate against the reference's, every input against what the generator
    // wrote from `seed` (so an input changed by either program is found without a snapshot). enqueueChecks only
    // enqueues the check kernels on the utility stream, adding into kSlotsPerBuffer counters per buffer from
    // `slots` on (counters cleared beforehand); describe() words what they found.
    static constexpr size_t kSlotsPerBuffer = 9;
    size_t checkSlots() const { return kSlotsPerBuffer * m_buffers.size(); }
    void enqueueChecks(const Tolerance& tolerance, uint64_t seed, CUdeviceptr slots);
    DeviceVerdict describe(const uint64_t* slots) const;
    // enqueueChecks into the session's own counters, synchronised and described.
    DeviceVerdict verifyOnDevice(const Tolerance& tolerance, uint64_t seed);

    // Every guard region of every buffer (inputs, and both sides' outputs and inouts).
    std::vector<GuardRegion> guardRegions() const;
    // Synchronises and checks the guard bytes around the inputs and one side's outputs (or both sides' when
    // `side` is empty): empty when intact, else "wrote past the end of y: ..." for the first damaged one (which is
    // re-armed).
    std::string guardDamage(std::optional<Side> side);

private:
    friend class GpuSession;
    struct Buffer {
        const BufferSpec* spec = nullptr;
        int64_t elements = 0;
        GuardedBlock mem;      // the candidate's copy (the only one for inputs)
        GuardedBlock ref_mem;  // the reference's copy of an out or inout
        CUdeviceptr at(Side side) const { return side == Side::Reference && ref_mem ? ref_mem.ptr() : mem.ptr(); }
    };
    CaseBuffers(GpuSession& session, const Problem& problem, const Bindings& sizes, const InitOverrides& init);
    // The generator's parameters for one buffer: dtype, distribution, element count, key and the two bounds.
    struct FillParams {
        int dtype = 0, dist = 0;
        unsigned long long n = 0, key = 0;
        double p0 = 0, p1 = 0;
    };
    FillParams fillParams(const Buffer& b, uint64_t seed) const;
    void fill(CUdeviceptr ptr, const Buffer& b, uint64_t seed);
    std::vector<double> readFrom(CUdeviceptr ptr, const Buffer& b) const;
    GpuSession& m_session;
    const Problem& m_problem;
    Bindings m_sizes;
    InitOverrides m_init;
    std::vector<Buffer> m_buffers;
};

// A program's launch plan resolved for one case and bound to that case's buffers, ready to launch repeatedly.
class PreparedProgram {
public:
    ~PreparedProgram();
    PreparedProgram(const PreparedProgram&) = delete;
    PreparedProgram& operator=(const PreparedProgram&) = delete;

    // Enqueues every launch of the plan on `stream` (the session's plan stream by default).
    void launch(CUstream stream = nullptr);
    // 0xFF bytes into the scratch buffers: their contents are undefined at the start of every run.
    void poisonScratch();
    // Synchronises and checks the guard bytes around the scratch buffers; empty when intact.
    std::string guardDamage();
    std::vector<GuardRegion> guardRegions() const;
    size_t launchCount() const { return m_launches.size(); }
    std::vector<std::string> kernelNames() const;

private:
    friend class GpuSession;
    struct Launch {
        ResolvedLaunch plan;
        CUfunction function = nullptr;
        std::vector<uint64_t> values;   // one 8-byte slot per argument (unused for a tensor map)
        std::vector<CUtensorMap> maps;  // the tensor map arguments, in order
    };
    struct Scratch {
        ResolvedScratch spec;
        GuardedBlock mem;
    };
    struct Constant {
        CUdeviceptr symbol = 0, buffer = 0;
        size_t bytes = 0;
    };
    explicit PreparedProgram(GpuSession& session) : m_session(session) {}
    GpuSession& m_session;
    std::string m_file;
    std::vector<Launch> m_launches;
    std::vector<Scratch> m_scratch;
    std::vector<Constant> m_constants;
};

class GpuSession {
public:
    // Retains the primary context of device `ordinal` and compiles the utility kernels (fill, flush, ceilings).
    // Throws Error when the driver is unavailable, CudaError on driver failures.
    explicit GpuSession(int ordinal = 0);
    ~GpuSession();
    GpuSession(const GpuSession&) = delete;
    GpuSession& operator=(const GpuSession&) = delete;

    int ordinal() const { return m_ordinal; }
    const DeviceFingerprint& fingerprint() const { return m_fingerprint; }
    CUcontext context() const { return m_context; }
    CUstream planStream() const { return m_plan_stream; }
    CUstream utilStream() const { return m_util_stream; }
    // NVML sample; zeros when NVML is missing.
    ClockSample clocks() const;
    // Largest dynamic shared memory a block may opt into.
    int maxSharedPerBlockOptin() const { return m_smem_optin; }

    // Cached per device in $XDG_CACHE_HOME/kerncast/ceilings-<uuid>.json (or ~/.cache/...); measured when absent.
    // dram_gbps counts bytes read plus bytes written; fp32_tflops counts an FMA as 2 FLOPs.
    DeviceCeilings ceilings();
    // Measures now: a large device-to-device copy and an FMA-bound kernel, best of several runs, timed with events.
    DeviceCeilings measureCeilings();

    std::unique_ptr<GpuModule> load(const std::vector<char>& cubin, const std::string& what);
    // `init` replaces the problem's input distributions for the buffers it names (a correctness case's "init").
    std::unique_ptr<CaseBuffers> allocate(const Problem& problem, const Bindings& sizes,
                                          const InitOverrides& init = {});
    // Resolves the plan, looks up kernels, checks shared memory and parameter counts, allocates scratch.
    // Throws LaunchError for what the program's author must fix, Error for plan-evaluation errors.
    // `side` picks the copies of the outputs the program writes.
    std::unique_ptr<PreparedProgram> prepare(const GpuModule& module, const KernelProgram& program,
                                             const Problem& problem, CaseBuffers& buffers, const Bindings& tunables,
                                             Side side = Side::Candidate);

    // Writes 2x the L2 size with a kernel on the utility stream, so the next run starts with a cold cache.
    void flushL2();
    // Holds the plan stream until releasePlanStream(): work enqueued in between starts only once all of it is
    // queued, so host-side launch overhead (CUPTI's included) never shows up between two timing events.
    void holdPlanStream();
    void releasePlanStream();
    // Waits for both streams; throws CudaError (check sticky()) when a kernel failed.
    void synchronize();

    // One complete run: fresh inputs from `seed`, outputs poisoned, the plan launched once, everything copied back.
    RunOutput runOnce(const Problem& problem, const KernelProgram& program, const std::vector<char>& cubin,
                      const Bindings& sizes, const Bindings& tunables, uint64_t seed);

private:
    friend class CaseBuffers;
    friend class PreparedProgram;
    friend class DeviceCounters;
    friend class GuardTable;
    // Device memory a program can reach, placed at random in a reservation of its own (engine/gpu/guarded_memory.h).
    GuardedBlock allocateGuarded(size_t bytes, const std::string& what);
    void launchUtil(CUfunction f, unsigned grid, unsigned block, void** params);
    unsigned utilGrid(int64_t elements) const;

    int m_ordinal = 0;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    CUstream m_plan_stream = nullptr;
    CUstream m_util_stream = nullptr;
    DeviceFingerprint m_fingerprint;
    int m_smem_optin = 0;
    std::unique_ptr<GpuModule> m_util;
    CUfunction m_fill = nullptr, m_flush = nullptr, m_copy = nullptr, m_read = nullptr, m_fma = nullptr;
    CUfunction m_check_ref = nullptr, m_check_out = nullptr, m_check_fill = nullptr, m_check_guards = nullptr;
    std::mt19937_64 m_rng;           // where guarded blocks go
    size_t m_guard_granularity = 0;  // guarded_granularity(m_device)

    CUdeviceptr m_flush_buffer = 0;
    size_t m_flush_bytes = 0;
    unsigned m_flush_round = 0;
    CUdeviceptr m_gate = 0;  // a counter the plan stream waits on (holdPlanStream)
    unsigned m_gate_value = 0;
    bool m_gate_held = false;
    bool m_gate_supported = true;
    bool m_have_ceilings = false;
    DeviceCeilings m_ceilings;
};

// Element type conversions used when reading buffers back (exact widening, poison bytes kept recognisable).
double half_to_double(uint16_t bits);
double bfloat16_to_double(uint16_t bits);
// Key of a buffer's random stream: the same for the same seed and buffer name.
uint64_t input_key(uint64_t seed, const std::string& buffer_name);

}  // namespace kerncast
