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
        for (auto& task : m_spare)
            dropped.push_back(std::move(task));
        m_spare.clear();
    }
    m_wake.notify_all();
    for (auto& t : m_threads)
        t.join();
    for (auto& task : dropped)
        task(false);
}

void ThreadPool::post(Task task) { enqueue(m_queue, std::move(task)); }

void ThreadPool::postSpare(Task task) { enqueue(m_spare, std::move(task)); }

void ThreadPool::enqueue(std::deque<Task>& queue, Task task) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_stopping) {
            queue.push_back(std::move(task));
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
        bool spare = false;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] {
                return m_stopping || !m_queue.empty() || (!m_spare.empty() && m_spare_running < spareLimit());
            });
            if (m_stopping)
                return;
            if (!m_queue.empty()) {
                task = std::move(m_queue.front());
                m_queue.pop_front();
            } else {
                task = std::move(m_spare.front());
                m_spare.pop_front();
                spare = true;
                ++m_spare_running;
            }
        }
        task(true);
        if (spare) {
            std::lock_guard lock(m_mutex);
            --m_spare_running;
            if (!m_spare.empty())
                m_wake.notify_one();  // the next spare task may run now
        }
    }
}

}  // namespace kerncast
