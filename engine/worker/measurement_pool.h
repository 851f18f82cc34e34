#pragma once
// A pool of measuring workers (ARCHITECTURE §5): several kerncast-worker processes (GPUs, or replay workers), started
// here, over ssh or as Slurm job steps (WorkerLauncher), that measure a gated batch in parallel. One worker measures
// one candidate at a time; results are handed back in the batch's order, so a search stays deterministic for its seed
// whatever the number of workers. A request that loses its worker (the process died, the connection dropped, the
// node went away) goes back to the queue for another worker: nothing is lost and nothing is measured twice. A worker
// that keeps losing its requests is retired, and the pool says so.

#include "engine/device.h"
#include "engine/worker/pool_status.h"
#include "engine/worker/worker_launcher.h"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kerncast {

class ReplayDevice;
class Compiler;
class Timeline;

struct PoolConfig {
    // Device specs: cuda:N, cuda:all, replay:<recordings>; each may end in @LAUNCHER (cuda:all@ssh:gpu-b) to start
    // its workers another way than `launcher`. Empty: the search's one device.
    std::vector<std::string> devices;
    int workers = 1;                 // worker processes per device (a replay device: that many replay workers)
    std::string launcher = "local";  // local | ssh:HOST | slurm[:SRUN OPTIONS]
    std::string remote_worker;       // kerncast-worker's path on ssh hosts and Slurm nodes ("": the local path)
    std::string remote_resources;    // the resources folder there, for replay workers ("": the local one)
    bool allow_mixed = false;        // measure on several GPU models in one search
    double replay_wall_time = 0;     // replay workers take each measurement's recorded wall time times this
    // A search on replay workers compiles every candidate's static report with NVRTC, and each worker the program it
    // measures (on the pool's compiler, compilePool()), as a search on a real GPU does, instead of reading the
    // recording's: with replay_wall_time 1 the engine then pays what it pays on a GPU.
    bool replay_compiles = false;
    int max_failures = 3;  // requests a worker may lose in a row before it is retired
};
void to_json(nlohmann::json& j, const PoolConfig& c);
PoolConfig pool_config_from_json(const nlohmann::json& j);
// Whether a config asks for anything beyond the one in-process device a search has without a pool.
bool pool_requested(const PoolConfig& config);

// Something the pool did that belongs in the run's event log: worker_lost, requeued, worker_retired.
struct PoolNote {
    std::string kind;
    nlohmann::json payload;
    std::string message;
};

class MeasurementPool : public Device {
public:
    struct Slot;

    // Starts every worker (in parallel) and reads their fingerprints. Throws Error naming the worker when one cannot
    // start, and when the GPU models differ without allow_mixed. default_device: used when config.devices is empty.
    static std::unique_ptr<MeasurementPool> open(const PoolConfig& config, const std::string& default_device,
                                                 const std::string& resources_dir);
    ~MeasurementPool() override;

    std::string id() const override;  // the device id when every worker serves the same device, else a list
    DeviceFingerprint fingerprint() const override;
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress = {}) override;
    // A pool of replay workers: the recordings they answer from (the local surrogate must not learn from them).
    std::string recordingsFolder() const override;
    std::optional<std::vector<StaticReport>> recordedStaticReport(const std::string& problem,
                                                                  const std::string& source_hash) const override;
    DeviceCeilings ceilings() const override;
    std::shared_ptr<const Recording> recording(const std::string& problem) const override;
    MeasurementPool* batchPool() override { return this; }
    // The GPU workers' compile pool (nullptr for replay workers) and the first GPU's architecture.
    std::shared_ptr<Compiler> compilePool() const override;
    std::string compileArch() const override;

    struct Job {
        MeasureRequest request;
        int64_t tag = 0;  // the candidate id, shown in the pool's status
    };
    // Called on the calling thread, in the order of the jobs, as soon as a job and all before it are measured.
    using ApplyFn = std::function<void(size_t index, MeasureOutcome& outcome)>;
    using StatusFn = std::function<void(const PoolSnapshot& snapshot)>;
    // Measures every job across the pool. Throws Error when every worker has been retired with jobs left (those
    // before it were applied).
    void measureBatch(const std::vector<Job>& jobs, const ApplyFn& apply, const StatusFn& status = {});
    // The same in two halves, so that the caller can work while the pool measures: submit() queues the jobs behind
    // those already queued and returns at once; collect() applies a submitted batch's results in its order (as
    // measureBatch does) and returns when all are applied. Workers that finish one batch go on with the next one
    // queued, so a batch's stragglers do not leave the others idle. Batches are collected in submission order.
    using Ticket = int64_t;
    Ticket submit(std::vector<Job> jobs);
    void collect(Ticket ticket, const ApplyFn& apply, const StatusFn& status = {});

    // Each measurement from now on goes into the timeline too (engine/timeline.h): its worker, when a worker took it,
    // how long it had waited, and its parts. Null: none.
    void setTimeline(std::shared_ptr<Timeline> timeline);

    PoolSnapshot snapshot() const;
    std::vector<PoolNote> takeNotes();
    size_t workers() const;      // all, retired ones included
    size_t liveWorkers() const;  // not retired
    // The recordings behind a pool of replay workers (static reports come from them, as without a pool).
    const ReplayDevice* replay() const { return m_replay.get(); }
    // The main process of a worker (ssh or srun for a launched one), for tests that pull a worker away.
    int workerPid(size_t index) const;

private:
    MeasurementPool() = default;
    void serve(Slot& slot);
    void note(PoolNote n);

    std::vector<std::unique_ptr<Slot>> m_slots;
    std::unique_ptr<ReplayDevice> m_replay;
    std::shared_ptr<Compiler> m_compiler;
    PoolConfig m_config;
    std::string m_id;
    DeviceFingerprint m_fingerprint;

    mutable std::mutex m_mutex;
    std::condition_variable m_work;     // workers wait for jobs
    std::condition_variable m_changed;  // the batch's caller waits for results and state changes
    struct Pending {
        Ticket ticket = 0;
        size_t index = 0;
        std::vector<const Slot*> lost_on;  // workers this job lost: it goes to another one when there is one
        double queued_at = 0;              // on the timeline's clock
    };
    // The queue entry `slot` may take now, or -1.
    long pickFor(const Slot& slot) const;
    std::vector<Pending> m_queue;
    struct Batch {
        std::vector<Job> jobs;
        std::vector<std::optional<MeasureOutcome>> results;
    };
    std::map<Ticket, Batch> m_batches;  // submitted and not yet collected
    Ticket m_next_ticket = 1;
    int64_t m_in_flight = 0;
    int64_t m_done = 0;
    bool m_status_changed = false;
    bool m_quit = false;
    std::vector<PoolNote> m_notes;
    std::vector<std::thread> m_threads;
    std::shared_ptr<Timeline> m_timeline;  // under m_mutex
};

}  // namespace kerncast
