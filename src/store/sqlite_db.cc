#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "common/check.h"

namespace tessera {

Status SqliteStatus(int rc, std::string_view sqlite_message, std::string_view what, std::string_view path) {
  std::string detail = fmt::format("{} on {}: {} (SQLite result code {})", what, path, sqlite_message, rc);
  switch (rc & 0xff) {  // the primary result code
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(
          detail + "; the file is damaged or is not a Tessera store: restore it from a backup, or use another path");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(detail + "; another process holds the database: stop it, or retry");
    case SQLITE_FULL:
      return Status::IoError(detail + "; the disk is full: free some space and retry");
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return Status::IoError(detail + "; check that the directory exists and that this user may write the file");
    default:
      return Status::IoError(std::move(detail));
  }
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool create, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    // Even a failed open returns a handle (unless out of memory) that holds the message.
    Status status = SqliteStatus(rc, db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc), "open", path);
    sqlite3_close(db);
    return Err(std::move(status));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, cached] : statements_) sqlite3_finalize(cached.stmt);
  // With every statement finalized, close cannot fail with SQLITE_BUSY; the
  // last connection to a WAL database checkpoints it and removes the WAL.
  sqlite3_close(db_);
}

Status SqliteDb::Exec(std::string_view what, const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = SqliteStatus(rc, message != nullptr ? message : sqlite3_errstr(rc), what, path_);
  sqlite3_free(message);
  return status;
}

Result<std::string> SqliteDb::QueryText(std::string_view what, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return Err(Error(rc, what));
  rc = sqlite3_step(stmt);
  std::string text;
  if (rc == SQLITE_ROW) {
    const unsigned char* value = sqlite3_column_text(stmt, 0);
    if (value != nullptr) text = reinterpret_cast<const char*>(value);
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  Status status = rc == SQLITE_OK ? Status::Ok() : Error(rc, what);
  sqlite3_finalize(stmt);
  RETURN_IF_ERROR(status);
  return text;
}

Result<SqliteStatement> SqliteDb::Statement(std::string_view what, const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Err(Error(rc, what));
    it = statements_.emplace(sql, Cached{stmt, false}).first;
  }
  Cached& cached = it->second;
  // Binding a statement that another lease is stepping would corrupt both.
  TESSERA_CHECK(!cached.leased, "statement for '{}' borrowed twice: {}", what, sql);
  cached.leased = true;
  return SqliteStatement(this, cached.stmt, &cached.leased, what);
}

bool SqliteDb::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

void SqliteDb::RollbackQuietly() {
  if (InTransaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status SqliteDb::Error(int rc, std::string_view what) const {
  // sqlite3_errmsg describes the connection's most recent failure; when `rc`
  // came from elsewhere (a bind), fall back to the generic text for the code.
  int last = sqlite3_extended_errcode(db_);
  return SqliteStatus(rc, last == rc ? sqlite3_errmsg(db_) : sqlite3_errstr(rc), what, path_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), leased_(other.leased_), what_(other.what_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *leased_ = false;
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::string_view text) {
  // SQLITE_STATIC: SQLite reads the caller's bytes in place (no copy); the
  // caller keeps them alive until this statement is reset.
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

int SqliteStatement::StepCode() {
  if (bind_error_ != SQLITE_OK) return bind_error_;
  return sqlite3_step(stmt_);
}

Result<bool> SqliteStatement::Step() {
  int rc = StepCode();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Err(Error(rc));
}

Status SqliteStatement::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

Status SqliteStatement::Error(int rc) const { return db_->Error(rc, what_); }

int64_t SqliteStatement::ColumnInt(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string_view SqliteStatement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  // sqlite3_column_bytes after sqlite3_column_text: the length of that text.
  return {reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

bool SqliteStatement::ColumnIsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

}  // namespace tessera
