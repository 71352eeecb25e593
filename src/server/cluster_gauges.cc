#include "server/cluster_gauges.h"

#include <algorithm>
#include <map>
#include <string>

#include "common/node_annotations.h"
#include "sched/workload_usage.h"
#include "server/object_json.h"

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

GpuUsageByDevice GpuUsageFromNodes(const std::vector<const nlohmann::json*>& nodes) {
  GpuUsageByDevice out;
  for (const nlohmann::json* node : nodes) {
    const nlohmann::json& meta = node->value("metadata", nlohmann::json::object());
    const std::string text =
        meta.value("annotations", nlohmann::json::object()).value(std::string(kGpuUsageAnnotation), "");
    if (text.empty()) continue;
    const nlohmann::json devices = nlohmann::json::parse(text, nullptr, false);
    if (!devices.is_array()) continue;
    for (const nlohmann::json& d : devices) {
      if (!d.is_object() || !d.contains("index") || !d["index"].is_number_integer()) continue;
      const double percent = d.value("utilizationPercent", 0.0);
      out[{meta.value("name", ""), d["index"].get<int32_t>()}] =
          GpuUsageSample{std::clamp(percent / 100.0, 0.0, 1.0), d.value("memoryUsedBytes", int64_t{0})};
    }
  }
  return out;
}

std::vector<std::optional<GpuUsageSample>> WorkloadDeviceSamples(const nlohmann::json& workload,
                                                                 const GpuUsageByDevice& usage) {
  std::vector<std::optional<GpuUsageSample>> out;
  for (const nlohmann::json& psa : ArrayAt(workload, {"status", "admission", "podSetAssignments"})) {
    for (const nlohmann::json& pod : psa.value("placements", nlohmann::json::array())) {
      for (const nlohmann::json& d : pod.value("devices", nlohmann::json::array())) {
        auto it = usage.find({pod.value("node", ""), d.value("index", 0)});
        out.push_back(it == usage.end() ? std::nullopt : std::optional<GpuUsageSample>(it->second));
      }
    }
  }
  return out;
}

std::vector<GaugeFamily> ClusterGauges(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now,
                                       const GpuUsageByDevice& usage) {
  auto utilization = [&](const Node& node, int32_t device) {
    auto it = usage.find({node.name, node.gpus[device].index});
    return it == usage.end() ? 0.0 : it->second.utilization;
  };
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
  std::map<std::pair<std::string, std::string>, double> cq_flavor_busy;  // GPUs x utilisation
  std::map<std::string, double> ns_busy;
  for (const auto& [w, a] : admitted) {
    for (size_t p = 0; p < a->pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a->pod_sets[p];
      for (const PodPlacement& pod : psa.pods) {
        double busy = 0;
        for (const DeviceShare& d : pod.gpus) {
          device_used[pod.node.value()][d.device] += d.milli;
          busy += static_cast<double>(d.milli) / kMilli * utilization(snapshot.node(pod.node), d.device);
        }
        const int64_t milli = PlacedGpuMilli(pod);
        ns_used[w->namespace_name] += milli;
        ns_busy[w->namespace_name] += busy;
        if (a->cluster_queue.valid() && psa.flavor.valid()) {
          const std::pair<std::string, std::string> key{snapshot.cluster_queue(a->cluster_queue).name,
                                                        snapshot.flavor(psa.flavor).name};
          cq_flavor_used[key] += milli;
          cq_flavor_busy[key] += busy;
        }
      }
    }
  }
  GaugeFamily device{"tessera_gpu_allocated_ratio",
                     "Fraction of the GPU device allocated to admitted work (0 to 1)", {}};
  GaugeFamily ready{"tessera_node_ready", "1 when the node's lease is current and it takes work, else 0", {}};
  GaugeFamily node_gpus{"tessera_node_gpus", "GPU devices on the node", {}};
  GaugeFamily device_util{"tessera_gpu_utilization_ratio",
                          "GPU utilisation of the device (0 to 1) in its agent's last sample", {}};
  GaugeFamily device_memory{"tessera_gpu_memory_used_bytes", "GPU memory in use on the device in its agent's last sample",
                            {}};
  for (size_t n = 0; n < snapshot.nodes.size(); ++n) {
    const Node& node = snapshot.nodes[n];
    const std::string flavor = FlavorOfNode(snapshot, node);
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      const MetricLabels labels{{"node", node.name},
                                {"gpu", std::to_string(node.gpus[g].index)},
                                {"model", node.gpus[g].model},
                                {"flavor", flavor}};
      device.samples.push_back({labels, static_cast<double>(device_used[n][g]) / kMilli});
      if (auto it = usage.find({node.name, node.gpus[g].index}); it != usage.end()) {
        device_util.samples.push_back({labels, it->second.utilization});
        device_memory.samples.push_back({labels, static_cast<double>(it->second.memory_used_bytes)});
      }
    }
    ready.samples.push_back({{{"node", node.name}}, node.Schedulable() ? 1.0 : 0.0});
    node_gpus.samples.push_back({{{"node", node.name}, {"flavor", flavor}}, static_cast<double>(node.gpus.size())});
  }

  // ClusterQueues per flavor: nominal, allocated, borrowed.
  GaugeFamily nominal{"tessera_cluster_queue_nominal_gpus", "Nominal GPU quota of the ClusterQueue in the flavor", {}};
  GaugeFamily allocated{"tessera_cluster_queue_allocated_gpus", "GPUs allocated to the ClusterQueue's admitted work", {}};
  GaugeFamily borrowed{"tessera_cluster_queue_borrowed_gpus",
                       "GPUs the ClusterQueue uses above its nominal quota (borrowed from its cohort)", {}};
  GaugeFamily cq_busy{"tessera_cluster_queue_used_gpus",
                      "GPUs the ClusterQueue's work keeps busy: allocation x device utilisation", {}};
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
      cq_busy.samples.push_back({labels, cq_flavor_busy[{cq.name, flavor}]});
    }
  }

  // Pending work, by ClusterQueue and namespace.
  GaugeFamily cq_pending{"tessera_cluster_queue_pending_workloads", "Workloads waiting in the ClusterQueue", {}};
  GaugeFamily cq_oldest{"tessera_cluster_queue_oldest_pending_seconds",
                        "How long the longest-waiting workload of the ClusterQueue has waited", {}};
  GaugeFamily ns_pending{"tessera_namespace_pending_workloads", "Workloads of the namespace waiting for admission", {}};
  GaugeFamily ns_oldest{"tessera_namespace_oldest_pending_seconds",
                        "How long the namespace's longest-waiting workload has waited", {}};
  GaugeFamily ns_alloc{"tessera_namespace_allocated_gpus", "GPUs allocated to the namespace's admitted work", {}};
  GaugeFamily ns_busy_gpus{"tessera_namespace_used_gpus",
                           "GPUs the namespace's work keeps busy: allocation x device utilisation", {}};
  std::map<std::string, std::pair<int64_t, int64_t>> by_cq;  // cq -> (pending, oldest wait ms)
  std::map<std::string, int64_t> by_ns, ns_oldest_ms;
  for (const ClusterQueue& cq : snapshot.cluster_queues) by_cq[cq.name] = {0, 0};
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = snapshot.workload(p.workload);
    ++by_ns[w.namespace_name];
    ns_oldest_ms[w.namespace_name] = std::max(ns_oldest_ms[w.namespace_name], (now - w.creation_time).ms);
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
    ns_oldest.samples.push_back({{{"namespace", ns.name}}, static_cast<double>(ns_oldest_ms[ns.name]) / kMilli});
    ns_alloc.samples.push_back({{{"namespace", ns.name}}, static_cast<double>(ns_used[ns.name]) / kMilli});
    ns_busy_gpus.samples.push_back({{{"namespace", ns.name}}, ns_busy[ns.name]});
  }
  return {device,    device_util, device_memory, ready,    node_gpus,  nominal,      allocated,
          borrowed,  cq_busy,     cq_pending,    cq_oldest, ns_pending, ns_oldest,    ns_alloc,
          ns_busy_gpus};
}

}  // namespace tessera
