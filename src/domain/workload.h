// Workload: the unit of admission (kueue.x-k8s.io Workload). One or more pod
// sets, admitted together or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "domain/admission.h"
#include "domain/ids.h"
#include "domain/labels.h"
#include "domain/priority_class.h"
#include "domain/resources.h"

namespace tessera {

enum class TopologyPreference {
  kNone,
  kSameNode,    // every pod of the pod set on one node
  kSameNvlink,  // each pod's GPUs within one NVLink domain (required, not preferred)
  kSameRack,    // the pod set within one rack (required, not preferred)
  kSpread,      // pods on distinct nodes where possible (inference replicas)
};

struct PodSet {
  std::string name = "main";
  int32_t count = 1;
  int32_t min_count = 0;  // gang minimum; 0 means count (all or nothing)
  // Per pod. kGpu in milli-GPU: below 1000 shares one device, else whole devices.
  // kGpuMemory asks for that much memory on one device instead of a fraction.
  // kPods is 1 (set by the builder) so that namespace "pods" ceilings count pods.
  Resources requests;
  Resources limits;  // for limits.* ceilings; defaults to requests
  Labels node_selector;
  std::vector<Toleration> tolerations;
  TopologyPreference topology = TopologyPreference::kNone;
  // kSpread only: nodes that other Workloads of the same service already use
  // (an InferenceService's replicas are one Workload each), avoided as this
  // pod set's own nodes are, where another node fits.
  std::vector<std::string> spread_from_nodes;

  int32_t MinCount() const { return min_count > 0 ? min_count : count; }
};

struct Workload {
  std::string namespace_name;
  std::string name;
  NamespaceId ns;
  LocalQueueId local_queue;  // invalid: names a LocalQueue that does not exist
  std::string local_queue_name;

  int32_t priority = 0;
  std::string priority_class;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  bool non_preemptible = false;

  Timestamp creation_time;
  Duration max_run = Duration::Infinite();  // runtime limit (maxRunSeconds); backfill relies on it
  std::vector<PodSet> pod_sets;

  // Set once admitted. An admitted workload holds its resources until it ends.
  std::optional<Admission> admission;
  Timestamp start_time;                      // when it was admitted
  std::optional<Timestamp> last_checkpoint;  // last reported checkpoint, for least-waste preemption
  bool evicting = false;  // preemption or deletion under way; still holds resources

  bool admitted() const { return admission.has_value(); }
  // Total requested per pod set count (the full gang), without flavor.
  Resources TotalRequests() const;
  // "namespace/name", for messages.
  std::string Key() const { return namespace_name + "/" + name; }
};

}  // namespace tessera
