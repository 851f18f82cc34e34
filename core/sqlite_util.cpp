#include "core/sqlite_util.h"

#include "core/error.h"

#include <sqlite3.h>

#include <utility>

namespace kerncast::sqlite {

void raise(sqlite3* db, int rc, const std::string& path, const std::string& operation) {
    // sqlite3_errmsg describes the most recent call on the connection; the caller raises right after it.
    const std::string said = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const SourceLocation where{path, 0};
    switch (rc & 0xff) {
    case SQLITE_FULL:
        throw Error(where, "disk full while " + operation + " (SQLite: " + said +
                               "). Nothing of this write was kept; rows written before are intact. Free disk space "
                               "and try again.");
    case SQLITE_NOTADB:
        throw Error(where, "not a Kerncast run store: the file is not an SQLite database (while " + operation + ")");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        throw Error(where, operation + " failed: the store is locked by another process (SQLite: " + said + ")");
    case SQLITE_CANTOPEN:
        throw Error(where, "cannot open the run store (SQLite: " + said +
                               "); check that the folder exists and is "
                               "writable");
    case SQLITE_READONLY:
        throw Error(where, operation + " failed: the store is read-only (SQLite: " + said + ")");
    default:
        throw Error(where, operation + " failed: " + said + " (SQLite error " + std::to_string(rc) + ")");
    }
}

Database::Database(const std::string& path, int flags, const std::string& uri) : m_path(path) {
    const int rc = sqlite3_open_v2(uri.empty() ? path.c_str() : uri.c_str(), &m_db, flags, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3* db = std::exchange(m_db, nullptr);
        try {
            sqlite::raise(db, rc, path, "opening");
        } catch (...) {
            sqlite3_close(db);
            throw;
        }
    }
    sqlite3_extended_result_codes(m_db, 1);
}

Database::~Database() {
    if (m_db)
        sqlite3_close_v2(m_db);
}

Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        if (m_db)
            sqlite3_close_v2(m_db);
        m_db = std::exchange(other.m_db, nullptr);
        m_path = std::move(other.m_path);
    }
    return *this;
}

void Database::exec(const std::string& sql, const std::string& operation) {
    const int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
        raise(rc, operation);
}

Statement Database::prepare(std::string_view sql, const std::string& operation) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        raise(rc, operation);
    }
    return Statement(m_db, stmt, m_path, operation);
}

std::optional<int64_t> Database::queryInt(const std::string& sql, const std::string& operation) {
    auto stmt = prepare(sql, operation);
    if (!stmt.step() || stmt.isNull(0))
        return std::nullopt;
    return stmt.int64(0);
}

std::optional<std::string> Database::queryText(const std::string& sql, const std::string& operation) {
    auto stmt = prepare(sql, operation);
    if (!stmt.step() || stmt.isNull(0))
        return std::nullopt;
    return stmt.text(0);
}

int64_t Database::lastInsertRowId() const { return sqlite3_last_insert_rowid(m_db); }

bool Database::inTransaction() const { return m_db && sqlite3_get_autocommit(m_db) == 0; }

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string path, std::string operation)
    : m_db(db), m_stmt(stmt), m_path(std::move(path)), m_operation(std::move(operation)) {}

Statement::~Statement() {
    if (m_stmt)
        sqlite3_finalize(m_stmt);
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)), m_path(std::move(other.m_path)),
      m_operation(std::move(other.m_operation)) {}

void Statement::fail(int rc) const { sqlite::raise(m_db, rc, m_path, m_operation); }

Statement& Statement::bind(int index, int64_t value) {
    if (const int rc = sqlite3_bind_int64(m_stmt, index, value); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    if (const int rc = sqlite3_bind_double(m_stmt, index, value); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
    if (const int rc = sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bindNull(int index) {
    if (const int rc = sqlite3_bind_null(m_stmt, index); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    // Read SQLite's message first, then leave the statement reusable (and release its locks).
    try {
        fail(rc);
    } catch (...) {
        sqlite3_reset(m_stmt);
        throw;
    }
}

void Statement::run() {
    while (step()) {}
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

bool Statement::isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

int64_t Statement::int64(int column) const { return sqlite3_column_int64(m_stmt, column); }

double Statement::real(int column) const { return sqlite3_column_double(m_stmt, column); }

std::string Statement::text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    const int size = sqlite3_column_bytes(m_stmt, column);
    return data ? std::string(data, static_cast<size_t>(size)) : std::string();
}

std::optional<double> Statement::optionalReal(int column) const {
    if (isNull(column))
        return std::nullopt;
    return real(column);
}

std::optional<int64_t> Statement::optionalInt64(int column) const {
    if (isNull(column))
        return std::nullopt;
    return int64(column);
}

}  // namespace kerncast::sqlite
