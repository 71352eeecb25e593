// The embedded Store (DESIGN.md section 7): one SQLite file in WAL mode.
//
// Layout: objects, events and meta tables (sqlite_schema.h), migrated to the
// current schema version at open. Each write (Create, Update, Delete, and each
// Apply batch as a whole) is one transaction that reads the newest revision,
// appends one event per write (holding the object's document) and points the
// object's row at it, and stores the new revision: a write happens whole or
// not at all. A document is stored once: the event of an object's newest
// revision is its stored state.
//
// Durability, once a write call has returned:
//   - Sync::kNormal (default; PRAGMA synchronous=NORMAL): the write survives a
//     crash or kill -9 of the process (its WAL frames are in the OS page cache
//     before the call returns). A power loss or OS crash may lose the writes
//     committed since the last checkpoint (the WAL is fsynced only then); the
//     file stays consistent (never a partial write).
//   - Sync::kFull (PRAGMA synchronous=FULL): also survives power loss or OS
//     crash. Every commit waits for an fsync of the WAL (milliseconds on many
//     disks); group commit (below) shares one fsync among concurrent writers.
//
// Event window: the event log keeps at least the newest `event_window` events
// (default 100,000). After a write, once the log holds event_window +
// compact_every events, it is compacted back to event_window in that same
// transaction; so at steady state compaction runs once every `compact_every`
// (default 10,000) writes. Compaction keeps the event of each live object's
// newest revision (its document), dropped once the object changes again. EventsSince(rev) for a revision before the window
// fails with Gone: the client must list again and watch from the list's revision.
// Compact() drops events on demand.
//
// Concurrency: one writer connection, with group commit. A writing thread
// queues its write (Create, Update, Delete, Apply wait for it; CreateAsync
// does not); the store's writer thread takes the queued writes (up to 256)
// and commits them in one transaction, while newer writes queue for the next
// transaction; when one of them fails, the transaction is rolled back and run
// again with each write in a savepoint, so that a failing write undoes only
// itself (savepoints cost a copy of the pages each write touches, so they are
// not used unless needed); then it wakes the waiting callers and calls back the
// asynchronous ones. Under concurrent load this shares a commit's cost (locks,
// WAL frames, the fsync under kFull) among many writes; a lone writer pays it
// alone (plus one hand-over to the writer thread). Reads use a pool of reader
// connections, so they neither block nor are blocked by writes; List and
// EventsSince read one consistent snapshot. Thread-safe (Store's contract).
//
// One process should own a store file: another process may read it (the
// sqlite3 shell), and may even write it (writes serialise on the file lock),
// but this process's automatic compaction counts only what it knows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "store/store.h"

namespace tessera {

struct SqliteStoreOptions {
  enum class Sync { kNormal, kFull };
  Sync sync = Sync::kNormal;  // see "Durability" above

  int64_t event_window = 100'000;  // events kept by automatic compaction (>= 0)
  int64_t compact_every = 10'000;  // writes between compactions; 0 turns it off (>= 0)

  // How long an operation waits for a lock held by another process before it
  // fails with Unavailable.
  int busy_timeout_ms = 5'000;
  // Reader connections kept open while idle (more are opened under load).
  size_t max_idle_readers = 8;
  // Frames (pages of 4 KiB) written to the WAL since the last checkpoint at
  // which the next one copies them into the database file, with two fsyncs.
  // It runs on the store's own checkpoint thread and connection (PASSIVE),
  // so writes never wait for it; only 16 times this many uncopied frames
  // make a commit checkpoint itself. Once the WAL holds 4 times this many
  // frames, the checkpoint thread restarts it from its start when writes
  // pause (for 20 ms); under writes that do not pause, from 12 times this
  // many (a restart stops writes for 10-15 ms on the development VM).
  // SQLite's default; 4,000 and 10,000 measured no faster (store_bench).
  int checkpoint_frames = 1'000;
};

// Opens the store in the SQLite file at `path`, creating the file if missing
// and bringing its schema to the current version. The directory must exist.
// Errors: InvalidArgument for a bad path or options, for a file with a newer
// schema than this build knows, or for a SQLite file that is not a Tessera
// store; Corruption for a damaged file; IoError when the file cannot be opened
// or written; Unavailable when another process holds it locked.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, SqliteStoreOptions options = {});

}  // namespace tessera
