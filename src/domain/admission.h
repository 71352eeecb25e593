// Admission: where an admitted workload runs. Per pod set, the flavor; per pod,
// the node and the GPU devices with the milli-GPU taken on each.
#pragma once

#include <cstdint>
#include <vector>

#include "domain/ids.h"

namespace tessera {

struct DeviceShare {
  int32_t device = 0;  // position in Node::gpus
  int64_t milli = 0;   // 1000 for a whole device
  friend bool operator==(const DeviceShare&, const DeviceShare&) = default;
};

struct PodPlacement {
  NodeId node;
  std::vector<DeviceShare> gpus;
  friend bool operator==(const PodPlacement&, const PodPlacement&) = default;
};

struct PodSetAssignment {
  FlavorId flavor;
  int32_t count = 0;  // pods admitted: between minCount and count
  std::vector<PodPlacement> pods;
  friend bool operator==(const PodSetAssignment&, const PodSetAssignment&) = default;
};

struct Admission {
  ClusterQueueId cluster_queue;
  std::vector<PodSetAssignment> pod_sets;  // one per Workload::pod_sets, same order
  friend bool operator==(const Admission&, const Admission&) = default;
};

}  // namespace tessera
