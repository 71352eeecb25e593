#include "sim/synthetic_fleet.h"

#include <fmt/format.h>

#include <random>

#include "sched/snapshot_builder.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// Uniform integer in [lo, hi] from the raw generator: independent of the
// standard library's distribution algorithms, so identical everywhere.
int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

PodSet MakePodSet(std::mt19937_64& rng) {
  PodSet ps;
  const int64_t roll = Uniform(rng, 0, 99);
  int64_t gpu_milli = 1000;
  if (roll < 60) {
    gpu_milli = 1000;
  } else if (roll < 80) {
    static constexpr int64_t kFractions[] = {250, 250, 500, 750};
    gpu_milli = kFractions[Uniform(rng, 0, 3)];
  } else if (roll < 95) {
    static constexpr int64_t kMulti[] = {2000, 4000, 8000};
    gpu_milli = kMulti[Uniform(rng, 0, 2)];
  } else {
    static constexpr int64_t kGangPodGpus[] = {1000, 2000, 4000, 8000};
    gpu_milli = kGangPodGpus[Uniform(rng, 0, 3)];
    ps.count = static_cast<int32_t>(Uniform(rng, 2, 32));
    ps.name = "worker";
  }
  // CPU and memory in proportion: 4 cores and 32Gi per GPU, at least 1 core.
  const int64_t cpu = std::max<int64_t>(1000, gpu_milli * 4);
  ps.requests.set(ResourceKind::kGpu, gpu_milli);
  ps.requests.set(ResourceKind::kCpu, cpu);
  ps.requests.set(ResourceKind::kMemory, std::max<int64_t>(4, gpu_milli * 32 / 1000) * kGi);
  ps.requests.set(ResourceKind::kPods, 1);
  ps.limits = ps.requests;
  return ps;
}

}  // namespace

ClusterSnapshot MakeSyntheticFleet(const SyntheticFleetSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  SnapshotBuilder b;
  const FlavorId spot = b.AddFlavor(ResourceFlavor{.name = "h100-spot", .node_labels = {{"tessera.dev/flavor", "h100-spot"}}});
  const FlavorId ondemand =
      b.AddFlavor(ResourceFlavor{.name = "h100-ondemand", .node_labels = {{"tessera.dev/flavor", "h100-ondemand"}}});

  for (int32_t i = 0; i < spec.nodes; ++i) {
    Node n;
    n.name = fmt::format("node-{:05}", i);
    const bool is_spot = i % 2 == 0;
    n.labels.Set("tessera.dev/flavor", is_spot ? "h100-spot" : "h100-ondemand");
    n.rack = fmt::format("rack-{:04}", i / spec.nodes_per_rack);
    n.cpu_milli = spec.gpus_per_node * 16 * 1000;
    n.memory_bytes = spec.gpus_per_node * 128 * kGi;
    for (int32_t g = 0; g < spec.gpus_per_node; ++g) {
      n.gpus.push_back(GpuDevice{.index = g,
                                 .uuid = fmt::format("GPU-{:05}-{}", i, g),
                                 .model = "H100-80GB",
                                 .memory_bytes = 80 * kGi,
                                 .nvlink_domain = g * spec.nvlink_domains_per_node / spec.gpus_per_node});
    }
    b.AddNode(std::move(n));
  }

  // Equal nominal shares of each flavor's GPUs (and CPU/memory in proportion).
  const int64_t flavor_gpus = int64_t{spec.nodes / 2} * spec.gpus_per_node;
  const int64_t per_queue_gpu = flavor_gpus / std::max(1, spec.cluster_queues) * 1000;  // whole GPUs
  const auto classes = DefaultPriorityClasses();
  for (int32_t q = 0; q < spec.cluster_queues; ++q) {
    ClusterQueue cq;
    cq.name = fmt::format("team-{:03}", q);
    cq.cohort = b.Cohort(fmt::format("cohort-{:02}", q % std::max(1, spec.cohorts)));
    cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
    ResourceGroup g;
    g.covered_resources = {ResourceKind::kCpu, ResourceKind::kMemory, ResourceKind::kGpu};
    for (FlavorId f : {spot, ondemand}) {
      FlavorQuotas fq{.flavor = f};
      fq.resources.push_back({.resource = ResourceKind::kGpu, .nominal = per_queue_gpu});
      fq.resources.push_back({.resource = ResourceKind::kCpu, .nominal = per_queue_gpu * 16});
      fq.resources.push_back({.resource = ResourceKind::kMemory, .nominal = per_queue_gpu / 1000 * 128 * kGi});
      g.flavors.push_back(std::move(fq));
    }
    cq.resource_groups.push_back(std::move(g));
    b.AddClusterQueue(std::move(cq));
    b.AddLocalQueue(fmt::format("ns-{:03}", q), "default", fmt::format("team-{:03}", q));
  }

  for (int32_t i = 0; i < spec.workloads; ++i) {
    Workload w;
    const int32_t q = static_cast<int32_t>(Uniform(rng, 0, spec.cluster_queues - 1));
    w.namespace_name = fmt::format("ns-{:03}", q);
    w.name = fmt::format("job-{:06}", i);
    w.local_queue_name = "default";
    const int64_t p = Uniform(rng, 0, 99);
    const PriorityClass& pc = classes[p < 5 ? 0 : p < 35 ? 1 : p < 85 ? 2 : 3];
    w.priority = pc.value;
    w.priority_class = pc.name;
    w.preemption_policy = pc.preemption_policy;
    w.non_preemptible = pc.non_preemptible;
    w.creation_time = Timestamp::FromSeconds(1'000'000 + i);
    w.max_run = Duration::Seconds(Uniform(rng, 1, 24) * 3600);
    w.pod_sets.push_back(MakePodSet(rng));
    b.AddWorkload(std::move(w));
  }
  return b.Build();
}

}  // namespace tessera
