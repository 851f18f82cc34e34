#include "engine/worker/measurement_pool.h"

#include "core/error.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/replay/replay_device.h"
#include "engine/timeline.h"
#include "engine/worker/gpu_device.h"
#include "engine/worker/worker_supervisor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

void to_json(nlohmann::json& j, const PoolConfig& c) {
    j = {{"devices", c.devices},
         {"workers", c.workers},
         {"launcher", c.launcher},
         {"remote_worker", c.remote_worker},
         {"remote_resources", c.remote_resources},
         {"allow_mixed", c.allow_mixed},
         {"replay_wall_time", c.replay_wall_time},
         {"max_failures", c.max_failures}};
    if (c.replay_compiles)
        j["replay_compiles"] = true;
}

PoolConfig pool_config_from_json(const nlohmann::json& j) {
    PoolConfig c;
    if (!j.is_object())
        return c;
    c.devices = j.value("devices", c.devices);
    c.workers = j.value("workers", c.workers);
    c.launcher = j.value("launcher", c.launcher);
    c.remote_worker = j.value("remote_worker", c.remote_worker);
    c.remote_resources = j.value("remote_resources", c.remote_resources);
    c.allow_mixed = j.value("allow_mixed", c.allow_mixed);
    c.replay_wall_time = j.value("replay_wall_time", c.replay_wall_time);
    c.max_failures = j.value("max_failures", c.max_failures);
    c.replay_compiles = j.value("replay_compiles", c.replay_compiles);
    if (c.workers < 1 || c.workers > 256)
        throw Error("pool settings: 'workers' must be between 1 and 256 per device");
    if (c.max_failures < 1)
        throw Error("pool settings: 'max_failures' must be at least 1");
    if (!(c.replay_wall_time >= 0))
        throw Error("pool settings: 'replay_wall_time' must not be negative");
    return c;
}

bool pool_requested(const PoolConfig& c) {
    if (c.devices.size() > 1 || c.workers > 1 || c.replay_wall_time > 0 || c.replay_compiles)
        return true;
    if (WorkerLauncher::parse(c.launcher).kind != WorkerLauncher::Kind::Local)
        return true;
    for (const auto& d : c.devices)
        if (d.find('@') != std::string::npos || d == "cuda:all")
            return true;
    return false;
}

namespace {

// A replay worker behind a supervisor: the request travels without cubins (the recordings answer by content hash).
// With PoolConfig::replay_compiles it compiles the candidate and the reference first on the pool's compiler, as a GPU
// device does (a program the search compiled for its static report is found there).
class ReplayWorkerDevice : public Device {
public:
    ReplayWorkerDevice(std::string id, std::unique_ptr<WorkerSupervisor> worker, double wall_time_scale,
                       std::shared_ptr<Compiler> compiler = nullptr)
        : m_id(std::move(id)), m_worker(std::move(worker)), m_compiler(std::move(compiler)),
          m_wall_time_scale(wall_time_scale) {
        m_hello = m_worker->start();
        if (!m_hello.ok)
            throw Error("cannot open " + m_id + ": " + m_hello.error);
    }
    std::string id() const override { return m_id; }
    DeviceFingerprint fingerprint() const override { return m_hello.device; }
    // The recording's ceilings, as the in-process replay device gives them: the local surrogate reads them.
    DeviceCeilings ceilings() const override { return m_hello.ceilings; }
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress) override {
        MeasurePayload payload;
        payload.problem_json = read_problem_json(request.problem_dir, &payload.problem_file);
        payload.options = request.options;
        payload.candidate = {request.candidate.source, request.candidate.file_name, request.candidate.tunables, {}};
        payload.reference = {request.reference.source, request.reference.file_name, request.reference.tunables, {}};
        MeasureOutcome out;
        const auto started = std::chrono::steady_clock::now();
        if (m_compiler) {
            auto candidate = m_compiler->compileAsync(measure_compile_request(request.candidate, compileArch()));
            auto reference = m_compiler->compileAsync(measure_compile_request(request.reference, compileArch()));
            out.static_report = candidate.get().kernels;
            reference.wait();
        }
        out.spent_compile_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        out.measurement = m_worker->measure(payload, request.options.deadline_s, progress);
        out.measurement.device_kind = "replay";
        // The worker slept the recorded verification and timing (scaled), and nothing for a program not recorded.
        const bool slept = m_wall_time_scale > 0 && out.measurement.status != Status::NotRecorded;
        out.spent_verify_ms = slept ? out.measurement.verify_ms * m_wall_time_scale : 0;
        out.spent_time_ms = slept ? out.measurement.time_ms * m_wall_time_scale : 0;
        return out;
    }
    WorkerSupervisor& supervisor() { return *m_worker; }

private:
    std::string m_id;
    std::unique_ptr<WorkerSupervisor> m_worker;
    std::shared_ptr<Compiler> m_compiler;
    double m_wall_time_scale = 0;
    HelloReply m_hello;
};

// Runs a short command and returns its stdout; throws Error with its output when it fails.
std::string run_capture(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& a : argv)
        line += (line.empty() ? "" : " ") + shell_quote(a);
    line += " 2>&1";
    FILE* p = ::popen(line.c_str(), "r");
    if (!p)
        throw Error("cannot run " + argv.front());
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    const int rc = ::pclose(p);
    if (rc != 0)
        throw Error("`" + line.substr(0, line.size() - 5) + "` failed (status " + std::to_string(rc) + "): " + out);
    return out;
}

int env_int(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v)
        return 0;
    // SLURM_GPUS may read "4" or "h100:4"; SLURM_JOB_GPUS lists indices ("0,1,2,3").
    std::string s = v;
    if (std::string(name) == "SLURM_JOB_GPUS" || std::string(name) == "SLURM_STEP_GPUS")
        return static_cast<int>(std::count(s.begin(), s.end(), ',')) + 1;
    const auto colon = s.rfind(':');
    return std::atoi(s.substr(colon == std::string::npos ? 0 : colon + 1).c_str());
}

int count_gpus(const WorkerLauncher& launcher, const std::string& worker) {
    switch (launcher.kind) {
    case WorkerLauncher::Kind::Local: {
        std::string why;
        const auto n = cuda::discover_devices(&why).size();
        if (n == 0)
            throw Error("cuda:all: this machine has no usable GPU (" + (why.empty() ? "none found" : why) + ")");
        return static_cast<int>(n);
    }
    case WorkerLauncher::Kind::Ssh: {
        const WorkerCommand c = launcher.command({worker, "--list-gpus"}, false, "");
        const std::string out = run_capture(c.argv);
        // One JSON line on stdout; ssh mixes the worker's stderr (why there is no GPU) into the same stream.
        nlohmann::json list;
        std::istringstream lines(out);
        for (std::string line; std::getline(lines, line) && !list.is_array();)
            if (!line.empty() && line.front() == '[')
                list = nlohmann::json::parse(line, nullptr, false);
        if (!list.is_array())
            throw Error("cuda:all@" + launcher.text() + ": the remote kerncast-worker --list-gpus answered: " + out);
        if (list.empty())
            throw Error("cuda:all@" + launcher.text() + ": the host has no usable GPU: " + out);
        return static_cast<int>(list.size());
    }
    case WorkerLauncher::Kind::Slurm:
        for (const char* v : {"SLURM_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS"})
            if (const int n = env_int(v); n > 0)
                return n;
        throw Error("cuda:all with the slurm launcher counts the GPUs of your allocation, but none is visible "
                    "(no SLURM_GPUS, SLURM_GPUS_ON_NODE or SLURM_JOB_GPUS): run inside salloc/sbatch with --gpus=N, "
                    "or give --device cuda:0 --workers N");
    }
    return 0;
}

}  // namespace

// Outside the anonymous namespace: Slot below holds one, and a class with external linkage may not hold a type of
// internal linkage (GCC's -Wsubobject-linkage, which the unity build shows).
struct SlotPlan {
    std::string device;  // cuda:N or replay:<slug>
    WorkerLauncher launcher;
    std::vector<std::string> argv;
    bool gpu = false;
};

struct MeasurementPool::Slot {
    SlotPlan plan;
    std::string label;
    std::unique_ptr<Device> device;
    WorkerSupervisor* supervisor = nullptr;
    PoolWorkerStatus status;  // under the pool's mutex
    bool retired = false;
};

std::unique_ptr<MeasurementPool> MeasurementPool::open(const PoolConfig& config, const std::string& default_device,
                                                       const std::string& resources_dir) {
    if (config.workers < 1)
        throw Error("--workers must be at least 1");
    std::unique_ptr<MeasurementPool> pool(new MeasurementPool());
    pool->m_config = config;
    const std::vector<std::string> specs =
        config.devices.empty() ? std::vector<std::string>{default_device} : config.devices;
    const WorkerLauncher default_launcher = WorkerLauncher::parse(config.launcher);
    const std::string local_worker = find_worker_executable();

    std::vector<SlotPlan> plans;
    for (const std::string& spec : specs) {
        const auto at = spec.find('@');
        const std::string device = spec.substr(0, at);
        const WorkerLauncher launcher =
            at == std::string::npos ? default_launcher : WorkerLauncher::parse(spec.substr(at + 1));
        const bool remote = launcher.kind != WorkerLauncher::Kind::Local;
        const std::string worker = remote && !config.remote_worker.empty() ? config.remote_worker : local_worker;
        if (worker.empty())
            throw Error("the pool needs kerncast-worker: it was not found (build it, or set KERNCAST_WORKER)");
        std::vector<std::string> ordinals;
        if (device == "cuda:all") {
            const int n = count_gpus(launcher, worker);
            for (int i = 0; i < n; ++i)
                ordinals.push_back(std::to_string(i));
        } else if (is_cuda_device_id(device)) {
            const std::string n = device.substr(5);
            if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
                throw Error("bad device '" + spec +
                            "': expected cuda:<ordinal>, cuda:all or replay:<recordings>, "
                            "optionally followed by @local, @ssh:HOST or @slurm");
            ordinals.push_back(n);
        } else if (device.rfind("replay:", 0) == 0) {
            const std::string slug = device.substr(7);
            const fs::path folder = fs::path(resources_dir) / "recordings" / slug;
            if (slug.empty() || !fs::is_directory(folder))
                throw Error("no recordings for device '" + device + "' (looked in " + folder.string() + ")");
            if (!pool->m_replay)
                pool->m_replay = std::make_unique<ReplayDevice>(folder.string());
            const std::string resources =
                remote && !config.remote_resources.empty() ? config.remote_resources : resources_dir;
            for (int w = 0; w < config.workers; ++w) {
                SlotPlan p;
                p.device = device;
                p.launcher = launcher;
                p.argv = {worker, "--replay", device, "--resources", resources, "--die-with-parent"};
                if (config.replay_wall_time > 0) {
                    char buf[32];
                    std::snprintf(buf, sizeof buf, "%g", config.replay_wall_time);
                    p.argv.insert(p.argv.end(), {"--wall-time", buf});
                }
                plans.push_back(std::move(p));
            }
            continue;
        } else {
            throw Error("unknown device '" + spec + "': expected cuda:<ordinal>, cuda:all or replay:<recordings>");
        }
        for (const std::string& n : ordinals) {
            for (int w = 0; w < config.workers; ++w) {
                SlotPlan p;
                p.device = "cuda:" + n;
                p.launcher = launcher;
                p.gpu = true;
                // A Slurm step with --gres=gpu:1 sees its one GPU as ordinal 0.
                const std::string ordinal = launcher.kind == WorkerLauncher::Kind::Slurm ? "0" : n;
                p.argv = {worker, "--gpu", ordinal, "--die-with-parent"};
                plans.push_back(std::move(p));
            }
        }
    }
    if (plans.empty())
        throw Error("the pool has no worker");

    // Start every worker at once: a Slurm step or an ssh login takes seconds, a GPU worker measures its ceilings.
    pool->m_compiler = std::make_shared<Compiler>();
    std::vector<std::string> errors(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
        auto slot = std::make_unique<Slot>();
        slot->plan = plans[i];
        slot->label = plans[i].device + " on " + plans[i].launcher.where() + ", worker " + std::to_string(i + 1);
        slot->status.index = static_cast<int>(i + 1);
        slot->status.device = plans[i].device;
        slot->status.host = plans[i].launcher.where();
        slot->status.state = "starting";
        pool->m_slots.push_back(std::move(slot));
    }
    {
        std::vector<std::thread> starters;
        for (size_t i = 0; i < plans.size(); ++i) {
            starters.emplace_back([&, i] {
                Slot& s = *pool->m_slots[i];
                try {
                    auto sup = std::make_unique<WorkerSupervisor>(
                        s.plan.launcher.command(s.plan.argv, s.plan.gpu, "kerncast-worker " + s.label));
                    s.supervisor = sup.get();
                    if (s.plan.gpu)
                        s.device = std::make_unique<GpuDevice>(s.plan.device, std::move(sup), pool->m_compiler);
                    else
                        s.device =
                            std::make_unique<ReplayWorkerDevice>(s.plan.device, std::move(sup), config.replay_wall_time,
                                                                 config.replay_compiles ? pool->m_compiler : nullptr);
                    s.status.gpu = s.device->fingerprint().name;
                    s.status.state = "idle";
                } catch (const std::exception& e) {
                    errors[i] = e.what();
                }
            });
        }
        for (auto& t : starters)
            t.join();
    }
    std::string failed;
    for (size_t i = 0; i < errors.size(); ++i)
        if (!errors[i].empty())
            failed += "\n  " + pool->m_slots[i]->label + ": " + errors[i];
    if (!failed.empty())
        throw Error("workers of the pool did not start:" + failed);

    std::map<std::string, std::vector<std::string>> models;
    for (const auto& s : pool->m_slots)
        models[s->status.gpu].push_back(s->label);
    if (models.size() > 1 && !config.allow_mixed) {
        std::string list;
        for (const auto& [model, who] : models)
            list += "\n  " + (model.empty() ? std::string("(unnamed)") : model) + ": " + who.front() +
                    (who.size() > 1 ? " and " + std::to_string(who.size() - 1) + " more" : "");
        throw Error("the pool mixes GPU models, so its measurements would not be comparable:" + list +
                    "\nmeasure on one model, or pass --allow-mixed to accept the mix");
    }
    std::set<std::string> ids;
    for (const auto& s : pool->m_slots)
        ids.insert(s->plan.device);
    for (const auto& d : ids)
        pool->m_id += (pool->m_id.empty() ? "" : "+") + d;
    pool->m_fingerprint = pool->m_slots.front()->device->fingerprint();
    for (auto& s : pool->m_slots)
        pool->m_threads.emplace_back([p = pool.get(), slot = s.get()] { p->serve(*slot); });
    return pool;
}

MeasurementPool::~MeasurementPool() {
    {
        std::lock_guard lock(m_mutex);
        m_quit = true;
    }
    m_work.notify_all();
    for (auto& t : m_threads)
        t.join();
    // The slots' devices stop their workers (shutdown, then a kill) as they are destroyed.
}

std::string MeasurementPool::id() const { return m_id; }

DeviceFingerprint MeasurementPool::fingerprint() const { return m_fingerprint; }

std::string MeasurementPool::recordingsFolder() const { return m_replay ? m_replay->folder() : std::string(); }

std::optional<std::vector<StaticReport>> MeasurementPool::recordedStaticReport(const std::string& problem,
                                                                               const std::string& source_hash) const {
    if (m_config.replay_compiles)
        return std::nullopt;  // compiled by the search, as on a real GPU
    return m_replay ? m_replay->recordedStaticReport(problem, source_hash) : std::nullopt;
}

DeviceCeilings MeasurementPool::ceilings() const { return m_slots.front()->device->ceilings(); }

std::shared_ptr<const Recording> MeasurementPool::recording(const std::string& problem) const {
    return m_replay ? m_replay->recording(problem) : nullptr;
}

size_t MeasurementPool::workers() const { return m_slots.size(); }

size_t MeasurementPool::liveWorkers() const {
    std::lock_guard lock(m_mutex);
    return static_cast<size_t>(
        std::count_if(m_slots.begin(), m_slots.end(), [](const auto& s) { return !s->retired; }));
}

int MeasurementPool::workerPid(size_t index) const {
    if (index >= m_slots.size() || !m_slots[index]->supervisor)
        return -1;
    return m_slots[index]->supervisor->pid();
}

PoolSnapshot MeasurementPool::snapshot() const {
    std::lock_guard lock(m_mutex);
    PoolSnapshot s;
    for (const auto& slot : m_slots)
        s.workers.push_back(slot->status);
    s.queued = static_cast<int64_t>(m_queue.size());
    s.in_flight = m_in_flight;
    s.done = m_done;
    return s;
}

std::vector<PoolNote> MeasurementPool::takeNotes() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_notes, {});
}

void MeasurementPool::note(PoolNote n) {
    m_notes.push_back(std::move(n));
    m_status_changed = true;
}

MeasureOutcome MeasurementPool::measure(const MeasureRequest& request, const ProgressFn& progress) {
    MeasureOutcome result;
    measureBatch({Job{request, 0}}, [&](size_t, MeasureOutcome& out) { result = std::move(out); });
    if (progress)
        progress("done");
    return result;
}

// A candidate whose request cost this many workers is the one at fault (it kills whatever runs it): its last
// failure is its measurement.
constexpr size_t kLostWorkersPerCandidate = 2;

long MeasurementPool::pickFor(const Slot& slot) const {
    for (size_t i = 0; i < m_queue.size(); ++i) {
        const auto& lost_on = m_queue[i].lost_on;
        if (std::find(lost_on.begin(), lost_on.end(), &slot) == lost_on.end())
            return static_cast<long>(i);
        // This worker lost it before: leave it to another live worker, unless there is none.
        const bool other = std::any_of(m_slots.begin(), m_slots.end(), [&](const auto& s) {
            return !s->retired && std::find(lost_on.begin(), lost_on.end(), s.get()) == lost_on.end();
        });
        if (!other)
            return static_cast<long>(i);
    }
    return -1;
}

void MeasurementPool::serve(Slot& slot) {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_work.wait(lock, [&] { return m_quit || slot.retired || pickFor(slot) >= 0; });
        if (m_quit || slot.retired)
            return;
        const auto at = m_queue.begin() + pickFor(slot);
        Pending job = *at;
        m_queue.erase(at);
        // The batch stays in m_batches until all its results are in, so the job outlives this measurement.
        Batch& batch = m_batches.at(job.ticket);
        const Job& spec = batch.jobs[job.index];
        const std::shared_ptr<Timeline> timeline = m_timeline;
        const double taken_at = timeline ? timeline->now() : 0;
        ++m_in_flight;
        slot.status.state = "busy";
        slot.status.candidate = spec.tag;
        m_status_changed = true;
        m_changed.notify_all();
        lock.unlock();

        MeasureOutcome out;
        bool lost = false;
        std::string why;
        try {
            out = slot.device->measure(spec.request);
            lost = slot.supervisor->lastMeasureLostWorker();
            why = out.measurement.reason;
        } catch (const std::exception& e) {
            lost = true;
            why = e.what();
            out.measurement.status = Status::Crashed;
            out.measurement.reason = why;
            out.measurement.device = slot.device->fingerprint();
            out.measurement.device_kind = slot.plan.gpu ? "cuda" : "replay";
        }
        if (timeline) {
            const Measurement& m = out.measurement;
            const auto part = [](double spent, double own) { return spent >= 0 ? spent : own; };
            timeline->addMeasurement(slot.label, spec.tag, taken_at, timeline->now(),
                                     std::max(0.0, taken_at - job.queued_at), part(out.spent_compile_ms, m.compile_ms),
                                     part(out.spent_verify_ms, m.verify_ms), part(out.spent_time_ms, m.time_ms));
        }

        lock.lock();
        --m_in_flight;
        slot.status.candidate = 0;
        if (lost)
            job.lost_on.push_back(&slot);
        if (lost && job.lost_on.size() < kLostWorkersPerCandidate) {
            ++slot.status.failures;
            slot.status.note = why;
            // Back to the front of the queue: another worker takes it; nothing of it reached the store.
            m_queue.insert(m_queue.begin(), std::move(job));
            note({"requeued",
                  {{"candidate", spec.tag}, {"worker", slot.label}, {"reason", why}},
                  "candidate #" + std::to_string(spec.tag) + " requeued: " + slot.label + " was lost (" + why + ")"});
            m_work.notify_all();
        } else {
            if (lost) {
                ++slot.status.failures;
                out.measurement.reason += "; it lost " + std::to_string(kLostWorkersPerCandidate) +
                                          " workers in a row, so the candidate is taken to be at fault";
            } else {
                slot.status.failures = 0;
            }
            out.measurement.worker = slot.label;
            ++slot.status.measured;
            ++m_done;
            batch.results[job.index] = std::move(out);
        }
        if (lost && slot.status.failures >= m_config.max_failures) {
            slot.retired = true;
            slot.status.state = "retired";
            note({"worker_retired",
                  {{"worker", slot.label}, {"failures", slot.status.failures}, {"reason", why}},
                  slot.label + " retired after losing " + std::to_string(slot.status.failures) +
                      " requests in a row; last: " + why});
            m_work.notify_all();  // what only it could not take goes to the others now
        } else {
            slot.status.state = lost ? "restarting" : "idle";
            if (lost && slot.supervisor->running())
                slot.status.state = "idle";
        }
        m_status_changed = true;
        m_changed.notify_all();
        if (slot.retired)
            return;
    }
}

std::shared_ptr<Compiler> MeasurementPool::compilePool() const {
    if (m_config.replay_compiles)
        return m_compiler;  // its replay workers compile what they measure there
    for (const auto& slot : m_slots)
        if (slot->plan.gpu)
            return m_compiler;
    return nullptr;
}

std::string MeasurementPool::compileArch() const {
    for (const auto& slot : m_slots)
        if (slot->plan.gpu && slot->device)
            return slot->device->compileArch();
    return Device::compileArch();
}

void MeasurementPool::setTimeline(std::shared_ptr<Timeline> timeline) {
    std::lock_guard lock(m_mutex);
    m_timeline = std::move(timeline);
}

void MeasurementPool::measureBatch(const std::vector<Job>& jobs, const ApplyFn& apply, const StatusFn& status) {
    if (jobs.empty())
        return;
    collect(submit(jobs), apply, status);
}

MeasurementPool::Ticket MeasurementPool::submit(std::vector<Job> jobs) {
    std::lock_guard lock(m_mutex);
    const Ticket ticket = m_next_ticket++;
    Batch& batch = m_batches[ticket];
    batch.results.assign(jobs.size(), std::nullopt);
    const double now = m_timeline ? m_timeline->now() : 0;
    for (size_t i = 0; i < jobs.size(); ++i)
        m_queue.push_back({ticket, i, {}, now});
    batch.jobs = std::move(jobs);
    m_status_changed = true;
    m_work.notify_all();
    return ticket;
}

void MeasurementPool::collect(Ticket ticket, const ApplyFn& apply, const StatusFn& status) {
    std::unique_lock lock(m_mutex);
    const auto found = m_batches.find(ticket);
    if (found == m_batches.end())
        throw Error("the pool has no batch " + std::to_string(ticket) + " to collect");
    Batch& batch = found->second;
    auto all_retired = [&] {
        return std::all_of(m_slots.begin(), m_slots.end(), [](const auto& s) { return s->retired; });
    };
    const size_t total = batch.jobs.size();
    size_t next = 0;
    while (next < total) {
        m_changed.wait(lock, [&] {
            return batch.results[next].has_value() || m_status_changed || (all_retired() && m_in_flight == 0);
        });
        if (m_status_changed && status) {
            m_status_changed = false;
            lock.unlock();
            status(snapshot());
            lock.lock();
        }
        m_status_changed = false;
        while (next < total && batch.results[next]) {
            MeasureOutcome out = std::move(*batch.results[next]);
            batch.results[next].reset();
            lock.unlock();
            apply(next, out);
            lock.lock();
            ++next;
        }
        if (next < total && !batch.results[next] && all_retired() && m_in_flight == 0) {
            // Nothing can measure what is left, of this batch or of any other queued.
            m_queue.clear();
            m_batches.clear();
            std::string last;
            for (const auto& s : m_slots)
                last += "\n  " + s->label + ": " + s->status.note;
            throw Error("every worker of the pool was retired; " + std::to_string(total - next) +
                        " candidates of this batch were not measured (resume the run to measure them):" + last);
        }
    }
    m_batches.erase(found);
    lock.unlock();
    if (status)
        status(snapshot());
}

}  // namespace kerncast
