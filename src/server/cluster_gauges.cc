#include "server/cluster_gauges.h"

#include <algorithm>
#include <map>
#include <string>

#include "sched/workload_usage.h"

namespace tessera {
namespace {

constexpr double kMilli = 1000.0;

std::string FlavorOfNode(const ClusterSnapshot& s, const Node& n) {
  for (const ResourceFlavor& f : s.flavors) {
    if (n.labels.Matches(f.node_labels)) return f.name;
  }
  return "";
}

}  // namespace

std::vector<GaugeFamily> ClusterGauges(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now) {
  // Every admission in force after the plan: (workload, admission).
  std::vector<std::pair<const Workload*, const Admission*>> admitted;
  for (const Workload& w : snapshot.workloads) {
    if (w.admission) admitted.emplace_back(&w, &*w.admission);
  }
  for (const AdmitDecision& a : plan.admissions) admitted.emplace_back(&snapshot.workload(a.workload), &a.admission);

  // Devices.
  std::vector<std::vector<int64_t>> device_used(snapshot.nodes.size());
  for (size_t n = 0; n < snapshot.nodes.size(); ++n) device_used[n].assign(snapshot.nodes[n].gpus.size(), 0);
  std::map<std::pair<std::string, std::string>, int64_t> cq_flavor_used;  // (cq, flavor) -> GPU milli
  std::map<std::string, int64_t> ns_used;
  for (const auto& [w, a] : admitted) {
    for (size_t p = 0; p < a->pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a->pod_sets[p];
      for (const PodPlacement& pod : psa.pods) {
        for (const DeviceShare& d : pod.gpus) device_used[pod.node.value()][d.device] += d.milli;
        const int64_t milli = PlacedGpuMilli(pod);
        ns_used[w->namespace_name] += milli;
        if (a->cluster_queue.valid() && psa.flavor.valid()) {
          cq_flavor_used[{snapshot.cluster_queue(a->cluster_queue).name, snapshot.flavor(psa.flavor).name}] += milli;
        }
      }
    }
  }
  GaugeFamily device{"tessera_gpu_allocated_ratio",
                     "Fraction of the GPU device allocated to admitted work (0 to 1)", {}};
  GaugeFamily ready{"tessera_node_ready", "1 when the node's lease is current and it takes work, else 0", {}};
  GaugeFamily node_gpus{"tessera_node_gpus", "GPU devices on the node", {}};
  for (size_t n = 0; n < snapshot.nodes.size(); ++n) {
    const Node& node = snapshot.nodes[n];
    const std::string flavor = FlavorOfNode(snapshot, node);
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      device.samples.push_back({{{"node", node.name},
                                 {"gpu", std::to_string(node.gpus[g].index)},
                                 {"model", node.gpus[g].model},
                                 {"flavor", flavor}},
                                static_cast<double>(device_used[n][g]) / kMilli});
    }
    ready.samples.push_back({{{"node", node.name}}, node.Schedulable() ? 1.0 : 0.0});
    node_gpus.samples.push_back({{{"node", node.name}, {"flavor", flavor}}, static_cast<double>(node.gpus.size())});
  }

  // ClusterQueues per flavor: nominal, allocated, borrowed.
  GaugeFamily nominal{"tessera_cluster_queue_nominal_gpus", "Nominal GPU quota of the ClusterQueue in the flavor", {}};
  GaugeFamily allocated{"tessera_cluster_queue_allocated_gpus", "GPUs allocated to the ClusterQueue's admitted work", {}};
  GaugeFamily borrowed{"tessera_cluster_queue_borrowed_gpus",
                       "GPUs the ClusterQueue uses above its nominal quota (borrowed from its cohort)", {}};
  for (const ClusterQueue& cq : snapshot.cluster_queues) {
    const ResourceGroup* g = cq.GroupFor(ResourceKind::kGpu);
    if (g == nullptr) continue;
    for (const FlavorQuotas& fq : g->flavors) {
      if (!fq.flavor.valid()) continue;
      const std::string flavor = snapshot.flavor(fq.flavor).name;
      const ResourceQuotaSpec* q = fq.Find(ResourceKind::kGpu);
      const int64_t nom = q != nullptr ? q->nominal : 0;
      const int64_t used = cq_flavor_used[{cq.name, flavor}];
      const MetricLabels labels{{"cluster_queue", cq.name}, {"cohort", cq.cohort.valid() ? snapshot.cohorts[cq.cohort.value()].name : ""}, {"flavor", flavor}};
      nominal.samples.push_back({labels, static_cast<double>(nom) / kMilli});
      allocated.samples.push_back({labels, static_cast<double>(used) / kMilli});
      borrowed.samples.push_back({labels, static_cast<double>(std::max<int64_t>(used - nom, 0)) / kMilli});
    }
  }

  // Pending work, by ClusterQueue and namespace.
  GaugeFamily cq_pending{"tessera_cluster_queue_pending_workloads", "Workloads waiting in the ClusterQueue", {}};
  GaugeFamily cq_oldest{"tessera_cluster_queue_oldest_pending_seconds",
                        "How long the longest-waiting workload of the ClusterQueue has waited", {}};
  GaugeFamily ns_pending{"tessera_namespace_pending_workloads", "Workloads of the namespace waiting for admission", {}};
  GaugeFamily ns_alloc{"tessera_namespace_allocated_gpus", "GPUs allocated to the namespace's admitted work", {}};
  std::map<std::string, std::pair<int64_t, int64_t>> by_cq;  // cq -> (pending, oldest wait ms)
  std::map<std::string, int64_t> by_ns;
  for (const ClusterQueue& cq : snapshot.cluster_queues) by_cq[cq.name] = {0, 0};
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = snapshot.workload(p.workload);
    ++by_ns[w.namespace_name];
    if (!w.local_queue.valid()) continue;
    const ClusterQueueId cq = snapshot.local_queue(w.local_queue).cluster_queue;
    if (!cq.valid()) continue;
    auto& [count, oldest] = by_cq[snapshot.cluster_queue(cq).name];
    ++count;
    oldest = std::max(oldest, (now - w.creation_time).ms);
  }
  for (const auto& [cq, v] : by_cq) {
    cq_pending.samples.push_back({{{"cluster_queue", cq}}, static_cast<double>(v.first)});
    cq_oldest.samples.push_back({{{"cluster_queue", cq}}, static_cast<double>(v.second) / kMilli});
  }
  for (const Namespace& ns : snapshot.namespaces) {
    ns_pending.samples.push_back({{{"namespace", ns.name}}, static_cast<double>(by_ns[ns.name])});
    ns_alloc.samples.push_back({{{"namespace", ns.name}}, static_cast<double>(ns_used[ns.name]) / kMilli});
  }
  return {device, ready, node_gpus, nominal, allocated, borrowed, cq_pending, cq_oldest, ns_pending, ns_alloc};
}

}  // namespace tessera
