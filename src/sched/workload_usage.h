// What an admitted pod or workload charges: requests with the GPU amount taken
// from its placement (a GPU-memory request becomes the fraction of the device it
// was placed on).
#pragma once

#include "sched/snapshot.h"

namespace tessera {

inline int64_t PlacedGpuMilli(const PodPlacement& pod) {
  int64_t milli = 0;
  for (const DeviceShare& s : pod.gpus) milli += s.milli;
  return milli;
}

// Requests of one placed pod, as charged to quota.
inline Resources PodCharge(const PodSet& ps, const PodPlacement& pod) {
  Resources r = ps.requests;
  r.set(ResourceKind::kGpu, PlacedGpuMilli(pod));
  return r;
}

// Limits of one placed pod, for limits.* ceilings (GPU limits equal requests).
inline Resources PodLimitCharge(const PodSet& ps, const PodPlacement& pod) {
  Resources r = ps.limits;
  r.set(ResourceKind::kGpu, PlacedGpuMilli(pod));
  return r;
}

// Calls fn(flavor_index, charge) once per pod set of an admitted workload.
template <typename Fn>
void ForEachFlavorUsage(const ClusterSnapshot&, const Workload& w, Fn&& fn) {
  for (size_t p = 0; p < w.admission->pod_sets.size(); ++p) {
    const PodSetAssignment& a = w.admission->pod_sets[p];
    Resources total;
    for (const PodPlacement& pod : a.pods) total += PodCharge(w.pod_sets[p], pod);
    if (a.flavor.valid()) fn(a.flavor.value(), total);
  }
}

}  // namespace tessera
