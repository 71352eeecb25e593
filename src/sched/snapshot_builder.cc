#include "sched/snapshot_builder.h"

#include <algorithm>
#include <iterator>

namespace tessera {
namespace {

template <typename Id>
Id Lookup(const std::unordered_map<std::string, int32_t>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? Id() : Id(it->second);
}

}  // namespace

FlavorId SnapshotBuilder::AddFlavor(ResourceFlavor flavor) {
  const auto id = static_cast<int32_t>(snapshot_.flavors.size());
  flavors_[flavor.name] = id;
  snapshot_.flavors.push_back(std::move(flavor));
  return FlavorId(id);
}

NodeId SnapshotBuilder::AddNode(Node node) {
  const auto id = static_cast<int32_t>(snapshot_.nodes.size());
  nodes_[node.name] = id;
  snapshot_.nodes.push_back(std::move(node));
  return NodeId(id);
}

CohortId SnapshotBuilder::Cohort(const std::string& name) {
  auto [it, inserted] = cohorts_.emplace(name, static_cast<int32_t>(snapshot_.cohorts.size()));
  if (inserted) snapshot_.cohorts.push_back(tessera::Cohort{.name = name});
  return CohortId(it->second);
}

ClusterQueueId SnapshotBuilder::AddClusterQueue(ClusterQueue cq) {
  const auto id = static_cast<int32_t>(snapshot_.cluster_queues.size());
  queues_[cq.name] = id;
  snapshot_.cluster_queues.push_back(std::move(cq));
  return ClusterQueueId(id);
}

NamespaceId SnapshotBuilder::Namespace(const std::string& name) {
  auto [it, inserted] = namespaces_.emplace(name, static_cast<int32_t>(snapshot_.namespaces.size()));
  if (inserted) snapshot_.namespaces.push_back(tessera::Namespace{.name = name});
  return NamespaceId(it->second);
}

void SnapshotBuilder::SetNamespaceLabels(const std::string& name, Labels labels) {
  snapshot_.namespaces[Namespace(name).value()].labels = std::move(labels);
}

void SnapshotBuilder::AddResourceQuota(const std::string& ns, ResourceQuota quota) {
  snapshot_.namespaces[Namespace(ns).value()].quotas.push_back(std::move(quota));
}

void SnapshotBuilder::AddBudget(const std::string& ns, NamespaceBudget budget) {
  snapshot_.namespaces[Namespace(ns).value()].budgets.push_back(std::move(budget));
}

LocalQueueId SnapshotBuilder::AddLocalQueue(const std::string& ns, const std::string& name,
                                            const std::string& cluster_queue) {
  const auto id = static_cast<int32_t>(snapshot_.local_queues.size());
  local_queues_[ns + "/" + name] = id;
  Namespace(ns);
  snapshot_.local_queues.push_back(
      LocalQueue{.namespace_name = ns, .name = name, .cluster_queue_name = cluster_queue});
  return LocalQueueId(id);
}

WorkloadId SnapshotBuilder::AddWorkload(Workload w) {
  const auto id = static_cast<int32_t>(snapshot_.workloads.size());
  snapshot_.workloads.push_back(std::move(w));
  return WorkloadId(id);
}

FlavorId SnapshotBuilder::FlavorIdOf(const std::string& name) const { return Lookup<FlavorId>(flavors_, name); }
ClusterQueueId SnapshotBuilder::ClusterQueueIdOf(const std::string& name) const {
  return Lookup<ClusterQueueId>(queues_, name);
}
NodeId SnapshotBuilder::NodeIdOf(const std::string& name) const { return Lookup<NodeId>(nodes_, name); }

ClusterSnapshot SnapshotBuilder::Build() {
  for (LocalQueue& lq : snapshot_.local_queues) lq.cluster_queue = ClusterQueueIdOf(lq.cluster_queue_name);
  for (Workload& w : snapshot_.workloads) {
    w.ns = Namespace(w.namespace_name);
    w.local_queue = Lookup<LocalQueueId>(local_queues_, w.namespace_name + "/" + w.local_queue_name);
  }
  return std::move(snapshot_);
}

WorkloadId AppendWorkload(ClusterSnapshot& snapshot, Workload w) {
  auto ns = std::find_if(snapshot.namespaces.begin(), snapshot.namespaces.end(),
                         [&](const tessera::Namespace& n) { return n.name == w.namespace_name; });
  if (ns == snapshot.namespaces.end()) {
    snapshot.namespaces.push_back(tessera::Namespace{.name = w.namespace_name});
    ns = std::prev(snapshot.namespaces.end());
  }
  w.ns = NamespaceId(static_cast<int32_t>(ns - snapshot.namespaces.begin()));
  w.local_queue = LocalQueueId();
  for (size_t i = 0; i < snapshot.local_queues.size(); ++i) {
    const LocalQueue& lq = snapshot.local_queues[i];
    if (lq.namespace_name == w.namespace_name && lq.name == w.local_queue_name) {
      w.local_queue = LocalQueueId(static_cast<int32_t>(i));
      break;
    }
  }
  snapshot.workloads.push_back(std::move(w));
  return WorkloadId(static_cast<int32_t>(snapshot.workloads.size() - 1));
}

void RemoveAppended(ClusterSnapshot& snapshot, size_t namespaces_before) {
  snapshot.workloads.pop_back();
  snapshot.namespaces.resize(namespaces_before);
}

}  // namespace tessera
