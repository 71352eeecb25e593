#include "cli/demo.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>

#include "domain/quantity.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sim/synthetic_fleet.h"

namespace tessera {

int RunDemo(const DemoOptions& o, std::ostream& out) {
  SyntheticFleetSpec spec;
  spec.nodes = o.nodes;
  spec.nodes_per_rack = 4;
  spec.cluster_queues = o.queues;
  spec.cohorts = 1;
  spec.workloads = o.workloads;
  spec.seed = o.seed;
  const ClusterSnapshot snapshot = MakeSyntheticFleet(spec);
  const Timestamp now = Timestamp::FromSeconds(2'000'000);

  int64_t gpus = 0;
  for (const Node& n : snapshot.nodes) gpus += static_cast<int64_t>(n.gpus.size());
  fmt::print(out, "Tessera scheduler core demo: {} nodes, {} GPUs (simulated H100-80GB) in 2 flavors, {} racks\n",
             snapshot.nodes.size(), gpus, (o.nodes + spec.nodes_per_rack - 1) / spec.nodes_per_rack);
  fmt::print(out, "{} ClusterQueues in one cohort, {} workloads queued (60% 1 GPU, 20% fractional, 15% 2-8 GPUs, 5% gangs)\n\n",
             snapshot.cluster_queues.size(), snapshot.workloads.size());

  const Plan plan = RunCycle(snapshot, SchedulerConfig{}, now);

  struct Row {
    int admitted = 0;
    int pending = 0;
    int64_t gpu_milli = 0;
  };
  std::map<std::string, Row> rows;
  for (const AdmitDecision& a : plan.admissions) {
    const ClusterQueue& cq = snapshot.cluster_queue(a.admission.cluster_queue);
    Row& r = rows[cq.name];
    ++r.admitted;
    for (const PodSetAssignment& ps : a.admission.pod_sets) {
      for (const PodPlacement& pod : ps.pods) {
        for (const DeviceShare& d : pod.gpus) r.gpu_milli += d.milli;
      }
    }
  }
  std::map<std::string, int> reasons;
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = snapshot.workload(p.workload);
    const LocalQueue& lq = snapshot.local_queue(w.local_queue);
    ++rows[snapshot.cluster_queue(lq.cluster_queue).name].pending;
    ++reasons[std::string(PendingReasonName(p.reason.code))];
  }
  fmt::print(out, "{:<12} {:>9} {:>8} {:>10}\n", "QUEUE", "ADMITTED", "PENDING", "GPUS");
  for (const auto& [name, r] : rows) {
    fmt::print(out, "{:<12} {:>9} {:>8} {:>10}\n", name, r.admitted, r.pending, FormatMilliDecimal(r.gpu_milli));
  }
  const FragmentationReport& f = plan.fragmentation;
  fmt::print(out, "\nGPU allocated: {} of {} ({}%), whole GPUs free: {}, stranded on shared devices: {} GPU ({}‰ of free)\n",
             FormatMilliDecimal(f.total_gpu_milli - f.free_gpu_milli), FormatMilliDecimal(f.total_gpu_milli),
             f.total_gpu_milli ? (f.total_gpu_milli - f.free_gpu_milli) * 100 / f.total_gpu_milli : 0,
             f.whole_free_gpus, FormatMilliDecimal(f.stranded_gpu_milli), f.FragmentationMilli());
  fmt::print(out, "Reservations held for blocked workloads: {}\n\nPending, by reason:\n", plan.reservations.size());
  for (const auto& [name, count] : reasons) fmt::print(out, "  {:<24} {}\n", name, count);

  fmt::print(out, "\nWhy the first pending workloads wait (tessera describe will show this):\n");
  int shown = 0;
  for (const PendingDecision& p : plan.pending) {
    if (shown++ == 5) break;
    fmt::print(out, "  {}: {}\n", snapshot.workload(p.workload).Key(), DescribePending(snapshot, p.workload, p.reason, now));
  }
  return 0;
}

}  // namespace tessera
