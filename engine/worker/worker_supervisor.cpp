#include "engine/worker/worker_supervisor.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kerncast {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrLines = 50;
constexpr size_t kStderrLineMax = 4096;
// A reply line longer than this is not a reply; it protects the engine from a worker that streams garbage.
constexpr size_t kReplyLineMax = size_t{512} << 20;

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
}

std::string signal_name(int sig) {
    if (const char* abbrev = sigabbrev_np(sig))
        return std::string("SIG") + abbrev;
    return "signal " + std::to_string(sig);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_nonblocking(int fd) {
    const int flags = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

namespace {

WorkerCommand local_command(std::string exe, int gpu, std::vector<std::string> extra_args) {
    WorkerCommand c;
    c.argv = {std::move(exe), "--gpu", std::to_string(gpu)};
    c.argv.insert(c.argv.end(), extra_args.begin(), extra_args.end());
    c.label = "kerncast-worker for GPU " + std::to_string(gpu);
    return c;
}

}  // namespace

WorkerSupervisor::WorkerSupervisor(std::string worker_exe, int gpu, std::vector<std::string> extra_args)
    : WorkerSupervisor(local_command(std::move(worker_exe), gpu, std::move(extra_args))) {}

WorkerSupervisor::WorkerSupervisor(WorkerCommand command) : m_command(std::move(command)) {
    if (m_command.argv.empty() || m_command.argv.front().empty())
        throw Error("a worker needs a command line");
    if (m_command.label.empty())
        m_command.label = m_command.argv.front();
}

bool WorkerSupervisor::lastMeasureLostWorker() const {
    std::lock_guard lock(m_mutex);
    return m_last_lost;
}

WorkerSupervisor::~WorkerSupervisor() {
    std::lock_guard lock(m_mutex);
    stopLocked(2.0);
}

HelloReply WorkerSupervisor::start() {
    std::lock_guard lock(m_mutex);
    if (aliveLocked() && m_hello.ok)
        return m_hello;
    return startLocked();
}

HelloReply WorkerSupervisor::hello() const {
    std::lock_guard lock(m_mutex);
    return m_hello;
}

int WorkerSupervisor::restarts() const {
    std::lock_guard lock(m_mutex);
    return m_starts > 1 ? m_starts - 1 : 0;
}

bool WorkerSupervisor::running() const {
    std::lock_guard lock(m_mutex);
    return m_pid > 0;
}

pid_t WorkerSupervisor::pid() const {
    std::lock_guard lock(m_mutex);
    return m_pid;
}

std::vector<std::string> WorkerSupervisor::stderrTail() const {
    std::lock_guard lock(m_mutex);
    return {m_err_lines.begin(), m_err_lines.end()};
}

void WorkerSupervisor::setHelloDeadline(double seconds) {
    std::lock_guard lock(m_mutex);
    m_command.hello_deadline_s = seconds;
}

void WorkerSupervisor::stop(double grace_s) {
    std::lock_guard lock(m_mutex);
    stopLocked(grace_s);
}

HelloReply WorkerSupervisor::startLocked() {
    if (m_pid > 0)
        stopLocked(1.0);
    m_hello = HelloReply{};
    spawnLocked();
    ++m_starts;
    nlohmann::json reply;
    try {
        reply = exchangeLocked(make_hello_request(), m_command.hello_deadline_s, {});
    } catch (const WorkerFailure& f) {
        throw WorkerFailure(f.status(), m_command.label + " did not start: " + f.what());
    }
    try {
        m_hello = parse_hello_reply(reply);
    } catch (const Error& e) {
        killLocked();
        throw WorkerFailure(Status::Crashed, m_command.label + " answered hello with a bad reply: " + e.what());
    }
    if (!m_hello.ok)
        stopLocked(1.0);  // it cannot measure anything; keep its answer, not the process
    return m_hello;
}

void WorkerSupervisor::spawnLocked() {
    int in[2], out[2], err[2];
    // stdin is a socket so that writing to a dead worker fails with EPIPE (MSG_NOSIGNAL) instead of killing the
    // engine with SIGPIPE, without touching the process-wide signal disposition.
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
        throw Error(errno_text("cannot create the worker's stdin"));
    if (pipe2(out, O_CLOEXEC) != 0) {
        const auto msg = errno_text("cannot create the worker's stdout pipe");
        ::close(in[0]);
        ::close(in[1]);
        throw Error(msg);
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        const auto msg = errno_text("cannot create the worker's stderr pipe");
        for (int fd : {in[0], in[1], out[0], out[1]})
            ::close(fd);
        throw Error(msg);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

    // The worker starts with default signal handling whatever the engine's host program changed.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    std::vector<std::string> args = m_command.argv;
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_t pid = -1;
    // spawnp: a launcher (ssh, srun) is found on PATH; a path with a slash is used as it is.
    const int rc = posix_spawnp(&pid, args.front().c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[1]);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(in[0]);
        ::close(out[0]);
        ::close(err[0]);
        throw Error("cannot start the GPU worker '" + args.front() + "': " + std::strerror(rc) +
                    " (build kerncast-worker, or point KERNCAST_WORKER at it)");
    }
    m_pid = pid;
    m_stdin = in[0];
    m_stdout = out[0];
    m_stderr = err[0];
    set_nonblocking(m_stdin);
    set_nonblocking(m_stdout);
    set_nonblocking(m_stderr);
    m_out_buffer.clear();
    m_err_buffer.clear();
    m_err_lines.clear();
}

void WorkerSupervisor::closeFds() {
    for (int* fd : {&m_stdin, &m_stdout, &m_stderr}) {
        if (*fd >= 0)
            ::close(*fd);
        *fd = -1;
    }
}

void WorkerSupervisor::drainStderr(bool final) {
    if (m_stderr < 0)
        return;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(m_stderr, buf, sizeof buf);
        if (n > 0) {
            m_err_buffer.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break;  // EAGAIN or EOF
    }
    size_t pos;
    while ((pos = m_err_buffer.find('\n')) != std::string::npos) {
        m_err_lines.push_back(m_err_buffer.substr(0, std::min(pos, kStderrLineMax)));
        m_err_buffer.erase(0, pos + 1);
        if (m_err_lines.size() > kStderrLines)
            m_err_lines.pop_front();
    }
    if (m_err_buffer.size() > kStderrLineMax || (final && !m_err_buffer.empty())) {
        m_err_lines.push_back(m_err_buffer.substr(0, kStderrLineMax));
        m_err_buffer.clear();
        if (m_err_lines.size() > kStderrLines)
            m_err_lines.pop_front();
    }
}

std::string WorkerSupervisor::stderrSummaryLocked() const {
    if (m_err_lines.empty())
        return "; the worker wrote nothing to stderr";
    std::string s = "; last stderr lines:";
    const size_t from = m_err_lines.size() > 10 ? m_err_lines.size() - 10 : 0;
    for (size_t i = from; i < m_err_lines.size(); ++i)
        s += "\n  " + m_err_lines[i];
    return s;
}

std::string WorkerSupervisor::reapLocked(double wait_s) {
    if (m_pid <= 0)
        return "not running";
    int status = 0;
    const auto until = Clock::now() + std::chrono::duration<double>(wait_s);
    pid_t r = 0;
    for (;;) {
        r = waitpid(m_pid, &status, WNOHANG);
        if (r != 0 || Clock::now() >= until)
            break;
        // Keep stderr flowing: a worker blocked on a full stderr pipe would never exit.
        drainStderr(false);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string how;
    if (r == 0) {
        ::kill(m_pid, SIGKILL);
        while (waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {}
        how = "killed after " + seconds_text(wait_s) + " (signal SIGKILL)";
    } else if (r < 0) {
        how = "exit status unknown";
    } else if (WIFEXITED(status)) {
        how = "exit code " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        how = "signal " + signal_name(WTERMSIG(status));
    } else {
        how = "exit status " + std::to_string(status);
    }
    drainStderr(true);
    closeFds();
    m_pid = -1;
    return how;
}

bool WorkerSupervisor::aliveLocked() {
    if (m_pid <= 0)
        return false;
    // A worker that exited after its last reply (sticky error, crash while idle) is noticed here, before the next
    // request would be blamed for it.
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == 0)
        return true;
    drainStderr(true);
    closeFds();
    m_pid = -1;
    return false;
}

void WorkerSupervisor::killLocked() {
    if (m_pid <= 0)
        return;
    if (m_command.term_grace_s > 0) {
        // A launcher ends its remote side on SIGTERM (srun cancels the step); reapLocked kills it after the grace.
        ::kill(m_pid, SIGTERM);
        reapLocked(m_command.term_grace_s);
        return;
    }
    ::kill(m_pid, SIGKILL);
    reapLocked(5.0);
}

void WorkerSupervisor::stopLocked(double grace_s) {
    if (m_pid <= 0)
        return;
    const std::string line = to_protocol_line(make_shutdown_request());
    // Best effort: a worker that is busy or gone is killed after the grace period anyway.
    [[maybe_unused]] const ssize_t n = ::send(m_stdin, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(m_stdin, SHUT_WR);
    reapLocked(grace_s);
}

nlohmann::json WorkerSupervisor::exchangeLocked(const nlohmann::json& req, double deadline_s,
                                                const ProgressCallback& progress) {
    const std::string line = to_protocol_line(req);
    const auto want_id = protocol_id(req);
    size_t written = 0;
    bool can_write = true;
    const auto until = Clock::now() + std::chrono::duration<double>(deadline_s);

    for (;;) {
        // Complete reply lines first: a reply may already be buffered from the last read.
        size_t pos;
        while ((pos = m_out_buffer.find('\n')) != std::string::npos) {
            const std::string text = m_out_buffer.substr(0, pos);
            m_out_buffer.erase(0, pos + 1);
            if (text.find_first_not_of(" \t\r") == std::string::npos)
                continue;
            nlohmann::json reply;
            try {
                reply = parse_protocol_line(text);
            } catch (const Error& e) {
                killLocked();
                throw WorkerFailure(Status::Crashed,
                                    std::string("the worker broke the protocol: ") + e.what() + stderrSummaryLocked());
            }
            const std::string op = reply["op"].get<std::string>();
            const auto id = protocol_id(reply);
            if (op == "progress") {
                if (progress && (!want_id || id == want_id))
                    progress(reply);
                continue;
            }
            // An error about a line the worker could not read carries no usable id; it answers ours.
            const bool answers = !want_id || id == want_id || (op == "error" && !id);
            if (answers)
                return reply;
            // A reply to some earlier request (its caller gave up on it): not ours, skip it.
        }
        if (m_out_buffer.size() > kReplyLineMax) {
            killLocked();
            throw WorkerFailure(Status::Crashed, "the worker broke the protocol: a reply line longer than " +
                                                     std::to_string(kReplyLineMax >> 20) + " MiB");
        }

        const auto now = Clock::now();
        if (now >= until) {
            killLocked();
            throw WorkerFailure(Status::Timeout, "no reply within " + seconds_text(deadline_s));
        }
        const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();

        pollfd fds[3] = {{m_stdout, POLLIN, 0}, {m_stderr, POLLIN, 0}, {m_stdin, 0, 0}};
        const bool writing = can_write && written < line.size();
        if (writing)
            fds[2].events = POLLOUT;
        const int n = ::poll(fds, writing ? 3 : 2, static_cast<int>(std::min<long long>(left_ms + 1, 1000)));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const auto msg = errno_text("poll on the worker's pipes failed");
            killLocked();
            throw WorkerFailure(Status::Crashed, msg);
        }
        if (fds[1].revents)
            drainStderr(false);
        if (writing && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t w =
                ::send(m_stdin, line.data() + written, line.size() - written, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0)
                written += static_cast<size_t>(w);
            else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                can_write = false;  // it stopped reading (usually: it died); its stdout tells us how
        }
        if (fds[0].revents) {
            char buf[65536];
            bool eof = false;
            for (;;) {
                const ssize_t r = ::read(m_stdout, buf, sizeof buf);
                if (r > 0) {
                    m_out_buffer.append(buf, static_cast<size_t>(r));
                    continue;
                }
                if (r < 0 && errno == EINTR)
                    continue;
                eof = r == 0;
                break;
            }
            if (eof && m_out_buffer.find('\n') == std::string::npos) {
                const std::string how = reapLocked(2.0);
                const std::string stage = written < line.size() ? "before reading the request" : "mid-request";
                throw WorkerFailure(Status::Crashed,
                                    "the worker died " + stage + " (" + how + ")" + stderrSummaryLocked());
            }
        }
    }
}

nlohmann::json WorkerSupervisor::request(const nlohmann::json& req, double deadline_s,
                                         const ProgressCallback& progress) {
    std::lock_guard lock(m_mutex);
    if (!aliveLocked())
        startLocked();
    if (!m_hello.ok)
        throw Error(m_command.label + " cannot measure: " + m_hello.error);
    try {
        return exchangeLocked(req, deadline_s, progress);
    } catch (const WorkerFailure& f) {
        const bool hung = f.status() == Status::Timeout;
        std::string reason = f.what();
        try {
            startLocked();
            if (m_hello.ok)
                reason += hung ? "; worker killed and restarted" : "; worker restarted";
            else
                reason += (hung ? "; worker killed; the restarted worker cannot measure: "
                                : "; the restarted worker cannot measure: ") +
                          m_hello.error;
        } catch (const std::exception& e) {
            reason += (hung ? "; worker killed; restarting it failed: " : "; restarting the worker failed: ") +
                      std::string(e.what());
        }
        throw WorkerFailure(f.status(), reason);
    }
}

Measurement WorkerSupervisor::measure(const MeasurePayload& payload, double deadline_s, const ProgressFn& progress) {
    int64_t id;
    {
        std::lock_guard lock(m_mutex);
        id = m_next_id++;
    }
    Measurement failed;
    failed.device_kind = "cuda";
    nlohmann::json reply;
    {
        std::lock_guard lock(m_mutex);
        m_last_lost = false;
    }
    try {
        reply = request(make_measure_request(id, payload), deadline_s, [&](const nlohmann::json& p) {
            if (progress)
                progress(p.value("stage", std::string("working")));
        });
    } catch (const WorkerFailure& f) {
        failed.status = f.status();
        failed.reason = f.what();
        failed.device = hello().device;
        std::lock_guard lock(m_mutex);
        // A hang past the deadline is the candidate's; a worker that died or broke the protocol may not be.
        m_last_lost = f.status() != Status::Timeout;
        return failed;
    } catch (const Error&) {
        std::lock_guard lock(m_mutex);
        m_last_lost = true;
        throw;
    }

    std::lock_guard lock(m_mutex);
    failed.device = m_hello.device;
    if (protocol_op(reply) == "error") {
        failed.status = Status::Crashed;
        failed.reason = "the worker rejected the measure request: " + reply.value("message", std::string("no message"));
        return failed;
    }
    ResultReply result;
    try {
        result = parse_result_reply(reply);
    } catch (const Error& e) {
        killLocked();
        m_last_lost = true;
        failed.status = Status::Crashed;
        failed.reason = std::string("the worker broke the protocol: ") + e.what();
        try {
            startLocked();
        } catch (const std::exception&) {
            // The next request reports why it cannot start.
        }
        return failed;
    }
    Measurement m = std::move(result.measurement);
    if (m.device_kind.empty())
        m.device_kind = "cuda";
    if (result.sticky) {
        // The context is poisoned: the worker exits by itself (code 3); a fresh one serves the next request.
        const std::string how = reapLocked(5.0);
        m.reason += (m.reason.empty() ? "" : "; ") + std::string("the CUDA context was lost (worker ") + how + ")";
        try {
            startLocked();
            m.reason += "; worker restarted";
        } catch (const std::exception& e) {
            m.reason += std::string("; restarting the worker failed: ") + e.what();
        }
    }
    return m;
}

}  // namespace kerncast
