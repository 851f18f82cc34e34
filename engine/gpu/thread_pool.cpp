#include "engine/gpu/thread_pool.h"

namespace kerncast {

ThreadPool::ThreadPool(unsigned threads) {
    if (threads == 0)
        threads = std::thread::hardware_concurrency();
    if (threads == 0)
        threads = 1;
    m_threads.reserve(threads);
    for (unsigned i = 0; i < threads; ++i)
        m_threads.emplace_back([this] { loop(); });
}

ThreadPool::~ThreadPool() {
    std::deque<Task> dropped;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        dropped.swap(m_queue);
    }
    m_wake.notify_all();
    for (auto& t : m_threads)
        t.join();
    for (auto& task : dropped)
        task(false);
}

void ThreadPool::post(Task task) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_stopping) {
            m_queue.push_back(std::move(task));
            m_wake.notify_one();
            return;
        }
    }
    task(false);
}

size_t ThreadPool::pending() const {
    std::lock_guard lock(m_mutex);
    return m_queue.size();
}

void ThreadPool::loop() {
    for (;;) {
        Task task;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_stopping)
                return;
            task = std::move(m_queue.front());
            m_queue.pop_front();
        }
        task(true);
    }
}

}  // namespace kerncast
