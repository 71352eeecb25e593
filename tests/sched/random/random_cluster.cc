#include "tests/sched/random/random_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "domain/quantity.h"
#include "sched/apply_plan.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sched/snapshot_builder.h"

namespace tessera::testing {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kHourMs = 3'600'000;

// A random order of 0..n-1 (Fisher-Yates on the raw generator).
std::vector<int32_t> Shuffled(Rng& rng, int32_t n) {
  std::vector<int32_t> v(n);
  for (int32_t i = 0; i < n; ++i) v[i] = i;
  for (int32_t i = n - 1; i > 0; --i) std::swap(v[i], v[rng.Uniform(0, i)]);
  return v;
}

Toleration RandomToleration(Rng& rng) {
  switch (rng.Uniform(0, 3)) {
    case 0: return Toleration{.key = "dedicated", .op = Toleration::Operator::kExists};
    case 1: return Toleration{.key = "dedicated", .op = Toleration::Operator::kEqual, .value = "training"};
    case 2:
      return Toleration{.key = "dedicated",
                        .op = Toleration::Operator::kEqual,
                        .value = "inference",
                        .effect = TaintEffect::kNoExecute};
    default: return Toleration{.key = "", .op = Toleration::Operator::kExists};  // tolerates everything
  }
}

PodSet RandomPodSet(Rng& rng, const WorkloadMix& mix, int index) {
  PodSet ps;
  ps.name = index == 0 ? "main" : fmt::format("set{}", index);
  const int64_t roll = rng.Uniform(0, 99);
  if (roll < 25) {
    ps.requests.set(ResourceKind::kGpu, rng.Pick(std::vector<int64_t>{250, 500, 750}));
  } else if (roll < 70) {
    // Whole GPUs, small counts most often.
    const int64_t r = rng.Uniform(0, 99);
    const int64_t gpus = r < 40 ? 1 : r < 65 ? 2 : r < 80 ? 4 : r < 90 ? 8 : rng.Uniform(3, 7);
    ps.requests.set(ResourceKind::kGpu, gpus * 1000);
  } else if (roll < 82) {
    // GPU memory instead of a fraction; 100Gi fits no device.
    ps.requests.set(ResourceKind::kGpuMemory, rng.Pick(std::vector<int64_t>{10, 20, 40, 70, 100}) * kGi);
  }  // else CPU only
  if (rng.Chance(30)) {
    ps.count = static_cast<int32_t>(rng.Uniform(2, 6));
    ps.min_count = rng.Chance(50) ? 0 : static_cast<int32_t>(rng.Uniform(1, ps.count));
  }
  ps.requests.set(ResourceKind::kCpu, rng.Uniform(1, 8) * 500);
  ps.requests.set(ResourceKind::kMemory, rng.Uniform(1, 32) * kGi);
  ps.requests.set(ResourceKind::kPods, 1);
  ps.limits = ps.requests;
  if (rng.Chance(20)) ps.limits.set(ResourceKind::kCpu, ps.requests.cpu() * 2);
  if (rng.Chance(15)) ps.node_selector.Set("zone", rng.Chance(90) ? rng.Pick(mix.zones) : std::string("nowhere"));
  if (rng.Chance(20)) ps.tolerations.push_back(RandomToleration(rng));
  if (rng.Chance(30)) {
    static const std::vector<TopologyPreference> kTopologies = {
        TopologyPreference::kSameNode, TopologyPreference::kSameNvlink, TopologyPreference::kSameRack,
        TopologyPreference::kSpread};
    ps.topology = rng.Pick(kTopologies);
  }
  return ps;
}

Workload RandomWorkload(Rng& rng, WorkloadMix& mix, const std::pair<std::string, std::string>& queue,
                        Timestamp created) {
  Workload w;
  w.namespace_name = queue.first;
  w.local_queue_name = queue.second;
  w.name = fmt::format("w{}", mix.next_id++);
  const PriorityClass& pc = rng.Pick(mix.priority_classes);
  w.priority = pc.value;
  w.priority_class = pc.name;
  w.preemption_policy = pc.preemption_policy;
  w.non_preemptible = pc.non_preemptible;
  w.creation_time = created;
  if (rng.Chance(60)) w.max_run = Duration::Seconds(rng.Uniform(1, 16) * 900);
  const int pod_sets = rng.Chance(20) ? 2 : 1;
  for (int p = 0; p < pod_sets; ++p) w.pod_sets.push_back(RandomPodSet(rng, mix, p));
  return w;
}

Node RandomNode(Rng& rng, int32_t i, const std::vector<std::string>& pools, const std::vector<std::string>& zones,
                int32_t racks) {
  Node n;
  n.name = fmt::format("n{}", i);
  if (!pools.empty() && rng.Chance(95)) n.labels.Set("pool", rng.Pick(pools));
  n.labels.Set("zone", rng.Pick(zones));
  if (rng.Chance(90)) n.rack = fmt::format("r{}", rng.Uniform(0, racks - 1));
  const auto gpus = static_cast<int32_t>(rng.Uniform(1, 8));
  const int64_t memory = rng.Chance(50) ? 80 * kGi : 40 * kGi;
  const int64_t nvlink_mode = rng.Uniform(0, 3);
  for (int32_t g = 0; g < gpus; ++g) {
    int32_t domain = 0;
    switch (nvlink_mode) {
      case 0: domain = 0; break;                                  // one domain
      case 1: domain = g < (gpus + 1) / 2 ? 0 : 1; break;         // two halves
      case 2: domain = g; break;                                  // no NVLink
      default: domain = static_cast<int32_t>(rng.Uniform(0, 2));  // irregular
    }
    n.gpus.push_back(GpuDevice{.index = g,
                               .uuid = fmt::format("GPU-{}-{}", i, g),
                               .model = memory == 80 * kGi ? "H100-80GB" : "A100-40GB",
                               .memory_bytes = rng.Chance(10) ? 20 * kGi : memory,
                               .nvlink_domain = domain});
  }
  // CPU and memory per GPU vary, so that some nodes run out of CPU before GPUs.
  n.cpu_milli = gpus * rng.Uniform(3, 16) * 1000;
  n.memory_bytes = gpus * rng.Uniform(24, 128) * kGi;
  if (rng.Chance(20)) {
    switch (rng.Uniform(0, 2)) {
      case 0: n.taints.push_back(Taint{.key = "dedicated", .value = "training"}); break;
      case 1:
        n.taints.push_back(Taint{.key = "dedicated", .value = "inference", .effect = TaintEffect::kNoExecute});
        break;
      default: n.taints.push_back(Taint{.key = "spot", .value = "true", .effect = TaintEffect::kPreferNoSchedule});
    }
  }
  n.ready = !rng.Chance(5);
  n.unschedulable = rng.Chance(5);
  return n;
}

// GPUs are the scarce resource: CPU and memory quotas are mostly generous, so
// that GPU quota (and so preemption) decides most admissions.
int64_t RandomNominal(Rng& rng, ResourceKind k) {
  const bool generous = rng.Chance(75);
  switch (k) {
    case ResourceKind::kGpu: return rng.Chance(20) ? rng.Uniform(0, 8) * 250 : rng.Uniform(0, 12) * 1000;
    case ResourceKind::kCpu: return (generous ? rng.Uniform(32, 256) : rng.Uniform(1, 32)) * 1000;
    case ResourceKind::kMemory: return (generous ? rng.Uniform(32, 256) : rng.Uniform(1, 32)) * 8 * kGi;
    case ResourceKind::kGpuMemory: return rng.Uniform(0, 16) * 40 * kGi;
    case ResourceKind::kPods: return rng.Uniform(0, 20);
  }
  return 0;
}

FlavorQuotas RandomFlavorQuotas(Rng& rng, FlavorId flavor, const std::vector<ResourceKind>& covered) {
  FlavorQuotas fq{.flavor = flavor};
  for (ResourceKind k : covered) {
    if (rng.Chance(3)) continue;  // covered but no quota: nominal 0
    ResourceQuotaSpec spec{.resource = k, .nominal = RandomNominal(rng, k)};
    if (rng.Chance(30)) spec.borrowing_limit = Limit::Of(RandomNominal(rng, k) / 2);
    if (rng.Chance(25)) spec.lending_limit = Limit::Of(spec.nominal == 0 ? 0 : rng.Uniform(0, spec.nominal));
    fq.resources.push_back(spec);
  }
  return fq;
}

// `one_cohort`: every queue in cohort co0 with one group over every flavor, the
// shape where borrowing, lending and reclaim happen most.
ClusterQueue RandomClusterQueue(Rng& rng, SnapshotBuilder& b, int32_t i, int32_t cohorts, int32_t flavors,
                                const std::vector<std::string>& teams, bool one_cohort) {
  ClusterQueue cq;
  cq.name = fmt::format("cq{}", i);
  if (one_cohort) {
    cq.cohort = b.Cohort("co0");
  } else if (cohorts > 0 && rng.Chance(75)) {
    cq.cohort = b.Cohort(fmt::format("co{}", rng.Uniform(0, cohorts - 1)));
  }
  const std::vector<int32_t> order = Shuffled(rng, flavors);
  const int64_t shape = one_cohort ? 0 : rng.Uniform(0, 99);
  if (shape < 94 || flavors < 2) {
    // One group for everything, a random non-empty subset of flavors in random order.
    ResourceGroup g;
    g.covered_resources = {ResourceKind::kGpu, ResourceKind::kCpu, ResourceKind::kMemory};
    if (rng.Chance(30)) g.covered_resources.push_back(ResourceKind::kGpuMemory);
    if (rng.Chance(20)) g.covered_resources.push_back(ResourceKind::kPods);
    const auto n = one_cohort ? flavors : static_cast<int32_t>(rng.Uniform(1, flavors));
    for (int32_t f = 0; f < n; ++f) {
      g.flavors.push_back(RandomFlavorQuotas(rng, FlavorId(order[f]), g.covered_resources));
    }
    cq.resource_groups.push_back(std::move(g));
  } else if (shape < 97) {
    // GPUs and CPU/memory in separate groups with disjoint flavors.
    ResourceGroup gpu{.covered_resources = {ResourceKind::kGpu, ResourceKind::kGpuMemory}};
    ResourceGroup cpu{.covered_resources = {ResourceKind::kCpu, ResourceKind::kMemory}};
    const auto split = static_cast<int32_t>(rng.Uniform(1, flavors - 1));
    for (int32_t f = 0; f < flavors; ++f) {
      ResourceGroup& g = f < split ? gpu : cpu;
      g.flavors.push_back(RandomFlavorQuotas(rng, FlavorId(order[f]), g.covered_resources));
    }
    cq.resource_groups.push_back(std::move(gpu));
    cq.resource_groups.push_back(std::move(cpu));
  } else {
    // No GPU quota at all: GPU work waits with ResourceNotCovered.
    ResourceGroup g{.covered_resources = {ResourceKind::kCpu, ResourceKind::kMemory}};
    g.flavors.push_back(RandomFlavorQuotas(rng, FlavorId(order[0]), g.covered_resources));
    cq.resource_groups.push_back(std::move(g));
  }
  // Policies: Never a fifth of the time (two fifths for borrowWithinCohort).
  cq.preemption.within_cluster_queue =
      static_cast<WithinClusterQueuePolicy>(rng.Pick(std::vector<int64_t>{0, 1, 1, 2, 2}));
  cq.preemption.reclaim_within_cohort =
      static_cast<ReclaimWithinCohortPolicy>(rng.Pick(std::vector<int64_t>{0, 1, 1, 2, 2}));
  cq.preemption.borrow_within_cohort =
      static_cast<BorrowWithinCohortPolicy>(rng.Pick(std::vector<int64_t>{0, 0, 1, 1, 1}));
  if (rng.Chance(20)) {
    cq.preemption.borrow_max_priority_threshold = static_cast<int32_t>(rng.Pick(std::vector<int64_t>{0, 100, 1000}));
  }
  cq.queueing_strategy = rng.Chance(25) ? QueueingStrategy::kStrictFIFO : QueueingStrategy::kBestEffortFIFO;
  cq.fair_weight_milli = rng.Pick(std::vector<int64_t>{0, 500, 1000, 1000, 2000, 3000});
  if (rng.Chance(10)) cq.namespace_selector = Labels{{"team", rng.Pick(teams)}};
  cq.stopped = rng.Chance(2);
  if (rng.Chance(2)) cq.inactive_reason = "flavor gone names a ResourceFlavor that does not exist";
  return cq;
}

ResourceQuota RandomResourceQuota(Rng& rng, int32_t i) {
  ResourceQuota rq{.name = fmt::format("rq{}", i)};
  if (rng.Chance(60)) rq.SetRequest(ResourceKind::kGpu, rng.Uniform(0, 16) * 1000);
  if (rng.Chance(30)) rq.SetRequest(ResourceKind::kCpu, rng.Uniform(0, 64) * 1000);
  if (rng.Chance(20)) rq.SetRequest(ResourceKind::kMemory, rng.Uniform(0, 64) * 8 * kGi);
  if (rng.Chance(20)) rq.SetRequest(ResourceKind::kGpuMemory, rng.Uniform(0, 8) * 40 * kGi);
  if (rng.Chance(30)) rq.SetRequest(ResourceKind::kPods, rng.Uniform(0, 12));
  if (rng.Chance(20)) rq.SetLimit(ResourceKind::kCpu, rng.Uniform(0, 96) * 1000);
  return rq;
}

// Resolves a workload's namespace and LocalQueue against an existing snapshot,
// as SnapshotBuilder::Build does.
void Resolve(const ClusterSnapshot& s, Workload& w) {
  w.ns = NamespaceId();
  for (size_t i = 0; i < s.namespaces.size(); ++i) {
    if (s.namespaces[i].name == w.namespace_name) w.ns = NamespaceId(static_cast<int32_t>(i));
  }
  w.local_queue = LocalQueueId();
  for (size_t i = 0; i < s.local_queues.size(); ++i) {
    const LocalQueue& lq = s.local_queues[i];
    if (lq.namespace_name == w.namespace_name && lq.name == w.local_queue_name) {
      w.local_queue = LocalQueueId(static_cast<int32_t>(i));
    }
  }
}

void ClearAdmission(Workload& w) {
  w.admission.reset();
  w.start_time = Timestamp{};
  w.last_checkpoint.reset();
  w.evicting = false;
}

// Admin changes under running work: none of them evicts anything.
void Drift(Rng& rng, ClusterSnapshot& s) {
  const auto changes = rng.Uniform(1, 2);
  for (int64_t c = 0; c < changes; ++c) {
    switch (rng.Uniform(0, 4)) {
      case 0:
        if (!s.nodes.empty()) s.nodes[rng.Uniform(0, static_cast<int64_t>(s.nodes.size()) - 1)].unschedulable = true;
        break;
      case 1:
        if (!s.nodes.empty()) s.nodes[rng.Uniform(0, static_cast<int64_t>(s.nodes.size()) - 1)].ready = false;
        break;
      case 2: {
        // Lower one nominal quota.
        ClusterQueue& cq = s.cluster_queues[rng.Uniform(0, static_cast<int64_t>(s.cluster_queues.size()) - 1)];
        for (ResourceGroup& g : cq.resource_groups) {
          for (FlavorQuotas& fq : g.flavors) {
            for (ResourceQuotaSpec& spec : fq.resources) spec.nominal /= 2;
          }
        }
        break;
      }
      case 3: {
        Namespace& ns = s.namespaces[rng.Uniform(0, static_cast<int64_t>(s.namespaces.size()) - 1)];
        ResourceQuota rq{.name = "lowered"};
        rq.SetRequest(ResourceKind::kGpu, rng.Uniform(0, 4) * 1000);
        ns.quotas.push_back(rq);
        break;
      }
      default: s.cluster_queues[rng.Uniform(0, static_cast<int64_t>(s.cluster_queues.size()) - 1)].stopped = true;
    }
  }
}

}  // namespace

SchedulerConfig RandomConfig(Rng& rng) {
  SchedulerConfig c;
  c.enable_borrowing = rng.Chance(75);
  c.enable_preemption = rng.Chance(75);
  c.enable_backfill = rng.Chance(75);
  c.enable_fair_sharing = rng.Chance(75);
  c.enable_gpu_sharing = rng.Chance(75);
  if (rng.Chance(15)) c.max_reservations = static_cast<int32_t>(rng.Uniform(0, 2));
  if (rng.Chance(15)) c.max_preemption_searches = static_cast<int32_t>(rng.Uniform(0, 3));
  c.check_invariants = false;
  return c;
}

RandomCluster MakeRandomCluster(uint64_t seed) {
  Rng rng(seed);
  RandomCluster out;
  out.seed = seed;
  out.now = Timestamp::FromSeconds(1'700'000'000 + rng.Uniform(0, 86'400));
  WorkloadMix& mix = out.mix;
  SnapshotBuilder b;

  // Flavors: pools of nodes; sometimes the last one matches every node.
  const auto flavors = static_cast<int32_t>(rng.Uniform(1, 3));
  std::vector<std::string> pools;
  for (int32_t f = 0; f < flavors; ++f) {
    ResourceFlavor flavor{.name = fmt::format("f{}", f)};
    if (f + 1 < flavors || flavors == 1 || !rng.Chance(15)) {
      pools.push_back(flavor.name);
      flavor.node_labels.Set("pool", flavor.name);
    }
    if (rng.Chance(25)) flavor.tolerations.push_back(RandomToleration(rng));
    b.AddFlavor(std::move(flavor));
  }

  mix.zones = {"a", "b"};
  const auto nodes = static_cast<int32_t>(rng.Uniform(1, 24));
  const auto racks = static_cast<int32_t>(rng.Uniform(1, 4));
  for (int32_t i = 0; i < nodes; ++i) b.AddNode(RandomNode(rng, i, pools, mix.zones, racks));

  const std::vector<std::string> teams = {"red", "blue"};
  const auto cohorts = static_cast<int32_t>(rng.Uniform(0, 2));
  const bool one_cohort = rng.Chance(30);
  const auto queues = static_cast<int32_t>(one_cohort ? rng.Uniform(2, 4) : rng.Uniform(1, 6));
  for (int32_t i = 0; i < queues; ++i) {
    b.AddClusterQueue(RandomClusterQueue(rng, b, i, cohorts, flavors, teams, one_cohort));
  }

  const auto namespaces = static_cast<int32_t>(rng.Uniform(1, 4));
  for (int32_t i = 0; i < namespaces; ++i) {
    const std::string ns = fmt::format("ns{}", i);
    const auto lqs = rng.Uniform(1, 2);
    for (int64_t l = 0; l < lqs; ++l) {
      const std::string cq =
          rng.Chance(5) ? std::string("cq-missing") : fmt::format("cq{}", rng.Uniform(0, queues - 1));
      b.AddLocalQueue(ns, fmt::format("lq{}", l), cq);
      mix.queues.emplace_back(ns, fmt::format("lq{}", l));
    }
    if (rng.Chance(5)) mix.queues.emplace_back(ns, "lq-missing");
    if (rng.Chance(30)) {
      const auto quotas = rng.Uniform(1, 2);
      for (int64_t q = 0; q < quotas; ++q) b.AddResourceQuota(ns, RandomResourceQuota(rng, static_cast<int32_t>(q)));
    }
  }

  const auto classes = rng.Uniform(2, 5);
  for (int64_t i = 0; i < classes; ++i) {
    // Values from a small set, so that equal priorities are common too.
    PriorityClass pc{.name = fmt::format("pc{}", i),
                     .value = static_cast<int32_t>(rng.Pick(std::vector<int64_t>{0, 100, 500, 1000, 10000, 100000}))};
    if (rng.Chance(20)) pc.preemption_policy = PreemptionPolicy::kNever;
    pc.non_preemptible = rng.Chance(15);
    mix.priority_classes.push_back(pc);
  }

  // Workloads. Those picked to run were created before the warm-up starts.
  const Timestamp warmup = out.now + Duration::Millis(-rng.Uniform(1, 6) * kHourMs);
  // How much of each LocalQueue's work runs: skewed, so that busy queues borrow
  // what idle ones lend, and the idle ones' later work reclaims it.
  std::map<std::pair<std::string, std::string>, int> activity;
  for (const auto& q : mix.queues) activity[q] = static_cast<int>(rng.Pick(std::vector<int64_t>{10, 55, 90}));
  const auto workloads = rng.Uniform(0, 60);
  std::vector<bool> may_run;
  for (int64_t i = 0; i < workloads; ++i) {
    const auto [ns, lq] = rng.Pick(mix.queues);
    const bool run = rng.Chance(activity[{ns, lq}]);
    Timestamp created = run ? warmup + Duration::Millis(-rng.Uniform(0, 24 * kHourMs))
                            : out.now + Duration::Millis(-rng.Uniform(0, 30 * kHourMs));
    if (i > 0 && rng.Chance(10)) created = b.workload(WorkloadId(static_cast<int32_t>(i - 1))).creation_time;  // a tie
    if (run && created > warmup) created = warmup;
    b.AddWorkload(RandomWorkload(rng, mix, {ns, lq}, created));
    may_run.push_back(run);
  }

  ClusterSnapshot s = b.Build();
  for (size_t i = 0; i < s.namespaces.size(); ++i) s.namespaces[i].labels.Set("team", teams[i % teams.size()]);

  // Warm-up: the scheduler admits part of the work in one to three cycles; the
  // rest is hidden from it (no LocalQueue) and restored afterwards.
  std::unordered_map<std::string, LocalQueueId> hidden;
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    if (may_run[i]) continue;
    hidden[s.workloads[i].name] = s.workloads[i].local_queue;
    s.workloads[i].local_queue = LocalQueueId();
  }
  const SchedulerConfig warm_config = RandomConfig(rng);
  Timestamp t = warmup;
  const auto rounds = rng.Uniform(1, 3);
  for (int64_t r = 0; r < rounds; ++r) {
    const Plan plan = RunCycle(s, warm_config, t);
    const Timestamp next = std::min(out.now, t + Duration::Millis(rng.Uniform(1, 60) * 60'000));
    s = CarryOutPlan(s, plan, t, next, rng, nullptr, CarryOutOptions{.finish_percent = 20, .evict_percent = 0});
    t = next;
  }
  for (Workload& w : s.workloads) {
    auto it = hidden.find(w.name);
    if (it != hidden.end()) w.local_queue = it->second;
    if (!w.admitted()) continue;
    if (rng.Chance(40)) {
      w.last_checkpoint = w.start_time + Duration::Millis(rng.Uniform(0, (out.now - w.start_time).ms));
    }
    w.evicting = rng.Chance(8);
  }
  if (rng.Chance(25)) Drift(rng, s);
  out.snapshot = std::move(s);
  return out;
}

ClusterSnapshot CarryOutPlan(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now, Timestamp next, Rng& rng,
                             WorkloadMix* mix, const CarryOutOptions& options) {
  ClusterSnapshot s = snapshot;
  std::vector<bool> leaves(s.workloads.size(), false);
  std::vector<bool> was_running(s.workloads.size(), false);
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    Workload& w = s.workloads[i];
    if (!w.admitted()) continue;
    if (w.evicting) {
      ClearAdmission(w);  // terminated: back to the queue
    } else {
      was_running[i] = true;
    }
  }
  for (const PreemptDecision& p : plan.preemptions) was_running[p.victim.value()] = false;
  ApplyPlan(s, plan, now);  // admitted start now; victims go back to their queue
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    Workload& w = s.workloads[i];
    if (!w.admitted() || w.evicting) continue;
    if (w.start_time + w.max_run <= next || rng.Chance(options.finish_percent)) {
      leaves[i] = true;
      continue;
    }
    if (was_running[i] && rng.Chance(options.checkpoint_percent)) {
      w.last_checkpoint = w.start_time + Duration::Millis(rng.Uniform(0, (now - w.start_time).ms));
    }
    if (rng.Chance(options.evict_percent)) w.evicting = true;
  }
  std::vector<Workload> kept;
  kept.reserve(s.workloads.size());
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    if (!leaves[i]) kept.push_back(std::move(s.workloads[i]));
  }
  s.workloads = std::move(kept);
  if (mix != nullptr && !mix->queues.empty() && options.max_arrivals > 0) {
    const auto arrivals = rng.Uniform(0, options.max_arrivals);
    for (int64_t a = 0; a < arrivals; ++a) {
      const auto queue = rng.Pick(mix->queues);
      Workload w = RandomWorkload(rng, *mix, queue,
                                  now + Duration::Millis(rng.Uniform(0, std::max<int64_t>(0, (next - now).ms))));
      Resolve(s, w);
      s.workloads.push_back(std::move(w));
    }
  }
  return s;
}

void RunRandomCycles(uint64_t seed, int cycles, const std::function<void(const CycleRun&)>& fn) {
  RandomCluster cluster = MakeRandomCluster(seed);
  Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  const SchedulerConfig config = RandomConfig(rng);
  ClusterSnapshot snapshot = std::move(cluster.snapshot);
  Timestamp now = cluster.now;
  for (int c = 0; c < cycles; ++c) {
    const Plan plan = RunCycle(snapshot, config, now);
    fn(CycleRun{.seed = seed, .cycle = c, .snapshot = &snapshot, .config = &config, .now = now, .plan = &plan});
    if (c + 1 == cycles) break;
    const Timestamp next = now + Duration::Seconds(rng.Uniform(1, 1800));
    snapshot = CarryOutPlan(snapshot, plan, now, next, rng, &cluster.mix);
    now = next;
  }
}

SeedRange SeedsFromEnvironment(uint64_t first, uint64_t count) {
  const char* env = std::getenv("TESSERA_RANDOM_SEED");
  if (env == nullptr || *env == '\0') return SeedRange{.first = first, .count = count};
  return SeedRange{.first = std::strtoull(env, nullptr, 10), .count = 1, .replay = true};
}

std::string DescribeCycle(const CycleRun& run) {
  return fmt::format("=== seed {} cycle {} now={} config: {}\n{}--- plan\n{}", run.seed, run.cycle, run.now.seconds(),
                     DescribeConfig(*run.config), DescribeSnapshot(*run.snapshot),
                     DescribePlan(*run.snapshot, *run.plan, run.now));
}

std::string DescribeConfig(const SchedulerConfig& c) {
  return fmt::format(
      "borrowing={} preemption={} backfill={} fair_sharing={} gpu_sharing={} max_reservations={} "
      "max_preemption_searches={}",
      c.enable_borrowing, c.enable_preemption, c.enable_backfill, c.enable_fair_sharing, c.enable_gpu_sharing,
      c.max_reservations, c.max_preemption_searches);
}

namespace {

std::string LabelsText(const Labels& l) {
  std::string out;
  for (const auto& [k, v] : l.items()) out += fmt::format("{}{}={}", out.empty() ? "" : ",", k, v);
  return out;
}

std::string TolerationsText(const std::vector<Toleration>& tols) {
  std::string out;
  for (const Toleration& t : tols) {
    out += fmt::format("{}{}{}{}{}", out.empty() ? "" : ",", t.key.empty() ? "*" : t.key,
                       t.op == Toleration::Operator::kExists ? "" : "=", t.value,
                       t.effect ? fmt::format(":{}", static_cast<int>(*t.effect)) : "");
  }
  return out;
}

std::string AdmissionText(const ClusterSnapshot& s, const Admission& a) {
  std::string out = fmt::format("cq={}", a.cluster_queue.valid() ? s.cluster_queue(a.cluster_queue).name : "?");
  for (const PodSetAssignment& psa : a.pod_sets) {
    out += fmt::format(" [{} x{}:", psa.flavor.valid() ? s.flavor(psa.flavor).name : "?", psa.count);
    for (const PodPlacement& pod : psa.pods) {
      out += fmt::format(" {}", pod.node.valid() ? s.node(pod.node).name : "?");
      for (const DeviceShare& d : pod.gpus) out += fmt::format("/{}@{}", d.device, d.milli);
    }
    out += "]";
  }
  return out;
}

}  // namespace

std::string DescribeSnapshot(const ClusterSnapshot& s) {
  std::string out;
  for (const ResourceFlavor& f : s.flavors) {
    out += fmt::format("flavor {} labels={} tolerations={}\n", f.name, LabelsText(f.node_labels),
                       TolerationsText(f.tolerations));
  }
  for (const Node& n : s.nodes) {
    std::string gpus;
    for (const GpuDevice& g : n.gpus) {
      gpus += fmt::format("{}{}:{}Gi", gpus.empty() ? "" : ",", g.nvlink_domain, g.memory_bytes / kGi);
    }
    std::string taints;
    for (const Taint& t : n.taints) taints += fmt::format("{}={}:{} ", t.key, t.value, static_cast<int>(t.effect));
    out += fmt::format("node {} labels={} rack={} cpu={} mem={}Gi gpus(nvlink:mem)=[{}] taints=[{}]{}{}\n", n.name,
                       LabelsText(n.labels), n.rack, FormatMilli(n.cpu_milli), n.memory_bytes / kGi, gpus, taints,
                       n.ready ? "" : " not-ready", n.unschedulable ? " cordoned" : "");
  }
  for (const ClusterQueue& cq : s.cluster_queues) {
    out += fmt::format(
        "clusterqueue {} cohort={} within={} reclaim={} borrow={} threshold={} {} weight={}{}{}{}\n", cq.name,
        cq.cohort.valid() ? s.cohorts[cq.cohort.value()].name : "-",
        static_cast<int>(cq.preemption.within_cluster_queue), static_cast<int>(cq.preemption.reclaim_within_cohort),
        static_cast<int>(cq.preemption.borrow_within_cohort),
        cq.preemption.borrow_max_priority_threshold ? fmt::format("{}", *cq.preemption.borrow_max_priority_threshold)
                                                    : "-",
        cq.queueing_strategy == QueueingStrategy::kStrictFIFO ? "StrictFIFO" : "BestEffortFIFO", cq.fair_weight_milli,
        cq.namespace_selector ? " selector=" + LabelsText(*cq.namespace_selector) : "", cq.stopped ? " stopped" : "",
        cq.inactive_reason.empty() ? "" : " inactive");
    for (const ResourceGroup& g : cq.resource_groups) {
      std::string covered;
      for (ResourceKind k : g.covered_resources) {
        covered += fmt::format("{}{}", covered.empty() ? "" : ",", ResourceName(k));
      }
      out += fmt::format("  group [{}]\n", covered);
      for (const FlavorQuotas& fq : g.flavors) {
        std::string specs;
        for (const ResourceQuotaSpec& r : fq.resources) {
          specs += fmt::format(" {}={}", ResourceName(r.resource), FormatAmount(r.resource, r.nominal));
          if (!r.borrowing_limit.unlimited()) specs += "/b" + FormatAmount(r.resource, r.borrowing_limit.value());
          if (!r.lending_limit.unlimited()) specs += "/l" + FormatAmount(r.resource, r.lending_limit.value());
        }
        out += fmt::format("    {}:{}\n", s.flavor(fq.flavor).name, specs);
      }
    }
  }
  for (const LocalQueue& lq : s.local_queues) {
    out += fmt::format("localqueue {}/{} -> {}\n", lq.namespace_name, lq.name, lq.cluster_queue_name);
  }
  for (const Namespace& ns : s.namespaces) {
    out += fmt::format("namespace {} labels={}\n", ns.name, LabelsText(ns.labels));
    for (const ResourceQuota& rq : ns.quotas) {
      std::string hard;
      for (ResourceKind k : kAllResourceKinds) {
        if (const auto& v = rq.hard_requests[static_cast<int>(k)]) {
          hard += fmt::format(" requests.{}={}", ResourceName(k), FormatAmount(k, *v));
        }
        if (const auto& v = rq.hard_limits[static_cast<int>(k)]) {
          hard += fmt::format(" limits.{}={}", ResourceName(k), FormatAmount(k, *v));
        }
      }
      out += fmt::format("  resourcequota {}:{}\n", rq.name, hard);
    }
  }
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const Workload& w = s.workloads[i];
    out += fmt::format("workload #{} {} queue={} prio={}{}{} created={} maxrun={}", i, w.Key(), w.local_queue_name,
                       w.priority, w.preemption_policy == PreemptionPolicy::kNever ? " never" : "",
                       w.non_preemptible ? " nonpreemptible" : "", w.creation_time.seconds(),
                       w.max_run.infinite() ? std::string("inf") : fmt::format("{}s", w.max_run.seconds()));
    for (const PodSet& ps : w.pod_sets) {
      out += fmt::format(" | {} count={} min={} req=({}) topo={}", ps.name, ps.count, ps.MinCount(),
                         ps.requests.ToString(), static_cast<int>(ps.topology));
      if (!ps.node_selector.empty()) out += " selector=" + LabelsText(ps.node_selector);
      if (!ps.tolerations.empty()) out += " tolerations=" + TolerationsText(ps.tolerations);
    }
    if (w.admitted()) {
      out += fmt::format(" || RUNNING since={}{}{} {}", w.start_time.seconds(),
                         w.last_checkpoint ? fmt::format(" checkpoint={}", w.last_checkpoint->seconds()) : "",
                         w.evicting ? " evicting" : "", AdmissionText(s, *w.admission));
    }
    out += "\n";
  }
  return out;
}

std::string DescribePlan(const ClusterSnapshot& s, const Plan& plan, Timestamp now) {
  std::string out;
  for (const AdmitDecision& a : plan.admissions) {
    out += fmt::format("admit #{} {} {}\n", a.workload.value(), s.workload(a.workload).Key(),
                       AdmissionText(s, a.admission));
  }
  for (const PreemptDecision& p : plan.preemptions) {
    out += fmt::format("preempt #{} {} by #{} {} reason={}\n", p.victim.value(), s.workload(p.victim).Key(),
                       p.preemptor.value(), s.workload(p.preemptor).Key(), static_cast<int>(p.reason));
  }
  for (const PendingDecision& p : plan.pending) {
    out += fmt::format("pending #{} {} {}: {}\n", p.workload.value(), s.workload(p.workload).Key(),
                       PendingReasonName(p.reason.code), DescribePending(s, p.workload, p.reason, now));
  }
  for (const Reservation& r : plan.reservations) {
    std::string pods;
    for (const PodPlacement& pod : r.pods) {
      pods += " " + s.node(pod.node).name;
      for (const DeviceShare& d : pod.gpus) pods += fmt::format("/{}@{}", d.device, d.milli);
    }
    out += fmt::format("reservation #{} {} flavor={} start=+{}s:{}\n", r.workload.value(), s.workload(r.workload).Key(),
                       s.flavor(r.flavor).name, (r.start - now).seconds(), pods);
  }
  return out;
}

}  // namespace tessera::testing
