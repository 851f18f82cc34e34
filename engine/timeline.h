#pragma once
// A search's timeline (ARCHITECTURE §2): where its wall time goes. The search thread's time is cut into phases
// (proposal, static reports, forecasting, gating, model updates, store writes, waiting for measurements, ...) that
// never overlap, so that they add up to its wall time; each worker's time is its measurements (compile, verification,
// timing and the round trip around them) and the gaps between them, where it was idle. `kerncast-cli search --trace
// FILE` writes it in the Trace Event format (chrome://tracing, Perfetto) and prints the summary; the workbench's
// device dock draws it as the search runs.

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kerncast {

enum class TimelinePhase {
    // The search thread.
    OpenDevice,  // starting the device's workers (a GPU worker measures its ceilings on first use)
    BaseModel,   // the local surrogate's base model: trained on the recordings, or read from the cache
    Setup,       // opening the run store (or resuming from it), before the first candidate
    Proposal,    // the mutators and the space model propose children; duplicates dropped
    Compile,     // waiting for the static reports' NVRTC compiles (they run on the compiler's threads)
    Forecast,    // the surrogate forecasts
    Gating,      // the gate decides, the batch is rounded and queued
    Model,       // the surrogate learns a measurement; the space model and the recalibration are refitted
    Store,       // run store writes and checkpoints
    Wait,        // waiting for measurements (a batch's results that are not in yet)
    Measure,     // a measurement on the search thread itself (a device without a pool)
    Other,       // anything else on the search thread (events to the GUI, book-keeping)
    // A worker.
    WorkerCompile,  // the worker compiles the candidate (and the reference) with NVRTC
    WorkerVerify,   // correctness cases
    WorkerTime,     // timed launches
    WorkerTrip,     // the rest of a measurement: requests and replies, module loads, inputs
};
const char* to_string(TimelinePhase phase);
bool is_worker_phase(TimelinePhase phase);

struct TimelineSpan {
    TimelinePhase phase = TimelinePhase::Other;
    std::string lane;    // "search" or the worker's label
    double start_s = 0;  // seconds since the timeline began
    double end_s = 0;
    int64_t batch = 0;      // the search's iteration (0: seeding)
    int64_t candidate = 0;  // a worker's candidate (0: none)
    double queued_s = 0;    // a worker's measurement: how long it waited in the queue before a worker took it
};

struct TimelineSummary {
    double wall_s = 0;
    int64_t measurements = 0;                  // measurements the workers (or the search thread) made
    std::map<TimelinePhase, double> search_s;  // the search thread's time by phase (they add up to wall_s)
    struct Worker {
        std::string lane;
        int64_t measurements = 0;
        double busy_s = 0;                        // from taking a candidate to handing its result back
        std::map<TimelinePhase, double> parts_s;  // busy_s by WorkerCompile, WorkerVerify, WorkerTime, WorkerTrip
    };
    std::vector<Worker> workers;
    double mean_queued_s = 0;  // how long a measurement waited for a worker, on average
    // The compiles of the search's compile pool (static reports a recording does not hold, and on a GPU device the
    // programs it measures): NVRTC runs, and requests answered from the cache or by joining the same compile in
    // flight; of the NVRTC runs, those made in the pool's spare time (Compiler::compileSpare). Zero where nothing was
    // compiled.
    // helpers: the compile helper processes that ran them (0: the engine's own process).
    struct Compiles {
        int64_t compiled = 0;
        int64_t found = 0;
        int64_t spare = 0;
        int64_t helpers = 0;
    } compiles;
    // Measurements per second of wall time, and how busy the workers were over the search's wall time.
    double throughput() const { return wall_s > 0 ? double(measurements) / wall_s : 0; }
    double workerUtilisation() const;
};
nlohmann::json to_json(const TimelineSummary& s);
// A few lines for a terminal: where the wall time went.
std::string format_summary(const TimelineSummary& s);

class Timeline {
public:
    Timeline();
    double now() const;  // seconds since construction

    // The search thread's phase. Scopes nest: an inner one pauses the one around it, so the search thread's spans
    // never overlap. Only the search thread opens scopes.
    class Scope {
    public:
        Scope(Timeline* timeline, TimelinePhase phase);  // timeline may be null: then nothing is recorded
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        Timeline* m_timeline;
    };
    void setBatch(int64_t batch);  // the search thread's current iteration
    // A measurement the search thread made itself (a device without a pool); a worker's count through
    // addMeasurement(). Thread-safe.
    void noteSearchMeasurement();
    // The search's compile-pool counts so far (TimelineSummary::compiles), set by the search thread as it goes, so
    // that a view of the timeline says them while the search runs. Thread-safe.
    void setCompiles(const TimelineSummary::Compiles& compiles);

    // A worker's measurement of a candidate, from taking it to handing it back, with the parts its measurement
    // reported (milliseconds; laid out in this order from its start, what is left being the round trip). Thread-safe.
    void addMeasurement(const std::string& lane, int64_t candidate, double start_s, double end_s, double queued_s,
                        double compile_ms, double verify_ms, double time_ms);

    std::vector<TimelineSpan> spans() const;
    // The spans from the index-th on, in the order recorded (a view that draws the timeline as it grows asks for
    // those after the ones it has).
    std::vector<TimelineSpan> spansFrom(size_t index) const;
    TimelineSummary summary() const;
    // The Trace Event format: one process, the search thread and each worker a thread; args carry batch and candidate.
    nlohmann::json traceEvents() const;

private:
    void push(TimelineSpan span);  // m_mutex held
    void closeTop(double t);       // m_mutex held: the open scope's span up to t

    std::chrono::steady_clock::time_point m_start;
    mutable std::mutex m_mutex;
    std::vector<TimelineSpan> m_spans;
    struct Open {
        TimelinePhase phase;
        double since;
    };
    std::vector<Open> m_stack;
    int64_t m_batch = 0;
    int64_t m_search_measurements = 0;
    TimelineSummary::Compiles m_compiles;
};

}  // namespace kerncast
