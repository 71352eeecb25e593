#include "cli/demo.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>

#include "domain/quantity.h"
#include "sched/apply_plan.h"
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
  fmt::print(out, "\nGPU allocated: {} of {} ({}%), whole GPUs free: {}, stranded on shared devices: {} GPU ({}% of free)\n",
             FormatMilliDecimal(f.total_gpu_milli - f.free_gpu_milli), FormatMilliDecimal(f.total_gpu_milli),
             f.total_gpu_milli ? (f.total_gpu_milli - f.free_gpu_milli) * 100 / f.total_gpu_milli : 0,
             f.whole_free_gpus, FormatMilliDecimal(f.stranded_gpu_milli), f.FragmentationMilli() / 10);
  fmt::print(out, "Reservations held for blocked workloads: {}\n\nPending, by reason:\n", plan.reservations.size());
  for (const auto& [name, count] : reasons) fmt::print(out, "  {:<24} {}\n", name, count);

  fmt::print(out, "\nWhy the first pending workloads wait (tessera describe will show this):\n");
  int shown = 0;
  for (const PendingDecision& p : plan.pending) {
    if (shown++ == 3) break;
    fmt::print(out, "  {}: {}\n", snapshot.workload(p.workload).Key(), DescribePending(snapshot, p.workload, p.reason, now));
  }

  // An hour later, production inference arrives in the first team's queue: it
  // preempts lower-priority work, choosing the victims that lose the least.
  ClusterSnapshot later = snapshot;
  ApplyPlan(later, plan, now);
  const Timestamp then = now + Duration::Seconds(3600);
  Workload serving;
  serving.namespace_name = later.local_queues.front().namespace_name;
  serving.name = "llm-serving";
  serving.local_queue = LocalQueueId(0);
  serving.local_queue_name = later.local_queues.front().name;
  serving.ns = later.workloads.front().ns;
  for (const Workload& w : later.workloads) {
    if (w.local_queue.value() == 0) serving.ns = w.ns;
  }
  const PriorityClass production = DefaultPriorityClasses().front();
  serving.priority = production.value;
  serving.priority_class = production.name;
  serving.non_preemptible = production.non_preemptible;
  serving.creation_time = then;
  PodSet replicas{.name = "replica", .count = 4, .topology = TopologyPreference::kSpread};
  replicas.requests.set(ResourceKind::kGpu, 2000);
  replicas.requests.set(ResourceKind::kCpu, 8000);
  replicas.requests.set(ResourceKind::kMemory, int64_t{64} << 30);
  replicas.requests.set(ResourceKind::kPods, 1);
  replicas.limits = replicas.requests;
  serving.pod_sets.push_back(replicas);
  const WorkloadId serving_id(static_cast<int32_t>(later.workloads.size()));
  later.workloads.push_back(serving);

  const Plan second = RunCycle(later, SchedulerConfig{}, then);
  fmt::print(out, "\nOne hour later {} (production, 4 replicas x 2 GPUs, spread) is submitted to {}:\n",
             serving.Key(), later.cluster_queue(later.local_queue(serving.local_queue).cluster_queue).name);
  for (const PreemptDecision& p : second.preemptions) {
    static const char* kWhy[] = {"higher priority in the same ClusterQueue", "the owner reclaims lent quota",
                                 "a higher-priority borrower in the cohort"};
    const Workload& v = later.workload(p.victim);
    fmt::print(out, "  {} preempts {} ({}, priority {}): {}\n", later.workload(p.preemptor).Key(), v.Key(),
               v.priority_class, v.priority, kWhy[static_cast<int>(p.reason)]);
  }
  for (const PendingDecision& p : second.pending) {
    if (p.workload == serving_id) {
      fmt::print(out, "  {}: {}\n", serving.Key(), DescribePending(later, p.workload, p.reason, then));
    }
  }
  ClusterSnapshot final_state = later;
  ApplyPlan(final_state, second, then);
  const Plan third = RunCycle(final_state, SchedulerConfig{}, then + Duration::Seconds(30));
  for (const AdmitDecision& a : third.admissions) {
    if (a.workload != serving_id) continue;
    std::vector<std::string> nodes;
    for (const PodPlacement& pod : a.admission.pod_sets.front().pods) nodes.push_back(final_state.node(pod.node).name);
    fmt::print(out, "  30 s later, once the victims have terminated: {} runs on {}\n", serving.Key(),
               fmt::join(nodes, ", "));
  }
  return 0;
}

}  // namespace tessera
