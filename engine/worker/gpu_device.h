#pragma once
// A real GPU ("cuda:N"). Kernel programs are compiled here, in the engine's compile pool, for the device's
// architecture; the cubins go to an isolated kerncast-worker process that verifies and times them, so a kernel
// that crashes or hangs costs a worker restart, never the engine (ARCHITECTURE §5).

#include "engine/device.h"
#include "engine/gpu/compiler.h"
#include "engine/worker/worker_supervisor.h"

#include <future>
#include <memory>
#include <string>

namespace kerncast {

// Where kerncast-worker is: $KERNCAST_WORKER, else beside the running executable, else the build tree's app/.
// Returns "" when none is found.
std::string find_worker_executable();

// A measurement whose compilation is under way. Made by GpuDevice::prepare(), consumed by measurePrepared(), so a
// caller can compile the next candidate while the GPU measures this one.
struct PreparedMeasure {
    MeasureRequest request;
    std::string problem_json;
    std::string problem_file;
    std::string setup_error;  // the problem or a launch plan could not be read: reported as compile_error
    std::shared_future<CompileResult> candidate;
    std::shared_future<CompileResult> reference;
};

class GpuDevice : public Device {
public:
    // Starts the worker for GPU `ordinal` and reads its fingerprint. Throws Error with the worker's reason when it
    // cannot measure (no driver, no such GPU). compiler: shared compile pool and cache (nullptr: a private one).
    GpuDevice(int ordinal, std::string worker_exe, std::shared_ptr<Compiler> compiler = nullptr);
    // A worker started some other way (ssh, srun: see WorkerLauncher); id names it, e.g. "cuda:1".
    GpuDevice(std::string id, std::unique_ptr<WorkerSupervisor> worker, std::shared_ptr<Compiler> compiler);
    ~GpuDevice() override;

    std::string id() const override;
    DeviceFingerprint fingerprint() const override;
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress = {}) override;

    // Starts compiling the candidate and the reference (in parallel) and returns at once.
    PreparedMeasure prepare(const MeasureRequest& request);
    // Waits for the compiles, then measures on the worker.
    MeasureOutcome measurePrepared(const PreparedMeasure& prepared, const ProgressFn& progress = {});

    // "sm_90" for compute capability 9.0.
    std::string arch() const;
    DeviceCeilings ceilings() const override;
    std::function<MeasureOutcome()> prepareMeasure(const MeasureRequest& request) override;
    WorkerSupervisor& supervisor() { return *m_worker; }
    Compiler& compiler() { return *m_compiler; }
    std::shared_ptr<Compiler> compilePool() const override { return m_compiler; }
    std::string compileArch() const override { return arch(); }

private:
    void startWorker();

    std::string m_id;
    std::shared_ptr<Compiler> m_compiler;
    std::unique_ptr<WorkerSupervisor> m_worker;
    HelloReply m_hello;
};

// The text of a problem's problem.json (problem_dir may be the folder or the file); *path gets its absolute path.
// Throws Error naming the file when it cannot be read.
std::string read_problem_json(const std::string& problem_dir, std::string* path);

// Compiler diagnostics as "file:line: severity: message" lines (the whole log when there are none).
std::string format_compile_log(const CompileResult& result);

}  // namespace kerncast
