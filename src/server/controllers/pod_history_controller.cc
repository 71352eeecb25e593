#include "server/controllers/pod_history_controller.h"

#include <fmt/format.h>

#include <set>

#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

namespace {

constexpr const char* kWorkloadLabel = "tessera.dev/workload";

// What is kept of a bound Pod: where its logs are, and how it ended.
json Record(const json& pod) {
  json r{{"name", StringAt(pod, {"metadata", "name"})},
         {"uid", StringAt(pod, {"metadata", "uid"})},
         {"nodeName", StringAt(pod, {"spec", "nodeName"})}};
  const json& containers = ArrayAt(pod, {"spec", "containers"});
  if (!containers.empty() && containers[0].is_object()) {
    if (const std::string c = containers[0].value("name", ""); !c.empty()) r["containerName"] = c;
  }
  for (const char* field : {"phase", "reason", "message", "startTime"}) {
    if (const std::string v = StringAt(pod, {"status", field}); !v.empty()) r[field] = v;
  }
  const json& statuses = ArrayAt(pod, {"status", "containerStatuses"});
  if (!statuses.empty() && statuses[0].is_object()) {
    if (const std::string at = StringAt(statuses[0], {"state", "terminated", "finishedAt"}); !at.empty()) {
      r["finishedAt"] = at;
    }
  }
  return r;
}

}  // namespace

json AppendPodHistory(const json& history, const std::vector<json>& records, size_t cap) {
  // Applying the same records twice gives what applying them once did: they
  // end up newest last whether or not some were there already.
  std::set<std::string> uids;
  for (const json& r : records) uids.insert(r.value("uid", ""));
  json out = json::array();
  if (history.is_array()) {
    for (const json& r : history) {
      if (!r.is_object() || !uids.contains(r.value("uid", ""))) out.push_back(r);
    }
  }
  for (const json& r : records) out.push_back(r);
  if (out.size() > cap) out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(out.size() - cap));
  return out;
}

PodHistoryController::PodHistoryController(ObjectCache& cache) {
  cache.Observe(kPodKind, [this](const Key& pod, const StoredObject* now) { Changed(pod, now); });
}

void PodHistoryController::Changed(const Key& pod, const StoredObject* now) {
  auto held = bound_.find(pod);
  const std::string uid = now ? StringAt(now->object, {"metadata", "uid"}) : "";
  // Gone, or replaced by a Pod of the same name (a relist can show only the new one).
  if (held != bound_.end() && (now == nullptr || held->second.record.value("uid", "") != uid)) {
    pending_[{pod.first, held->second.workload}].push_back(std::move(held->second.record));
    bound_.erase(held);
  }
  if (now == nullptr) return;
  const std::string workload = StringAt(now->object, {"metadata", "labels", kWorkloadLabel});
  if (workload.empty() || uid.empty() || StringAt(now->object, {"spec", "nodeName"}).empty()) return;
  bound_[pod] = Instance{.workload = workload, .record = Record(now->object)};
}

void PodHistoryController::Reconcile(PassContext& pass) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Key& key = it->first;
    const StoredObject* workload = pass.cache.Find(ObjectKey{kWorkloadKind, key.first, key.second});
    if (workload == nullptr) {  // gone with its Job: so is its history
      it = pending_.erase(it);
      continue;
    }
    std::vector<json>& held = it->second;
    if (held.size() > kPodHistoryCap) {  // the older ones would be cut anyway
      held.erase(held.begin(), held.end() - static_cast<std::ptrdiff_t>(kPodHistoryCap));
    }
    for (json& r : held) {
      if (!r.contains("deletedAt")) r["deletedAt"] = pass.now_text;
    }
    const json& status = ObjectAt(workload->object, {"status"});
    const json history = status.value("podHistory", json::array());
    const json next_history = AppendPodHistory(history, held);
    if (next_history == history) {  // written (a pass ago)
      it = pending_.erase(it);
      continue;
    }
    json next = workload->object;
    next["status"]["podHistory"] = next_history;
    // Kept until a pass finds them in the Workload: a conflict is retried then.
    pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = workload->key, .object = std::move(next),
                            .expected_revision = workload->revision},
                    fmt::format("pod history of workload {}/{}", key.first, key.second));
    ++it;
  }
}

}  // namespace tessera
