#pragma once
// The run store (ARCHITECTURE §8): one SQLite file per run holding the run's settings, its candidates and their
// lineage, static reports, forecasts, measurements and the event log (every steering command), plus imported eval
// pairs.
//
// Durability is the point: WAL with synchronous=FULL, so a row whose write returned survives a SIGKILL or a power
// cut, and a run is resumed by opening its file again. Observers hear about a row only after its transaction
// committed, so a view never shows what is not on disk.
//
// One RunStore is one connection and is used from one thread at a time (the runner's). Other threads or processes
// open their own RunStore on the same file (WAL lets readers run beside the writer).

#include "core/candidate.h"
#include "core/forecast.h"
#include "core/forecasters_import.h"
#include "core/measurement.h"
#include "core/static_report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast {

struct RunInfo {
    int64_t id = 0;  // set by addRun
    std::string name;
    std::string created_at;  // UTC, ISO 8601 with milliseconds; set by the store
    std::string problem;
    std::string device;
    std::string surrogate;
    std::string gating;
    int64_t seed = 0;
    nlohmann::json config = nlohmann::json::object();
};

struct ProblemRecord {
    int64_t id = 0;
    std::string name;
    std::string dir;
    nlohmann::json json = nlohmann::json::object();  // the problem.json as loaded
};

struct StoredForecast {
    int64_t id = 0;
    int64_t candidate_id = 0;
    Forecast forecast;
    std::string created_at;
};

struct StoredMeasurement {
    int64_t id = 0;
    int64_t candidate_id = 0;
    Measurement measurement;
    std::string created_at;
};

// What a measurement came to, read from its columns alone (no JSON): enough to trace a run's best over time.
struct MeasurementOutcome {
    int64_t id = 0;
    Status status = Status::Ok;
    double speedup = 0;  // 0 for a failure
    std::string device_kind;
};

// One request to a language model (ARCHITECTURE §6): a forecast or a mutation, with what was sent and received, what it
// cost and how it ended. candidate_id is the candidate forecast or proposed (0 when a mutation produced none).
struct LlmCall {
    int64_t id = 0;      // set by addLlmCall
    int64_t run_id = 0;  // set by addLlmCall
    std::string kind;    // "forecast", "mutate_rewrite" or "mutate_diff"
    int64_t candidate_id = 0;
    std::string model;
    std::string prompt;     // the whole request's messages as the model saw them
    std::string reply;      // the reply's content or tool arguments, as received
    std::string reasoning;  // the reply's reasoning field(s), when the server returns them
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double cost_usd = 0;
    double latency_ms = 0;
    std::string outcome;  // "ok", "deferred", "truncated", "failed", ...
    std::string error;    // what went wrong, for an outcome other than ok
    std::string created_at;
};

// A run's calls to language models summed up (what a resumed run starts its token and cost counters from).
struct LlmTotals {
    int64_t calls = 0;
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double cost_usd = 0;
    int64_t not_ok = 0;     // calls whose outcome is not "ok"
    int64_t truncated = 0;  // outcome "truncated": cut by the token limit
    int64_t deferred = 0;   // outcome "deferred": a forecast declined in favour of a measurement
    int64_t duplicate = 0;  // outcome "duplicate": a mutation whose program the run had already seen
};

struct RunEvent {
    int64_t id = 0;
    int64_t run_id = 0;
    std::string ts;    // UTC, ISO 8601; set by the store
    std::string kind;  // e.g. "pause", "pin_parent", "gating_changed", "secrets_stripped"
    nlohmann::json payload = nlohmann::json::object();
};

// What was written: the table ("runs", "candidates", "measurements", ...), the new row's id and the run it belongs
// to (0 for rows of no run, e.g. problems).
struct StoreChange {
    std::string table;
    int64_t row_id = 0;
    int64_t run_id = 0;
};

// Removes, in place and recursively, every object key that names a secret (api_key, apiKey, authorization, token,
// access_token, password, secret, ...; not e.g. max_tokens). Returns the removed keys as JSON pointers, so that the
// caller can say what was dropped without repeating the values.
std::vector<std::string> strip_secrets(nlohmann::json& value);

class RunStore {
    struct Impl;

public:
    // The schema version this build writes; a file with a newer one is refused.
    static int schemaVersion();

    // Opens an existing store (error if the file does not exist), bringing an older schema up to date.
    static RunStore open(const std::string& path);
    // Opens an existing store for reading only (viewing, export): nothing in the file is written, and a store on
    // read-only storage opens too. Writes through it fail with "the store is read-only". A store of an older
    // schema must first be opened writable (it is not migrated here).
    static RunStore openReadOnly(const std::string& path);
    // Creates a new store (error if the file already exists).
    static RunStore create(const std::string& path);
    // Opens the store, creating it if the file does not exist.
    static RunStore openOrCreate(const std::string& path);

    RunStore(RunStore&&) noexcept;
    RunStore& operator=(RunStore&&) noexcept;
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;
    ~RunStore();

    const std::string& path() const;

    // Called after each written row's transaction committed, once per row, in write order, on the writing thread.
    // It must not throw: the write already succeeded. Pass {} to remove.
    void setObserver(std::function<void(const StoreChange&)> observer);

    // Groups writes into one transaction: either all rows are on disk or none. Writes outside a Transaction commit
    // one by one. Rolled back on destruction unless commit() was called. One at a time per store.
    class Transaction {
    public:
        ~Transaction();
        Transaction(Transaction&& other) noexcept;
        Transaction& operator=(Transaction&&) = delete;
        Transaction(const Transaction&) = delete;
        Transaction& operator=(const Transaction&) = delete;
        // Commits, then notifies the observer of every row written in it. Throws kerncast::Error (and rolls
        // back) when the commit fails.
        void commit();
        void rollback();

    private:
        friend class RunStore;
        explicit Transaction(Impl* store);
        Impl* m_store;  // the store's state, which stays put when the RunStore object is moved
    };
    Transaction transaction();

    // Writers. Each sets the new id on its argument where there is one, and returns it.
    // addRun drops secret-looking config keys (strip_secrets) and records which in a "secrets_stripped" event.
    int64_t addRun(RunInfo& run);
    int64_t addProblem(ProblemRecord& problem);  // replaces the row of a problem with the same name
    // Computes candidate.source_hash when it is empty. parent_id 0 is a root.
    int64_t addCandidate(int64_t run_id, Candidate& candidate);
    void addStaticReports(int64_t candidate_id, const std::vector<StaticReport>& reports);
    int64_t addForecast(int64_t candidate_id, const Forecast& forecast);
    int64_t addMeasurement(int64_t candidate_id, const Measurement& measurement);
    // The payload goes through strip_secrets too: a steering command never carries a key into the store.
    int64_t addEvent(int64_t run_id, const std::string& kind, const nlohmann::json& payload);
    // Takes a run back to a consistent point (a resumed search's last checkpoint): deletes its candidates, forecasts
    // and measurements whose ids are above the given ones (static reports of deleted candidates with them) and its
    // events above last_event, except those of the kinds in keep_kinds. Calls to language models stay (they were
    // made and paid for); those of deleted candidates lose the candidate. One transaction.
    void rollBackRun(int64_t run_id, int64_t last_candidate, int64_t last_forecast, int64_t last_measurement,
                     int64_t last_event, const std::vector<std::string>& keep_kinds);
    // Sets call.id and call.run_id. The kind must be one of the three; a candidate must belong to the run.
    int64_t addLlmCall(int64_t run_id, LlmCall& call);
    // Stores the pairs with their source line, our bin (scheme_id names its scheme) and the file's own bin.
    void addImportedPairs(int64_t run_id, const std::vector<ImportedPair>& pairs,
                          const std::string& scheme_id = "gf-v2");

    // Readers, in id (= write) order.
    std::vector<RunInfo> runs();
    std::optional<RunInfo> run(int64_t id);
    std::vector<ProblemRecord> problems();
    std::vector<Candidate> candidates(int64_t run_id);
    std::optional<Candidate> candidate(int64_t id);
    std::optional<int64_t> runOfCandidate(int64_t candidate_id);
    std::vector<StaticReport> staticReportsFor(int64_t candidate_id);
    std::vector<StoredForecast> forecastsFor(int64_t candidate_id);
    std::vector<StoredMeasurement> measurementsFor(int64_t candidate_id);
    // The same for every candidate of a run at once, by candidate id (one query each, for opening large runs).
    std::unordered_map<int64_t, std::vector<StaticReport>> staticReportsOfRun(int64_t run_id);
    std::unordered_map<int64_t, std::vector<StoredForecast>> forecastsOfRun(int64_t run_id);
    std::unordered_map<int64_t, std::vector<StoredMeasurement>> measurementsOfRun(int64_t run_id);
    int64_t forecastCount(int64_t run_id);  // every forecast of the run, re-forecasts included
    // What the run's forecasts used: LLM tokens (in + out) and cost, re-forecasts included.
    struct ForecastUsage {
        int64_t tokens = 0;
        double cost_usd = 0;
    };
    ForecastUsage forecastUsage(int64_t run_id);
    std::vector<MeasurementOutcome> measurementOutcomes(int64_t run_id);  // in id order
    // The run's events in order, or only those of one kind ("sweep", "gating", ...): the others' payloads are not
    // read.
    std::vector<RunEvent> events(int64_t run_id, const std::string& kind = {});
    std::vector<ImportedPair> importedPairs(int64_t run_id);
    // The run's calls, or only those of one candidate when candidate_id > 0.
    std::vector<LlmCall> llmCalls(int64_t run_id, int64_t candidate_id = 0);
    // kind: only the calls of that kind ("forecast", "mutate_rewrite", "mutate_diff"); empty: all of them.
    LlmTotals llmTotals(int64_t run_id, const std::string& kind = {});

    // SQLite's own consistency check: "ok", or what is wrong, one finding per line.
    std::string integrityCheck();
    // Caps the file at this many pages (page size 4096), for this connection; returns the cap in force. A store
    // that reaches it fails writes with a "disk full" error exactly as a full disk does.
    int64_t limitPages(int64_t max_pages);

private:
    explicit RunStore(std::unique_ptr<Impl> impl);
    // The rows of one table for a WHERE clause with one integer parameter, by candidate.
    std::unordered_map<int64_t, std::vector<StaticReport>> staticReports(const char* where, int64_t key);
    std::unordered_map<int64_t, std::vector<StoredForecast>> forecasts(const char* where, int64_t key);
    std::unordered_map<int64_t, std::vector<StoredMeasurement>> measurements(const char* where, int64_t key);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace kerncast
