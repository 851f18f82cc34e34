#pragma once
// A fixed pool of worker threads for compiles that overlap with measurement. Tasks learn whether they ran or were
// dropped at shutdown, so a task holding a promise can always fulfil it (a broken promise would surface as an
// exception in whoever waits on it). Spare tasks (postSpare) are work that may turn out useful: a thread takes one
// only when no posted task waits, and at most half the threads run them at once, so that a task posted later finds a
// thread free.

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kerncast {

class ThreadPool {
public:
    // Called with true on a pool thread, or with false when the pool shut down before the task could start.
    using Task = std::function<void(bool run)>;

    // threads = 0: std::thread::hardware_concurrency(), at least 1.
    explicit ThreadPool(unsigned threads = 0);
    // Waits for running tasks; tasks still queued are called with run = false on the destroying thread.
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    void post(Task task);
    void postSpare(Task task);
    unsigned size() const { return static_cast<unsigned>(m_threads.size()); }
    // Tasks queued and not yet started (spare ones not counted).
    size_t pending() const;
    // The most spare tasks that run at once: half the threads, at least one.
    unsigned spareLimit() const { return std::max(1u, size() / 2); }

private:
    void loop();
    void enqueue(std::deque<Task>& queue, Task task);

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Task> m_queue;
    std::deque<Task> m_spare;
    unsigned m_spare_running = 0;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

}  // namespace kerncast
