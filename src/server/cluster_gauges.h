// ClusterGauges: the scheduler's view of the cluster after a pass, as Prometheus
// gauges (DESIGN.md section 8): per GPU device its allocated fraction; per node
// its readiness; per ClusterQueue and flavor nominal, allocated and borrowed GPUs;
// per ClusterQueue and per namespace allocated GPUs, pending workloads and the
// oldest one's wait.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/time.h"
#include "sched/plan.h"
#include "sched/snapshot.h"
#include "server/metrics_registry.h"

namespace tessera {

// A device's last sample, as its agent published it on the Node.
struct GpuUsageSample {
  double utilization = 0;  // 0..1
  int64_t memory_used_bytes = 0;
};
using GpuUsageByDevice = std::map<std::pair<std::string, int32_t>, GpuUsageSample>;  // (node, CUDA index)

// From Node objects' tessera.dev/gpu-usage annotations (common/node_annotations.h);
// a node without one, or with a malformed one, contributes nothing.
GpuUsageByDevice GpuUsageFromNodes(const std::vector<const nlohmann::json*>& nodes);

// The last sample of each device a Workload's admission placed it on (its
// status.admission.podSetAssignments[].placements[].devices), in order;
// nullopt for a device whose agent has published none.
std::vector<std::optional<GpuUsageSample>> WorkloadDeviceSamples(const nlohmann::json& workload,
                                                                 const GpuUsageByDevice& usage);

// The state `plan` leaves: the snapshot's admitted work plus the plan's
// admissions (its preemption victims still hold their devices until they stop).
// With `usage`: each device's utilisation and memory used, and per ClusterQueue
// and namespace the GPUs used (allocation x its device's utilisation).
std::vector<GaugeFamily> ClusterGauges(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now,
                                       const GpuUsageByDevice& usage = {});

}  // namespace tessera
