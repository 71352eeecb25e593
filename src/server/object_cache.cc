#include "server/object_cache.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/check.h"

namespace tessera {
namespace {

constexpr size_t kEventBatch = 8192;

}  // namespace

ObjectCache::ObjectCache(Store& store, std::vector<std::string> kinds, std::map<std::string, SettledTest> settled)
    : store_(store) {
  for (std::string& kind : kinds) by_kind_[std::move(kind)];
  for (auto& [kind, test] : settled) {
    auto it = by_kind_.find(kind);
    TESSERA_CHECK(it != by_kind_.end(), "ObjectCache: a settled test for {}, which it does not hold", kind);
    if (it != by_kind_.end()) it->second.settled = std::move(test);
  }
  for (const auto& [kind, unused] : by_kind_) filter_.kinds.push_back(kind);  // sorted, as the map
  filter_.have = [this](const ObjectKey& key, int64_t revision) { return Holds(key, revision); };
}

bool ObjectCache::Holds(const ObjectKey& key, int64_t revision) const {
  const StoredObject* held = Find(key);
  return held != nullptr && held->revision >= revision;
}

void ObjectCache::Upsert(KindState& state, std::pair<std::string, std::string> key, StoredObject&& object) {
  auto it = state.objects.find(key);
  if (it == state.objects.end()) {
    it = state.objects.emplace(std::move(key), std::move(object)).first;
  } else {
    it->second = std::move(object);
  }
  for (const Observer& observer : state.observers) observer(it->first, &it->second);
  if (!state.settled) return;
  if (state.settled(it->second.object)) {
    state.active.erase(it->first);
  } else {
    state.active.insert_or_assign(it->first, &it->second);
  }
}

void ObjectCache::Erase(KindState& state, Objects::iterator it) {
  ++state.removals;
  for (const Observer& observer : state.observers) observer(it->first, nullptr);
  state.active.erase(it->first);
  state.objects.erase(it);
}

void ObjectCache::Observe(const std::string& kind, Observer observer) {
  auto it = by_kind_.find(kind);
  TESSERA_CHECK(it != by_kind_.end(), "ObjectCache does not hold {}", kind);
  if (it == by_kind_.end()) return;
  for (const auto& [key, object] : it->second.objects) observer(key, &object);
  it->second.observers.push_back(std::move(observer));
}

Status ObjectCache::Relist() {
  // Lists are taken one kind at a time while others write; replaying the events
  // after the revision read first makes the result consistent again.
  const int64_t from = store_.Revision();
  std::map<std::string, std::vector<StoredObject>> fresh;
  for (const auto& [kind, unused] : by_kind_) {
    ASSIGN_OR_RETURN(ListResult list, store_.List(kind, ""));
    fresh[kind] = std::move(list.items);
  }
  for (auto& [kind, state] : by_kind_) {
    for (const auto& [key, unused] : state.objects) {
      for (const Observer& observer : state.observers) observer(key, nullptr);
    }
    state.objects.clear();
    state.active.clear();
    ++state.removals;  // the new list may lack what the old one held
    for (StoredObject& o : fresh[kind]) {
      auto key = std::make_pair(o.key.ns, o.key.name);
      Upsert(state, std::move(key), std::move(o));
    }
  }
  revision_ = from;
  listed_ = true;
  ++relists_;
  return Status::Ok();
}

void ObjectCache::ApplyEvent(StoreEvent&& event) {
  auto kind = by_kind_.find(event.object.key.kind);
  if (kind == by_kind_.end()) return;
  KindState& state = kind->second;
  auto key = std::make_pair(event.object.key.ns, event.object.key.name);
  auto it = state.objects.find(key);
  if (it != state.objects.end() && it->second.revision >= event.revision) return;  // listed after this event
  if (event.type == EventType::kDeleted) {
    if (it != state.objects.end()) Erase(state, it);
    return;
  }
  Upsert(state, std::move(key), std::move(event.object));
}

Status ObjectCache::Sync() {
  if (!listed_) RETURN_IF_ERROR(Relist());
  while (true) {
    auto page = store_.FilteredEventsSince(revision_, kEventBatch, filter_);
    if (!page && page.error().code() == StatusCode::kGone) {
      RETURN_IF_ERROR(Relist());
      continue;
    }
    if (!page) return page.error();
    for (StoreEvent& e : page->events) ApplyEvent(std::move(e));
    revision_ = std::max(revision_, page->revision);
    if (page->looked_at < kEventBatch) return Status::Ok();
  }
}

const ObjectCache::KindState& ObjectCache::StateOf(const std::string& kind) const {
  static const KindState kEmpty;
  auto it = by_kind_.find(kind);
  TESSERA_CHECK(it != by_kind_.end(), "ObjectCache does not hold {}", kind);
  return it == by_kind_.end() ? kEmpty : it->second;
}

const ObjectCache::Objects& ObjectCache::Of(const std::string& kind) const { return StateOf(kind).objects; }

const ObjectCache::Active& ObjectCache::ActiveOf(const std::string& kind) const {
  const KindState& state = StateOf(kind);
  TESSERA_CHECK(static_cast<bool>(state.settled), "ObjectCache has no settled test for {}", kind);
  return state.active;
}

const StoredObject* ObjectCache::Find(const ObjectKey& key) const {
  auto kind = by_kind_.find(key.kind);
  if (kind == by_kind_.end()) return nullptr;
  auto it = kind->second.objects.find({key.ns, key.name});
  return it == kind->second.objects.end() ? nullptr : &it->second;
}

void ObjectCache::Put(StoredObject object) {
  if (object.revision <= revision_) return;
  auto kind = by_kind_.find(object.key.kind);
  if (kind == by_kind_.end()) return;
  KindState& state = kind->second;
  auto it = state.objects.find({object.key.ns, object.key.name});
  if (it != state.objects.end() && it->second.revision >= object.revision) return;
  auto key = std::make_pair(object.key.ns, object.key.name);
  Upsert(state, std::move(key), std::move(object));
}

void ObjectCache::Remove(const ObjectKey& key, int64_t revision) {
  if (revision <= revision_) return;
  auto kind = by_kind_.find(key.kind);
  if (kind == by_kind_.end()) return;
  auto it = kind->second.objects.find({key.ns, key.name});
  if (it != kind->second.objects.end() && it->second.revision < revision) Erase(kind->second, it);
}

uint64_t ObjectCache::removals(const std::string& kind) const {
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? 0 : it->second.removals;
}

}  // namespace tessera
