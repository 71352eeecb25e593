#include "sched/snapshot.h"

#include <fmt/format.h>

namespace tessera {
namespace {

template <typename Id, typename Vec>
bool InRange(Id id, const Vec& v) {
  return id.valid() && id.value() < static_cast<int32_t>(v.size());
}

}  // namespace

Status ValidateSnapshot(const ClusterSnapshot& s) {
  for (const ClusterQueue& cq : s.cluster_queues) {
    if (cq.cohort.valid() && !InRange(cq.cohort, s.cohorts)) {
      return Status::Internal(fmt::format("ClusterQueue {} names cohort id {}", cq.name, cq.cohort.value()));
    }
    for (const ResourceGroup& g : cq.resource_groups) {
      for (const FlavorQuotas& fq : g.flavors) {
        if (fq.flavor.valid() && !InRange(fq.flavor, s.flavors)) {
          return Status::Internal(fmt::format("ClusterQueue {} names flavor id {}", cq.name, fq.flavor.value()));
        }
      }
    }
  }
  for (const LocalQueue& lq : s.local_queues) {
    if (lq.cluster_queue.valid() && !InRange(lq.cluster_queue, s.cluster_queues)) {
      return Status::Internal(fmt::format("LocalQueue {}/{} names a bad ClusterQueue id", lq.namespace_name, lq.name));
    }
  }
  for (const Workload& w : s.workloads) {
    if (w.local_queue.valid() && !InRange(w.local_queue, s.local_queues)) {
      return Status::Internal(fmt::format("workload {} names a bad LocalQueue id", w.Key()));
    }
    if (w.ns.valid() && !InRange(w.ns, s.namespaces)) {
      return Status::Internal(fmt::format("workload {} names a bad namespace id", w.Key()));
    }
    if (w.pod_sets.empty()) return Status::Internal(fmt::format("workload {} has no pod sets", w.Key()));
    if (!w.admission) continue;
    if (w.admission->pod_sets.size() != w.pod_sets.size()) {
      return Status::Internal(fmt::format("workload {} admission has {} pod sets, workload {}", w.Key(),
                                          w.admission->pod_sets.size(), w.pod_sets.size()));
    }
    for (const PodSetAssignment& a : w.admission->pod_sets) {
      if (a.flavor.valid() && !InRange(a.flavor, s.flavors)) {
        return Status::Internal(fmt::format("workload {} admitted in a bad flavor id", w.Key()));
      }
      for (const PodPlacement& pod : a.pods) {
        if (!InRange(pod.node, s.nodes)) return Status::Internal(fmt::format("workload {} placed on a bad node id", w.Key()));
        for (const DeviceShare& d : pod.gpus) {
          if (d.device < 0 || d.device >= static_cast<int32_t>(s.node(pod.node).gpus.size())) {
            return Status::Internal(fmt::format("workload {} placed on device {} of node {}, which it lacks", w.Key(),
                                                d.device, s.node(pod.node).name));
          }
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace tessera
