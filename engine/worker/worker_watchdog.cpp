#include "engine/worker/worker_watchdog.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <unistd.h>

namespace kerncast {

RequestWatchdog::RequestWatchdog(double grace_s) : m_grace_s(grace_s), m_thread([this] { watch(); }) {}

RequestWatchdog::~RequestWatchdog() {
    {
        std::lock_guard lock(m_mutex);
        m_quit = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void RequestWatchdog::arm(double deadline_s, std::string what) {
    {
        std::lock_guard lock(m_mutex);
        if (deadline_s <= 0) {
            m_until.reset();
        } else {
            m_until =
                std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                       std::chrono::duration<double>(deadline_s + m_grace_s));
            m_deadline_s = deadline_s;
            m_what = std::move(what);
        }
    }
    m_cv.notify_all();
}

void RequestWatchdog::disarm() {
    {
        std::lock_guard lock(m_mutex);
        m_until.reset();
    }
    m_cv.notify_all();
}

void RequestWatchdog::watch() {
    std::unique_lock lock(m_mutex);
    while (!m_quit) {
        if (!m_until) {
            m_cv.wait(lock);
            continue;
        }
        const auto until = *m_until;
        if (m_cv.wait_until(lock, until) == std::cv_status::timeout && m_until == until && !m_quit) {
            // The measuring thread is stuck (a hung kernel, a blocked driver call): nothing it holds can be
            // released cleanly, so the process ends at once.
            std::fprintf(stderr,
                         "kerncast-worker: %s still running %.0f s past its deadline of %g s; the worker ends "
                         "itself\n",
                         m_what.c_str(), m_grace_s, m_deadline_s);
            std::fflush(stderr);
            ::_exit(kWorkerDeadlineExitCode);
        }
    }
}

bool die_with_parent(std::string* why) {
    // Not PR_SET_PDEATHSIG: it fires when the parent *thread* ends, and an engine starts workers from threads that
    // end long before the engine does. The parent process is gone when this process is reparented.
    const pid_t parent = ::getppid();
    if (parent == 1) {
        if (why)
            *why = "the parent process is already gone";
        return false;
    }
    std::thread([parent] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (::getppid() != parent) {
                std::fprintf(stderr, "kerncast-worker: the parent process (pid %d) ended; the worker ends too\n",
                             static_cast<int>(parent));
                std::fflush(stderr);
                ::_exit(kWorkerDeadlineExitCode);
            }
        }
    }).detach();
    return true;
}

}  // namespace kerncast
