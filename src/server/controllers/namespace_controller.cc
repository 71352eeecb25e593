#include "server/controllers/namespace_controller.h"

#include <fmt/format.h>

#include <set>

#include "domain/uid_range.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

void ReconcileNamespaces(const ObjectCache& cache, const std::string& now, BatchedWriter& writer) {
  const ObjectCache::Objects& namespaces = cache.Of("/Namespace");
  std::set<uint32_t> taken;  // first ids of the blocks held
  std::vector<const StoredObject*> without_range;
  for (const auto& [unused, ns] : namespaces) {
    const std::string annotation = StringAt(ns.object, {"metadata", "annotations", kUidRangeAnnotation.data()});
    if (annotation.empty()) {
      without_range.push_back(&ns);
      continue;
    }
    // A range an admin set may be of any size: every block it overlaps is taken.
    auto range = ParseUidRange(annotation);
    if (!range || range->last() < kFirstNamespaceUid) continue;
    uint64_t block = range->first < kFirstNamespaceUid
                         ? kFirstNamespaceUid
                         : kFirstNamespaceUid + (range->first - kFirstNamespaceUid) / kNamespaceUidBlock * kNamespaceUidBlock;
    for (; block <= range->last(); block += kNamespaceUidBlock) taken.insert(static_cast<uint32_t>(block));
  }
  uint32_t next = kFirstNamespaceUid;
  for (const StoredObject* ns : without_range) {
    while (taken.count(next)) next += kNamespaceUidBlock;
    taken.insert(next);
    json updated = ns->object;
    updated["metadata"]["annotations"][std::string(kUidRangeAnnotation)] =
        UidRange{next, kNamespaceUidBlock}.ToString();
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = ns->key, .object = std::move(updated),
                       .expected_revision = ns->revision},
               fmt::format("give namespace {} its uid range", ns->key.name));
  }
  for (const auto& [key, ns] : namespaces) {
    const ObjectKey sa{kServiceAccountKind, ns.key.name, "default"};
    if (cache.Find(sa) != nullptr || StringAt(ns.object, {"metadata", "deletionTimestamp"}) != "") continue;
    writer.Add(WriteOp{.op = WriteOp::Kind::kCreate,
                       .key = sa,
                       .object = json{{"apiVersion", "v1"},
                                      {"kind", "ServiceAccount"},
                                      {"metadata",
                                       {{"name", "default"}, {"namespace", ns.key.name}, {"creationTimestamp", now}}}}},
               fmt::format("create the default service account of namespace {}", ns.key.name));
  }
}

}  // namespace tessera
