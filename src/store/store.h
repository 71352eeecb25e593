// Store: the persistent object store behind the API server (DESIGN.md section 7).
//
// Objects are JSON documents keyed by (kind, namespace, name). Every write gets
// the next value of one global, strictly increasing revision, which becomes the
// object's metadata.resourceVersion; every write also appends an event to an
// event log, so that a watch can resume from any revision still in the log.
//
// Contract, for every implementation (tests/store/store_contract_test.h checks it):
//   - Create sets metadata.uid (a new UUID, unless the document has one) and
//     metadata.resourceVersion (the decimal revision, as a string) in the stored
//     document, and fails with AlreadyExists when the key exists.
//   - Update and Delete take the resourceVersion the caller last saw; when it is
//     not 0 and differs from the stored one they fail with Conflict and change
//     nothing. Update keeps metadata.uid; it sets the new resourceVersion.
//   - Get/Update/Delete of a missing key fail with NotFound.
//   - A write either happens whole (object, revision and event together) or not
//     at all. Once a call returned, its write survives a crash of the process.
//   - EventsSince(rev) returns the events after `rev` in revision order; when
//     events after `rev` were already compacted away it fails with Gone (the
//     client must list again). Compaction keeps at least the newest
//     `keep_events` events.
//   - Thread-safe: any number of threads may call any method concurrently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

// kind is "<group>/<Kind>" with an empty group for the core API: "/Pod",
// "kueue.x-k8s.io/ClusterQueue". ns is empty for cluster-scoped objects.
struct ObjectKey {
  std::string kind;
  std::string ns;
  std::string name;
  friend bool operator==(const ObjectKey&, const ObjectKey&) = default;
};

struct StoredObject {
  ObjectKey key;
  int64_t revision = 0;  // == metadata.resourceVersion
  nlohmann::json object;
};

enum class EventType { kAdded, kModified, kDeleted };

struct StoreEvent {
  int64_t revision = 0;
  EventType type = EventType::kAdded;
  StoredObject object;  // for kDeleted: the object as it was, with the deletion's revision
};

struct ListResult {
  std::vector<StoredObject> items;  // ordered by namespace, then name
  int64_t revision = 0;             // the store's revision when the list was taken
};

// A list as the objects' stored JSON text (Store::ListTexts).
struct TextListResult {
  std::vector<std::string> texts;  // compact JSON, metadata.resourceVersion set; ordered as ListResult's items
  int64_t revision = 0;
};

// Which events a reader wants (Store::FilteredEventsSince).
struct EventFilter {
  std::vector<std::string> kinds;  // sorted; only events of these kinds
  // Asked before an event's object is read: true when the reader already
  // holds that object at this revision or later (its own write), so the
  // event can be left out. Unset: none is left out.
  std::function<bool(const ObjectKey& key, int64_t revision)> have;

  bool WantsKind(std::string_view kind) const { return std::binary_search(kinds.begin(), kinds.end(), kind); }
  // WantsKind(key.kind) assumed: false when the reader holds the object already.
  bool WantsObject(const ObjectKey& key, int64_t revision) const { return !have || !have(key, revision); }
};

struct EventPage {
  std::vector<StoreEvent> events;  // the events that passed the filter, oldest first
  int64_t revision = 0;            // every event up to this revision was looked at
  size_t looked_at = 0;            // how many events were looked at; < limit: the log's end was reached
};

// One write of a batch (Store::Apply).
struct WriteOp {
  enum class Kind { kCreate, kUpdate, kDelete } op = Kind::kCreate;
  ObjectKey key;
  nlohmann::json object;         // kCreate, kUpdate
  int64_t expected_revision = 0; // kUpdate, kDelete: 0 = unconditional
};

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<StoredObject> Create(const ObjectKey& key, nlohmann::json object) = 0;

  // Create without waiting: `done` is called once, on whichever thread
  // finishes the write (maybe this one, before CreateAsync returns; maybe the
  // store's own), after the write committed (with the revision it got and the
  // object's JSON text as stored: what Get would return, dumped) or failed.
  // With `must_exist`, the create fails with NotFound, naming that key, unless
  // that object exists when the write is made (an object's namespace). For
  // callers that must not block, such as HTTP I/O threads: their writes queue
  // and share a commit. `done` must not block for long or throw. The default
  // runs Create at once.
  using CreateDone = std::function<void(Result<int64_t> revision, std::string_view text)>;
  virtual void CreateAsync(const ObjectKey& key, nlohmann::json object, std::optional<ObjectKey> must_exist,
                           CreateDone done);
  virtual Result<StoredObject> Get(const ObjectKey& key) = 0;
  // All objects of a kind; in one namespace unless `ns` is empty.
  virtual Result<ListResult> List(std::string_view kind, std::string_view ns) = 0;
  // The same list as the objects' JSON text, unparsed: for an answer that
  // passes them on whole (a list without selectors), which then neither parses
  // nor encodes them again. The default dumps List's objects.
  virtual Result<TextListResult> ListTexts(std::string_view kind, std::string_view ns);
  virtual Result<StoredObject> Update(const ObjectKey& key, nlohmann::json object, int64_t expected_revision) = 0;
  virtual Result<StoredObject> Delete(const ObjectKey& key, int64_t expected_revision) = 0;
  // Several writes in one transaction: all succeed, or none is applied and the
  // first failure is returned. Each write gets its own revision, in order.
  virtual Result<std::vector<StoredObject>> Apply(std::vector<WriteOp> ops) = 0;
  // Independent batches sharing commits: each unit is applied as Apply would
  // apply it (all of it or none), and a unit that fails leaves the others to
  // be applied. Returns each unit's result, in the units' order; a unit's
  // writes get revisions in order, after the earlier units' writes. The
  // default calls Apply once per unit.
  using UnitResult = Result<std::vector<StoredObject>>;
  virtual std::vector<UnitResult> ApplyUnits(std::vector<std::vector<WriteOp>> units);

  // Events with revision > `revision`, oldest first, at most `limit`.
  virtual Result<std::vector<StoreEvent>> EventsSince(int64_t revision, size_t limit) = 0;
  // EventsSince for a cache of some kinds (ObjectCache): looks at up to `limit`
  // events after `revision`, oldest first, and returns those that pass
  // `filter`, without reading (parsing) the others' objects. Fails with Gone
  // as EventsSince does.
  virtual Result<EventPage> FilteredEventsSince(int64_t revision, size_t limit, const EventFilter& filter);
  // The newest revision (0 for an empty store).
  virtual int64_t Revision() = 0;
  // Drops all but the newest `keep_events` events.
  virtual Status Compact(int64_t keep_events) = 0;
};

}  // namespace tessera
