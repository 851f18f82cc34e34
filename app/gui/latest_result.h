#pragma once
// "Load in the background, keep only the latest result": runs a job on Qt's thread pool and hands its result to a
// callback on the thread of `context` (the GUI thread), unless a newer job was started meanwhile. A result that
// arrives stale is dropped, never shown. Jobs take what they need by value: they never touch the window.

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace kerncast {

template<typename T>
class LatestResult {
public:
    // The callbacks run in `context`'s thread and die with it; the helper is a member of that object.
    explicit LatestResult(QObject* context) : m_context(context) {}
    LatestResult(const LatestResult&) = delete;
    LatestResult& operator=(const LatestResult&) = delete;

    // Starts job() in the background; done(T) follows on the context's thread if no newer start() came first.
    template<typename Job, typename Done>
    void start(Job job, Done done) {
        const quint64 generation = ++m_generation;
        ++m_running;
        auto* watcher = new QFutureWatcher<T>(m_context);
        QObject::connect(watcher, &QFutureWatcherBase::finished, m_context,
                         [this, watcher, generation, done = std::move(done)]() mutable {
            watcher->deleteLater();
            --m_running;
            if (generation == m_generation)
                done(watcher->result());
        });
        watcher->setFuture(QtConcurrent::run(std::move(job)));
    }
    // Whatever is running will be dropped when it ends.
    void discard() { ++m_generation; }
    // Jobs started and not yet ended (stale ones included).
    int running() const { return m_running; }

private:
    QObject* m_context;
    quint64 m_generation = 0;
    int m_running = 0;
};

}  // namespace kerncast
