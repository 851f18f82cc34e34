#pragma once
// `kerncast-worker --replay DEVICE`: a worker that answers measure requests from recordings (the replay device)
// over the same protocol as a GPU worker, so the pool, its dispatch and its launchers (local, ssh, Slurm) run and are
// tested without a GPU. With a wall-time scale it takes the recorded time of each measurement (verification plus
// timing, as the GPU worker spent it) times the scale before it answers, so a pool of replay workers behaves like a
// pool of GPUs in time as well.

#include "engine/replay/replay_device.h"
#include "engine/worker/worker_protocol.h"
#include "engine/worker/worker_watchdog.h"

#include <nlohmann/json.hpp>

#include <istream>
#include <string>

namespace kerncast {

struct ReplayWorkerOptions {
    std::string device;          // "replay:<slug>" (under resources_dir/recordings) or a recording folder
    std::string resources_dir;   // where replay:<slug> is looked up
    double wall_time_scale = 0;  // 0: answer at once; 1: take the recorded wall time
};

// The recording folder a replay worker serves; throws Error naming what was looked for.
std::string replay_worker_folder(const ReplayWorkerOptions& options);

class ReplayWorkerServer : public WorkerLineServer {
public:
    // Throws Error when the recordings cannot be opened.
    ReplayWorkerServer(const ReplayWorkerOptions& options, int reply_fd);

    // serve() serves requests until shutdown or the end of input; returns the exit code (0).
    bool handleLine(const std::string& line, int* exit_code) override;

    // The wall time a measurement recorded on the GPU took on its worker (verification and timing), in seconds.
    static double recordedWallSeconds(const Measurement& m);

private:
    ReplayWorkerOptions m_options;
    ReplayDevice m_replay;
    RequestWatchdog m_watchdog;
};

}  // namespace kerncast
