#include "app/gui/engine_bridge.h"

#include "core/suspect_review.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <atomic>
#include <chrono>
#include <deque>

namespace kerncast {

void SearchEventQueue::push(quint64 session, SearchEvent event) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_events.emplace_back(session, std::move(event));
}

std::vector<SearchEvent> SearchEventQueue::take(quint64 session) {
    std::vector<std::pair<quint64, SearchEvent>> all;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        all.swap(m_events);
    }
    std::vector<SearchEvent> out;
    out.reserve(all.size());
    for (auto& [s, e] : all)
        if (s == session)
            out.push_back(std::move(e));
    return out;
}

size_t SearchEventQueue::size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_events.size();
}

// What the GUI thread and a session's thread share: the runner once it exists, and the commands sent before it did.
struct EngineBridge::RunSlot {
    std::mutex mutex;
    SearchRunner* runner = nullptr;
    std::deque<SearchCommand> pending;
    bool stopRequested = false;
    std::atomic<bool> done{false};
};

namespace {

void registerMetaTypes() {
    static const bool registered = [] {
        qRegisterMetaType<SearchEventBatch>();
        qRegisterMetaType<SearchConfig>();
        qRegisterMetaType<GatingConfig>();
        qRegisterMetaType<EngineBridge::State>();
        return true;
    }();
    (void)registered;
}

SearchCommand command(SearchCommand::Kind kind, int64_t candidateId = 0) {
    SearchCommand c;
    c.kind = kind;
    c.candidate_id = candidateId;
    return c;
}

SearchEvent endEvent(SearchEvent::Kind kind, const std::string& message) {
    SearchEvent e;
    e.kind = kind;
    e.message = message;
    e.progress.state = kind == SearchEvent::Kind::Failed ? RunState::Failed : RunState::Finished;
    return e;
}

}  // namespace

EngineBridge::EngineBridge(QString resourcesDir, QObject* parent)
    : QObject(parent), m_resourcesDir(std::move(resourcesDir)), m_queue(std::make_shared<SearchEventQueue>()) {
    registerMetaTypes();
    m_timer.setInterval(kDefaultBatchIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &EngineBridge::flush);
}

EngineBridge::~EngineBridge() {
    m_timer.stop();
    stopSession();
    // Everything the search did is in its run store already, so stopping loses nothing; a search that does not
    // stop in time (a measurement that hangs in a driver) is left to end with the process rather than hang the GUI.
    waitForEnd(kShutdownTimeoutMs);
    for (Worker& w : m_workers) {
        if (w.slot->done)
            w.thread.join();
        else
            w.thread.detach();  // it holds its own references to the slot and the queue
    }
}

void EngineBridge::stopSession() {
    if (!m_slot)
        return;
    std::lock_guard<std::mutex> lock(m_slot->mutex);
    m_slot->stopRequested = true;
    if (m_slot->runner)
        m_slot->runner->post(command(SearchCommand::Kind::Stop));
}

bool EngineBridge::isActive() const {
    return m_state == State::Starting || m_state == State::Running || m_state == State::Paused ||
           m_state == State::Stopping;
}

quint64 EngineBridge::beginManualSession() {
    ++m_session;
    m_slot.reset();
    m_queue->take(m_session);  // drop whatever is left
    setState(State::Running);
    m_timer.start();
    Q_EMIT started(m_session, QString());
    return m_session;
}

void EngineBridge::pushEvent(const SearchEvent& event) { m_queue->push(m_session, event); }

size_t EngineBridge::queuedEvents() const { return m_queue->size(); }

bool EngineBridge::waitForEnd(int timeoutMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (true) {
        bool running = false;
        for (const Worker& w : m_workers)
            running = running || !w.slot->done;
        if (!running)
            return true;
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

std::pair<QString, int> EngineBridge::locationOf(const QString& message) {
    static const QRegularExpression withLine(QStringLiteral("^([^:\\n]+):(\\d+): "));
    static const QRegularExpression withoutLine(QStringLiteral("^([^:\\n]+): "));
    if (const auto m = withLine.match(message); m.hasMatch())
        return {m.captured(1), m.captured(2).toInt()};
    if (const auto m = withoutLine.match(message); m.hasMatch() && QFileInfo::exists(m.captured(1)))
        return {m.captured(1), 0};
    return {};
}

void EngineBridge::start(const SearchConfig& config, const QString& runPath, bool resume) {
    stopSession();  // the previous session's thread is told to stop; its events no longer reach anyone
    reapFinishedWorkers();
    const quint64 session = ++m_session;
    m_config = config;
    m_runPath = runPath;
    m_timeline = std::make_shared<Timeline>();
    m_slot = std::make_shared<RunSlot>();
    m_queue->take(session);

    // Everything the thread needs is captured by value: it never reads the bridge.
    auto slot = m_slot;
    auto queue = m_queue;
    const std::string resources = m_resourcesDir.toStdString();
    const std::string path = runPath.toStdString();
    Worker worker;
    worker.slot = slot;
    SetupHooks hooks;
    hooks.timeline = m_timeline;
    // The set-up's steps (starting workers, the forecaster's first training) reach the window like any event.
    hooks.progress = [queue, session](const std::string& step) {
        SearchEvent e;
        e.kind = SearchEvent::Kind::Setup;
        e.message = step;
        queue->push(session, e);
    };
    worker.thread = std::thread([slot, queue, session, config, resources, path, resume, hooks] {
        std::unique_ptr<SearchRunner> runner;
        try {
            runner = make_search_runner(config, resources, path, resume, hooks);
        } catch (const std::exception& e) {
            queue->push(session, endEvent(SearchEvent::Kind::Failed, e.what()));
            slot->done = true;
            return;
        }
        runner->setEventCallback([queue, session](const SearchEvent& e) { queue->push(session, e); });
        {
            std::lock_guard<std::mutex> lock(slot->mutex);
            if (slot->stopRequested) {
                queue->push(session, endEvent(SearchEvent::Kind::Finished, "stopped before the search started"));
                slot->done = true;
                return;
            }
            slot->runner = runner.get();
            for (auto& c : slot->pending)
                runner->post(std::move(c));
            slot->pending.clear();
        }
        runner->runHere();
        {
            std::lock_guard<std::mutex> lock(slot->mutex);
            slot->runner = nullptr;
        }
        runner.reset();  // closes the device (a GPU worker process) and the store
        slot->done = true;
    });
    m_workers.push_back(std::move(worker));
    setState(State::Starting);
    m_timer.start();
    Q_EMIT started(session, runPath);
}

void EngineBridge::post(SearchCommand command) {
    if (!m_slot || !isActive())
        return;
    std::lock_guard<std::mutex> lock(m_slot->mutex);
    if (m_slot->runner) {
        m_slot->runner->post(std::move(command));
    } else {
        if (command.kind == SearchCommand::Kind::Stop)
            m_slot->stopRequested = true;
        m_slot->pending.push_back(std::move(command));
    }
}

void EngineBridge::pause() { post(command(SearchCommand::Kind::Pause)); }

void EngineBridge::resume() { post(command(SearchCommand::Kind::Resume)); }

void EngineBridge::step() { post(command(SearchCommand::Kind::Step)); }

void EngineBridge::stop() {
    if (!isActive())
        return;
    post(command(SearchCommand::Kind::Stop));
    setState(State::Stopping);
}

void EngineBridge::pin(qint64 candidateId) { post(command(SearchCommand::Kind::Pin, candidateId)); }

void EngineBridge::ban(qint64 candidateId) { post(command(SearchCommand::Kind::Ban, candidateId)); }

void EngineBridge::unpin(qint64 candidateId) { post(command(SearchCommand::Kind::Unpin, candidateId)); }

void EngineBridge::unban(qint64 candidateId) { post(command(SearchCommand::Kind::Unban, candidateId)); }

void EngineBridge::submitKernel(const QString& source, qint64 parentId,
                                const std::map<std::string, int64_t>& tunables) {
    SearchCommand c = command(SearchCommand::Kind::SubmitKernel, parentId);
    c.source = source.toStdString();
    c.tunables = tunables;
    post(c);
}

void EngineBridge::forceMeasure(qint64 candidateId) { post(command(SearchCommand::Kind::ForceMeasure, candidateId)); }

QString EngineBridge::review(const QString& runPath, qint64 candidateId, bool accept) {
    if (isActive() && QFileInfo(runPath) == QFileInfo(m_runPath)) {
        SearchCommand c = command(SearchCommand::Kind::Review, candidateId);
        c.accept = accept;
        post(c);
        return {};
    }
    try {
        RunStore store = RunStore::open(runPath.toStdString());
        record_suspect_review(store, 0, candidateId, accept);
        return {};
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
}

void EngineBridge::setGating(const GatingConfig& gating) {
    SearchCommand c = command(SearchCommand::Kind::SetGating);
    c.gating = gating;
    post(c);
}

void EngineBridge::setState(State state) {
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void EngineBridge::reapFinishedWorkers() {
    for (auto it = m_workers.begin(); it != m_workers.end();) {
        if (it->slot->done) {
            it->thread.join();
            it = m_workers.erase(it);
        } else {
            ++it;
        }
    }
}

void EngineBridge::flush() {
    const quint64 session = m_session;
    SearchEventBatch batch{session, m_queue->take(session)};
    if (batch.events.empty()) {
        reapFinishedWorkers();
        return;
    }
    std::optional<SearchEvent> end;
    State next = m_state;
    for (const SearchEvent& e : batch.events) {
        switch (e.kind) {
        case SearchEvent::Kind::RunStarted:
            if (next == State::Starting)
                next = State::Running;
            break;
        case SearchEvent::Kind::Command:
            // A pause or resume command's event carries the state it brought about.
            if (next != State::Stopping &&
                (e.progress.state == RunState::Paused || e.progress.state == RunState::Running))
                next = e.progress.state;
            break;
        case SearchEvent::Kind::Finished:
        case SearchEvent::Kind::Failed:
            end = e;
            break;
        default:
            break;
        }
    }
    if (end) {
        m_timer.stop();
    } else {
        // The next batch a whole interval after this one, also when this one came late (a busy GUI thread): a
        // repeating timer catches up with its schedule and would deliver two batches close together.
        m_timer.start();
        setState(next);
    }
    Q_EMIT eventsReady(batch);
    if (!end || m_session != session)
        return;  // a receiver started another session: this one's end is no longer news
    const QString message = QString::fromStdString(end->message);
    if (end->kind == SearchEvent::Kind::Finished) {
        setState(State::Finished);
        Q_EMIT finished(session, message);
    } else {
        setState(State::Failed);
        const auto [file, line] = locationOf(message);
        Q_EMIT failed(session, message, file, line);
    }
    reapFinishedWorkers();
}

}  // namespace kerncast
