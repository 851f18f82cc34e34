#pragma once
// A device measures candidates: a real GPU (through an isolated kerncast-worker process) or the replay device
// (answers from recordings). Both give the same Measurement values (ARCHITECTURE §5).

#include "core/measurement.h"
#include "core/static_report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

class Compiler;

// A real GPU's device id: "cuda:N" or "cuda:all", possibly with "@LAUNCHER" after it (a replay device is "replay:...").
inline bool is_cuda_device_id(const std::string& id) { return id.rfind("cuda:", 0) == 0; }

struct Recording;       // engine/replay/replay_device.h
class MeasurementPool;  // engine/worker/measurement_pool.h

struct MeasureOptions {
    int seeds = 3;  // fresh input sets for verification (>= 3)
    int warmup = 3;
    int max_runs = 100;
    double target_rse = 0.005;     // stop when the relative standard error of the mean is at most this
    double time_cap_ms = 3000;     // per program, for the timed loop
    double deadline_s = 120;       // the whole measure request; past it the worker is killed -> timeout
    double reverify_above = 10.0;  // speedup that triggers the re-verification guard
    bool verify_only = false;      // skip timing
    uint64_t seed_base = 0;        // 0: the worker draws the measurement's seeds; else they derive from this
};

// A kernel program to measure: its text and tunable values. The launch plan is in the text (@kerncast lines).
struct ProgramRef {
    std::string source;
    std::string file_name = "kernel.cu";
    std::map<std::string, int64_t> tunables;
};

struct MeasureRequest {
    std::string problem_dir;  // folder with problem.json
    ProgramRef candidate;
    ProgramRef reference;  // usually the problem's reference.cu
    MeasureOptions options;
};

// Progress of one request: "compile", "verify", "time", "reverify", "done".
using ProgressFn = std::function<void(const std::string& stage)>;

struct MeasureOutcome {
    Measurement measurement;
    std::vector<StaticReport> static_report;  // of the candidate
    std::string compile_log;                  // non-empty on compile errors (mapped to the file's lines)
    // Where the device's own wall time went, where that is not the measurement's compile_ms, verify_ms and time_ms:
    // a replay worker answers with the recording's figures, but spends the wait for its compiles on this machine
    // (PoolConfig::replay_compiles) and the recorded verification and timing times PoolConfig::replay_wall_time.
    // Negative: the measurement's own. The search's timeline lays a measurement's parts out by these.
    double spent_compile_ms = -1;
    double spent_verify_ms = -1;
    double spent_time_ms = -1;
};

// Measured peak rates of a device: with a problem's FLOP and byte counts they give the roofline floor.
struct DeviceCeilings {
    double dram_gbps = 0;
    double fp32_tflops = 0;
    int64_t l2_bytes = 0;
};

class Device {
public:
    virtual ~Device() = default;
    // "cuda:0", "replay:nvidia-h100-80gb-hbm3"
    virtual std::string id() const = 0;
    virtual DeviceFingerprint fingerprint() const = 0;
    virtual MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress = {}) = 0;

    // Capabilities beyond measure(). Callers ask these instead of casting to a concrete device; the defaults fit a
    // device that has none of them.

    // Measured peak rates; zeros where unknown.
    virtual DeviceCeilings ceilings() const { return {}; }
    // A device that answers from recordings: their folder (what the local surrogate must not learn from); "" when
    // it measures for real.
    virtual std::string recordingsFolder() const { return {}; }
    // The static report recorded for a program (by content hash) of a problem, made by the real compiler on the
    // recording machine; nullopt when the device has no recording of it.
    virtual std::optional<std::vector<StaticReport>> recordedStaticReport(const std::string& problem,
                                                                          const std::string& source_hash) const {
        (void)problem;
        (void)source_hash;
        return std::nullopt;
    }
    // The recording of a problem on a device that answers from recordings (its header holds, e.g., PyTorch eager's
    // time); nullptr when the device measures for real or has no recording of the problem.
    virtual std::shared_ptr<const Recording> recording(const std::string& problem) const {
        (void)problem;
        return nullptr;
    }
    // A device that measures batches in parallel on a pool of workers gives its pool (submit a batch, collect the
    // results in candidate order); nullptr for a device that measures one request at a time.
    virtual MeasurementPool* batchPool() { return nullptr; }
    // Starts what can be done ahead of the measurement (a GPU compiles on the engine's pool while it measures the
    // previous program) and returns the call that measures. The default defers everything to that call.
    virtual std::function<MeasureOutcome()> prepareMeasure(const MeasureRequest& request) {
        return [this, request] { return measure(request); };
    }
    // The compile pool and cache this device compiles candidates with, and the architecture it compiles for: a search
    // compiles its static reports there, so that a candidate it measures is compiled once, not twice (nullptr: the
    // device compiles nothing here, as a replay device).
    virtual std::shared_ptr<Compiler> compilePool() const { return nullptr; }
    virtual std::string compileArch() const { return "sm_90"; }
};

struct DeviceListing {
    std::string id;
    std::string kind;  // "cuda" or "replay"
    DeviceFingerprint fingerprint;
    std::string note;  // e.g. why no CUDA device is listed
};

// Every device this machine can use: CUDA GPUs when a driver is present (found through dlopen), then a replay
// device per recording folder under resources_dir/recordings.
std::vector<DeviceListing> list_devices(const std::string& resources_dir);
// Opens "cuda:N" or "replay:<slug>"; throws kerncast::Error with a readable reason.
std::unique_ptr<Device> open_device(const std::string& id, const std::string& resources_dir);

}  // namespace kerncast
