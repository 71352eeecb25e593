// The SQLite store's schema and its versioned migrations.
//
// The schema version lives in the meta table (key 'schema_version'). Opening a
// store brings its file to kSqliteSchemaVersion by applying, in order, every
// migration step above the file's version, all in one transaction: a failed
// upgrade leaves the file as it was. A file with a newer version than this
// code knows is refused: an older build must not write a layout it does not
// understand.
//
// Schema (version 3):
//   objects(kind, ns, name, uid, revision)         primary key (kind, ns, name), WITHOUT
//                                                  ROWID; the document is the event at
//                                                  `revision`
//   events(revision primary key, type, kind, ns, name, data)
//                                                  type: ADDED | MODIFIED | DELETED;
//                                                  data: the object as of the event, as
//                                                  compact JSON
//   meta(key primary key, value)                   'schema_version', 'revision' (the
//                                                  newest revision), 'compacted_revision'
//                                                  (events up to it were dropped, except
//                                                  each live object's newest)
//
// To change the schema: append a step to kMigrations in sqlite_schema.cc and
// bump kSqliteSchemaVersion; never edit a released step.
#pragma once

#include "common/status.h"
#include "store/sqlite_db.h"

namespace tessera {

inline constexpr int kSqliteSchemaVersion = 3;

// Brings `db` to kSqliteSchemaVersion (see above). Errors: InvalidArgument for
// a file whose schema is newer than this code's, or that holds tables but is
// not a Tessera store; Corruption for a meta table without a valid version;
// the SQLite error of a failed step.
// REQUIRES: `db` is not inside a transaction.
Status MigrateSqliteSchema(SqliteDb& db);

}  // namespace tessera
