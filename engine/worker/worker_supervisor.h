#pragma once
// Owns one kerncast-worker process: spawns it with pipes, shakes hands, sends requests and waits for the replies
// under a deadline. A worker that hangs is killed and replaced; one that dies or poisons its CUDA context is
// replaced; the request in flight gets status timeout or crashed with a reason a person can act on (ARCHITECTURE §5).
//
// One caller at a time: request() and measure() are serialised by a mutex, so several threads may share a
// supervisor but they take turns (one GPU measures one candidate at a time anyway).

#include "core/error.h"
#include "core/measurement.h"
#include "engine/device.h"
#include "engine/worker/worker_protocol.h"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace kerncast {

// A request that got no reply: the worker hung past the deadline (Timeout), died, or broke the protocol (Crashed).
// The worker has already been replaced when this is thrown.
class WorkerFailure : public Error {
public:
    WorkerFailure(Status status, const std::string& reason) : Error(reason), m_status(status) {}
    Status status() const { return m_status; }

private:
    Status m_status;
};

// How to start one worker: the whole command line (a launcher's prefix such as `ssh HOST` or `srun ...` included,
// looked up on PATH) and how to stop it.
struct WorkerCommand {
    std::vector<std::string> argv;
    std::string label;        // who the worker is, for messages: "kerncast-worker for GPU 0 on gpu-a"
    double term_grace_s = 0;  // > 0: a kill sends SIGTERM first and SIGKILL only after this long, so that a
                              // launcher (srun, ssh) can end the remote side (srun cancels its step on SIGTERM)
    double hello_deadline_s = 60;
};

class WorkerSupervisor {
public:
    // Called with every {"op":"progress"} line of the request in flight.
    using ProgressCallback = std::function<void(const nlohmann::json& progress)>;

    // Nothing starts until start() or the first request. extra_args follow "--gpu N" on the command line.
    WorkerSupervisor(std::string worker_exe, int gpu, std::vector<std::string> extra_args = {});
    // A worker started by any command line that ends in a worker speaking the protocol on its stdio.
    explicit WorkerSupervisor(WorkerCommand command);
    // Asks the worker to shut down, waits a grace period, then kills it.
    ~WorkerSupervisor();
    WorkerSupervisor(const WorkerSupervisor&) = delete;
    WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

    // Starts the worker (if it is not running) and returns its hello. A worker that answers ok:false (no driver,
    // no such GPU) is stopped and its reply returned; a worker that cannot be spawned or dies before answering
    // throws WorkerFailure.
    HelloReply start();
    // The last hello (ok == false before any start).
    HelloReply hello() const;

    // Sends one request and returns its reply: the first line whose id matches (or, for requests without an id, the
    // first non-progress line). Throws WorkerFailure on timeout, death or a malformed reply, after replacing the
    // worker; throws Error when the worker cannot be started at all.
    nlohmann::json request(const nlohmann::json& req, double deadline_s, const ProgressCallback& progress = {});

    // A measure request. Never throws for the candidate's sake: a hang, crash or sticky error becomes a
    // Measurement with status timeout or crashed and a reason. Throws Error only when no worker can run.
    Measurement measure(const MeasurePayload& payload, double deadline_s, const ProgressFn& progress = {});

    // How long a starting worker may take to answer hello (default 60 s: a CUDA context and the ceilings take
    // seconds).
    void setHelloDeadline(double seconds);

    // Stops the worker politely (shutdown, grace period, then SIGKILL).
    void stop(double grace_s = 2.0);

    // Workers started after the first one (crashes, hangs, sticky errors).
    int restarts() const;
    // Whether the last measure() lost its worker (it died, the connection dropped, it broke the protocol or it could
    // not be restarted) rather than got an answer or hit its deadline. A pool gives such a candidate to another
    // worker: the measurement says nothing about the candidate.
    bool lastMeasureLostWorker() const;
    const std::string& label() const { return m_command.label; }
    bool running() const;
    pid_t pid() const;
    // The worker's last stderr lines (at most 50), oldest first.
    std::vector<std::string> stderrTail() const;
    const std::string& executable() const { return m_command.argv.front(); }

private:
    HelloReply startLocked();
    void spawnLocked();
    void stopLocked(double grace_s);
    void killLocked();
    bool aliveLocked();
    // Waits for the child to exit, up to wait_s; returns a description ("exit code 3", "signal SIGSEGV").
    std::string reapLocked(double wait_s);
    nlohmann::json exchangeLocked(const nlohmann::json& req, double deadline_s, const ProgressCallback& progress);
    void drainStderr(bool final);
    std::string stderrSummaryLocked() const;
    void closeFds();

    WorkerCommand m_command;

    mutable std::mutex m_mutex;
    pid_t m_pid = -1;
    int m_stdin = -1;  // our end of the worker's stdin (a socket, so a dead reader gives EPIPE, not SIGPIPE)
    int m_stdout = -1;
    int m_stderr = -1;
    std::string m_out_buffer;
    std::string m_err_buffer;
    std::deque<std::string> m_err_lines;
    HelloReply m_hello;
    int m_starts = 0;
    int64_t m_next_id = 1;
    bool m_last_lost = false;
};

}  // namespace kerncast
