// ClusterSnapshot: everything the scheduler core needs for one cycle, as values.
//
// Invariants (established by SnapshotBuilder, checked by ValidateSnapshot):
// every id refers to an element of the matching vector or is invalid where the
// type allows it (a LocalQueue naming a missing ClusterQueue); admitted
// workloads' placements name existing nodes and devices.
#pragma once

#include <vector>

#include "common/status.h"
#include "domain/cluster_queue.h"
#include "domain/node.h"
#include "domain/resource_flavor.h"
#include "domain/resource_quota.h"
#include "domain/workload.h"

namespace tessera {

struct ClusterSnapshot {
  std::vector<Node> nodes;
  std::vector<ResourceFlavor> flavors;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<Namespace> namespaces;
  std::vector<Workload> workloads;  // pending and admitted

  const Node& node(NodeId id) const { return nodes[id.value()]; }
  const ResourceFlavor& flavor(FlavorId id) const { return flavors[id.value()]; }
  const ClusterQueue& cluster_queue(ClusterQueueId id) const { return cluster_queues[id.value()]; }
  const LocalQueue& local_queue(LocalQueueId id) const { return local_queues[id.value()]; }
  const Workload& workload(WorkloadId id) const { return workloads[id.value()]; }
};

// Checks the invariants above; a broken one is a bug in whoever built the snapshot.
Status ValidateSnapshot(const ClusterSnapshot& snapshot);

}  // namespace tessera
