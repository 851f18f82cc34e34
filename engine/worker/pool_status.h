#pragma once
// What the measurement pool reports about its workers (plain values, copied into search events for the GUI and the
// CLI): where each worker runs, what it is doing, how much it measured.

#include <cstdint>
#include <string>
#include <vector>

namespace kerncast {

struct PoolWorkerStatus {
    int index = 0;          // 1, 2, ... in the pool
    std::string device;     // "cuda:0", "replay:nvidia-h200"
    std::string host;       // "local", the ssh host, "slurm"
    std::string gpu;        // the model its hello reported
    std::string state;      // idle, busy, restarting, retired
    int64_t candidate = 0;  // being measured (busy)
    int64_t measured = 0;   // measurements it delivered
    int failures = 0;       // consecutive lost requests
    std::string note;       // why it was retired, the last loss
};

struct PoolSnapshot {
    std::vector<PoolWorkerStatus> workers;
    int64_t queued = 0;  // candidates waiting for a worker
    int64_t in_flight = 0;
    int64_t done = 0;  // measurements delivered since the pool opened
};

}  // namespace kerncast
