#include "server/object_cache.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/check.h"

namespace tessera {
namespace {

constexpr size_t kEventBatch = 8192;

const ObjectCache::Objects kEmpty;

}  // namespace

ObjectCache::ObjectCache(Store& store, std::vector<std::string> kinds) : store_(store) {
  for (std::string& kind : kinds) by_kind_[std::move(kind)];
  for (const auto& [kind, unused] : by_kind_) filter_.kinds.push_back(kind);  // sorted, as the map
  filter_.have = [this](const ObjectKey& key, int64_t revision) { return Holds(key, revision); };
}

bool ObjectCache::Holds(const ObjectKey& key, int64_t revision) const {
  const StoredObject* held = Find(key);
  return held != nullptr && held->revision >= revision;
}

Status ObjectCache::Relist() {
  // Lists are taken one kind at a time while others write; replaying the events
  // after the revision read first makes the result consistent again.
  const int64_t from = store_.Revision();
  std::map<std::string, Objects> fresh;
  for (const auto& [kind, unused] : by_kind_) {
    ASSIGN_OR_RETURN(ListResult list, store_.List(kind, ""));
    Objects& objects = fresh[kind];
    for (StoredObject& o : list.items) {
      auto key = std::make_pair(o.key.ns, o.key.name);
      objects.emplace(std::move(key), std::move(o));
    }
  }
  by_kind_ = std::move(fresh);
  for (const auto& [kind, unused] : by_kind_) ++changes_[kind];
  revision_ = from;
  listed_ = true;
  ++relists_;
  return Status::Ok();
}

void ObjectCache::ApplyEvent(StoreEvent&& event) {
  auto kind = by_kind_.find(event.object.key.kind);
  if (kind == by_kind_.end()) return;
  Objects& objects = kind->second;
  auto key = std::make_pair(event.object.key.ns, event.object.key.name);
  auto it = objects.find(key);
  if (it != objects.end() && it->second.revision >= event.revision) return;  // listed after this event
  ++changes_[kind->first];
  if (event.type == EventType::kDeleted) {
    if (it != objects.end()) objects.erase(it);
    return;
  }
  if (it == objects.end()) {
    objects.emplace(std::move(key), std::move(event.object));
  } else {
    it->second = std::move(event.object);
  }
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

const ObjectCache::Objects& ObjectCache::Of(const std::string& kind) const {
  auto it = by_kind_.find(kind);
  TESSERA_CHECK(it != by_kind_.end(), "ObjectCache does not hold {}", kind);
  return it == by_kind_.end() ? kEmpty : it->second;
}

const StoredObject* ObjectCache::Find(const ObjectKey& key) const {
  auto kind = by_kind_.find(key.kind);
  if (kind == by_kind_.end()) return nullptr;
  auto it = kind->second.find({key.ns, key.name});
  return it == kind->second.end() ? nullptr : &it->second;
}

void ObjectCache::Put(StoredObject object) {
  if (object.revision <= revision_) return;
  auto kind = by_kind_.find(object.key.kind);
  if (kind == by_kind_.end()) return;
  auto it = kind->second.find({object.key.ns, object.key.name});
  if (it == kind->second.end()) {
    ++changes_[kind->first];
    auto key = std::make_pair(object.key.ns, object.key.name);
    kind->second.emplace(std::move(key), std::move(object));
  } else if (it->second.revision < object.revision) {
    ++changes_[kind->first];
    it->second = std::move(object);
  }
}

void ObjectCache::Remove(const ObjectKey& key, int64_t revision) {
  if (revision <= revision_) return;
  auto kind = by_kind_.find(key.kind);
  if (kind == by_kind_.end()) return;
  auto it = kind->second.find({key.ns, key.name});
  if (it != kind->second.end() && it->second.revision < revision) {
    ++changes_[kind->first];
    kind->second.erase(it);
  }
}

uint64_t ObjectCache::changes(const std::string& kind) const {
  auto it = changes_.find(kind);
  return it == changes_.end() ? 0 : it->second;
}

}  // namespace tessera
