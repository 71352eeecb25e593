// SqliteDb: one SQLite connection, a cache of its prepared statements, and the
// translation of SQLite result codes into Statuses. The SQLite store builds on
// it; nothing outside src/store/ should need it.
//
// Errors: every failed SQLite call becomes a Status whose message names the
// operation, the database file, SQLite's own message and result code, and what
// to do: Corruption (a damaged file, or not a database), Unavailable (another
// process holds a lock past the busy timeout), IoError (everything else: disk
// full, permissions, I/O).
//
// Thread-safety: none. A connection is used by one thread at a time (its owner
// holds a lock or owns it outright); it is opened SQLITE_OPEN_NOMUTEX, so that
// SQLite does not lock twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tessera {

class SqliteStatement;

// A Status for a failed SQLite call. `rc` is an (extended) SQLite result code,
// `sqlite_message` SQLite's text for it, `what` the operation ("insert object").
Status SqliteStatus(int rc, std::string_view sqlite_message, std::string_view what, std::string_view path);

class SqliteDb {
 public:
  // Opens (with `create`, creates) the database file at `path`. Waits up to
  // `busy_timeout_ms` for locks held by other connections before failing.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool create, int busy_timeout_ms);

  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs SQL text (one or more statements; rows are ignored). For DDL and
  // one-off statements; hot paths use Statement().
  Status Exec(std::string_view what, const char* sql);

  // Runs a statement that returns one row with one text column, and returns
  // that text ("PRAGMA journal_mode=WAL" answers the mode now in force).
  Result<std::string> QueryText(std::string_view what, const char* sql);

  // The prepared statement for `sql`, prepared on first use and cached, keyed
  // by the address of `sql`. REQUIRES: `sql` is a string constant (it lives as
  // long as this object, and one address always holds the same text).
  // REQUIRES: the previous SqliteStatement for `sql` was destroyed (checked:
  // a second lease is a bug and aborts). `what` names the operation in error
  // messages; REQUIRES: a string constant.
  Result<SqliteStatement> Statement(std::string_view what, const char* sql);

  // True inside a BEGIN ... COMMIT/ROLLBACK.
  bool InTransaction() const;

  // Rolls back the open transaction, if any. Used on error paths, so it
  // returns nothing: when even that fails, SQLite has already rolled back or
  // the connection is unusable, and the first error is the one to report.
  void RollbackQuietly();

  // The Status for a call on this connection that failed with `rc`.
  Status Error(int rc, std::string_view what) const;

  const std::string& path() const { return path_; }

  // The SQLite handle, for calls this class does not wrap (the WAL hook,
  // checkpoints). REQUIRES: used under the same rules as this object.
  sqlite3* handle() const { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool leased = false;  // a SqliteStatement for it is alive
  };

  sqlite3* db_;
  std::string path_;
  std::unordered_map<const char*, Cached> statements_;  // nodes are stable: leases point into them
};

// A cached prepared statement, borrowed for one execution: bind, step, read
// columns. Destroying it resets the statement and clears its bindings, which
// also ends the statement's read of the database.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  ~SqliteStatement();

  // Parameters are numbered from 1. A text is not copied. REQUIRES: it lives
  // until this statement is destroyed.
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, std::string_view text);

  // Steps once: true when a row is ready, false when the statement is done.
  Result<bool> Step();
  // Steps once and returns SQLite's result code as is (SQLITE_ROW,
  // SQLITE_DONE or an error), for callers that handle particular codes
  // (a primary-key violation). Error() turns a failed code into a Status.
  int StepCode();
  // Steps to the end, ignoring rows.
  Status Run();
  Status Error(int rc) const;

  // Columns of the current row, numbered from 0. A text view is valid until
  // the next Step or the statement's destruction.
  int64_t ColumnInt(int column) const;
  std::string_view ColumnText(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  friend class SqliteDb;
  SqliteStatement(const SqliteDb* db, sqlite3_stmt* stmt, bool* leased, std::string_view what)
      : db_(db), stmt_(stmt), leased_(leased), what_(what) {}

  const SqliteDb* db_;
  sqlite3_stmt* stmt_;  // null once moved from
  bool* leased_;        // the cache entry's flag, cleared on destruction
  std::string_view what_;  // a string constant naming the operation, for errors
  int bind_error_ = 0;  // the first failed bind's code, reported by the next step
};

}  // namespace tessera
