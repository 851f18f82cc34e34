#pragma once
// The request loop of kerncast-worker and its measure procedure (ARCHITECTURE §5): verify the candidate against the
// reference on several seeds and cases, time both interleaved, verify again after timing, then the guards
// (re-verification of implausible speedups, the roofline floor).
//
// Replies go to a private file descriptor, never to fd 1: the CUDA driver writes kernel printf output to the
// process's stdout at synchronisation points, and a kernel that prints must not be able to corrupt the protocol.
// main() duplicates fd 1 for the replies and points fd 1 elsewhere before the first CUDA call.

#include "core/measurement.h"
#include "engine/worker/worker_protocol.h"
#include "engine/worker/worker_watchdog.h"

#include <nlohmann/json.hpp>

#include <istream>
#include <memory>
#include <string>

namespace kerncast {

class GpuSession;
class CuptiTimer;

class WorkerServer : public WorkerLineServer {
public:
    // gpu: the device ordinal; reply_fd: where protocol lines are written.
    WorkerServer(int gpu, int reply_fd);
    ~WorkerServer();
    WorkerServer(const WorkerServer&) = delete;
    WorkerServer& operator=(const WorkerServer&) = delete;

    // serve() serves requests until shutdown, end of input or a sticky CUDA error. Returns the process's exit code:
    // 0, or kWorkerStickyExitCode after a reply marked sticky.
    bool handleLine(const std::string& line, int* exit_code) override;

private:
    struct MeasureContext;
    // Creates the session on first use; empty string when it exists, else the reason it cannot.
    std::string ensureSession();
    Measurement measure(int64_t id, const MeasurePayload& payload, bool* sticky);
    void measureInto(MeasureContext& ctx);

    int m_gpu;
    std::unique_ptr<GpuSession> m_session;
    std::unique_ptr<CuptiTimer> m_cupti;
    std::string m_session_error;
    RequestWatchdog m_watchdog;
};

}  // namespace kerncast
