#include "engine/worker/gpu_device.h"
#include "core/text_util.h"

#include "core/error.h"
#include "core/kernel_program.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

Measurement failed(Status status, const std::string& reason, const DeviceFingerprint& device) {
    Measurement m;
    m.status = status;
    m.reason = reason;
    m.device = device;
    m.device_kind = "cuda";
    return m;
}

}  // namespace

std::string read_problem_json(const std::string& problem_dir, std::string* path) {
    fs::path file = problem_dir;
    if (fs::is_directory(file))
        file /= "problem.json";
    if (path)
        *path = fs::absolute(file).string();
    return read_text_file(file.string());
}

std::string find_worker_executable() {
    if (const char* env = std::getenv("KERNCAST_WORKER"); env && *env)
        return env;
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        // Installed side by side; or, in a build tree, tests/ and bench/ sit beside app/.
        for (const auto& candidate :
             {self.parent_path() / "kerncast-worker", self.parent_path().parent_path() / "app" / "kerncast-worker",
              self.parent_path().parent_path() / "bin" / "kerncast-worker"}) {
            if (fs::is_regular_file(candidate, ec))
                return candidate.string();
        }
    }
    return "";
}

std::string format_compile_log(const CompileResult& result) {
    if (result.diagnostics.empty())
        return result.log;
    std::string out;
    for (const auto& d : result.diagnostics) {
        out += Error::format(SourceLocation{d.file, d.line}, d.severity + ": " + d.message);
        out += '\n';
    }
    return out;
}

GpuDevice::GpuDevice(int ordinal, std::string worker_exe, std::shared_ptr<Compiler> compiler)
    : m_id("cuda:" + std::to_string(ordinal)),
      m_compiler(compiler ? std::move(compiler) : std::make_shared<Compiler>()) {
    if (worker_exe.empty())
        throw Error("cannot open " + m_id +
                    ": kerncast-worker was not found (build it, or set KERNCAST_WORKER to its path)");
    m_worker = std::make_unique<WorkerSupervisor>(std::move(worker_exe), ordinal);
    startWorker();
}

GpuDevice::GpuDevice(std::string id, std::unique_ptr<WorkerSupervisor> worker, std::shared_ptr<Compiler> compiler)
    : m_id(std::move(id)), m_compiler(compiler ? std::move(compiler) : std::make_shared<Compiler>()),
      m_worker(std::move(worker)) {
    startWorker();
}

void GpuDevice::startWorker() {
    m_hello = m_worker->start();
    if (!m_hello.ok)
        throw Error("cannot open " + m_id + ": " + m_hello.error);
}

GpuDevice::~GpuDevice() = default;

std::string GpuDevice::id() const { return m_id; }

DeviceFingerprint GpuDevice::fingerprint() const { return m_hello.device; }

DeviceCeilings GpuDevice::ceilings() const { return m_hello.ceilings; }

std::function<MeasureOutcome()> GpuDevice::prepareMeasure(const MeasureRequest& request) {
    return [this, prepared = prepare(request)] { return measurePrepared(prepared); };
}

std::string GpuDevice::arch() const {
    return "sm_" + std::to_string(m_hello.device.cc_major) + std::to_string(m_hello.device.cc_minor);
}

PreparedMeasure GpuDevice::prepare(const MeasureRequest& request) {
    PreparedMeasure p;
    p.request = request;
    try {
        p.problem_json = read_problem_json(request.problem_dir, &p.problem_file);
        // A launch plan that does not parse, or that names targets other than this device, would only fail later
        // in the worker; say where it is wrong now.
        KernelProgram::parse(request.candidate.source, request.candidate.file_name).compileArch(arch());
        KernelProgram::parse(request.reference.source, request.reference.file_name).compileArch(arch());
    } catch (const Error& e) {
        p.setup_error = e.what();
        return p;
    }
    const std::string sm = arch();
    p.candidate = m_compiler->compileAsync(measure_compile_request(request.candidate, sm));
    p.reference = m_compiler->compileAsync(measure_compile_request(request.reference, sm));
    return p;
}

MeasureOutcome GpuDevice::measurePrepared(const PreparedMeasure& p, const ProgressFn& progress) {
    MeasureOutcome out;
    if (!p.setup_error.empty()) {
        out.measurement = failed(Status::CompileError, p.setup_error, m_hello.device);
        out.compile_log = p.setup_error;
        return out;
    }
    if (progress)
        progress("compile");
    const CompileResult& cand = p.candidate.get();
    const CompileResult& ref = p.reference.get();
    out.static_report = cand.kernels;
    if (!cand.ok) {
        out.compile_log = format_compile_log(cand);
        out.measurement = failed(Status::CompileError, "the candidate did not compile", m_hello.device);
        out.measurement.compile_ms = cand.compile_ms;
        return out;
    }
    if (!ref.ok) {
        out.compile_log = format_compile_log(ref);
        out.measurement = failed(Status::CompileError,
                                 "the reference " + p.request.reference.file_name +
                                     " did not compile, so nothing "
                                     "can be compared with it",
                                 m_hello.device);
        out.measurement.compile_ms = cand.compile_ms;
        return out;
    }

    MeasurePayload payload;
    payload.problem_json = p.problem_json;
    payload.problem_file = p.problem_file;
    payload.options = p.request.options;
    payload.candidate = {p.request.candidate.source, p.request.candidate.file_name, p.request.candidate.tunables,
                         cand.cubin};
    payload.reference = {p.request.reference.source, p.request.reference.file_name, p.request.reference.tunables,
                         ref.cubin};
    out.measurement = m_worker->measure(payload, p.request.options.deadline_s, progress);
    out.measurement.compile_ms = cand.compile_ms;
    if (progress)
        progress("done");
    return out;
}

MeasureOutcome GpuDevice::measure(const MeasureRequest& request, const ProgressFn& progress) {
    return measurePrepared(prepare(request), progress);
}

}  // namespace kerncast
