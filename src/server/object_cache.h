// ObjectCache: an in-memory copy of the stored objects of some kinds, kept current
// by reading the store's event log, as a Kubernetes informer does.
//
// The controllers read it instead of listing the store on every pass, so a pass
// costs what changed since the last one, not the size of the fleet. Sync()
// lists each kind once, then applies only the events after the revision it has
// seen, reading only the events of its kinds for objects it does not already
// hold at that revision; when those were compacted away (Gone), it lists again. Applying is
// idempotent by revision, so a controller may also Put the result of its own
// write at once, before the event for it comes back.
//
// A kind may be given a "settled" test (a finished Workload, a closed
// UsageRecord): ActiveOf(kind) then holds only the objects for which it is
// false, so that a pass walks the work in flight instead of the whole history.
// The test runs once per change of an object, not once per pass.
//
// Not thread-safe: one controller thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/store.h"

namespace tessera {

class ObjectCache {
 public:
  // (namespace, name) -> object, in the store's list order.
  using Objects = std::map<std::pair<std::string, std::string>, StoredObject>;

  // The unsettled objects of a kind, in the same order as Objects.
  using Active = std::map<std::pair<std::string, std::string>, const StoredObject*>;
  using SettledTest = std::function<bool(const nlohmann::json&)>;

  // Told of each change of an object of a kind: its key, and the object as it
  // now is (nullptr: removed). Pointers stay valid until the object is removed.
  using Observer = std::function<void(const std::pair<std::string, std::string>& key, const StoredObject* now)>;

  // `settled` maps some of `kinds` to their settled test.
  ObjectCache(Store& store, std::vector<std::string> kinds, std::map<std::string, SettledTest> settled = {});
  ObjectCache(const ObjectCache&) = delete;  // filter_ refers to this object
  ObjectCache& operator=(const ObjectCache&) = delete;

  // Catches up with the store. On error the cache keeps what it had.
  Status Sync();

  // The cached objects of `kind` (one of the kinds given at construction).
  const Objects& Of(const std::string& kind) const;
  const StoredObject* Find(const ObjectKey& key) const;
  // Calls `observer` for every object of `kind` held now, then after each
  // change, for as long as the cache lives (an index kept beside it).
  void Observe(const std::string& kind, Observer observer);
  // The objects of `kind` (one given a settled test) that are not settled.
  const Active& ActiveOf(const std::string& kind) const;

  // Records the outcome of a write the owner just made. A write at or below
  // revision() is already in the cache through its event, so it is ignored.
  void Put(StoredObject object);
  void Remove(const ObjectKey& key, int64_t revision);

  int64_t revision() const { return revision_; }
  int64_t relists() const { return relists_; }
  // Counts the removals of objects of `kind` (a deletion, or a relist, which
  // may have dropped some): what looks for dangling references need only look
  // again when it moved.
  uint64_t removals(const std::string& kind) const;

 private:
  struct KindState {
    Objects objects;
    SettledTest settled;  // empty: no Active set is kept
    Active active;
    std::vector<Observer> observers;
    uint64_t removals = 0;
  };

  Status Relist();
  void ApplyEvent(StoreEvent&& event);
  // Upserts `object` (whose key is `key` in `state`), keeping the Active set.
  void Upsert(KindState& state, std::pair<std::string, std::string> key, StoredObject&& object);
  void Erase(KindState& state, Objects::iterator it);
  const KindState& StateOf(const std::string& kind) const;
  // True when the cache holds `key` at `revision` or later (the event for it
  // need not be read).
  bool Holds(const ObjectKey& key, int64_t revision) const;

  Store& store_;
  EventFilter filter_;  // the cached kinds, and Holds
  std::map<std::string, KindState> by_kind_;
  int64_t revision_ = 0;
  int64_t relists_ = 0;
  bool listed_ = false;
};

}  // namespace tessera
