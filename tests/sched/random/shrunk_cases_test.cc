// The smallest clusters, shrunk by hand from failing seeds of the randomized
// tests, that still break a property: one test per root cause, so that each
// fix turns exactly one of them green.
#include <gtest/gtest.h>

#include <string>

#include "sched/cycle.h"
#include "sched/invariants.h"
#include "sched/snapshot_builder.h"
#include "tests/sched/random/plan_properties.h"
#include "tests/sched/random/random_cluster.h"

namespace tessera::testing {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
const Timestamp kNow = Timestamp::FromSeconds(1'700'000'000);

// Flavor "f0" for nodes labelled pool=f0.
void AddFlavor(SnapshotBuilder& b) { b.AddFlavor(ResourceFlavor{.name = "f0", .node_labels = {{"pool", "f0"}}}); }

void AddNode(SnapshotBuilder& b, const std::string& name, int gpus, int64_t gpu_memory = 80 * kGi) {
  Node n{.name = name, .labels = {{"pool", "f0"}}, .rack = "r0", .cpu_milli = 64'000, .memory_bytes = 512 * kGi};
  for (int g = 0; g < gpus; ++g) n.gpus.push_back(GpuDevice{.index = g, .memory_bytes = gpu_memory});
  b.AddNode(std::move(n));
}

// A ClusterQueue without a cohort: `gpus` nominal GPUs and ample CPU/memory in f0,
// with LocalQueue ns/<name> pointing at it.
void AddQueue(SnapshotBuilder& b, const std::string& name, int64_t gpus,
              WithinClusterQueuePolicy within = WithinClusterQueuePolicy::kNever) {
  ClusterQueue cq{.name = name};
  ResourceGroup g{.covered_resources = {ResourceKind::kGpu, ResourceKind::kCpu, ResourceKind::kMemory}};
  g.flavors.push_back(FlavorQuotas{.flavor = b.FlavorIdOf("f0"),
                                   .resources = {{.resource = ResourceKind::kGpu, .nominal = gpus * 1000},
                                                 {.resource = ResourceKind::kCpu, .nominal = 1'000'000},
                                                 {.resource = ResourceKind::kMemory, .nominal = 1'000'000 * kGi}}});
  cq.resource_groups.push_back(std::move(g));
  cq.preemption.within_cluster_queue = within;
  b.AddClusterQueue(std::move(cq));
  b.AddLocalQueue("ns", name, name);
}

Workload Job(const std::string& name, const std::string& queue, int64_t gpu_milli, int64_t created_s) {
  Workload w{.namespace_name = "ns", .name = name, .local_queue_name = queue};
  w.creation_time = Timestamp::FromSeconds(created_s);
  PodSet ps;
  ps.requests.set(ResourceKind::kGpu, gpu_milli);
  ps.requests.set(ResourceKind::kCpu, 1000);
  ps.requests.set(ResourceKind::kMemory, kGi);
  ps.requests.set(ResourceKind::kPods, 1);
  ps.limits = ps.requests;
  w.pod_sets.push_back(ps);
  return w;
}

// Runs `w` on `node` with whole devices 0..n-1 (n = its GPUs), started `ago_s` before kNow.
Workload Running(SnapshotBuilder& b, Workload w, const std::string& queue, const std::string& node, int64_t ago_s) {
  PodPlacement pod{.node = b.NodeIdOf(node)};
  for (int32_t d = 0; d < w.pod_sets[0].requests.gpu() / 1000; ++d) pod.gpus.push_back({.device = d, .milli = 1000});
  w.admission = Admission{.cluster_queue = b.ClusterQueueIdOf(queue),
                          .pod_sets = {PodSetAssignment{.flavor = b.FlavorIdOf("f0"), .count = 1, .pods = {pod}}}};
  w.start_time = kNow + Duration::Seconds(-ago_s);
  return w;
}

std::string Explain(const ClusterSnapshot& s, const Plan& plan) {
  return DescribeSnapshot(s) + "--- plan\n" + DescribePlan(s, plan, kNow);
}

TEST(ShrunkCases, RoomOfATerminatingWorkloadIsNotGivenAwayTwice) {
  // Node n0 has 2 GPUs, both held by `old`, which is terminating (evicting) but
  // still holds them. cq0 has 2 nominal GPUs. `a` and `b` ask 1 GPU each. `a`
  // counts `old` as the victim it waits for (no PreemptDecision: it is already
  // terminating) and holds device 0; the cycle has released all of `old`, so it
  // admits `b` on device 1, which `old` still holds: 2000m on one device and 3
  // GPUs charged to a queue of 2. From RandomInvariants seeds 48, 162, 575, ...
  SnapshotBuilder b;
  AddFlavor(b);
  AddNode(b, "n0", 2);
  AddQueue(b, "cq0", 2);
  Workload old = Running(b, Job("old", "cq0", 2000, 100), "cq0", "n0", 600);
  old.evicting = true;
  b.AddWorkload(std::move(old));
  b.AddWorkload(Job("a", "cq0", 1000, 200));
  b.AddWorkload(Job("b", "cq0", 1000, 300));
  const ClusterSnapshot s = b.Build();
  const Plan plan = RunCycle(s, SchedulerConfig{}, kNow);
  const Status status = CheckPlanInvariants(s, plan, SchedulerConfig{});
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << Explain(s, plan);
}

TEST(ShrunkCases, WorkNotAskingForALoweredCeilingsResourceIsAdmittedWithoutBreakingIt) {
  // Namespace ns used 1 GPU when an admin lowered its ResourceQuota to
  // requests.nvidia.com/gpu=0 (DESIGN 5.2: lowering evicts nothing). A CPU-only
  // workload adds 0 GPUs, so the ceiling does not hold it back and the cycle
  // admits it; the plan exceeds no ceiling "where it adds" (invariants.h).
  // From RandomInvariants seeds 13, 22, 134, ...
  SnapshotBuilder b;
  AddFlavor(b);
  AddNode(b, "n0", 4);
  AddQueue(b, "cq0", 4);
  b.AddWorkload(Running(b, Job("gpu", "cq0", 1000, 100), "cq0", "n0", 600));
  b.AddWorkload(Job("cpu-only", "cq0", 0, 200));
  ResourceQuota lowered{.name = "lowered"};
  lowered.SetRequest(ResourceKind::kGpu, 0);
  b.AddResourceQuota("ns", lowered);
  const ClusterSnapshot s = b.Build();
  const Plan plan = RunCycle(s, SchedulerConfig{}, kNow);
  ASSERT_EQ(plan.admissions.size(), 1u) << Explain(s, plan);  // cpu-only: 0 GPUs added, within the ceiling
  const Status status = CheckPlanInvariants(s, plan, SchedulerConfig{});
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << Explain(s, plan);
}

TEST(ShrunkCases, GpuMemoryRequestNeedsADeviceWithThatMemoryWithoutSharing) {
  // n0 has one 40Gi device; the workload asks tessera.dev/gpu-memory 70Gi (its
  // quota estimate, 1750m, fits cq0's 4 GPUs). With GPU sharing on it waits (no
  // device has 70Gi); with sharing off it is placed on the 40Gi device as a
  // whole GPU. From RandomPlanProperties seeds 2000012, 2000020, ...
  SnapshotBuilder b;
  AddFlavor(b);
  AddNode(b, "n0", 1, 40 * kGi);
  AddQueue(b, "cq0", 4);
  Workload w = Job("big-memory", "cq0", 0, 100);
  w.pod_sets[0].requests.set(ResourceKind::kGpuMemory, 70 * kGi);
  w.pod_sets[0].limits = w.pod_sets[0].requests;
  b.AddWorkload(std::move(w));
  const ClusterSnapshot s = b.Build();
  const PlanProperty* gpu_memory = nullptr;
  for (const PlanProperty& p : PlanProperties()) {
    if (p.name == "gpu-memory") gpu_memory = &p;
  }
  ASSERT_NE(gpu_memory, nullptr);
  for (const bool sharing : {true, false}) {
    SchedulerConfig config;
    config.enable_gpu_sharing = sharing;
    const Plan plan = RunCycle(s, config, kNow);
    const Status status = gpu_memory->check(s, plan, config, kNow);
    EXPECT_TRUE(status.ok()) << "enable_gpu_sharing=" << sharing << ": " << status.message() << "\n"
                             << Explain(s, plan);
  }
}

TEST(ShrunkCases, TwoReservationsDoNotClaimTheSameDevices) {
  // n0 has 2 GPUs, both held by `running` (cq2) until kNow + 30 min (maxRun 1 h).
  // `a` (cq0) and `b` (cq1) ask 2 GPUs each and cannot preempt: each gets a
  // reservation. `a` reserves both devices from kNow + 30 min but holds nothing
  // now (they are busy); `b`'s search replays the end of `running` and reserves
  // the same two devices from the same time. Neither ends (no maxRun), so once
  // `a` holds its claim `b` can never start: it gets no reservation. From
  // RandomPlanProperties seeds 2000275, 2000748, ...
  SnapshotBuilder b;
  AddFlavor(b);
  AddNode(b, "n0", 2);
  AddQueue(b, "cq0", 2);
  AddQueue(b, "cq1", 2);
  AddQueue(b, "cq2", 2);
  Workload running = Job("running", "cq2", 2000, 100);
  running.max_run = Duration::Seconds(3600);
  b.AddWorkload(Running(b, std::move(running), "cq2", "n0", 1800));
  b.AddWorkload(Job("a", "cq0", 2000, 200));
  b.AddWorkload(Job("b", "cq1", 2000, 300));
  const ClusterSnapshot s = b.Build();
  const Plan plan = RunCycle(s, SchedulerConfig{}, kNow);
  ASSERT_EQ(plan.reservations.size(), 1u) << Explain(s, plan);
  EXPECT_EQ(s.workload(plan.reservations[0].workload).name, "a");
  const PlanProperty* disjoint = nullptr;
  for (const PlanProperty& p : PlanProperties()) {
    if (p.name == "reservations-disjoint") disjoint = &p;
  }
  ASSERT_NE(disjoint, nullptr);
  const Status status = disjoint->check(s, plan, SchedulerConfig{}, kNow);
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << Explain(s, plan);
}

TEST(ShrunkCases, RoomFreedByAVictimDoesNotGoToWorkThatDelaysAReservation) {
  // n0 has 2 GPUs, both held by `low` (cq0, priority 0) until kNow + 30 min.
  // `r` (cq1, 2 GPUs, within its nominal, so served first) cannot start and
  // reserves both devices from kNow + 30 min, holding nothing now (busy). Then
  // `p` (cq0, priority 100, 1 GPU) preempts `low` and holds device 0; device 1
  // is now free for the rest of the cycle, and `filler` (cq0, 1 GPU, no maxRun)
  // is admitted on it: at kNow + 30 min it still runs where `r` was promised a
  // device. From RandomPlanProperties seeds 2001099, 2000792 (with terminating
  // work: 2000656, 2001168, 2001345).
  SnapshotBuilder b;
  AddFlavor(b);
  AddNode(b, "n0", 2);
  AddQueue(b, "cq0", 2, WithinClusterQueuePolicy::kLowerPriority);
  AddQueue(b, "cq1", 2);
  Workload low = Job("low", "cq0", 2000, 100);
  low.max_run = Duration::Seconds(3600);
  b.AddWorkload(Running(b, std::move(low), "cq0", "n0", 1800));
  b.AddWorkload(Job("r", "cq1", 2000, 200));
  Workload p = Job("p", "cq0", 1000, 300);
  p.priority = 100;
  b.AddWorkload(std::move(p));
  b.AddWorkload(Job("filler", "cq0", 1000, 400));
  const ClusterSnapshot s = b.Build();
  const Plan plan = RunCycle(s, SchedulerConfig{}, kNow);
  ASSERT_EQ(plan.reservations.size(), 1u) << Explain(s, plan);
  ASSERT_EQ(plan.preemptions.size(), 1u) << Explain(s, plan);
  const PlanProperty* honoured = nullptr;
  for (const PlanProperty& prop : PlanProperties()) {
    if (prop.name == "reservation-honoured") honoured = &prop;
  }
  ASSERT_NE(honoured, nullptr);
  const Status status = honoured->check(s, plan, SchedulerConfig{}, kNow);
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << Explain(s, plan);
}

}  // namespace
}  // namespace tessera::testing
