#include "engine/timeline.h"

#include <algorithm>
#include <cstdio>

namespace kerncast {

const char* to_string(TimelinePhase phase) {
    using P = TimelinePhase;
    switch (phase) {
    case P::OpenDevice:
        return "starting workers";
    case P::BaseModel:
        return "base model";
    case P::Setup:
        return "opening the run";
    case P::Proposal:
        return "proposal";
    case P::Compile:
        return "static reports";
    case P::Forecast:
        return "forecasting";
    case P::Gating:
        return "gating";
    case P::Model:
        return "model updates";
    case P::Store:
        return "store writes";
    case P::Wait:
        return "waiting for measurements";
    case P::Measure:
        return "measuring";
    case P::Other:
        return "other";
    case P::WorkerCompile:
        return "compile";
    case P::WorkerVerify:
        return "verify";
    case P::WorkerTime:
        return "timing";
    case P::WorkerTrip:
        return "round trip";
    }
    return "other";
}

bool is_worker_phase(TimelinePhase phase) {
    return phase == TimelinePhase::WorkerCompile || phase == TimelinePhase::WorkerVerify ||
           phase == TimelinePhase::WorkerTime || phase == TimelinePhase::WorkerTrip;
}

Timeline::Timeline() : m_start(std::chrono::steady_clock::now()) {}

double Timeline::now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

void Timeline::push(TimelineSpan span) {
    if (span.end_s > span.start_s)
        m_spans.push_back(std::move(span));
}

void Timeline::closeTop(double t) {
    if (m_stack.empty())
        return;
    TimelineSpan span;
    span.phase = m_stack.back().phase;
    span.lane = "search";
    span.start_s = m_stack.back().since;
    span.end_s = t;
    span.batch = m_batch;
    push(std::move(span));
}

Timeline::Scope::Scope(Timeline* timeline, TimelinePhase phase) : m_timeline(timeline) {
    if (!m_timeline)
        return;
    const double t = m_timeline->now();
    std::lock_guard lock(m_timeline->m_mutex);
    m_timeline->closeTop(t);
    m_timeline->m_stack.push_back({phase, t});
}

Timeline::Scope::~Scope() {
    if (!m_timeline)
        return;
    const double t = m_timeline->now();
    std::lock_guard lock(m_timeline->m_mutex);
    m_timeline->closeTop(t);
    m_timeline->m_stack.pop_back();
    if (!m_timeline->m_stack.empty())
        m_timeline->m_stack.back().since = t;  // the scope around it goes on from here
}

void Timeline::setBatch(int64_t batch) {
    const double t = now();
    std::lock_guard lock(m_mutex);
    // A scope open across the change is cut there, so that each span belongs to one batch.
    closeTop(t);
    if (!m_stack.empty())
        m_stack.back().since = t;
    m_batch = batch;
}

void Timeline::noteSearchMeasurement() {
    std::lock_guard lock(m_mutex);
    ++m_search_measurements;
}

void Timeline::addMeasurement(const std::string& lane, int64_t candidate, double start_s, double end_s, double queued_s,
                              double compile_ms, double verify_ms, double time_ms) {
    std::lock_guard lock(m_mutex);
    double t = start_s;
    const auto part = [&](TimelinePhase phase, double ms) {
        const double end = std::min(end_s, t + std::max(ms, 0.0) / 1000.0);
        TimelineSpan span;
        span.phase = phase;
        span.lane = lane;
        span.start_s = t;
        span.end_s = end;
        span.batch = m_batch;
        span.candidate = candidate;
        span.queued_s = queued_s;
        push(span);
        t = std::max(t, end);
    };
    part(TimelinePhase::WorkerCompile, compile_ms);
    part(TimelinePhase::WorkerVerify, verify_ms);
    part(TimelinePhase::WorkerTime, time_ms);
    // What the parts leave: the request and reply, loading the module, making the inputs. A zero-length measurement
    // (a replay worker that answers at once) still counts as one.
    TimelineSpan trip;
    trip.phase = TimelinePhase::WorkerTrip;
    trip.lane = lane;
    trip.start_s = t;
    trip.end_s = std::max(end_s, t + 1e-9);
    trip.batch = m_batch;
    trip.candidate = candidate;
    trip.queued_s = queued_s;
    push(trip);
}

std::vector<TimelineSpan> Timeline::spans() const {
    std::lock_guard lock(m_mutex);
    return m_spans;
}

std::vector<TimelineSpan> Timeline::spansFrom(size_t index) const {
    std::lock_guard lock(m_mutex);
    if (index >= m_spans.size())
        return {};
    return {m_spans.begin() + static_cast<std::ptrdiff_t>(index), m_spans.end()};
}

double TimelineSummary::workerUtilisation() const {
    if (workers.empty() || wall_s <= 0)
        return 0;
    double busy = 0;
    for (const Worker& w : workers)
        busy += w.busy_s;
    return busy / (wall_s * double(workers.size()));
}

void Timeline::setCompiles(const TimelineSummary::Compiles& compiles) {
    std::lock_guard lock(m_mutex);
    m_compiles = compiles;
}

TimelineSummary Timeline::summary() const {
    TimelineSummary s;
    s.wall_s = now();
    std::map<std::string, TimelineSummary::Worker> workers;
    double queued = 0;
    double search = 0;
    {
        std::lock_guard lock(m_mutex);
        for (const TimelineSpan& span : m_spans) {
            const double d = span.end_s - span.start_s;
            if (!is_worker_phase(span.phase)) {
                s.search_s[span.phase] += d;
                search += d;
                continue;
            }
            TimelineSummary::Worker& w = workers[span.lane];
            w.lane = span.lane;
            w.busy_s += d;
            w.parts_s[span.phase] += d;
            if (span.phase == TimelinePhase::WorkerTrip) {  // the last part of each measurement
                ++w.measurements;
                ++s.measurements;
                queued += span.queued_s;
            }
        }
        s.measurements += m_search_measurements;
        s.compiles = m_compiles;
        // The open scope counts up to now.
        if (!m_stack.empty()) {
            s.search_s[m_stack.back().phase] += s.wall_s - m_stack.back().since;
            search += s.wall_s - m_stack.back().since;
        }
    }
    s.search_s[TimelinePhase::Other] += std::max(0.0, s.wall_s - search);
    for (auto& [lane, w] : workers)
        s.workers.push_back(std::move(w));
    int64_t worker_measurements = 0;
    for (const auto& w : s.workers)
        worker_measurements += w.measurements;
    s.mean_queued_s = worker_measurements > 0 ? queued / double(worker_measurements) : 0;
    return s;
}

nlohmann::json to_json(const TimelineSummary& s) {
    nlohmann::json search = nlohmann::json::object();
    for (const auto& [phase, seconds] : s.search_s)
        search[to_string(phase)] = seconds;
    nlohmann::json workers = nlohmann::json::array();
    for (const auto& w : s.workers) {
        nlohmann::json parts = nlohmann::json::object();
        for (const auto& [phase, seconds] : w.parts_s)
            parts[to_string(phase)] = seconds;
        workers.push_back({{"worker", w.lane},
                           {"measurements", w.measurements},
                           {"busy_s", w.busy_s},
                           {"idle_s", std::max(0.0, s.wall_s - w.busy_s)},
                           {"parts_s", parts}});
    }
    return {{"wall_s", s.wall_s},
            {"measurements", s.measurements},
            {"measurements_per_s", s.throughput()},
            {"search_thread_s", search},
            {"workers", workers},
            {"worker_utilisation", s.workerUtilisation()},
            {"mean_queued_s", s.mean_queued_s},
            {"compiles",
             {{"compiled", s.compiles.compiled},
              {"found", s.compiles.found},
              {"spare", s.compiles.spare},
              {"helpers", s.compiles.helpers}}}};
}

std::string format_summary(const TimelineSummary& s) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "where the wall time went: %.2f s, %lld measurements, %.2f per second\n", s.wall_s,
                  static_cast<long long>(s.measurements), s.throughput());
    out += line;
    std::vector<std::pair<double, TimelinePhase>> phases;
    for (const auto& [phase, seconds] : s.search_s)
        phases.push_back({seconds, phase});
    std::sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    out += "  search thread:";
    bool first = true;
    for (const auto& [seconds, phase] : phases) {
        if (seconds < 0.0005)
            continue;
        std::snprintf(line, sizeof line, "%s %s %.2f s (%.0f%%)", first ? "" : ",", to_string(phase), seconds,
                      s.wall_s > 0 ? 100.0 * seconds / s.wall_s : 0.0);
        out += line;
        first = false;
    }
    out += "\n";
    for (const auto& w : s.workers) {
        const auto part = [&](TimelinePhase p) {
            auto it = w.parts_s.find(p);
            return it == w.parts_s.end() ? 0.0 : it->second;
        };
        std::snprintf(line, sizeof line,
                      "  %s: %lld measurements, busy %.0f%% (compile %.2f s, verify %.2f s, timing %.2f s, round trip "
                      "%.2f s), idle %.2f s\n",
                      w.lane.c_str(), static_cast<long long>(w.measurements),
                      s.wall_s > 0 ? 100.0 * w.busy_s / s.wall_s : 0.0, part(TimelinePhase::WorkerCompile),
                      part(TimelinePhase::WorkerVerify), part(TimelinePhase::WorkerTime),
                      part(TimelinePhase::WorkerTrip), std::max(0.0, s.wall_s - w.busy_s));
        out += line;
    }
    if (!s.workers.empty()) {
        std::snprintf(line, sizeof line,
                      "  workers busy %.0f%% of the wall time; a measurement waited %.3f s for a worker on average\n",
                      100.0 * s.workerUtilisation(), s.mean_queued_s);
        out += line;
    }
    if (s.compiles.compiled > 0) {
        char where[64] = " in the engine's process";
        if (s.compiles.helpers > 0)
            std::snprintf(where, sizeof where, " in %lld compile helper process%s",
                          static_cast<long long>(s.compiles.helpers), s.compiles.helpers == 1 ? "" : "es");
        std::snprintf(line, sizeof line,
                      "  compiles: %lld programs compiled with NVRTC%s, %lld requests found theirs compiled already",
                      static_cast<long long>(s.compiles.compiled), where, static_cast<long long>(s.compiles.found));
        out += line;
        if (s.compiles.spare > 0) {
            std::snprintf(line, sizeof line, "; %lld of the compiles in spare time, ahead of a possible measurement",
                          static_cast<long long>(s.compiles.spare));
            out += line;
        }
        out += "\n";
    }
    return out;
}

nlohmann::json Timeline::traceEvents() const {
    std::vector<TimelineSpan> all = spans();
    std::map<std::string, int> tids{{"search", 1}};
    for (const auto& span : all)
        if (!tids.count(span.lane))
            tids.emplace(span.lane, static_cast<int>(tids.size()) + 1);
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [lane, tid] : tids)
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", lane}}}});
    for (const auto& span : all) {
        nlohmann::json args = {{"batch", span.batch}};
        if (span.candidate)
            args["candidate"] = span.candidate;
        if (is_worker_phase(span.phase))
            args["queued_s"] = span.queued_s;
        events.push_back({{"name", to_string(span.phase)},
                          {"cat", is_worker_phase(span.phase) ? "worker" : "search"},
                          {"ph", "X"},
                          {"pid", 1},
                          {"tid", tids.at(span.lane)},
                          {"ts", span.start_s * 1e6},
                          {"dur", (span.end_s - span.start_s) * 1e6},
                          {"args", args}});
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"summary", to_json(summary())}};
}

}  // namespace kerncast
