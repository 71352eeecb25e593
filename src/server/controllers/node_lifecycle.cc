#include "server/controllers/node_lifecycle.h"

#include <fmt/format.h>

#include <set>

#include "common/time_format.h"
#include "server/object_json.h"
#include "server/controllers/workload_lifecycle.h"

namespace tessera {
namespace {

using nlohmann::json;

// When the lease of `node` expires; nullopt when it has none (or an unreadable one).
std::optional<Timestamp> LeaseExpiry(const ObjectCache& cache, const std::string& node) {
  const StoredObject* lease = cache.Find(ObjectKey{kLeaseKind, kNodeLeaseNamespace, node});
  if (!lease) return std::nullopt;
  auto renewed = ParseRfc3339(StringAt(lease->object, {"spec", "renewTime"}));
  if (!renewed) return std::nullopt;
  const int64_t seconds = ObjectAt(lease->object, {"spec"}).value("leaseDurationSeconds", 40);
  return *renewed + Duration::Seconds(seconds);
}

}  // namespace

void ReconcileNodeLifecycle(const ObjectCache& cache, const PodIndex& pods, Timestamp now, BatchedWriter& writer,
                            EventRecorder& events) {
  const std::string now_text = FormatRfc3339(now);
  std::set<std::string> lost_nodes;
  for (const auto& [key, node] : cache.Of("/Node")) {
    const std::optional<Timestamp> expiry = LeaseExpiry(cache, node.key.name);
    if (!expiry) continue;
    const bool expired = now > *expiry;
    const bool ready = ConditionTrue(node.object, "Ready");
    if (expired && now > *expiry + kFencingMargin) lost_nodes.insert(node.key.name);
    if (expired == !ready) continue;
    // Only undo a NotReady that this controller set; an agent reports its own.
    if (!expired && ConditionValue(node.object, "Ready", "reason") != "NodeStatusUnknown") continue;
    json next = node.object;
    const std::string message =
        expired ? fmt::format("Tessera agent stopped renewing its lease; it expired at {}", FormatRfc3339(*expiry))
                : "Tessera agent renews its lease again";
    SetCondition(next, "Ready", !expired, expired ? "NodeStatusUnknown" : "AgentReady", message, now_text);
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = node.key, .object = std::move(next), .expected_revision = node.revision},
               fmt::format("readiness of node {}", node.key.name));
    events.Record(writer, node, expired ? EventRecorder::Type::kWarning : EventRecorder::Type::kNormal,
                  expired ? "NodeNotReady" : "NodeReady", message, now);
  }
  if (lost_nodes.empty()) return;

  // Pods on lost nodes are gone (their agent fenced them); their workloads are
  // evicted whole (a gang restarts together) and requeue once no pod is left.
  for (const auto& [workload_key, workload_pods] : pods) {
    bool on_lost_node = false;
    for (const StoredObject* pod : workload_pods) {
      if (!lost_nodes.count(StringAt(pod->object, {"spec", "nodeName"}))) continue;
      on_lost_node = true;
      writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = pod->key},
                 fmt::format("delete pod {}/{} of a lost node", pod->key.ns, pod->key.name));
    }
    if (!on_lost_node) continue;
    const StoredObject* w = cache.Find(ObjectKey{kWorkloadKind, workload_key.first, workload_key.second});
    if (!w || ConditionTrue(w->object, "Finished") || ConditionTrue(w->object, "Evicted")) continue;
    const std::string message = "a node it ran on stopped renewing its lease; its pods were lost and it is requeued";
    std::vector<WriteOp> unit = EvictionOps(*w, pods, "NodeLost", message, now_text);
    // The lost pods are deleted above; only the healthy ones need terminating.
    std::erase_if(unit, [&](const WriteOp& op) {
      const StoredObject* pod = op.key.kind == kPodKind ? cache.Find(op.key) : nullptr;
      return pod && lost_nodes.count(StringAt(pod->object, {"spec", "nodeName"}));
    });
    writer.Add(std::move(unit), fmt::format("evict workload {}/{} from a lost node", workload_key.first, workload_key.second));
    events.Record(writer, *w, EventRecorder::Type::kWarning, "NodeLost", message, now);
  }
}

}  // namespace tessera
