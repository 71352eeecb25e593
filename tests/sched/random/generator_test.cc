// The generator itself: deterministic, valid running work, and runs that reach
// every outcome the properties are about (a generator that stopped producing
// preemptions would make the property tests pass vacuously).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sched/pending_reason.h"
#include "tests/sched/random/random_cluster.h"

namespace tessera::testing {
namespace {

constexpr uint64_t kFirstSeed = 5'000'000;
constexpr uint64_t kSeeds = 400;

TEST(RandomClusterGenerator, SameSeedGivesTheSameCluster) {
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + 50; ++seed) {
    const RandomCluster a = MakeRandomCluster(seed);
    const RandomCluster b = MakeRandomCluster(seed);
    ASSERT_EQ(DescribeSnapshot(a.snapshot), DescribeSnapshot(b.snapshot)) << "seed " << seed;
    ASSERT_EQ(a.now, b.now) << "seed " << seed;
  }
}

TEST(RandomClusterGenerator, RunningWorkFitsItsDevicesAndNodes) {
  // Running work comes from warm-up cycles, so it must be a state the scheduler
  // could have made: valid ids, no device above 1000m, no node over CPU/memory.
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kSeeds; ++seed) {
    const ClusterSnapshot s = MakeRandomCluster(seed).snapshot;
    ASSERT_TRUE(ValidateSnapshot(s).ok()) << "seed " << seed << ": " << ValidateSnapshot(s).ToString();
    std::map<std::pair<int32_t, int32_t>, int64_t> device;
    std::vector<Resources> node(s.nodes.size());
    for (const Workload& w : s.workloads) {
      if (!w.admitted()) continue;
      for (size_t p = 0; p < w.pod_sets.size(); ++p) {
        for (const PodPlacement& pod : w.admission->pod_sets[p].pods) {
          node[pod.node.value()] += w.pod_sets[p].requests;
          for (const DeviceShare& d : pod.gpus) device[{pod.node.value(), d.device}] += d.milli;
        }
      }
    }
    for (const auto& [dev, milli] : device) EXPECT_LE(milli, 1000) << "seed " << seed;
    for (size_t n = 0; n < s.nodes.size(); ++n) {
      EXPECT_LE(node[n].cpu(), s.nodes[n].cpu_milli) << "seed " << seed << " node " << s.nodes[n].name;
      EXPECT_LE(node[n].memory(), s.nodes[n].memory_bytes) << "seed " << seed << " node " << s.nodes[n].name;
    }
  }
}

TEST(RandomClusterGenerator, RunsReachEveryOutcome) {
  // Over a few hundred five-cycle runs, each outcome below happens at least once.
  std::map<std::string, int> seen;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kSeeds; ++seed) {
    RunRandomCycles(seed, 5, [&](const CycleRun& run) {
      const ClusterSnapshot& s = *run.snapshot;
      for (const Workload& w : s.workloads) {
        if (w.evicting) ++seen["terminating workload"];
      }
      for (const PreemptDecision& p : run.plan->preemptions) {
        static const char* kReasons[] = {"preempt InClusterQueue", "preempt ReclaimWithinCohort",
                                         "preempt BorrowWithinCohort"};
        ++seen[kReasons[static_cast<int>(p.reason)]];
      }
      for (const PendingDecision& p : run.plan->pending) ++seen[std::string(PendingReasonName(p.reason.code))];
      if (!run.plan->reservations.empty()) ++seen["reservation"];
      for (const AdmitDecision& a : run.plan->admissions) {
        const Workload& w = s.workload(a.workload);
        for (size_t p = 0; p < w.pod_sets.size(); ++p) {
          const PodSet& ps = w.pod_sets[p];
          const PodSetAssignment& psa = a.admission.pod_sets[p];
          if (ps.count > 1 && psa.count == ps.count) ++seen["whole gang admitted"];
          if (psa.count < ps.count) ++seen["gang admitted at fewer than count"];
          if (ps.requests.gpu() > 0 && ps.requests.gpu() < 1000) {
            ++seen[run.config->enable_gpu_sharing ? "fraction admitted" : "fraction admitted without sharing"];
          }
          if (ps.requests.gpu() == 0 && ps.requests.get(ResourceKind::kGpuMemory) > 0) ++seen["gpu-memory admitted"];
          if (ps.requests.gpu() >= 2000) ++seen["multi-GPU pod admitted"];
          if (ps.topology != TopologyPreference::kNone) ++seen["topology admitted"];
        }
      }
    });
  }
  for (const char* outcome :
       {"terminating workload", "preempt InClusterQueue", "preempt ReclaimWithinCohort", "preempt BorrowWithinCohort",
        "reservation", "whole gang admitted", "gang admitted at fewer than count", "fraction admitted",
        "fraction admitted without sharing", "gpu-memory admitted", "multi-GPU pod admitted", "topology admitted"}) {
    EXPECT_GT(seen[outcome], 0) << outcome;
  }
  for (PendingCode code :
       {PendingCode::kNoLocalQueue, PendingCode::kNoClusterQueue, PendingCode::kClusterQueueInactive,
        PendingCode::kNamespaceNotSelected, PendingCode::kResourceNotCovered, PendingCode::kNamespaceQuota,
        PendingCode::kClusterQueueQuota, PendingCode::kNoCapacity, PendingCode::kNoMatchingNodes,
        PendingCode::kReservedForOther, PendingCode::kBlockedByStrictFIFO, PendingCode::kWaitingForPreemption}) {
    EXPECT_GT(seen[std::string(PendingReasonName(code))], 0) << PendingReasonName(code);
  }
}

}  // namespace
}  // namespace tessera::testing
