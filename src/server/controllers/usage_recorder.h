// Usage records: who held which GPU devices, of which flavor, from when to when,
// at what fraction (DESIGN.md section 8). One tessera.dev/v1 UsageRecord per
// admission of a Workload, in its namespace, named <workload>-<admittedAt seconds>:
//   spec: {workload, workloadUID, clusterQueue, flavor, gpuMilli,
//          devices: ["node/index=milli", ...], user, submitted (the Workload's
//          creationTimestamp), queue, priorityClass, pods, start, end}
// `start` is the admission's admittedAt; `end` is set when the admission ends:
// the Finished condition's time for work that completed, else the time the pass
// saw the admission gone (preempted work whose pods stopped, a deleted workload).
// Records outlive their workloads, so reports over past windows stay exact.
// `usedGpuMilliSeconds` is the GPU time actually used: the allocation times its
// devices' utilisation in their agents' latest samples, integrated every minute
// and at the end (sampled, so an estimate, where the allocation is exact).
#pragma once

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/cluster_gauges.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kUsageRecordKind = "tessera.dev/UsageRecord";

// Opens a record for every admission in force without one and closes the open
// records whose admission has ended. Idempotent: a second call writes nothing.
// `admitted`: the unfinished Workloads with an admission (WorkloadSubsets).
void ReconcileUsageRecords(const ObjectCache& cache, const ObjectCache::Active& admitted, const GpuUsageByDevice& usage,
                           Timestamp now, BatchedWriter& writer);

class UsageRecorder final : public Controller {
 public:
  std::string_view name() const override { return "usage-recorder"; }
  void Reconcile(PassContext& pass) override {
    ReconcileUsageRecords(pass.cache, pass.workloads.admitted(), pass.gpu_usage(), pass.now, pass.writer);
  }
};

}  // namespace tessera
