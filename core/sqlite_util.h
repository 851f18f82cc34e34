#pragma once
// Thin RAII wrappers over the sqlite3 C API. Every failure becomes a kerncast::Error naming the database file,
// what was being done and what SQLite said, so a person reading it knows which file to look at.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kerncast::sqlite {

// Throws kerncast::Error for result code `rc` (anything but SQLITE_OK/ROW/DONE). SQLITE_FULL gets a message
// that says "disk full" in plain words, since that is the one failure a user can fix by themselves.
[[noreturn]] void raise(sqlite3* db, int rc, const std::string& path, const std::string& operation);

class Statement;

// One connection. Move-only; closes on destruction.
class Database {
public:
    Database() = default;
    // Opens (flags are sqlite3_open_v2 flags). Throws kerncast::Error. With a `uri` (and SQLITE_OPEN_URI in flags)
    // that is what is opened; `path` is still what errors name.
    Database(const std::string& path, int flags, const std::string& uri = {});
    ~Database();
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    sqlite3* handle() const { return m_db; }
    const std::string& path() const { return m_path; }

    // Runs one or more statements without results. `operation` is what the caller was doing, for the error.
    void exec(const std::string& sql, const std::string& operation);
    Statement prepare(std::string_view sql, const std::string& operation);
    // First column of the first row as an integer (e.g. PRAGMA user_version); nullopt when there is no row.
    std::optional<int64_t> queryInt(const std::string& sql, const std::string& operation);
    std::optional<std::string> queryText(const std::string& sql, const std::string& operation);
    int64_t lastInsertRowId() const;
    bool inTransaction() const;

    [[noreturn]] void raise(int rc, const std::string& operation) const { sqlite::raise(m_db, rc, m_path, operation); }

private:
    sqlite3* m_db = nullptr;
    std::string m_path;
};

// A prepared statement. Bind indices are 1-based, like SQLite's; column indices 0-based.
class Statement {
public:
    Statement(sqlite3* db, sqlite3_stmt* stmt, std::string path, std::string operation);
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, const std::string& value);
    Statement& bind(int index, const char* value) { return bind(index, std::string(value)); }
    Statement& bindNull(int index);
    // Binds NULL for nullopt.
    template<typename T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bindNull(index);
    }
    // Binds NULL for 0: foreign keys to "no row" (e.g. a root candidate's parent).
    Statement& bindIdOrNull(int index, int64_t id) { return id > 0 ? bind(index, id) : bindNull(index); }

    // Advances; true while a row is available. Throws kerncast::Error on failure.
    bool step();
    // Steps a statement that returns no rows.
    void run();
    void reset();

    bool isNull(int column) const;
    int64_t int64(int column) const;
    int integer(int column) const { return static_cast<int>(int64(column)); }
    double real(int column) const;
    std::string text(int column) const;
    std::optional<double> optionalReal(int column) const;
    std::optional<int64_t> optionalInt64(int column) const;

private:
    [[noreturn]] void fail(int rc) const;

    sqlite3* m_db;
    sqlite3_stmt* m_stmt;
    std::string m_path;
    std::string m_operation;
};

}  // namespace kerncast::sqlite
