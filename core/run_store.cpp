#include "core/run_store.h"

#include "core/error.h"
#include "core/sqlite_util.h"
#include "core/untrusted_json.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <utility>

namespace kerncast {

namespace {

// 'KRNC': tells our files from other SQLite databases.
constexpr int64_t kApplicationId = 0x4B524E43;

struct Migration {
    int version;
    const char* sql;
};

// Ordered; each brings the schema from version - 1 to version. Never edit a released entry: add a new one.
constexpr std::array<Migration, 5> kMigrations{{
    {1, R"sql(
CREATE TABLE runs (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    problem    TEXT NOT NULL DEFAULT '',
    device     TEXT NOT NULL DEFAULT '',
    surrogate  TEXT NOT NULL DEFAULT '',
    gating     TEXT NOT NULL DEFAULT '',
    seed       INTEGER NOT NULL DEFAULT 0,
    config     TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE problems (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dir  TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE TABLE candidates (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    parent_id   INTEGER REFERENCES candidates(id),
    generation  INTEGER NOT NULL,
    mutator     TEXT NOT NULL,
    label       TEXT NOT NULL,
    source      TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    tunables    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX candidates_by_run ON candidates(run_id, id);
CREATE INDEX candidates_by_parent ON candidates(parent_id);
CREATE INDEX candidates_by_hash ON candidates(run_id, source_hash);
CREATE TABLE static_reports (
    id                INTEGER PRIMARY KEY,
    candidate_id      INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    kernel            TEXT NOT NULL,
    registers         INTEGER NOT NULL,
    shared_bytes      INTEGER NOT NULL,
    stack_bytes       INTEGER NOT NULL,
    spill_store_bytes INTEGER NOT NULL,
    spill_load_bytes  INTEGER NOT NULL,
    barriers          INTEGER NOT NULL,
    json              TEXT NOT NULL
);
CREATE INDEX static_reports_by_candidate ON static_reports(candidate_id);
CREATE TABLE forecasts (
    id            INTEGER PRIMARY KEY,
    candidate_id  INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    surrogate_id  TEXT NOT NULL,
    scheme_id     TEXT NOT NULL,
    p1 REAL NOT NULL, p2 REAL NOT NULL, p3 REAL NOT NULL, p4 REAL NOT NULL,
    p5 REAL NOT NULL, p6 REAL NOT NULL, p7 REAL NOT NULL, p8 REAL NOT NULL,
    raw_sum       REAL NOT NULL,
    predicted_bin INTEGER NOT NULL,
    reasoning     TEXT NOT NULL,
    prompt_hash   TEXT NOT NULL,
    tokens_in     INTEGER NOT NULL,
    tokens_out    INTEGER NOT NULL,
    latency_ms    REAL NOT NULL,
    cost_usd      REAL NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX forecasts_by_candidate ON forecasts(candidate_id);
CREATE INDEX forecasts_by_surrogate ON forecasts(surrogate_id);
CREATE TABLE measurements (
    id                  INTEGER PRIMARY KEY,
    candidate_id        INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    status              TEXT NOT NULL,
    reason              TEXT NOT NULL,
    speedup             REAL,
    candidate_median_us REAL,
    reference_median_us REAL,
    reverified          INTEGER NOT NULL,
    device_kind         TEXT NOT NULL,
    device_name         TEXT NOT NULL,
    json                TEXT NOT NULL,
    created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX measurements_by_candidate ON measurements(candidate_id);
CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    ts      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    kind    TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_run ON events(run_id, id);
CREATE TABLE imported_pairs (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    line            INTEGER NOT NULL,
    comparison_id   TEXT NOT NULL,
    pack            TEXT NOT NULL,
    hardware        TEXT NOT NULL,
    anchor_code     TEXT NOT NULL,
    candidate_code  TEXT NOT NULL,
    speedup         REAL,
    true_bin        INTEGER NOT NULL,
    scheme_id       TEXT NOT NULL,
    source_true_bin INTEGER,
    extra           TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX imported_pairs_by_run ON imported_pairs(run_id, id);
)sql"},
    // A surrogate that models log-speedup continuously (the local one) also stores its mean and spread, so that
    // gating can tell candidates apart beyond the last bin.
    {2, R"sql(
ALTER TABLE forecasts ADD COLUMN log_mean REAL;
ALTER TABLE forecasts ADD COLUMN log_sigma REAL;
)sql"},
    // A forecast is of a candidate against its anchor (ARCHITECTURE §4): the measured parent, or the reference.
    // Forecasts of older runs have no anchor and read as forecasts against the reference.
    {3, R"sql(
ALTER TABLE forecasts ADD COLUMN anchor_id INTEGER;
ALTER TABLE forecasts ADD COLUMN anchor_speedup REAL;
)sql"},
    // One row per request to a language model, forecasts and mutations alike: what was asked, what came back and
    // what it cost, so that a resumed run counts its tokens and cost from the file and a person can read any call.
    {4, R"sql(
CREATE TABLE llm_calls (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('forecast', 'mutate_rewrite', 'mutate_diff')),
    candidate_id INTEGER REFERENCES candidates(id) ON DELETE CASCADE,
    model        TEXT NOT NULL,
    prompt       TEXT NOT NULL,
    reply        TEXT NOT NULL,
    reasoning    TEXT NOT NULL,
    tokens_in    INTEGER NOT NULL,
    tokens_out   INTEGER NOT NULL,
    cost_usd     REAL NOT NULL,
    latency_ms   REAL NOT NULL,
    outcome      TEXT NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX llm_calls_by_run ON llm_calls(run_id, id);
CREATE INDEX llm_calls_by_candidate ON llm_calls(candidate_id);
)sql"},
    // A search recalibrates forecasts against the outcomes it measured (core/recalibration.h) and keeps what the
    // surrogate said, as a JSON array, to fit the next recalibration on; NULL for a forecast left as given.
    {5, R"sql(
ALTER TABLE forecasts ADD COLUMN uncalibrated TEXT;
)sql"},
}};

constexpr int kLatestVersion = kMigrations.back().version;

// Tolerates text that is not valid UTF-8 (compiler output, model replies) instead of failing the write.
std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json parse_column(const std::string& text, const std::string& path, const std::string& what) {
    std::string invalid;
    if (auto j = try_parse_untrusted_json(text, &invalid))
        return std::move(*j);
    throw Error(SourceLocation{path, 0}, "corrupt " + what + " in the store: " + invalid);
}

std::string normalized_key(const std::string& key) {
    std::string k;
    for (unsigned char c : key)
        if (std::isalnum(c))
            k += static_cast<char>(std::tolower(c));
    return k;
}

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_secret_key(const std::string& key) {
    const std::string k = normalized_key(key);
    if (k == "authorization" || k == "auth" || k == "bearer" || k == "cookie" || k == "credentials")
        return true;
    // Suffixes catch openai_api_key, hf_token, client_secret... while "max_tokens" or "api_key_env" (the name of
    // the variable that holds a key, not the key) stay.
    for (const char* suffix : {"apikey", "token", "password", "passwd", "secret", "privatekey"})
        if (ends_with(k, suffix))
            return true;
    return false;
}

std::string pointer_escape(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

void strip_secrets_at(nlohmann::json& value, const std::string& where, std::vector<std::string>& removed) {
    if (value.is_object()) {
        for (auto it = value.begin(); it != value.end();) {
            const std::string path = where + "/" + pointer_escape(it.key());
            if (is_secret_key(it.key())) {
                removed.push_back(path);
                it = value.erase(it);
            } else {
                strip_secrets_at(it.value(), path, removed);
                ++it;
            }
        }
    } else if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i)
            strip_secrets_at(value[i], where + "/" + std::to_string(i), removed);
    }
}

// A model's reply may hold bytes that are not UTF-8; SQLite TEXT would keep them, but every reader (JSON exports,
// the GUI) expects UTF-8, so they are replaced once here.
std::string valid_utf8(const std::string& text) {
    return nlohmann::json::parse(dump(nlohmann::json(text))).get<std::string>();
}

std::optional<double> positive_or_null(double value) {
    if (std::isfinite(value) && value > 0)
        return value;
    return std::nullopt;
}

}  // namespace

std::vector<std::string> strip_secrets(nlohmann::json& value) {
    std::vector<std::string> removed;
    strip_secrets_at(value, "", removed);
    return removed;
}

struct RunStore::Impl {
    sqlite::Database db;
    std::function<void(const StoreChange&)> observer;
    bool in_transaction = false;       // an explicit Transaction is open
    bool viewer = false;               // opened by openReadOnly: never checkpoints by itself
    std::vector<StoreChange> pending;  // rows written in the open transaction, announced after its commit

    explicit Impl(sqlite::Database database) : db(std::move(database)) {}

    const std::string& path() const { return db.path(); }

    void notify(std::vector<StoreChange> changes) {
        if (!observer)
            return;
        for (const auto& change : changes)
            observer(change);
    }

    void rollbackQuietly() {
        // After SQLITE_FULL or an I/O error SQLite may already have rolled the whole transaction back.
        if (db.inTransaction())
            sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        pending.clear();
    }

    void commit(const std::string& operation) {
        try {
            db.exec("COMMIT", operation);
        } catch (...) {
            rollbackQuietly();
            throw;
        }
        notify(std::exchange(pending, {}));
    }

    // Runs one writer atomically. Inside an explicit transaction a savepoint undoes a writer that fails halfway
    // (e.g. the third of five reports), so the transaction holds whole writes only; outside one, the writer gets
    // its own transaction and its rows are announced as soon as it commits.
    template<typename F>
    int64_t write(const std::string& operation, F&& body) {
        if (in_transaction) {
            if (!db.inTransaction())
                throw Error(SourceLocation{path(), 0},
                            operation + " failed: the transaction was already rolled back by an earlier error");
            const size_t announced = pending.size();
            db.exec("SAVEPOINT kerncast_write", operation);
            try {
                const int64_t id = body();
                db.exec("RELEASE kerncast_write", operation);
                return id;
            } catch (...) {
                if (db.inTransaction()) {
                    sqlite3_exec(db.handle(), "ROLLBACK TO kerncast_write; RELEASE kerncast_write", nullptr, nullptr,
                                 nullptr);
                }
                pending.resize(announced);
                throw;
            }
        }
        db.exec("BEGIN IMMEDIATE", operation);
        int64_t id = 0;
        try {
            id = body();
        } catch (...) {
            rollbackQuietly();
            throw;
        }
        commit(operation);
        return id;
    }

    int64_t insert(sqlite::Statement& stmt, const char* table, int64_t run_id) {
        stmt.run();
        const int64_t id = db.lastInsertRowId();
        pending.push_back({table, id, run_id});
        return id;
    }

    int64_t requireRun(int64_t run_id, const std::string& operation) {
        auto stmt = db.prepare("SELECT 1 FROM runs WHERE id = ?", operation);
        stmt.bind(1, run_id);
        if (!stmt.step())
            throw Error(SourceLocation{path(), 0}, operation + " failed: there is no run " + std::to_string(run_id));
        return run_id;
    }

    // The run a candidate belongs to; it tags the change and makes a wrong id a readable error rather than a
    // "FOREIGN KEY constraint failed".
    int64_t requireCandidate(int64_t candidate_id, const std::string& operation) {
        auto stmt = db.prepare("SELECT run_id FROM candidates WHERE id = ?", operation);
        stmt.bind(1, candidate_id);
        if (!stmt.step())
            throw Error(SourceLocation{path(), 0},
                        operation + " failed: there is no candidate " + std::to_string(candidate_id));
        return stmt.int64(0);
    }

    void migrate() {
        const std::string operation = "updating the store's schema";
        db.exec("BEGIN IMMEDIATE", operation);
        try {
            // Read again under the write lock: another process may have created the schema meanwhile.
            const int64_t version = db.queryInt("PRAGMA user_version", operation).value_or(0);
            for (const auto& migration : kMigrations) {
                if (migration.version <= version)
                    continue;
                db.exec(migration.sql, operation + " to version " + std::to_string(migration.version));
                db.exec("PRAGMA user_version = " + std::to_string(migration.version), operation);
            }
            db.exec("PRAGMA application_id = " + std::to_string(kApplicationId), operation);
            db.exec("COMMIT", operation);
        } catch (...) {
            rollbackQuietly();
            throw;
        }
    }
};

namespace {

enum class OpenMode { Existing, New, Either };

constexpr int kBusyTimeoutMs = 10000;  // how long a store waits for a lock another connection holds

// Switches the file to write-ahead logging and says the journal mode it is in then. A file not yet in that mode (an
// empty one, or one a search killed while creating it left in rollback mode) needs an exclusive lock to switch;
// when two connections open it at once (a search starting while another program looks at its run file), each
// holds a shared lock while it asks, and SQLite answers one of them SQLITE_BUSY at once instead of waiting in the
// busy handler, which would never end. That one lets go and asks again, until the busy timeout has passed.
std::string switch_to_wal(sqlite::Database& database) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (int attempt = 0;; ++attempt) {
        sqlite3_stmt* stmt = nullptr;
        int rc = sqlite3_prepare_v2(database.handle(), "PRAGMA journal_mode = WAL", -1, &stmt, nullptr);
        std::string mode;
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(stmt);
            if (rc == SQLITE_ROW) {
                const unsigned char* text = sqlite3_column_text(stmt, 0);
                mode = text ? reinterpret_cast<const char*>(text) : "";
                rc = SQLITE_OK;
            }
        }
        const int finalized = sqlite3_finalize(stmt);
        if (rc == SQLITE_OK)
            return mode;
        if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
            database.raise(finalized != SQLITE_OK ? finalized : rc, "switching to write-ahead logging");
        std::this_thread::sleep_for(std::chrono::milliseconds(1 << std::min(attempt, 5)));
    }
}

sqlite::Database open_database(const std::string& path, OpenMode mode) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (mode == OpenMode::Existing && !exists)
        throw Error(SourceLocation{path, 0}, "no run store here: the file does not exist");
    if (mode == OpenMode::New && exists)
        throw Error(SourceLocation{path, 0}, "cannot create a run store: the file already exists");

    sqlite::Database database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    sqlite3_busy_timeout(database.handle(), kBusyTimeoutMs);

    // Everything up to the version check only reads, so a file that is not ours is left as it was. The reads are
    // one transaction: another process creating the schema meanwhile commits its tables and the application id
    // together, and reads outside a transaction could see the tables without the id (a store taken for another
    // program's database).
    database.exec("BEGIN", "reading the file header");
    int64_t app_id = 0, version = 0, tables = 0;
    try {
        database.queryInt("PRAGMA schema_version", "reading the file header");
        app_id = database.queryInt("PRAGMA application_id", "reading the file header").value_or(0);
        version = database.queryInt("PRAGMA user_version", "reading the schema version").value_or(0);
        tables = database.queryInt("SELECT count(*) FROM sqlite_master", "reading the list of tables").value_or(0);
        database.exec("COMMIT", "reading the file header");
    } catch (...) {
        if (database.inTransaction())  // SQLite may have ended it already
            sqlite3_exec(database.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    if (app_id != kApplicationId && (app_id != 0 || version != 0 || tables != 0))
        throw Error(SourceLocation{path, 0}, "not a Kerncast run store: an SQLite database of another program (" +
                                                 std::to_string(tables) + " tables, application id " +
                                                 std::to_string(app_id) + ")");
    if (version > kLatestVersion)
        throw Error(SourceLocation{path, 0}, "the run store was written by a newer Kerncast (schema version " +
                                                 std::to_string(version) + "; this build knows up to " +
                                                 std::to_string(kLatestVersion) +
                                                 "). Open it with a newer Kerncast; the file was left unchanged.");

    const std::string journal = switch_to_wal(database);
    if (journal != "wal")
        throw Error(SourceLocation{path, 0}, "cannot use write-ahead logging (journal mode is '" +
                                                 (journal.empty() ? std::string("?") : journal) +
                                                 "'); keep run stores on a local file system");
    // FULL: a commit returns only once the WAL is synced, which is what "reported committed" promises.
    database.exec("PRAGMA synchronous = FULL", "setting synchronous = FULL");
    database.exec("PRAGMA foreign_keys = ON", "enabling foreign keys");
    return database;
}

// "file:" URI of a path with immutable=1: SQLite then reads the file without the WAL index beside it, which it
// cannot create on read-only storage, and takes no locks.
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    for (const char c : std::filesystem::absolute(path).string()) {
        if (c == '%' || c == '?' || c == '#') {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
            uri += hex;
        } else {
            uri += c;
        }
    }
    return uri + "?immutable=1";
}

// For viewing and export: nothing is written, not even the header's journal mode, so a run on read-only storage
// (a mounted archive, a shared folder) opens, and a file's bytes never change by being looked at.
sqlite::Database open_database_read_only(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw Error(SourceLocation{path, 0}, "no run store here: the file does not exist");
    auto check_header = [&](sqlite::Database& database) {
        sqlite3_busy_timeout(database.handle(), kBusyTimeoutMs);
        const int64_t app_id = database.queryInt("PRAGMA application_id", "reading the file header").value_or(0);
        const int64_t version = database.queryInt("PRAGMA user_version", "reading the schema version").value_or(0);
        if (app_id != kApplicationId)
            throw Error(SourceLocation{path, 0},
                        "not a Kerncast run store (application id " + std::to_string(app_id) + ")");
        if (version != kLatestVersion)
            throw Error(SourceLocation{path, 0},
                        "the run store has schema version " + std::to_string(version) + ", this build reads " +
                            std::to_string(kLatestVersion) +
                            (version > kLatestVersion ? "; open it with a newer Kerncast"
                                                      : "; open it once where it is writable (e.g. resume "
                                                        "it) to bring it up to date"));
    };
    try {
        // Opened for writing where the file is writable, with every write refused (query_only): a read-only
        // connection cannot remove the -wal and -shm files SQLite creates beside the file, so every look at a run
        // (the GUI's views, an export) left them there. As the last connection this one removes them on close.
        sqlite::Database database(path, SQLITE_OPEN_READWRITE);
        database.exec("PRAGMA query_only = 1", "opening the run store for reading");
        check_header(database);
        return database;
    } catch (const Error&) {}
    try {
        sqlite::Database database(path, SQLITE_OPEN_READONLY);
        check_header(database);
        return database;
    } catch (const Error&) {
        // On read-only storage a file in WAL mode cannot be read this way (its WAL index cannot be created);
        // nobody can be writing there, so the file is read as immutable. A file that is not ours fails again here
        // with the same message.
        sqlite::Database database(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, immutable_uri(path));
        check_header(database);
        return database;
    }
}

}  // namespace

int RunStore::schemaVersion() { return kLatestVersion; }

RunStore RunStore::openReadOnly(const std::string& path) {
    auto impl = std::make_unique<Impl>(open_database_read_only(path));
    impl->viewer = true;
    return RunStore(std::move(impl));
}

RunStore::RunStore(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;
RunStore::~RunStore() {
    if (!m_impl)
        return;
    m_impl->rollbackQuietly();
    // Everything goes into the main file before the connection closes: a reader that outlives this writer (the
    // GUI's, another process's) would otherwise keep SQLite from checkpointing on close, and the .sqlite copied or
    // mailed alone would lack what only the -wal beside it holds. TRUNCATE also leaves that -wal empty.
    sqlite3* db = m_impl->db.handle();
    if (db && !m_impl->viewer && sqlite3_db_readonly(db, "main") == 0)
        sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
}

RunStore RunStore::open(const std::string& path) {
    auto impl = std::make_unique<Impl>(open_database(path, OpenMode::Existing));
    impl->migrate();
    return RunStore(std::move(impl));
}

RunStore RunStore::create(const std::string& path) {
    auto impl = std::make_unique<Impl>(open_database(path, OpenMode::New));
    impl->migrate();
    return RunStore(std::move(impl));
}

RunStore RunStore::openOrCreate(const std::string& path) {
    auto impl = std::make_unique<Impl>(open_database(path, OpenMode::Either));
    impl->migrate();
    return RunStore(std::move(impl));
}

const std::string& RunStore::path() const { return m_impl->path(); }

void RunStore::setObserver(std::function<void(const StoreChange&)> observer) { m_impl->observer = std::move(observer); }

// --- Transaction ---

RunStore::Transaction::Transaction(Impl* store) : m_store(store) {}

RunStore::Transaction::Transaction(Transaction&& other) noexcept : m_store(std::exchange(other.m_store, nullptr)) {}

RunStore::Transaction::~Transaction() { rollback(); }

void RunStore::Transaction::commit() {
    if (!m_store)
        throw Error("the transaction was already committed or rolled back");
    Impl* store = std::exchange(m_store, nullptr);
    store->in_transaction = false;
    if (!store->db.inTransaction()) {
        store->pending.clear();
        throw Error(SourceLocation{store->path(), 0},
                    "committing failed: the transaction was already rolled back by an earlier error");
    }
    store->commit("committing a transaction");
}

void RunStore::Transaction::rollback() {
    if (!m_store)
        return;
    Impl* store = std::exchange(m_store, nullptr);
    store->in_transaction = false;
    store->rollbackQuietly();
}

RunStore::Transaction RunStore::transaction() {
    if (m_impl->in_transaction)
        throw Error(SourceLocation{path(), 0}, "a transaction is already open on this store");
    m_impl->db.exec("BEGIN IMMEDIATE", "starting a transaction");
    m_impl->in_transaction = true;
    m_impl->pending.clear();
    return Transaction(m_impl.get());
}

// --- Writers ---

int64_t RunStore::addRun(RunInfo& run) {
    const std::string operation = "adding run '" + run.name + "'";
    nlohmann::json config = run.config.is_null() ? nlohmann::json::object() : run.config;
    const auto removed = strip_secrets(config);
    const int64_t id = m_impl->write(operation, [&] {
        auto stmt = m_impl->db.prepare(
            "INSERT INTO runs (name, problem, device, surrogate, gating, seed, config) VALUES (?, ?, ?, ?, ?, ?, ?)",
            operation);
        stmt.bind(1, run.name).bind(2, run.problem).bind(3, run.device).bind(4, run.surrogate).bind(5, run.gating);
        stmt.bind(6, run.seed).bind(7, dump(config));
        stmt.run();
        const int64_t run_id = m_impl->db.lastInsertRowId();
        m_impl->pending.push_back({"runs", run_id, run_id});
        if (!removed.empty()) {
            // Said in the run's own log rather than silently: the user sees which settings were not kept.
            auto event = m_impl->db.prepare("INSERT INTO events (run_id, kind, payload) VALUES (?, ?, ?)", operation);
            event.bind(1, run_id)
                .bind(2, "secrets_stripped")
                .bind(3, dump(nlohmann::json::object({{"config_keys", removed}})));
            m_impl->insert(event, "events", run_id);
        }
        auto created = m_impl->db.prepare("SELECT created_at FROM runs WHERE id = ?", operation);
        created.bind(1, run_id);
        created.step();
        run.created_at = created.text(0);
        return run_id;
    });
    run.id = id;
    run.config = std::move(config);
    return id;
}

int64_t RunStore::addProblem(ProblemRecord& problem) {
    const std::string operation = "adding problem '" + problem.name + "'";
    problem.id = m_impl->write(operation, [&] {
        auto stmt =
            m_impl->db.prepare("INSERT INTO problems (name, dir, json) VALUES (?, ?, ?) "
                               "ON CONFLICT(name) DO UPDATE SET dir = excluded.dir, json = excluded.json RETURNING id",
                               operation);
        stmt.bind(1, problem.name).bind(2, problem.dir).bind(3, dump(problem.json));
        stmt.step();
        const int64_t id = stmt.int64(0);
        stmt.run();
        m_impl->pending.push_back({"problems", id, 0});
        return id;
    });
    return problem.id;
}

int64_t RunStore::addCandidate(int64_t run_id, Candidate& candidate) {
    const std::string operation = "adding candidate '" + candidate.label + "'";
    if (candidate.source_hash.empty())
        candidate.source_hash = content_hash(candidate.source, candidate.tunables);
    const int64_t id = m_impl->write(operation, [&] {
        m_impl->requireRun(run_id, operation);
        if (candidate.parent_id > 0)
            m_impl->requireCandidate(candidate.parent_id, operation + " (its parent)");
        auto stmt = m_impl->db.prepare(
            "INSERT INTO candidates (run_id, parent_id, generation, mutator, label, source, source_hash, tunables) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            operation);
        stmt.bind(1, run_id).bindIdOrNull(2, candidate.parent_id).bind(3, candidate.generation);
        stmt.bind(4, to_string(candidate.mutator)).bind(5, candidate.label).bind(6, candidate.source);
        stmt.bind(7, candidate.source_hash).bind(8, dump(nlohmann::json(candidate.tunables)));
        return m_impl->insert(stmt, "candidates", run_id);
    });
    candidate.id = id;
    return id;
}

void RunStore::addStaticReports(int64_t candidate_id, const std::vector<StaticReport>& reports) {
    const std::string operation = "adding static reports of candidate " + std::to_string(candidate_id);
    m_impl->write(operation, [&] {
        const int64_t run_id = m_impl->requireCandidate(candidate_id, operation);
        auto stmt = m_impl->db.prepare(
            "INSERT INTO static_reports (candidate_id, kernel, registers, shared_bytes, stack_bytes, "
            "spill_store_bytes, spill_load_bytes, barriers, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            operation);
        for (const auto& r : reports) {
            stmt.reset();
            stmt.bind(1, candidate_id).bind(2, r.kernel).bind(3, r.registers).bind(4, r.shared_bytes);
            stmt.bind(5, r.stack_bytes).bind(6, r.spill_store_bytes).bind(7, r.spill_load_bytes).bind(8, r.barriers);
            stmt.bind(9, dump(nlohmann::json(r)));
            m_impl->insert(stmt, "static_reports", run_id);
        }
        return int64_t{0};
    });
}

int64_t RunStore::addForecast(int64_t candidate_id, const Forecast& f) {
    const std::string operation = "adding a forecast of candidate " + std::to_string(candidate_id);
    return m_impl->write(operation, [&] {
        const int64_t run_id = m_impl->requireCandidate(candidate_id, operation);
        auto stmt = m_impl->db.prepare(
            "INSERT INTO forecasts (candidate_id, surrogate_id, scheme_id, p1, p2, p3, p4, p5, p6, p7, p8, raw_sum, "
            "predicted_bin, reasoning, prompt_hash, tokens_in, tokens_out, latency_ms, cost_usd, log_mean, log_sigma, "
            "anchor_id, anchor_speedup, uncalibrated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?)",
            operation);
        stmt.bind(1, candidate_id).bind(2, f.surrogate_id).bind(3, f.scheme_id);
        for (int b = 0; b < kBinCount; ++b)
            stmt.bind(4 + b, f.probabilities[static_cast<size_t>(b)]);
        stmt.bind(12, f.raw_sum).bind(13, f.predicted_bin).bind(14, f.reasoning).bind(15, f.prompt_hash);
        stmt.bind(16, f.tokens_in).bind(17, f.tokens_out).bind(18, f.latency_ms).bind(19, f.cost_usd);
        stmt.bind(20, f.log_mean).bind(21, f.log_sigma);
        stmt.bind(22, f.anchor_id).bind(23, f.anchor_speedup);
        stmt.bind(24, f.uncalibrated ? std::optional<std::string>(dump(nlohmann::json(*f.uncalibrated)))
                                     : std::optional<std::string>());
        return m_impl->insert(stmt, "forecasts", run_id);
    });
}

int64_t RunStore::addMeasurement(int64_t candidate_id, const Measurement& m) {
    const std::string operation = "adding a measurement of candidate " + std::to_string(candidate_id);
    return m_impl->write(operation, [&] {
        const int64_t run_id = m_impl->requireCandidate(candidate_id, operation);
        auto stmt = m_impl->db.prepare(
            "INSERT INTO measurements (candidate_id, status, reason, speedup, candidate_median_us, "
            "reference_median_us, reverified, device_kind, device_name, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            operation);
        stmt.bind(1, candidate_id).bind(2, to_string(m.status)).bind(3, m.reason);
        stmt.bind(4, is_failure(m.status) ? std::nullopt : positive_or_null(m.speedup));
        stmt.bind(5, m.candidate ? std::optional<double>(m.candidate->median_us) : std::nullopt);
        stmt.bind(6, m.reference ? std::optional<double>(m.reference->median_us) : std::nullopt);
        stmt.bind(7, m.reverified ? 1 : 0).bind(8, m.device_kind).bind(9, m.device.name);
        stmt.bind(10, dump(nlohmann::json(m)));
        return m_impl->insert(stmt, "measurements", run_id);
    });
}

int64_t RunStore::addEvent(int64_t run_id, const std::string& kind, const nlohmann::json& payload) {
    const std::string operation = "adding event '" + kind + "'";
    nlohmann::json clean = payload.is_null() ? nlohmann::json::object() : payload;
    const auto removed = strip_secrets(clean);
    if (!removed.empty())
        clean["secrets_stripped"] = removed;
    return m_impl->write(operation, [&] {
        m_impl->requireRun(run_id, operation);
        auto stmt = m_impl->db.prepare("INSERT INTO events (run_id, kind, payload) VALUES (?, ?, ?)", operation);
        stmt.bind(1, run_id).bind(2, kind).bind(3, dump(clean));
        return m_impl->insert(stmt, "events", run_id);
    });
}

void RunStore::rollBackRun(int64_t run_id, int64_t last_candidate, int64_t last_forecast, int64_t last_measurement,
                           int64_t last_event, const std::vector<std::string>& keep_kinds) {
    const std::string operation = "rolling the run back to its last checkpoint";
    m_impl->write(operation, [&] {
        m_impl->requireRun(run_id, operation);
        const auto run_rows = [&](const std::string& sql, int64_t above) {
            auto stmt = m_impl->db.prepare(sql, operation);
            stmt.bind(1, run_id).bind(2, above);
            stmt.step();
        };
        const std::string of_run = " IN (SELECT id FROM candidates WHERE run_id = ?1)";
        run_rows("DELETE FROM measurements WHERE candidate_id" + of_run + " AND id > ?2", last_measurement);
        run_rows("DELETE FROM forecasts WHERE candidate_id" + of_run + " AND id > ?2", last_forecast);
        run_rows("DELETE FROM static_reports WHERE candidate_id IN (SELECT id FROM candidates WHERE run_id = ?1 AND "
                 "id > ?2)",
                 last_candidate);
        // The table exists from schema version 4 on; a call of a deleted candidate keeps its cost, not the link.
        if (m_impl->db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'llm_calls'", operation)
                .step())
            run_rows("UPDATE llm_calls SET candidate_id = NULL WHERE candidate_id IN (SELECT id FROM candidates "
                     "WHERE run_id = ?1 AND id > ?2)",
                     last_candidate);
        run_rows("DELETE FROM candidates WHERE run_id = ?1 AND id > ?2", last_candidate);
        std::string keep = "''";
        for (size_t i = 0; i < keep_kinds.size(); ++i)
            keep += ", ?" + std::to_string(i + 3);
        auto events = m_impl->db.prepare(
            "DELETE FROM events WHERE run_id = ?1 AND id > ?2 AND kind NOT IN (" + keep + ")", operation);
        events.bind(1, run_id).bind(2, last_event);
        for (size_t i = 0; i < keep_kinds.size(); ++i)
            events.bind(static_cast<int>(i + 3), keep_kinds[i]);
        events.step();
        return int64_t{0};
    });
}

int64_t RunStore::addLlmCall(int64_t run_id, LlmCall& call) {
    const std::string operation = "adding a " + call.kind + " call to the language model";
    if (call.kind != "forecast" && call.kind != "mutate_rewrite" && call.kind != "mutate_diff")
        throw Error(SourceLocation{path(), 0}, operation +
                                                   " failed: the kind must be forecast, mutate_rewrite or "
                                                   "mutate_diff, not '" +
                                                   call.kind + "'");
    if (call.outcome.empty())
        throw Error(SourceLocation{path(), 0}, operation + " failed: the call has no outcome");
    call.id = m_impl->write(operation, [&] {
        m_impl->requireRun(run_id, operation);
        if (call.candidate_id > 0 && m_impl->requireCandidate(call.candidate_id, operation) != run_id)
            throw Error(SourceLocation{path(), 0}, operation + " failed: candidate " +
                                                       std::to_string(call.candidate_id) + " is not of run " +
                                                       std::to_string(run_id));
        auto stmt = m_impl->db.prepare(
            "INSERT INTO llm_calls (run_id, kind, candidate_id, model, prompt, reply, reasoning, tokens_in, "
            "tokens_out, cost_usd, latency_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            operation);
        stmt.bind(1, run_id).bind(2, call.kind).bindIdOrNull(3, call.candidate_id).bind(4, call.model);
        stmt.bind(5, valid_utf8(call.prompt)).bind(6, valid_utf8(call.reply)).bind(7, valid_utf8(call.reasoning));
        stmt.bind(8, call.tokens_in).bind(9, call.tokens_out).bind(10, call.cost_usd).bind(11, call.latency_ms);
        stmt.bind(12, call.outcome).bind(13, valid_utf8(call.error));
        return m_impl->insert(stmt, "llm_calls", run_id);
    });
    call.run_id = run_id;
    return call.id;
}

void RunStore::addImportedPairs(int64_t run_id, const std::vector<ImportedPair>& pairs, const std::string& scheme_id) {
    const std::string operation = "adding imported pairs";
    m_impl->write(operation, [&] {
        m_impl->requireRun(run_id, operation);
        auto stmt = m_impl->db.prepare(
            "INSERT INTO imported_pairs (run_id, line, comparison_id, pack, hardware, anchor_code, candidate_code, "
            "speedup, true_bin, scheme_id, source_true_bin, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            operation);
        for (const auto& p : pairs) {
            stmt.reset();
            stmt.bind(1, run_id).bind(2, p.line).bind(3, p.comparison_id).bind(4, p.pack).bind(5, p.hardware);
            stmt.bind(6, p.anchor_code).bind(7, p.candidate_code).bind(8, p.speedup).bind(9, p.true_bin);
            stmt.bind(10, scheme_id)
                .bind(11, p.source_true_bin ? std::optional<int64_t>(*p.source_true_bin) : std::nullopt);
            stmt.bind(12, dump(p.extra.is_null() ? nlohmann::json::object() : p.extra));
            m_impl->insert(stmt, "imported_pairs", run_id);
        }
        return int64_t{0};
    });
}

// --- Readers ---

namespace {

constexpr const char* kRunColumns = "id, name, created_at, problem, device, surrogate, gating, seed, config";

RunInfo read_run(const sqlite::Statement& s, const std::string& path) {
    RunInfo r;
    r.id = s.int64(0);
    r.name = s.text(1);
    r.created_at = s.text(2);
    r.problem = s.text(3);
    r.device = s.text(4);
    r.surrogate = s.text(5);
    r.gating = s.text(6);
    r.seed = s.int64(7);
    r.config = parse_column(s.text(8), path, "run config");
    return r;
}

constexpr const char* kCandidateColumns = "id, parent_id, generation, mutator, label, source, source_hash, tunables";

Candidate read_candidate(const sqlite::Statement& s, const std::string& path) {
    Candidate c;
    c.id = s.int64(0);
    c.parent_id = s.optionalInt64(1).value_or(0);
    c.generation = s.integer(2);
    c.mutator = mutator_from_string(s.text(3));
    c.label = s.text(4);
    c.source = s.text(5);
    c.source_hash = s.text(6);
    c.tunables = parse_column(s.text(7), path, "candidate tunables").get<std::map<std::string, int64_t>>();
    return c;
}

}  // namespace

std::vector<RunInfo> RunStore::runs() {
    auto stmt = m_impl->db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id", "reading runs");
    std::vector<RunInfo> out;
    while (stmt.step())
        out.push_back(read_run(stmt, path()));
    return out;
}

std::optional<RunInfo> RunStore::run(int64_t id) {
    auto stmt = m_impl->db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?", "reading a run");
    stmt.bind(1, id);
    if (!stmt.step())
        return std::nullopt;
    return read_run(stmt, path());
}

std::vector<ProblemRecord> RunStore::problems() {
    auto stmt = m_impl->db.prepare("SELECT id, name, dir, json FROM problems ORDER BY id", "reading problems");
    std::vector<ProblemRecord> out;
    while (stmt.step())
        out.push_back({stmt.int64(0), stmt.text(1), stmt.text(2), parse_column(stmt.text(3), path(), "problem")});
    return out;
}

std::vector<Candidate> RunStore::candidates(int64_t run_id) {
    auto stmt =
        m_impl->db.prepare(std::string("SELECT ") + kCandidateColumns + " FROM candidates WHERE run_id = ? ORDER BY id",
                           "reading candidates");
    stmt.bind(1, run_id);
    std::vector<Candidate> out;
    while (stmt.step())
        out.push_back(read_candidate(stmt, path()));
    return out;
}

std::optional<Candidate> RunStore::candidate(int64_t id) {
    auto stmt = m_impl->db.prepare(std::string("SELECT ") + kCandidateColumns + " FROM candidates WHERE id = ?",
                                   "reading a candidate");
    stmt.bind(1, id);
    if (!stmt.step())
        return std::nullopt;
    return read_candidate(stmt, path());
}

std::optional<int64_t> RunStore::runOfCandidate(int64_t candidate_id) {
    auto stmt = m_impl->db.prepare("SELECT run_id FROM candidates WHERE id = ?", "reading a candidate's run");
    stmt.bind(1, candidate_id);
    if (!stmt.step())
        return std::nullopt;
    return stmt.int64(0);
}

namespace {

constexpr const char* kForecastColumns =
    "t.id, t.candidate_id, t.surrogate_id, t.scheme_id, t.p1, t.p2, t.p3, t.p4, t.p5, t.p6, t.p7, t.p8, t.raw_sum, "
    "t.predicted_bin, t.reasoning, t.prompt_hash, t.tokens_in, t.tokens_out, t.latency_ms, t.cost_usd, t.created_at, "
    "t.log_mean, t.log_sigma, t.anchor_id, t.anchor_speedup, t.uncalibrated";

StoredForecast forecast_row(const sqlite::Statement& stmt, const std::string& file) {
    StoredForecast s;
    s.id = stmt.int64(0);
    s.candidate_id = stmt.int64(1);
    Forecast& f = s.forecast;
    f.surrogate_id = stmt.text(2);
    f.scheme_id = stmt.text(3);
    for (int b = 0; b < kBinCount; ++b)
        f.probabilities[static_cast<size_t>(b)] = stmt.real(4 + b);
    f.raw_sum = stmt.real(12);
    f.predicted_bin = stmt.integer(13);
    f.reasoning = stmt.text(14);
    f.prompt_hash = stmt.text(15);
    f.tokens_in = stmt.int64(16);
    f.tokens_out = stmt.int64(17);
    f.latency_ms = stmt.real(18);
    f.cost_usd = stmt.real(19);
    s.created_at = stmt.text(20);
    if (!stmt.isNull(21) && !stmt.isNull(22)) {
        f.log_mean = stmt.real(21);
        f.log_sigma = stmt.real(22);
    }
    // NULL in runs made before forecasts had anchors: those were forecasts against the reference.
    if (!stmt.isNull(23) && !stmt.isNull(24) && stmt.real(24) > 0) {
        f.anchor_id = stmt.int64(23);
        f.anchor_speedup = stmt.real(24);
    }
    if (!stmt.isNull(25))
        f.uncalibrated = uncalibrated_from_json(parse_column(stmt.text(25), file, "uncalibrated forecast"));
    return s;
}

StoredMeasurement measurement_row(const sqlite::Statement& stmt, const std::string& file) {
    StoredMeasurement s;
    s.id = stmt.int64(0);
    s.candidate_id = stmt.int64(1);
    s.measurement = parse_column(stmt.text(2), file, "measurement").get<Measurement>();
    s.created_at = stmt.text(3);
    return s;
}

// Runs a query with one integer parameter and groups its rows by candidate: `row` reads one row as (candidate id,
// value). The per-candidate and the whole-run readers below differ only in their WHERE clause.
template<class T, class Row>
std::unordered_map<int64_t, std::vector<T>> by_candidate(sqlite::Database& db, const std::string& sql,
                                                         const std::string& operation, int64_t key, Row row) {
    auto stmt = db.prepare(sql, operation);
    stmt.bind(1, key);
    std::unordered_map<int64_t, std::vector<T>> out;
    while (stmt.step()) {
        std::pair<int64_t, T> r = row(stmt);
        out[r.first].push_back(std::move(r.second));
    }
    return out;
}

template<class T>
std::vector<T> only(std::unordered_map<int64_t, std::vector<T>>&& grouped, int64_t candidate_id) {
    const auto it = grouped.find(candidate_id);
    return it == grouped.end() ? std::vector<T>{} : std::move(it->second);
}

const char* const kForRun = " JOIN candidates c ON c.id = t.candidate_id WHERE c.run_id = ? ORDER BY t.id";
const char* const kForCandidate = " WHERE t.candidate_id = ? ORDER BY t.id";

}  // namespace

std::unordered_map<int64_t, std::vector<StaticReport>> RunStore::staticReports(const char* where, int64_t key) {
    return by_candidate<StaticReport>(m_impl->db,
                                      std::string("SELECT t.candidate_id, t.json FROM static_reports t") + where,
                                      "reading static reports", key,
                                      [this](const sqlite::Statement& stmt) {
        return std::pair{stmt.int64(0), parse_column(stmt.text(1), path(), "static report").get<StaticReport>()};
    });
}

std::unordered_map<int64_t, std::vector<StoredForecast>> RunStore::forecasts(const char* where, int64_t key) {
    return by_candidate<StoredForecast>(m_impl->db,
                                        std::string("SELECT ") + kForecastColumns + " FROM forecasts t" + where,
                                        "reading forecasts", key, [this](const sqlite::Statement& stmt) {
                                            StoredForecast f = forecast_row(stmt, path());
                                            return std::pair{f.candidate_id, std::move(f)};
                                        });
}

std::unordered_map<int64_t, std::vector<StoredMeasurement>> RunStore::measurements(const char* where, int64_t key) {
    return by_candidate<StoredMeasurement>(
        m_impl->db, std::string("SELECT t.id, t.candidate_id, t.json, t.created_at FROM measurements t") + where,
        "reading measurements", key, [this](const sqlite::Statement& stmt) {
            StoredMeasurement m = measurement_row(stmt, path());
            return std::pair{m.candidate_id, std::move(m)};
        });
}

std::vector<StaticReport> RunStore::staticReportsFor(int64_t candidate_id) {
    return only(staticReports(kForCandidate, candidate_id), candidate_id);
}
std::unordered_map<int64_t, std::vector<StaticReport>> RunStore::staticReportsOfRun(int64_t run_id) {
    return staticReports(kForRun, run_id);
}
std::vector<StoredForecast> RunStore::forecastsFor(int64_t candidate_id) {
    return only(forecasts(kForCandidate, candidate_id), candidate_id);
}
std::unordered_map<int64_t, std::vector<StoredForecast>> RunStore::forecastsOfRun(int64_t run_id) {
    return forecasts(kForRun, run_id);
}
std::vector<StoredMeasurement> RunStore::measurementsFor(int64_t candidate_id) {
    return only(measurements(kForCandidate, candidate_id), candidate_id);
}
std::unordered_map<int64_t, std::vector<StoredMeasurement>> RunStore::measurementsOfRun(int64_t run_id) {
    return measurements(kForRun, run_id);
}

std::vector<MeasurementOutcome> RunStore::measurementOutcomes(int64_t run_id) {
    auto stmt = m_impl->db.prepare("SELECT t.id, t.status, t.speedup, t.device_kind FROM measurements t JOIN "
                                   "candidates c ON c.id = t.candidate_id WHERE c.run_id = ? ORDER BY t.id",
                                   "reading measurements");
    stmt.bind(1, run_id);
    std::vector<MeasurementOutcome> out;
    while (stmt.step())
        out.push_back(
            {stmt.int64(0), status_from_string(stmt.text(1)), stmt.isNull(2) ? 0.0 : stmt.real(2), stmt.text(3)});
    return out;
}

int64_t RunStore::forecastCount(int64_t run_id) {
    auto stmt = m_impl->db.prepare(
        "SELECT count(*) FROM forecasts t JOIN candidates c ON c.id = t.candidate_id WHERE c.run_id = ?",
        "counting forecasts");
    stmt.bind(1, run_id);
    return stmt.step() ? stmt.int64(0) : 0;
}

RunStore::ForecastUsage RunStore::forecastUsage(int64_t run_id) {
    auto stmt = m_impl->db.prepare("SELECT coalesce(sum(t.tokens_in + t.tokens_out), 0), coalesce(sum(t.cost_usd), 0) "
                                   "FROM forecasts t JOIN candidates c ON c.id = t.candidate_id WHERE c.run_id = ?",
                                   "summing forecast usage");
    stmt.bind(1, run_id);
    ForecastUsage usage;
    if (stmt.step()) {
        usage.tokens = stmt.int64(0);
        usage.cost_usd = stmt.real(1);
    }
    return usage;
}

std::vector<RunEvent> RunStore::events(int64_t run_id, const std::string& kind) {
    auto stmt = m_impl->db.prepare(std::string("SELECT id, run_id, ts, kind, payload FROM events WHERE run_id = ?") +
                                       (kind.empty() ? "" : " AND kind = ?") + " ORDER BY id",
                                   "reading events");
    stmt.bind(1, run_id);
    if (!kind.empty())
        stmt.bind(2, kind);
    std::vector<RunEvent> out;
    while (stmt.step())
        out.push_back({stmt.int64(0), stmt.int64(1), stmt.text(2), stmt.text(3),
                       parse_column(stmt.text(4), path(), "event payload")});
    return out;
}

std::vector<LlmCall> RunStore::llmCalls(int64_t run_id, int64_t candidate_id) {
    auto stmt = m_impl->db.prepare(
        std::string("SELECT id, run_id, kind, candidate_id, model, prompt, reply, reasoning, tokens_in, tokens_out, "
                    "cost_usd, latency_ms, outcome, error, created_at FROM llm_calls WHERE run_id = ?") +
            (candidate_id > 0 ? " AND candidate_id = ?" : "") + " ORDER BY id",
        "reading calls to the language model");
    stmt.bind(1, run_id);
    if (candidate_id > 0)
        stmt.bind(2, candidate_id);
    std::vector<LlmCall> out;
    while (stmt.step()) {
        LlmCall c;
        c.id = stmt.int64(0);
        c.run_id = stmt.int64(1);
        c.kind = stmt.text(2);
        c.candidate_id = stmt.optionalInt64(3).value_or(0);
        c.model = stmt.text(4);
        c.prompt = stmt.text(5);
        c.reply = stmt.text(6);
        c.reasoning = stmt.text(7);
        c.tokens_in = stmt.int64(8);
        c.tokens_out = stmt.int64(9);
        c.cost_usd = stmt.real(10);
        c.latency_ms = stmt.real(11);
        c.outcome = stmt.text(12);
        c.error = stmt.text(13);
        c.created_at = stmt.text(14);
        out.push_back(std::move(c));
    }
    return out;
}

LlmTotals RunStore::llmTotals(int64_t run_id, const std::string& kind) {
    auto stmt = m_impl->db.prepare(
        "SELECT count(*), coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), coalesce(sum(cost_usd), 0), "
        "coalesce(sum(outcome <> 'ok'), 0), coalesce(sum(outcome = 'truncated'), 0), "
        "coalesce(sum(outcome = 'deferred'), 0), coalesce(sum(outcome = 'duplicate'), 0) FROM llm_calls "
        "WHERE run_id = ?1 AND (?2 = '' OR kind = ?2)",
        "summing calls to the language model");
    stmt.bind(1, run_id);
    stmt.bind(2, kind);
    LlmTotals t;
    if (stmt.step()) {
        t.calls = stmt.int64(0);
        t.tokens_in = stmt.int64(1);
        t.tokens_out = stmt.int64(2);
        t.cost_usd = stmt.real(3);
        t.not_ok = stmt.int64(4);
        t.truncated = stmt.int64(5);
        t.deferred = stmt.int64(6);
        t.duplicate = stmt.int64(7);
    }
    return t;
}

std::vector<ImportedPair> RunStore::importedPairs(int64_t run_id) {
    auto stmt = m_impl->db.prepare(
        "SELECT line, comparison_id, pack, hardware, anchor_code, candidate_code, speedup, true_bin, "
        "source_true_bin, extra FROM imported_pairs WHERE run_id = ? ORDER BY id",
        "reading imported pairs");
    stmt.bind(1, run_id);
    std::vector<ImportedPair> out;
    while (stmt.step()) {
        ImportedPair p;
        p.line = stmt.integer(0);
        p.comparison_id = stmt.text(1);
        p.pack = stmt.text(2);
        p.hardware = stmt.text(3);
        p.anchor_code = stmt.text(4);
        p.candidate_code = stmt.text(5);
        p.speedup = stmt.optionalReal(6);
        p.true_bin = stmt.integer(7);
        if (const auto bin = stmt.optionalInt64(8))
            p.source_true_bin = static_cast<int>(*bin);
        p.extra = parse_column(stmt.text(9), path(), "imported pair");
        out.push_back(std::move(p));
    }
    return out;
}

std::string RunStore::integrityCheck() {
    auto stmt = m_impl->db.prepare("PRAGMA integrity_check", "checking the store's integrity");
    std::string out;
    while (stmt.step()) {
        if (!out.empty())
            out += '\n';
        out += stmt.text(0);
    }
    return out;
}

int64_t RunStore::limitPages(int64_t max_pages) {
    return m_impl->db.queryInt("PRAGMA max_page_count = " + std::to_string(max_pages), "limiting the store's size")
        .value_or(0);
}

}  // namespace kerncast
