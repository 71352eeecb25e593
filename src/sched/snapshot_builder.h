// SnapshotBuilder: assembles a ClusterSnapshot from objects that refer to each
// other by name (as the API and trace files do), resolving names to ids once.
// References that cannot be resolved stay invalid ids, which the cycle reports
// as pending reasons (a workload naming a missing LocalQueue, say).
#pragma once

#include <string>
#include <unordered_map>

#include "sched/snapshot.h"

namespace tessera {

class SnapshotBuilder {
 public:
  FlavorId AddFlavor(ResourceFlavor flavor);
  NodeId AddNode(Node node);
  // The cohort of that name, created on first use.
  CohortId Cohort(const std::string& name);
  ClusterQueueId AddClusterQueue(ClusterQueue cq);
  // The namespace of that name, created (without quotas) on first use.
  NamespaceId Namespace(const std::string& name);
  // A namespace's labels, which ClusterQueues' namespaceSelectors match.
  void SetNamespaceLabels(const std::string& name, Labels labels);
  void AddResourceQuota(const std::string& ns, ResourceQuota quota);
  void AddBudget(const std::string& ns, NamespaceBudget budget);
  // Resolved against ClusterQueues at Build(), so order does not matter.
  LocalQueueId AddLocalQueue(const std::string& ns, const std::string& name, const std::string& cluster_queue);
  // Resolves w.namespace_name and w.local_queue_name at Build().
  WorkloadId AddWorkload(Workload w);

  FlavorId FlavorIdOf(const std::string& name) const;
  ClusterQueueId ClusterQueueIdOf(const std::string& name) const;
  NodeId NodeIdOf(const std::string& name) const;
  Workload& workload(WorkloadId id) { return snapshot_.workloads[id.value()]; }
  ClusterQueue& cluster_queue(ClusterQueueId id) { return snapshot_.cluster_queues[id.value()]; }

  ClusterSnapshot Build();

 private:
  ClusterSnapshot snapshot_;
  std::unordered_map<std::string, int32_t> flavors_, nodes_, cohorts_, queues_, namespaces_, local_queues_;
};

// Adds `w` to a snapshot already built, resolving its namespace (added, without
// quotas, when missing) and its LocalQueue by name as Build() does; names
// resolve by a scan, for the occasional workload asked about (a forecast).
WorkloadId AppendWorkload(ClusterSnapshot& snapshot, Workload w);

// Undoes the last AppendWorkload: removes its workload, and the namespace it
// added (`namespaces_before`: the snapshot's namespace count before it).
void RemoveAppended(ClusterSnapshot& snapshot, size_t namespaces_before);

}  // namespace tessera
