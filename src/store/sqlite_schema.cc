#include "store/sqlite_schema.h"

#include <fmt/format.h>

#include <span>

namespace tessera {
namespace {

struct Migration {
  int version;          // the schema version after this step
  const char* summary;  // for error messages
  const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, "create objects, events and meta",
     R"sql(
       CREATE TABLE objects (
         kind TEXT NOT NULL,
         ns TEXT NOT NULL,
         name TEXT NOT NULL,
         uid TEXT NOT NULL,
         revision INTEGER NOT NULL,
         data TEXT NOT NULL,
         PRIMARY KEY (kind, ns, name));
       CREATE TABLE events (
         revision INTEGER PRIMARY KEY,
         type TEXT NOT NULL,
         kind TEXT NOT NULL,
         ns TEXT NOT NULL,
         name TEXT NOT NULL,
         data TEXT NOT NULL);
       CREATE TABLE meta (key TEXT PRIMARY KEY, value);
       INSERT INTO meta (key, value) VALUES ('revision', 0);
     )sql"},
    // Version 1 never dropped events, so they started at revision 1. From
    // version 2 on, the compaction watermark records where they start, also
    // when compaction left no event at all.
    {2, "record the event-log compaction watermark",
     R"sql(
       INSERT INTO meta (key, value) VALUES ('compacted_revision',
         COALESCE((SELECT MIN(revision) - 1 FROM events),
                  (SELECT value FROM meta WHERE key = 'revision')));
     )sql"},
    // An object's document is stored once, in the event of its newest
    // revision, instead of in both tables: half the bytes per write. Events
    // of live objects outlive compaction (below the watermark, only the
    // object reads them). The compacted ones are put back from objects.data.
    // Without data, objects rows are small: a WITHOUT ROWID table is one
    // B-tree instead of a table plus its primary-key index.
    {3, "store each object's document once, in the event log",
     R"sql(
       INSERT OR IGNORE INTO events (revision, type, kind, ns, name, data)
         SELECT revision, 'MODIFIED', kind, ns, name, data FROM objects;
       CREATE TABLE objects_v3 (
         kind TEXT NOT NULL,
         ns TEXT NOT NULL,
         name TEXT NOT NULL,
         uid TEXT NOT NULL,
         revision INTEGER NOT NULL,
         PRIMARY KEY (kind, ns, name)) WITHOUT ROWID;
       INSERT INTO objects_v3 (kind, ns, name, uid, revision)
         SELECT kind, ns, name, uid, revision FROM objects;
       DROP TABLE objects;
       ALTER TABLE objects_v3 RENAME TO objects;
     )sql"},
};

static_assert(std::size(kMigrations) == kSqliteSchemaVersion, "one migration step per schema version");

constexpr bool StepsAreNumberedInOrder() {
  for (size_t i = 0; i < std::size(kMigrations); ++i) {
    if (kMigrations[i].version != static_cast<int>(i) + 1) return false;
  }
  return true;
}
static_assert(StepsAreNumberedInOrder(), "kMigrations[i] must bring the schema to version i + 1");

constexpr const char* kCountTablesSql =
    "SELECT COUNT(*), COALESCE(SUM(name = 'meta'), 0) FROM sqlite_master "
    "WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
constexpr const char* kSelectVersionSql = "SELECT value, typeof(value) FROM meta WHERE key = 'schema_version'";
constexpr const char* kSetVersionSql =
    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";

// The file's schema version: 0 for an empty database.
Result<int> ReadSchemaVersion(SqliteDb& db) {
  int64_t tables = 0;
  bool has_meta = false;
  {
    ASSIGN_OR_RETURN(SqliteStatement count, db.Statement("read the schema", kCountTablesSql));
    ASSIGN_OR_RETURN(bool row, count.Step());
    if (row) {
      tables = count.ColumnInt(0);
      has_meta = count.ColumnInt(1) > 0;
    }
  }
  if (tables == 0) return 0;
  if (!has_meta) {
    return Err(Status::InvalidArgument(fmt::format(
        "{} is a SQLite database but not a Tessera store (it has tables but no meta table): use another path",
        db.path())));
  }
  ASSIGN_OR_RETURN(SqliteStatement select, db.Statement("read the schema version", kSelectVersionSql));
  ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row || select.ColumnText(1) != "integer" || select.ColumnInt(0) < 1) {
    return Err(Status::Corruption(fmt::format(
        "{} has a meta table without a valid schema_version: the file is damaged; restore it from a backup",
        db.path())));
  }
  int64_t version = select.ColumnInt(0);
  if (version > kSqliteSchemaVersion) {
    return Err(Status::InvalidArgument(fmt::format(
        "{} has store schema version {}, newer than this build of Tessera understands (up to {}): "
        "run a newer Tessera, or restore a backup taken before the upgrade",
        db.path(), version, kSqliteSchemaVersion)));
  }
  return static_cast<int>(version);
}

Status MigrateInTransaction(SqliteDb& db) {
  ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  for (const Migration& step : std::span(kMigrations).subspan(version)) {
    RETURN_IF_ERROR(db.Exec(fmt::format("schema migration to version {} ({})", step.version, step.summary), step.sql));
    ASSIGN_OR_RETURN(SqliteStatement set, db.Statement("record the schema version", kSetVersionSql));
    RETURN_IF_ERROR(set.Bind(1, int64_t{step.version}).Run());
  }
  return Status::Ok();
}

}  // namespace

Status MigrateSqliteSchema(SqliteDb& db) {
  // IMMEDIATE: take the write lock before reading the version, so that two
  // processes opening a new file do not both create the tables.
  RETURN_IF_ERROR(db.Exec("begin the schema migration", "BEGIN IMMEDIATE"));
  Status status = MigrateInTransaction(db);
  if (status.ok()) status = db.Exec("commit the schema migration", "COMMIT");
  if (!status.ok()) db.RollbackQuietly();
  return status;
}

}  // namespace tessera
