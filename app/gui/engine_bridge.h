#pragma once
// The one place where the workbench meets the search engine. The bridge builds a SearchRunner off the GUI thread,
// runs it on a thread of its own, collects the runner's events in a mutex-protected queue and hands them to the GUI
// thread in batches, at most one batch per interval (20 a second by default). Commands go the other way through
// SearchRunner::post(), so the GUI thread never waits for the engine.
//
// Every start() opens a new session; events and batches carry its number, and those of an earlier session are
// dropped (a stopped run may still be reporting while the next one starts).

#include "engine/search/search_runner.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kerncast {

// Engine events on their way to the GUI thread.
struct SearchEventBatch {
    quint64 session = 0;
    std::vector<SearchEvent> events;
};

// The hand-over between the runner thread (push) and the GUI thread (take). Thread-safe.
class SearchEventQueue {
public:
    void push(quint64 session, SearchEvent event);
    // The queued events of `session`, oldest first; events of other sessions are dropped as stale.
    std::vector<SearchEvent> take(quint64 session);
    size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::vector<std::pair<quint64, SearchEvent>> m_events;
};

class EngineBridge : public QObject {
    Q_OBJECT
public:
    // The run states of core/ (the same values the engine reports in SearchProgress::state).
    using State = RunState;

    static constexpr int kDefaultBatchIntervalMs = 50;
    // How long the destructor waits for a running search to stop before leaving its thread behind.
    static constexpr int kShutdownTimeoutMs = 10000;

    explicit EngineBridge(QString resourcesDir, QObject* parent = nullptr);
    ~EngineBridge() override;

    State state() const { return m_state; }
    // A search is being built, runs, is paused or is stopping.
    bool isActive() const;
    quint64 session() const { return m_session; }
    QString runPath() const { return m_runPath; }
    // The config of the last start() (for a resume: what was passed, not yet the stored one).
    const SearchConfig& config() const { return m_config; }
    // The last start()'s timeline (engine/timeline.h), filled from the search's thread: its set-up and its phases.
    std::shared_ptr<Timeline> timeline() const { return m_timeline; }
    QString resourcesDir() const { return m_resourcesDir; }

    int batchIntervalMs() const { return m_timer.interval(); }
    void setBatchIntervalMs(int ms) { m_timer.setInterval(ms); }

    // Delivery without a runner, for benchmarks and tests: opens a session whose events are pushed by hand.
    quint64 beginManualSession();
    // Queues an event of the current session, from any thread, exactly as the runner's callback does.
    void pushEvent(const SearchEvent& event);
    size_t queuedEvents() const;

    // Waits (without processing Qt events) up to timeoutMs for the search thread to end. True when none is left.
    bool waitForEnd(int timeoutMs);

    // "file:line: message" or "file: message" -> the file and line (0 when none) an engine message names; an empty
    // file when it names none.
    static std::pair<QString, int> locationOf(const QString& message);

public Q_SLOTS:
    // Builds the runner (device, surrogate, mutators) off the GUI thread and starts it. A running search is stopped
    // first; its remaining events are dropped. resume: continue the last run in runPath (its stored config wins).
    void start(const kerncast::SearchConfig& config, const QString& runPath, bool resume = false);
    void pause();
    void resume();
    void step();
    void stop();
    void pin(qint64 candidateId);
    void ban(qint64 candidateId);
    void unpin(qint64 candidateId);
    void unban(qint64 candidateId);
    // tunables: the -D values the source was written for (a family configuration's); without them a family kernel
    // does not compile.
    void submitKernel(const QString& source, qint64 parentId, const std::map<std::string, int64_t>& tunables = {});
    void forceMeasure(qint64 candidateId);
    void setGating(const kerncast::GatingConfig& gating);
    // A person's verdict on a suspect result of the run in runPath: the live search admits an accepted one to the
    // archive at once; a run that is only opened records the verdict in its file (read at its next resume).
    // Returns an error message, or an empty string.
    QString review(const QString& runPath, qint64 candidateId, bool accept);

Q_SIGNALS:
    void started(quint64 session, const QString& runPath);
    void eventsReady(const kerncast::SearchEventBatch& batch);
    void stateChanged(kerncast::RunState state);
    // Exactly one of finished() and failed() ends each session, after the batch holding its last event.
    void finished(quint64 session, const QString& reason);
    // message as the engine gave it; file and line where it names them (a broken problem or kernel).
    void failed(quint64 session, const QString& message, const QString& file, int line);

private:
    struct RunSlot;
    struct Worker {
        std::thread thread;
        std::shared_ptr<RunSlot> slot;
    };

    void post(SearchCommand command);
    // Tells the current session's thread to stop (before its runner exists, too).
    void stopSession();
    void flush();
    void setState(State state);
    void reapFinishedWorkers();

    QString m_resourcesDir;
    std::shared_ptr<SearchEventQueue> m_queue;
    std::shared_ptr<RunSlot> m_slot;  // of the current session
    std::vector<Worker> m_workers;    // threads of this and earlier sessions that have not been joined yet
    QTimer m_timer;
    quint64 m_session = 0;
    State m_state = State::Idle;
    SearchConfig m_config;
    QString m_runPath;
    std::shared_ptr<Timeline> m_timeline;
};

}  // namespace kerncast

Q_DECLARE_METATYPE(kerncast::SearchEventBatch)
Q_DECLARE_METATYPE(kerncast::SearchConfig)
Q_DECLARE_METATYPE(kerncast::GatingConfig)
