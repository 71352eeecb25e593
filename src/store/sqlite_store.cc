#include "store/sqlite_store.h"

#include <pthread.h>
#include <sqlite3.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "store/document.h"
#include "store/rendered_create.h"
#include "store/sqlite_db.h"
#include "store/sqlite_schema.h"
#include "common/uuid.h"

namespace tessera {
namespace {

using nlohmann::json;

// --- SQL. Statements are cached per connection, keyed by these constants. ---

constexpr const char* kBeginWriteSql = "BEGIN IMMEDIATE";
constexpr const char* kBeginReadSql = "BEGIN";
constexpr const char* kCommitSql = "COMMIT";
constexpr const char* kSavepointSql = "SAVEPOINT one_write";
constexpr const char* kReleaseSql = "RELEASE one_write";
constexpr const char* kRollbackToSql = "ROLLBACK TO one_write";
constexpr const char* kSelectMetaSql = "SELECT value FROM meta WHERE key = ?1";
constexpr const char* kUpdateMetaSql = "UPDATE meta SET value = ?2 WHERE key = ?1";
// An object's document is the event of its revision (sqlite_schema.h).
// CROSS JOIN keeps objects the outer loop: one primary-key lookup in each.
constexpr const char* kSelectObjectSql =
    "SELECT o.uid, o.revision, e.data FROM objects AS o CROSS JOIN events AS e ON e.revision = o.revision "
    "WHERE o.kind = ?1 AND o.ns = ?2 AND o.name = ?3";
// An update needs only these: reading the data too would read every updated
// document's text (and its overflow pages) for nothing.
constexpr const char* kSelectObjectVersionSql = "SELECT uid, revision FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3";
constexpr const char* kObjectExistsSql = "SELECT 1 FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3";
constexpr const char* kInsertObjectSql =
    "INSERT INTO objects (kind, ns, name, uid, revision) VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr const char* kUpdateObjectSql =
    "UPDATE objects SET revision = ?4 WHERE kind = ?1 AND ns = ?2 AND name = ?3";
constexpr const char* kDeleteObjectSql = "DELETE FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3";
constexpr const char* kInsertEventSql =
    "INSERT INTO events (revision, type, kind, ns, name, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* kListKindSql =
    "SELECT o.ns, o.name, o.revision, e.data FROM objects AS o CROSS JOIN events AS e ON e.revision = o.revision "
    "WHERE o.kind = ?1 ORDER BY o.ns, o.name";
constexpr const char* kListKindNamespaceSql =
    "SELECT o.ns, o.name, o.revision, e.data FROM objects AS o CROSS JOIN events AS e ON e.revision = o.revision "
    "WHERE o.kind = ?1 AND o.ns = ?2 ORDER BY o.name";
constexpr const char* kSelectEventsSql =
    "SELECT revision, type, kind, ns, name, data FROM events WHERE revision > ?1 ORDER BY revision LIMIT ?2";
// Compaction drops the events in (watermark, cut] except those that hold a
// live object's document; those go when the object changes again
// (kDeleteEventSql), so each compaction looks only at the events it passes.
constexpr const char* kDeleteEventsSql =
    "DELETE FROM events WHERE revision > ?1 AND revision <= ?2 AND NOT EXISTS ("
    "SELECT 1 FROM objects AS o WHERE o.kind = events.kind AND o.ns = events.ns AND o.name = events.name "
    "AND o.revision = events.revision)";
constexpr const char* kDeleteEventSql = "DELETE FROM events WHERE revision = ?1";

constexpr const char* kRevisionKey = "revision";
constexpr const char* kCompactedKey = "compacted_revision";

// Restarting the WAL stops writes for 10-15 ms here: the RESTART checkpoint
// holds the write lock while it copies the last frames and syncs the WAL and
// the database file, and the next commit syncs the new WAL header. So the
// checkpoint thread restarts the WAL once it holds kRestartWalAt times
// checkpoint_frames (16 MiB at the default) and writes have paused for
// kQuietForRestart. Under writes that never pause it tries at each checkpoint
// from kForceRestartAt times (48 MiB: under the 64 MiB journal_size_limit, so
// the WAL file is reused, not cut back), and from kWaitToRestartAt times
// (256 MiB) it waits for the reads in its way.
constexpr int kRestartWalAt = 4;
constexpr int kForceRestartAt = 12;
constexpr int kWaitToRestartAt = 64;
constexpr auto kQuietForRestart = std::chrono::milliseconds(20);
// Past this many times checkpoint_frames not yet copied (the checkpoint thread
// cannot keep up, or a read holds it back), the writer's commits checkpoint
// themselves, as SQLite's own hook would.
constexpr int kWriterCheckpointsAt = 16;

// --- Documents. ---

Result<json> Parse(std::string_view text, std::string_view what, const std::string& path) {
  json object = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    return Err(Status::Corruption(fmt::format(
        "{} in {} is not valid JSON: the file is damaged; restore it from a backup", what, path)));
  }
  return object;
}

// Ends a read transaction. Reads parse their documents after it: while a read
// lasts, a checkpoint cannot copy the WAL past what it reads, nor restart it.
Status EndRead(SqliteDb& db) {
  ASSIGN_OR_RETURN(SqliteStatement commit, db.Statement("end a read", kCommitSql));
  return commit.Run();
}

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
  }
  return "UNKNOWN";
}

Result<EventType> ParseEventType(std::string_view name, const std::string& path) {
  if (name == "ADDED") return EventType::kAdded;
  if (name == "MODIFIED") return EventType::kModified;
  if (name == "DELETED") return EventType::kDeleted;
  return Err(Status::Corruption(fmt::format(
      "{} holds an event of unknown type '{}': the file is damaged or was written by a newer Tessera", path, name)));
}

// --- The store. ---

class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<SqliteDb> writer, SqliteStoreOptions options)
      : options_(options), path_(writer->path()), writer_(std::move(writer)) {}

  // Reads the revision and the compaction watermark into the caches.
  Status Init();

  ~SqliteStore() override;

  Result<StoredObject> Create(const ObjectKey& key, json object) override;
  void CreateAsync(const ObjectKey& key, json object, std::optional<ObjectKey> must_exist,
                   CreateDone done) override;
  Result<StoredObject> Get(const ObjectKey& key) override;
  Result<ListResult> List(std::string_view kind, std::string_view ns) override;
  Result<TextListResult> ListTexts(std::string_view kind, std::string_view ns) override;
  Result<StoredObject> Update(const ObjectKey& key, json object, int64_t expected_revision) override;
  Result<StoredObject> Delete(const ObjectKey& key, int64_t expected_revision) override;
  Result<std::vector<StoredObject>> Apply(std::vector<WriteOp> ops) override;
  std::vector<UnitResult> ApplyUnits(std::vector<std::vector<WriteOp>> units) override;
  Result<std::vector<StoreEvent>> EventsSince(int64_t revision, size_t limit) override;
  Result<EventPage> FilteredEventsSince(int64_t revision, size_t limit, const EventFilter& filter) override;
  int64_t Revision() override;
  Status Compact(int64_t keep_events) override;

 private:
  // One write transaction in progress (write_mu_ held).
  struct WriteTxn {
    int64_t revision = 0;   // the newest revision, including this transaction's writes
    int64_t compacted = 0;  // the compaction watermark to record, if raised
  };
  using WriteBody = std::function<Status(WriteTxn&)>;

  // A write waiting for, or taking part in, a group commit.
  struct PendingWrite {
    WriteBody body;
    Status status;  // set by the writer thread once the group committed or failed
    // A synchronous write (Write): its caller waits on `waiter` for `done`
    // (guarded by queue_mu_).
    std::condition_variable* waiter = nullptr;
    bool done = false;
    // An asynchronous create (CreateAsync): what to create, its revision once
    // written, and whom to tell; the writer thread owns it once queued and
    // deletes it after `on_created`.
    ObjectKey key;
    std::optional<RenderedCreate> rendered;
    std::optional<ObjectKey> must_exist;
    int64_t revision = 0;
    std::string created_text;
    CreateDone on_created;
  };

  // A reader connection borrowed from the pool; returned when destroyed.
  class Reader {
   public:
    Reader(SqliteStore* store, std::unique_ptr<SqliteDb> db) : store_(store), db_(std::move(db)) {}
    Reader(Reader&&) = default;
    ~Reader() {
      if (db_ != nullptr) store_->ReturnReader(std::move(db_));
    }
    SqliteDb& db() { return *db_; }

   private:
    SqliteStore* store_;
    std::unique_ptr<SqliteDb> db_;
  };

  // Runs `body` in a write transaction, possibly together with other threads'
  // writes (group commit), and returns once that transaction committed or
  // rolled back. `body` returns an error to undo everything it wrote; it must
  // raise txn.revision by one per write it made, and must not throw (it runs
  // on the writer thread). It may run twice (CommitGroup): what it keeps
  // outside the transaction must be such that a second run replaces it. Safe
  // to call from any thread.
  Status Write(const WriteBody& body);
  // Queues `write` for the writer thread. REQUIRES: queue_mu_ held.
  void Enqueue(PendingWrite* write);
  // The writer thread: commits what is queued, up to kMaxGroup writes per
  // transaction, until stopped with an empty queue.
  void WriterLoop();
  // Commits `group` in one transaction and sets each write's status. The
  // writes run one after another; when one fails, the transaction is rolled
  // back and run again with each write in a savepoint, so that only those
  // that fail are undone. (A savepoint per write from the start would make
  // SQLite copy every page each write touches into its statement journal.)
  // REQUIRES: write_mu_ held.
  void CommitGroup(const std::vector<PendingWrite*>& group);
  // One try of CommitGroup; with `savepoints`, each write in its own.
  // `failed_alone` is set when a write failed and the others could be retried.
  Status TryGroup(const std::vector<PendingWrite*>& group, bool savepoints, WriteTxn& txn, bool& failed_alone);
  // Runs one write of a group inside a savepoint, so that its failure (its
  // status) undoes only its own changes and consumes no revision. Returns an
  // error only when the whole transaction is lost (SQLite rolled it back, or
  // the savepoint itself failed).
  Status RunInSavepoint(PendingWrite& write, WriteTxn& txn);
  // Apply's writes, in `txn`. The ops' objects stay in `ops` (a failed batch
  // can be tried again): the results of creates and updates lack theirs until
  // TakeObjects moves them in, once the writes are committed.
  Result<std::vector<StoredObject>> ApplyIn(WriteTxn& txn, std::vector<WriteOp>& ops);
  static void TakeObjects(std::vector<WriteOp>& ops, std::vector<StoredObject>& results);

  // Create and update write `object` as given, with its metadata.uid and
  // resourceVersion set in place, and return the new revision; a caller
  // that may try a failed write again still has the object.
  Result<int64_t> CreateIn(WriteTxn& txn, const ObjectKey& key, json& object);
  // CreateAsync's write: `rendered` with the next revision; `text` receives
  // it. `must_exist`: fail with NotFound unless that object exists.
  Result<int64_t> CreateRenderedIn(WriteTxn& txn, const ObjectKey& key, const RenderedCreate& rendered,
                                   const ObjectKey* must_exist, std::string& text);
  // The object's row and its event, at the transaction's next revision.
  Status InsertCreated(WriteTxn& txn, const ObjectKey& key, const std::string& uid, int64_t revision,
                       std::string_view text);
  Result<int64_t> UpdateIn(WriteTxn& txn, const ObjectKey& key, json& object, int64_t expected_revision);
  Result<StoredObject> DeleteIn(WriteTxn& txn, const ObjectKey& key, int64_t expected_revision);
  Status AppendEvent(int64_t revision, EventType type, const ObjectKey& key, std::string_view data);
  Status CompactIn(WriteTxn& txn, int64_t keep_events);
  // An object's previous event, once its object has a newer one (or is
  // deleted): dropped here if compaction has already passed it.
  Status DropSupersededEvent(const WriteTxn& txn, int64_t old_revision);

  Result<int64_t> ReadMeta(SqliteDb& db, const char* key);
  // EventsSince and FilteredEventsSince: with `filter`, events it refuses are
  // looked at (counted in the page) but not parsed or returned.
  Result<EventPage> ReadEvents(int64_t revision, size_t limit, const EventFilter* filter);
  // One read of a kind's rows: their documents into `texts` and, unless null,
  // their keys and revisions into `items`; returns the store's revision.
  Result<int64_t> ReadList(std::string_view kind, std::string_view ns, std::vector<StoredObject>* items,
                           std::vector<std::string>& texts);

  Result<Reader> BorrowReader();
  void ReturnReader(std::unique_ptr<SqliteDb> db);

  const SqliteStoreOptions options_;
  const std::string path_;

  // Group commit: writers queue here; the writer thread takes up to kMaxGroup
  // queued writes at a time and commits them in one transaction, while new
  // ones queue for the next; then it wakes the synchronous ones and calls back
  // the asynchronous ones.
  static constexpr size_t kMaxGroup = 256;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;   // wakes the writer thread
  std::deque<PendingWrite*> queue_;    // guarded by queue_mu_
  bool writer_waiting_ = false;        // guarded by queue_mu_: the writer thread sleeps on queue_cv_
  bool stopping_ = false;              // guarded by queue_mu_
  std::thread writer_thread_;

  // Held by the writer thread while it commits (and by Init, and by the
  // checkpoint thread while it restarts the WAL); it states what guards the
  // writer connection's state.
  std::mutex write_mu_;
  std::unique_ptr<SqliteDb> writer_;  // guarded by write_mu_
  int64_t compacted_ = 0;             // guarded by write_mu_: the watermark as last committed here
  std::atomic<int64_t> last_revision_{0};  // the newest revision this process has seen
  UuidGenerator uuids_;

  std::mutex readers_mu_;
  std::vector<std::unique_ptr<SqliteDb>> idle_readers_;  // guarded by readers_mu_

  // Checkpoints run on their own thread and connection (PASSIVE: they never
  // block a write), asked for by the writer's WAL hook once per
  // options_.checkpoint_frames new frames while that many are uncopied; so
  // the writer thread, which every write waits for, never waits for a
  // checkpoint's copying and fsyncs. Counting all frames instead would ask
  // for one after every commit while the WAL cannot restart from its start
  // (it restarts only when a write begins after a complete checkpoint with
  // no reader in the WAL, which a steady stream of writes and reads never
  // leaves room for): a checkpoint, with its two fsyncs, per few frames.
  static int OnWalCommit(void* store, sqlite3* db, const char* name, int frames);
  // Frames not yet copied into the database, of the `frames` the WAL holds.
  int UncheckpointedFrames(int frames) const;
  std::atomic<int> checkpointed_frames_{0};  // the WAL frames the last checkpoint had copied
  std::atomic<uint64_t> commits_{0};         // commits so far, counted by OnWalCommit
  int requested_at_frames_ = 0;              // guarded by write_mu_: the WAL's frames when OnWalCommit last acted
  void CheckpointLoop();
  // A RESTART checkpoint (see kRestartWalAt); returns the frames the WAL holds after it.
  int TryRestartWal(bool wait);
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false;   // guarded by checkpoint_mu_
  bool checkpoint_stop_ = false;     // guarded by checkpoint_mu_
  std::unique_ptr<SqliteDb> checkpointer_;  // used only by checkpoint_thread_
  std::thread checkpoint_thread_;
};

Status SqliteStore::Init() {
  std::lock_guard lock(write_mu_);
  ASSIGN_OR_RETURN(int64_t revision, ReadMeta(*writer_, kRevisionKey));
  ASSIGN_OR_RETURN(compacted_, ReadMeta(*writer_, kCompactedKey));
  last_revision_.store(revision);
  ASSIGN_OR_RETURN(checkpointer_, SqliteDb::Open(path_, /*create=*/false, options_.busy_timeout_ms));
  // A connection learns that the file is in WAL mode when it first reads it;
  // until then sqlite3_wal_checkpoint_v2 on it returns OK having done nothing
  // (and the WAL would grow to kWriterCheckpointsAt x checkpoint_frames, for
  // the writer's own hook).
  ASSIGN_OR_RETURN(std::string mode,
                   checkpointer_->QueryText("open the checkpoint connection in WAL mode", "PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return Status::IoError(fmt::format("{}: the checkpoint connection is in journal mode '{}', not WAL", path_, mode));
  }
  // Its restarts of the WAL are attempts: they give up at once when a write
  // or a read is in the way, rather than hold the writer up (CheckpointLoop).
  sqlite3_busy_timeout(checkpointer_->handle(), 0);
  // Replaces SQLite's automatic checkpoint (itself a WAL hook) on the writer.
  sqlite3_wal_hook(writer_->handle(), &SqliteStore::OnWalCommit, this);
  checkpoint_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "store-ckpt");  // 15 characters at most
    CheckpointLoop();
  });
  writer_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "store-writer");
    WriterLoop();
  });
  return Status::Ok();
}

SqliteStore::~SqliteStore() {
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_one();
  if (writer_thread_.joinable()) writer_thread_.join();  // it drains the queue first
  {
    std::lock_guard lock(checkpoint_mu_);
    checkpoint_stop_ = true;
  }
  checkpoint_cv_.notify_one();
  if (checkpoint_thread_.joinable()) checkpoint_thread_.join();
  checkpointer_.reset();  // the writer, closed last, checkpoints what is left
}

int SqliteStore::UncheckpointedFrames(int frames) const {
  const int copied = checkpointed_frames_.load(std::memory_order_relaxed);
  // Fewer frames than were copied: the WAL has restarted from its start.
  return frames >= copied ? frames - copied : frames;
}

int SqliteStore::OnWalCommit(void* store, sqlite3* db, const char* name, int frames) {
  auto* self = static_cast<SqliteStore*>(store);
  self->commits_.fetch_add(1, std::memory_order_relaxed);
  const int uncopied = self->UncheckpointedFrames(frames);
  if (uncopied < self->options_.checkpoint_frames) return SQLITE_OK;
  // Once per checkpoint_frames new frames: while a read keeps checkpoints
  // from copying them all, acting whenever that many are uncopied would
  // checkpoint after every commit.
  if (frames < self->requested_at_frames_) self->requested_at_frames_ = 0;  // the WAL restarted
  if (frames - self->requested_at_frames_ < self->options_.checkpoint_frames) return SQLITE_OK;
  self->requested_at_frames_ = frames;
  if (uncopied >= kWriterCheckpointsAt * self->options_.checkpoint_frames) {
    // The checkpointer cannot keep up (or is stuck behind a long read): keep
    // the WAL bounded by checkpointing here, as SQLite's own hook would.
    int copied = 0;
    if (sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, &copied) == SQLITE_OK) {
      self->checkpointed_frames_.store(copied, std::memory_order_relaxed);
    }
    return SQLITE_OK;
  }
  {
    std::lock_guard lock(self->checkpoint_mu_);
    if (self->checkpoint_wanted_) return SQLITE_OK;
    self->checkpoint_wanted_ = true;
  }
  self->checkpoint_cv_.notify_one();
  return SQLITE_OK;
}

void SqliteStore::CheckpointLoop() {
  sqlite3* db = checkpointer_->handle();
  int wal_frames = 0;  // as the last checkpoint found the WAL
  auto wanted = [this] { return checkpoint_wanted_ || checkpoint_stop_; };
  std::unique_lock lock(checkpoint_mu_);
  while (true) {
    const bool restart_due = wal_frames >= kRestartWalAt * options_.checkpoint_frames;
    const uint64_t commits_before = commits_.load(std::memory_order_relaxed);
    // While a restart is due, wake up after kQuietForRestart to see whether
    // writes have paused.
    const bool asked = restart_due ? checkpoint_cv_.wait_for(lock, kQuietForRestart, wanted)
                                   : (checkpoint_cv_.wait(lock, wanted), true);
    if (checkpoint_stop_) return;
    // Taken now: a request made while this checkpoint runs asks for another.
    checkpoint_wanted_ = false;
    lock.unlock();
    int frames = 0, copied = 0;
    if (!asked) {
      // Not a commit since the last look: restart now (and fail at once,
      // as busy, when a read is in the WAL; then the next look tries again).
      if (commits_.load(std::memory_order_relaxed) == commits_before) wal_frames = TryRestartWal(false);
    } else if (sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK) {
      // PASSIVE: copies what no reader still needs, without waiting for
      // locks. A failure (another process checkpointing, an I/O error) is
      // left to the next request, and past kWriterCheckpointsAt x
      // checkpoint_frames to the writer's own hook, whose commits report real
      // I/O errors.
      checkpointed_frames_.store(copied, std::memory_order_relaxed);
      wal_frames = frames;
      // Under steady writes and reads the WAL never restarts from its start
      // by itself (see OnWalCommit).
      if (frames >= kForceRestartAt * options_.checkpoint_frames) {
        wal_frames = TryRestartWal(frames >= kWaitToRestartAt * options_.checkpoint_frames);
      }
    }
    lock.lock();
  }
}

int SqliteStore::TryRestartWal(bool wait) {
  // RESTART copies what is left and makes the next write start the WAL from
  // its start. It holds the write lock throughout; with a busy timeout of 0
  // it fails at once when a read is in the WAL, and `wait` waits for the
  // reads, as long as the busy timeout allows. Holding write_mu_ too, it
  // makes the writer thread wait on the mutex, not in SQLite's busy handler,
  // which sleeps 1, 2, 5, 10, 15 ms... between tries (a 9 ms restart cost
  // the writes waiting for it 18 ms): writes resume once the restart is done.
  sqlite3* db = checkpointer_->handle();
  if (wait) sqlite3_busy_timeout(db, options_.busy_timeout_ms);
  int frames = 0, copied = 0;
  int rc = SQLITE_OK;
  {
    std::lock_guard write_lock(write_mu_);
    rc = sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_RESTART, &frames, &copied);
  }
  if (wait) sqlite3_busy_timeout(db, 0);
  if (rc == SQLITE_OK) frames = copied = 0;
  if (rc == SQLITE_OK || rc == SQLITE_BUSY) checkpointed_frames_.store(copied, std::memory_order_relaxed);
  return frames;
}

Result<int64_t> SqliteStore::ReadMeta(SqliteDb& db, const char* key) {
  ASSIGN_OR_RETURN(SqliteStatement select, db.Statement("read store metadata", kSelectMetaSql));
  select.Bind(1, std::string_view(key));
  ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row || select.ColumnIsNull(0)) {
    return Err(Status::Corruption(fmt::format(
        "{} has no '{}' in its meta table: the file is damaged; restore it from a backup", path_, key)));
  }
  return select.ColumnInt(0);
}

// --- Writes. ---

Status SqliteStore::Write(const WriteBody& body) {
  PendingWrite me;
  me.body = std::cref(body);
  std::condition_variable cv;
  me.waiter = &cv;
  std::unique_lock lock(queue_mu_);
  Enqueue(&me);
  cv.wait(lock, [&] { return me.done; });
  return me.status;
}

void SqliteStore::Enqueue(PendingWrite* write) {
  queue_.push_back(write);
  // Only a sleeping writer needs waking (a futex call); a busy one looks at the
  // queue again when its commit is done.
  if (writer_waiting_) queue_cv_.notify_one();
}

void SqliteStore::CreateAsync(const ObjectKey& key, json object, std::optional<ObjectKey> must_exist,
                              CreateDone done) {
  // Rendered here, on the caller's thread: see RenderedCreate.
  const Status valid = ValidateKey(key);
  Result<RenderedCreate> rendered =
      valid.ok() ? RenderedCreate::Render(key, std::move(object), [this] { return uuids_.Next(); }) : Err(valid);
  if (!rendered) return done(Err(rendered.error()), {});
  auto write = std::make_unique<PendingWrite>();
  PendingWrite* w = write.get();
  w->key = key;
  w->rendered = std::move(*rendered);
  w->must_exist = std::move(must_exist);
  w->on_created = std::move(done);
  w->body = [this, w](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(w->revision, CreateRenderedIn(txn, w->key, *w->rendered, w->must_exist ? &*w->must_exist : nullptr,
                                                   w->created_text));
    return Status::Ok();
  };
  std::lock_guard lock(queue_mu_);
  Enqueue(write.release());
}

void SqliteStore::WriterLoop() {
  std::vector<PendingWrite*> group;
  std::vector<PendingWrite*> finished;
  std::unique_lock lock(queue_mu_);
  while (true) {
    if (queue_.empty()) {
      if (stopping_) return;
      writer_waiting_ = true;
      queue_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      writer_waiting_ = false;
      continue;
    }
    const size_t n = std::min(queue_.size(), kMaxGroup);
    group.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    {
      std::lock_guard write_lock(write_mu_);
      CommitGroup(group);
    }
    finished.clear();
    lock.lock();
    for (PendingWrite* write : group) {
      if (write->waiter != nullptr) {
        write->done = true;
        write->waiter->notify_one();  // under the lock: it cannot return (and destroy its cv) before we let go
      } else {
        finished.push_back(write);
      }
    }
    if (finished.empty()) continue;
    // Callbacks run without the lock, so that they may queue writes themselves.
    lock.unlock();
    for (PendingWrite* write : finished) {
      std::unique_ptr<PendingWrite> owned(write);
      // The revision and text as stored, or why not (its own failure, or its group's).
      if (!write->status.ok()) {
        write->on_created(Err(write->status), {});
      } else {
        write->on_created(write->revision, write->created_text);
      }
    }
    lock.lock();
  }
}

void SqliteStore::CommitGroup(const std::vector<PendingWrite*>& group) {
  WriteTxn txn;
  bool failed_alone = false;
  Status status = TryGroup(group, /*savepoints=*/false, txn, failed_alone);
  if (!status.ok() && failed_alone && group.size() > 1) {
    writer_->RollbackQuietly();
    status = TryGroup(group, /*savepoints=*/true, txn, failed_alone);
  }
  if (!status.ok()) {
    writer_->RollbackQuietly();
    // Nothing was committed: every write that had succeeded inside the
    // transaction fails with the reason (those that failed keep their own).
    for (PendingWrite* write : group) {
      if (write->status.ok()) write->status = status;
    }
    return;
  }
  compacted_ = txn.compacted;
  // Writes are serialised, so revisions arrive here in increasing order.
  last_revision_.store(txn.revision);
}

Status SqliteStore::TryGroup(const std::vector<PendingWrite*>& group, bool savepoints, WriteTxn& txn,
                             bool& failed_alone) {
  SqliteDb& db = *writer_;
  failed_alone = false;
  {
    ASSIGN_OR_RETURN(SqliteStatement begin, db.Statement("begin a write", kBeginWriteSql));
    RETURN_IF_ERROR(begin.Run());
  }
  ASSIGN_OR_RETURN(int64_t start, ReadMeta(db, kRevisionKey));
  txn.revision = start;
  txn.compacted = compacted_;
  for (PendingWrite* write : group) {
    if (savepoints) {
      RETURN_IF_ERROR(RunInSavepoint(*write, txn));
      continue;
    }
    write->status = write->body(txn);
    if (!write->status.ok()) {
      // Alone in the group, a failure is the group's; with others, they may be
      // retried without it, unless SQLite already gave up the transaction.
      failed_alone = db.InTransaction();
      return write->status;
    }
  }
  if (txn.revision != start) {
    {
      ASSIGN_OR_RETURN(SqliteStatement update, db.Statement("store the revision", kUpdateMetaSql));
      RETURN_IF_ERROR(update.Bind(1, std::string_view(kRevisionKey)).Bind(2, txn.revision).Run());
    }
    // Automatic compaction, when the log has grown compact_every past the window.
    if (options_.compact_every > 0 && txn.revision - txn.compacted >= options_.event_window + options_.compact_every) {
      RETURN_IF_ERROR(CompactIn(txn, options_.event_window));
    }
  }
  ASSIGN_OR_RETURN(SqliteStatement commit, db.Statement("commit a write", kCommitSql));
  return commit.Run();
}

Status SqliteStore::RunInSavepoint(PendingWrite& write, WriteTxn& txn) {
  SqliteDb& db = *writer_;
  {
    ASSIGN_OR_RETURN(SqliteStatement savepoint, db.Statement("begin one write of a group", kSavepointSql));
    RETURN_IF_ERROR(savepoint.Run());
  }
  WriteTxn before = txn;
  write.status = write.body(txn);
  if (!write.status.ok()) {
    // Some I/O errors make SQLite roll back the whole transaction; then the
    // group is lost, and every write in it fails with this error.
    if (!db.InTransaction()) return write.status;
    txn = before;  // a failed write consumes no revision
    ASSIGN_OR_RETURN(SqliteStatement rollback, db.Statement("undo one write of a group", kRollbackToSql));
    RETURN_IF_ERROR(rollback.Run());
  }
  ASSIGN_OR_RETURN(SqliteStatement release, db.Statement("end one write of a group", kReleaseSql));
  return release.Run();
}

Status SqliteStore::AppendEvent(int64_t revision, EventType type, const ObjectKey& key, std::string_view data) {
  ASSIGN_OR_RETURN(SqliteStatement insert, writer_->Statement("append an event", kInsertEventSql));
  return insert.Bind(1, revision)
      .Bind(2, EventTypeName(type))
      .Bind(3, key.kind)
      .Bind(4, key.ns)
      .Bind(5, key.name)
      .Bind(6, data)
      .Run();
}

Result<int64_t> SqliteStore::CreateIn(WriteTxn& txn, const ObjectKey& key, json& object) {
  RETURN_IF_ERROR(ValidateKey(key));
  ASSIGN_OR_RETURN(json* metadata, MetadataOf(object, key));
  ASSIGN_OR_RETURN(std::string uid, AssignUid(*metadata, key, [this] { return uuids_.Next(); }));
  const int64_t revision = txn.revision + 1;
  (*metadata)["resourceVersion"] = std::to_string(revision);
  ASSIGN_OR_RETURN(std::string data, DumpDocument(object, key));
  RETURN_IF_ERROR(InsertCreated(txn, key, uid, revision, data));
  return revision;
}

Result<int64_t> SqliteStore::CreateRenderedIn(WriteTxn& txn, const ObjectKey& key, const RenderedCreate& rendered,
                                              const ObjectKey* must_exist, std::string& text) {
  if (must_exist != nullptr) {
    ASSIGN_OR_RETURN(SqliteStatement select, writer_->Statement("check that an object exists", kObjectExistsSql));
    select.Bind(1, must_exist->kind).Bind(2, must_exist->ns).Bind(3, must_exist->name);
    ASSIGN_OR_RETURN(bool found, select.Step());
    if (!found) {
      return Err(Status::NotFound(fmt::format("{} not found: create it first", DescribeKey(*must_exist))));
    }
  }
  const int64_t revision = txn.revision + 1;
  std::string data = rendered.WithRevision(revision);
  RETURN_IF_ERROR(InsertCreated(txn, key, rendered.uid(), revision, data));
  text = std::move(data);
  return revision;
}

Status SqliteStore::InsertCreated(WriteTxn& txn, const ObjectKey& key, const std::string& uid, int64_t revision,
                                  std::string_view text) {
  {
    ASSIGN_OR_RETURN(SqliteStatement insert, writer_->Statement("insert an object", kInsertObjectSql));
    insert.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name).Bind(4, uid).Bind(5, revision);
    int rc = insert.StepCode();
    if (rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Status::AlreadyExists(fmt::format(
          "{} already exists: update it instead, or delete it first", DescribeKey(key)));
    }
    if (rc != SQLITE_DONE) return insert.Error(rc);
  }
  RETURN_IF_ERROR(AppendEvent(revision, EventType::kAdded, key, text));
  txn.revision = revision;
  return Status::Ok();
}

Result<int64_t> SqliteStore::UpdateIn(WriteTxn& txn, const ObjectKey& key, json& object, int64_t expected_revision) {
  RETURN_IF_ERROR(ValidateKey(key));
  if (expected_revision < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: resourceVersion {} is negative: send the one you read, or 0 to update unconditionally",
        DescribeKey(key), expected_revision)));
  }
  ASSIGN_OR_RETURN(json* metadata, MetadataOf(object, key));
  std::string uid;
  int64_t stored = 0;
  {
    ASSIGN_OR_RETURN(SqliteStatement select, writer_->Statement("read an object's version", kSelectObjectVersionSql));
    select.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name);
    ASSIGN_OR_RETURN(bool found, select.Step());
    if (!found) return Err(Status::NotFound(fmt::format("{} not found: create it first", DescribeKey(key))));
    stored = select.ColumnInt(1);
    if (expected_revision != 0 && expected_revision != stored) {
      return Err(Status::Conflict(fmt::format(
          "{} has changed: you sent resourceVersion {}, the stored one is {}; "
          "get the object again, reapply your change and retry",
          DescribeKey(key), expected_revision, stored)));
    }
    uid = select.ColumnText(0);
  }
  int64_t revision = txn.revision + 1;
  (*metadata)["uid"] = uid;  // immutable: the stored uid wins
  (*metadata)["resourceVersion"] = std::to_string(revision);
  ASSIGN_OR_RETURN(std::string data, DumpDocument(object, key));
  {
    ASSIGN_OR_RETURN(SqliteStatement update, writer_->Statement("update an object", kUpdateObjectSql));
    RETURN_IF_ERROR(update.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name).Bind(4, revision).Run());
  }
  RETURN_IF_ERROR(AppendEvent(revision, EventType::kModified, key, data));
  RETURN_IF_ERROR(DropSupersededEvent(txn, stored));
  txn.revision = revision;
  return revision;
}

Result<StoredObject> SqliteStore::DeleteIn(WriteTxn& txn, const ObjectKey& key, int64_t expected_revision) {
  RETURN_IF_ERROR(ValidateKey(key));
  if (expected_revision < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: resourceVersion {} is negative: send the one you read, or 0 to delete unconditionally",
        DescribeKey(key), expected_revision)));
  }
  json object;
  int64_t stored = 0;
  {
    ASSIGN_OR_RETURN(SqliteStatement select, writer_->Statement("read an object", kSelectObjectSql));
    select.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name);
    ASSIGN_OR_RETURN(bool found, select.Step());
    if (!found) return Err(Status::NotFound(fmt::format("{} not found: nothing to delete", DescribeKey(key))));
    stored = select.ColumnInt(1);
    if (expected_revision != 0 && expected_revision != stored) {
      return Err(Status::Conflict(fmt::format(
          "{} has changed: you sent resourceVersion {}, the stored one is {}; "
          "get the object again and retry the delete if it still applies",
          DescribeKey(key), expected_revision, stored)));
    }
    ASSIGN_OR_RETURN(object, Parse(select.ColumnText(2), DescribeKey(key), path_));
  }
  // The event and the result carry the object as it was, stamped with the
  // deletion's revision (as Kubernetes does), so a watcher can resume from it.
  int64_t revision = txn.revision + 1;
  ASSIGN_OR_RETURN(json* metadata, MetadataOf(object, key));
  (*metadata)["resourceVersion"] = std::to_string(revision);
  ASSIGN_OR_RETURN(std::string data, DumpDocument(object, key));
  {
    ASSIGN_OR_RETURN(SqliteStatement remove, writer_->Statement("delete an object", kDeleteObjectSql));
    RETURN_IF_ERROR(remove.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name).Run());
  }
  RETURN_IF_ERROR(AppendEvent(revision, EventType::kDeleted, key, data));
  RETURN_IF_ERROR(DropSupersededEvent(txn, stored));
  txn.revision = revision;
  return StoredObject{key, revision, std::move(object)};
}

Status SqliteStore::DropSupersededEvent(const WriteTxn& txn, int64_t old_revision) {
  // Above the watermark the event stays for watchers until compaction passes it.
  if (old_revision > txn.compacted) return Status::Ok();
  ASSIGN_OR_RETURN(SqliteStatement remove, writer_->Statement("drop a superseded event", kDeleteEventSql));
  return remove.Bind(1, old_revision).Run();
}

Status SqliteStore::CompactIn(WriteTxn& txn, int64_t keep_events) {
  // Events are numbered by revision without gaps above the watermark, so
  // keeping the newest `keep_events` means dropping revisions <= revision - keep.
  int64_t cut = txn.revision - keep_events;
  if (cut <= txn.compacted) return Status::Ok();
  {
    ASSIGN_OR_RETURN(SqliteStatement remove, writer_->Statement("compact the event log", kDeleteEventsSql));
    RETURN_IF_ERROR(remove.Bind(1, txn.compacted).Bind(2, cut).Run());
  }
  ASSIGN_OR_RETURN(SqliteStatement update, writer_->Statement("store the compaction watermark", kUpdateMetaSql));
  RETURN_IF_ERROR(update.Bind(1, std::string_view(kCompactedKey)).Bind(2, cut).Run());
  txn.compacted = cut;
  return Status::Ok();
}

Result<StoredObject> SqliteStore::Create(const ObjectKey& key, json object) {
  Result<int64_t> revision;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    revision = CreateIn(txn, key, object);
    return internal::ToStatus(revision);
  }));
  return StoredObject{key, *revision, std::move(object)};
}

Result<StoredObject> SqliteStore::Update(const ObjectKey& key, json object, int64_t expected_revision) {
  Result<int64_t> revision;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    revision = UpdateIn(txn, key, object, expected_revision);
    return internal::ToStatus(revision);
  }));
  return StoredObject{key, *revision, std::move(object)};
}

Result<StoredObject> SqliteStore::Delete(const ObjectKey& key, int64_t expected_revision) {
  Result<StoredObject> result;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    result = DeleteIn(txn, key, expected_revision);
    return internal::ToStatus(result);
  }));
  return result;
}

Result<std::vector<StoredObject>> SqliteStore::ApplyIn(WriteTxn& txn, std::vector<WriteOp>& ops) {
  std::vector<StoredObject> results;
  results.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    WriteOp& op = ops[i];
    Result<int64_t> revision;
    switch (op.op) {
      case WriteOp::Kind::kCreate:
        revision = CreateIn(txn, op.key, op.object);
        break;
      case WriteOp::Kind::kUpdate:
        revision = UpdateIn(txn, op.key, op.object, op.expected_revision);
        break;
      case WriteOp::Kind::kDelete: {
        Result<StoredObject> deleted = DeleteIn(txn, op.key, op.expected_revision);
        if (deleted) {
          results.push_back(std::move(*deleted));
          continue;
        }
        revision = Err(deleted.error());
        break;
      }
    }
    if (!revision) {
      return Err(revision.error().WithContext(
          fmt::format("write {} of {} in the batch (nothing was applied)", i + 1, ops.size())));
    }
    results.push_back(StoredObject{op.key, *revision, json()});
  }
  return results;
}

void SqliteStore::TakeObjects(std::vector<WriteOp>& ops, std::vector<StoredObject>& results) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op != WriteOp::Kind::kDelete) results[i].object = std::move(ops[i].object);
  }
}

Result<std::vector<StoredObject>> SqliteStore::Apply(std::vector<WriteOp> ops) {
  if (ops.empty()) return std::vector<StoredObject>();
  Result<std::vector<StoredObject>> results;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    results = ApplyIn(txn, ops);
    return internal::ToStatus(results);
  }));
  TakeObjects(ops, *results);
  return results;
}

std::vector<Store::UnitResult> SqliteStore::ApplyUnits(std::vector<std::vector<WriteOp>> units) {
  std::vector<UnitResult> results(units.size());
  if (units.empty()) return results;
  // Each unit a write of its own, queued together: they share the writer's
  // group commits, and CommitGroup undoes only those that fail.
  std::vector<PendingWrite> writes(units.size());
  std::condition_variable cv;
  for (size_t u = 0; u < units.size(); ++u) {
    writes[u].waiter = &cv;
    writes[u].body = [&, u](WriteTxn& txn) {
      results[u] = ApplyIn(txn, units[u]);
      return internal::ToStatus(results[u]);
    };
  }
  {
    std::unique_lock lock(queue_mu_);
    for (PendingWrite& write : writes) Enqueue(&write);
    cv.wait(lock, [&] { return std::all_of(writes.begin(), writes.end(), [](const PendingWrite& w) { return w.done; }); });
  }
  for (size_t u = 0; u < units.size(); ++u) {
    if (!writes[u].status.ok()) {
      results[u] = Err(writes[u].status);  // its own failure, or its group's
    } else {
      TakeObjects(units[u], *results[u]);
    }
  }
  return results;
}

Status SqliteStore::Compact(int64_t keep_events) {
  if (keep_events < 0) {
    return Status::InvalidArgument(fmt::format("Compact({}): keep_events must be 0 or more", keep_events));
  }
  return Write([&](WriteTxn& txn) { return CompactIn(txn, keep_events); });
}

// --- Reads. ---

Result<SqliteStore::Reader> SqliteStore::BorrowReader() {
  {
    std::lock_guard lock(readers_mu_);
    if (!idle_readers_.empty()) {
      std::unique_ptr<SqliteDb> db = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return Reader(this, std::move(db));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path_, /*create=*/false, options_.busy_timeout_ms));
  RETURN_IF_ERROR(db->Exec("make a reader connection read-only", "PRAGMA query_only = ON"));
  return Reader(this, std::move(db));
}

void SqliteStore::ReturnReader(std::unique_ptr<SqliteDb> db) {
  db->RollbackQuietly();  // a read that failed midway leaves its transaction open
  std::lock_guard lock(readers_mu_);
  if (idle_readers_.size() < options_.max_idle_readers) idle_readers_.push_back(std::move(db));
}

Result<StoredObject> SqliteStore::Get(const ObjectKey& key) {
  RETURN_IF_ERROR(ValidateKey(key));
  ASSIGN_OR_RETURN(Reader reader, BorrowReader());
  ASSIGN_OR_RETURN(SqliteStatement select, reader.db().Statement("read an object", kSelectObjectSql));
  select.Bind(1, key.kind).Bind(2, key.ns).Bind(3, key.name);
  ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return Err(Status::NotFound(fmt::format("{} not found", DescribeKey(key))));
  ASSIGN_OR_RETURN(json object, Parse(select.ColumnText(2), DescribeKey(key), path_));
  return StoredObject{key, select.ColumnInt(1), std::move(object)};
}

Result<ListResult> SqliteStore::List(std::string_view kind, std::string_view ns) {
  ListResult list;
  std::vector<std::string> texts;  // the objects' documents, parsed once the read has ended
  ASSIGN_OR_RETURN(list.revision, ReadList(kind, ns, &list.items, texts));
  for (size_t i = 0; i < texts.size(); ++i) {
    StoredObject& item = list.items[i];
    ASSIGN_OR_RETURN(item.object, Parse(texts[i], DescribeKey(item.key), path_));
  }
  return list;
}

Result<TextListResult> SqliteStore::ListTexts(std::string_view kind, std::string_view ns) {
  TextListResult list;
  ASSIGN_OR_RETURN(list.revision, ReadList(kind, ns, nullptr, list.texts));
  return list;
}

Result<int64_t> SqliteStore::ReadList(std::string_view kind, std::string_view ns, std::vector<StoredObject>* items,
                                      std::vector<std::string>& texts) {
  ASSIGN_OR_RETURN(Reader reader, BorrowReader());
  SqliteDb& db = reader.db();
  // One read transaction: the revision and the rows come from the same snapshot.
  {
    ASSIGN_OR_RETURN(SqliteStatement begin, db.Statement("begin a read", kBeginReadSql));
    RETURN_IF_ERROR(begin.Run());
  }
  ASSIGN_OR_RETURN(int64_t revision, ReadMeta(db, kRevisionKey));
  {
    ASSIGN_OR_RETURN(SqliteStatement select,
                     db.Statement("list objects", ns.empty() ? kListKindSql : kListKindNamespaceSql));
    select.Bind(1, kind);
    if (!ns.empty()) select.Bind(2, ns);
    while (true) {
      ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      if (items != nullptr) {
        StoredObject item;
        item.key = ObjectKey{std::string(kind), std::string(select.ColumnText(0)), std::string(select.ColumnText(1))};
        item.revision = select.ColumnInt(2);
        items->push_back(std::move(item));
      }
      texts.emplace_back(select.ColumnText(3));
    }
  }
  RETURN_IF_ERROR(EndRead(db));
  return revision;
}

Result<std::vector<StoreEvent>> SqliteStore::EventsSince(int64_t revision, size_t limit) {
  ASSIGN_OR_RETURN(EventPage page, ReadEvents(revision, limit, nullptr));
  return std::move(page.events);
}

Result<EventPage> SqliteStore::FilteredEventsSince(int64_t revision, size_t limit, const EventFilter& filter) {
  return ReadEvents(revision, limit, &filter);
}

Result<EventPage> SqliteStore::ReadEvents(int64_t revision, size_t limit, const EventFilter* filter) {
  if (revision < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "resourceVersion {} is negative: watch from 0, or from a list's resourceVersion", revision)));
  }
  ASSIGN_OR_RETURN(Reader reader, BorrowReader());
  SqliteDb& db = reader.db();
  // One read transaction, so that compaction cannot drop events between the
  // watermark check and the read.
  {
    ASSIGN_OR_RETURN(SqliteStatement begin, db.Statement("begin a read", kBeginReadSql));
    RETURN_IF_ERROR(begin.Run());
  }
  ASSIGN_OR_RETURN(int64_t compacted, ReadMeta(db, kCompactedKey));
  if (revision < compacted) {
    return Err(Status::Gone(fmt::format(
        "resourceVersion {} is too old: the events after it were compacted (the event log starts after "
        "revision {}); list the objects again and watch from the list's resourceVersion",
        revision, compacted)));
  }
  EventPage page;
  page.revision = revision;
  std::vector<std::string> texts;  // the events' documents, parsed once the read has ended
  {
    ASSIGN_OR_RETURN(SqliteStatement select, db.Statement("read events", kSelectEventsSql));
    // LIMIT takes a signed 64-bit value; a larger limit means "all".
    int64_t sql_limit = limit > static_cast<size_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(limit);
    select.Bind(1, revision).Bind(2, sql_limit);
    ObjectKey key;
    while (true) {
      ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      const int64_t event_revision = select.ColumnInt(0);
      page.revision = event_revision;
      ++page.looked_at;
      key.kind = select.ColumnText(2);
      if (filter != nullptr && !filter->WantsKind(key.kind)) continue;  // neither its key nor its object is read
      key.ns = select.ColumnText(3);
      key.name = select.ColumnText(4);
      if (filter != nullptr && !filter->WantsObject(key, event_revision)) continue;
      StoreEvent event;
      event.revision = event_revision;
      ASSIGN_OR_RETURN(event.type, ParseEventType(select.ColumnText(1), path_));
      event.object.key = key;
      event.object.revision = event.revision;
      page.events.push_back(std::move(event));
      texts.emplace_back(select.ColumnText(5));
    }
  }
  RETURN_IF_ERROR(EndRead(db));
  for (size_t i = 0; i < texts.size(); ++i) {
    StoreEvent& event = page.events[i];
    event.object.object = json::parse(texts[i].begin(), texts[i].end(), nullptr, /*allow_exceptions=*/false);
    if (event.object.object.is_discarded()) {
      // (The description is formatted only here: once per event it costs as much as a small parse.)
      return Err(Parse(texts[i], fmt::format("event {}", event.revision), path_).error());
    }
  }
  return page;
}

int64_t SqliteStore::Revision() {
  // The file is the truth (another process may have written); when it cannot
  // be read, the newest revision this process committed or read is still a
  // revision the store has reached.
  Result<int64_t> revision = [&]() -> Result<int64_t> {
    ASSIGN_OR_RETURN(Reader reader, BorrowReader());
    return ReadMeta(reader.db(), kRevisionKey);
  }();
  if (!revision.has_value()) return last_revision_.load();
  return *revision;
}

Status ValidateOptions(const std::string& path, const SqliteStoreOptions& options) {
  if (path.empty() || path == ":memory:" || path.starts_with("file:")) {
    return Status::InvalidArgument(fmt::format(
        "SQLite store path '{}' must name a file (not empty, ':memory:' or a URI): "
        "the store uses several connections to one file",
        path));
  }
  if (options.event_window < 0 || options.compact_every < 0 || options.busy_timeout_ms < 0 ||
      options.checkpoint_frames < 1) {
    return Status::InvalidArgument(fmt::format(
        "SQLite store options: event_window ({}), compact_every ({}) and busy_timeout_ms ({}) must be 0 or "
        "more, checkpoint_frames ({}) 1 or more",
        options.event_window, options.compact_every, options.busy_timeout_ms, options.checkpoint_frames));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, SqliteStoreOptions options) {
  RETURN_IF_ERROR(ValidateOptions(path, options));
  if (sqlite3_threadsafe() == 0) {
    return Err(Status::Internal(
        "this SQLite library was built without thread support (SQLITE_THREADSAFE=0); "
        "link against one built with SQLITE_THREADSAFE=1 or 2"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path, /*create=*/true, options.busy_timeout_ms));
  // WAL is a property of the file, kept across opens; the pragma answers the
  // mode in force, which stays "delete" where WAL is impossible (some network
  // filesystems).
  ASSIGN_OR_RETURN(std::string mode, db->QueryText("switch to WAL mode", "PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return Err(Status::IoError(fmt::format(
        "{} cannot use SQLite's WAL mode (journal mode stays '{}'): put the store on a local filesystem",
        path, mode)));
  }
  RETURN_IF_ERROR(db->Exec("set the synchronous mode", options.sync == SqliteStoreOptions::Sync::kFull
                                                           ? "PRAGMA synchronous = FULL"
                                                           : "PRAGMA synchronous = NORMAL"));
  std::string autocheckpoint = fmt::format("PRAGMA wal_autocheckpoint = {}", options.checkpoint_frames);
  RETURN_IF_ERROR(db->Exec("set the checkpoint interval", autocheckpoint.c_str()));
  // After a checkpoint, SQLite reuses the WAL file from its start; this caps
  // the size it keeps on disk after an unusually large burst.
  RETURN_IF_ERROR(db->Exec("limit the WAL size", "PRAGMA journal_size_limit = 67108864"));
  RETURN_IF_ERROR(MigrateSqliteSchema(*db));
  auto store = std::make_unique<SqliteStore>(std::move(db), options);
  RETURN_IF_ERROR(store->Init());
  return store;
}

}  // namespace tessera
