#pragma once
// Makes a worker end itself where it runs. A worker started through ssh or srun runs on another machine: when the
// engine gives up on it (deadline passed, engine killed, connection dropped) the engine may not be able to reach the
// process, so the worker watches for itself.
//   - RequestWatchdog: a request still running past its deadline plus a grace ends the process (exit code
//     kWorkerDeadlineExitCode), so a hung kernel never holds a GPU after the engine timed it out.
//   - die_with_parent(): the process ends when its parent (sshd's session, slurmstepd, the engine) goes away.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kerncast {

inline constexpr int kWorkerDeadlineExitCode = 4;

class RequestWatchdog {
public:
    explicit RequestWatchdog(double grace_s = 5.0);
    ~RequestWatchdog();
    RequestWatchdog(const RequestWatchdog&) = delete;
    RequestWatchdog& operator=(const RequestWatchdog&) = delete;

    // Starts watching a request that must end within deadline_s (<= 0: not watched). `what` names it on stderr.
    void arm(double deadline_s, std::string what);
    void disarm();

private:
    void watch();

    double m_grace_s;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::optional<std::chrono::steady_clock::time_point> m_until;
    std::string m_what;
    double m_deadline_s = 0;
    bool m_quit = false;
    std::thread m_thread;
};

// Ends this process (within 0.2 s) once its parent process has exited; returns false with *why when the parent is
// already gone.
bool die_with_parent(std::string* why);

}  // namespace kerncast
