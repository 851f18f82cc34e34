// The compile thread pool: posted tasks before spare ones, spare ones on at most half the threads, every task told
// whether it ran.
#include "engine/gpu/thread_pool.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace kerncast;

namespace {

// Holds the tasks that wait on it until open() is called.
class Gate {
public:
    void wait() {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [this] { return m_open; });
    }
    void open() {
        {
            std::lock_guard lock(m_mutex);
            m_open = true;
        }
        m_cv.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_open = false;
};

// Opens the gate when it goes out of scope: declared after the pool, it lets the pool's tasks end before the pool
// waits for them, so that a check that fails while tasks are held ends the test instead of hanging it.
struct OpenOnExit {
    Gate& gate;
    bool armed = true;
    ~OpenOnExit() {
        if (armed)
            gate.open();
    }
};

}  // namespace

class TestThreadPool : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Four threads: at most two spare tasks run at once, and a task posted behind six spare ones runs while they hold
    // their threads.
    void spareTasksLeaveHalfTheThreadsFree() {
        Gate gate;
        std::atomic<int> running{0}, most{0}, ran{0};
        std::atomic<bool> posted_ran{false};
        {
            ThreadPool pool(4);
            OpenOnExit release{gate};
            QCOMPARE(pool.spareLimit(), 2u);
            for (int i = 0; i < 6; ++i)
                pool.postSpare([&](bool run) {
                    if (!run)
                        return;
                    const int now = ++running;
                    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {}
                    gate.wait();
                    --running;
                    ++ran;
                });
            QTRY_VERIFY_WITH_TIMEOUT(running.load() == 2, 10000);
            pool.post([&](bool run) { posted_ran = run; });
            QTRY_VERIFY2_WITH_TIMEOUT(posted_ran.load(), "a posted task waited for the spare ones", 10000);
            QCOMPARE(running.load(), 2);
            gate.open();
            QTRY_VERIFY_WITH_TIMEOUT(ran.load() == 6, 10000);
        }
        QCOMPARE(most.load(), 2);
    }

    // Posted tasks go first: with the one thread busy, a spare task queued before a posted one runs after it.
    void postedTasksGoBeforeSpareOnes() {
        Gate gate;
        std::mutex m;
        std::vector<std::string> order;
        {
            ThreadPool pool(1);
            OpenOnExit release{gate};
            QCOMPARE(pool.spareLimit(), 1u);
            std::atomic<bool> started{false};
            pool.post([&](bool) {
                started = true;
                gate.wait();
            });
            QTRY_VERIFY_WITH_TIMEOUT(started.load(), 10000);
            pool.postSpare([&](bool run) {
                std::lock_guard lock(m);
                order.push_back(run ? "spare" : "spare dropped");
            });
            pool.post([&](bool run) {
                std::lock_guard lock(m);
                order.push_back(run ? "posted" : "posted dropped");
            });
            gate.open();
            QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                         std::lock_guard lock(m);
                                         return order.size() == 2;
                                     }()),
                                     10000);
        }
        QCOMPARE(order, (std::vector<std::string>{"posted", "spare"}));
    }

    // Shut down with spare tasks queued: each is told it did not run.
    void queuedSpareTasksAreDroppedAtShutdown() {
        Gate gate;
        std::atomic<int> dropped{0}, ran{0};
        std::thread opener;
        {
            ThreadPool pool(2);  // one spare task at a time
            OpenOnExit release{gate};
            for (int i = 0; i < 5; ++i)
                pool.postSpare([&](bool run) {
                    if (!run) {
                        ++dropped;
                        return;
                    }
                    ++ran;
                    gate.wait();
                });
            QTRY_VERIFY_WITH_TIMEOUT(ran.load() == 1, 10000);
            // Opened once the pool is shutting down: the running task ends, the queued ones are dropped.
            release.armed = false;
            opener = std::thread([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                gate.open();
            });
        }
        opener.join();
        QCOMPARE(ran.load() + dropped.load(), 5);
        QVERIFY(dropped.load() >= 1);
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
