// ClusterGauges: the scheduler's view of the cluster after a pass, as Prometheus
// gauges (DESIGN.md section 8): per GPU device its allocated fraction; per node
// its readiness; per ClusterQueue and flavor nominal, allocated and borrowed GPUs;
// per ClusterQueue and per namespace allocated GPUs, pending workloads and the
// oldest one's wait.
#pragma once

#include <vector>

#include "common/time.h"
#include "sched/plan.h"
#include "sched/snapshot.h"
#include "server/metrics_registry.h"

namespace tessera {

// The state `plan` leaves: the snapshot's admitted work plus the plan's
// admissions (its preemption victims still hold their devices until they stop).
std::vector<GaugeFamily> ClusterGauges(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now);

}  // namespace tessera
