// RunCycle is a pure function (cycle.h): the same snapshot run twice, or a copy
// of it, gives the same plan in every field; and a whole multi-cycle run,
// generated and replayed from one seed, gives the same sequence of plans.
#include <gtest/gtest.h>

#include <vector>

#include "sched/cycle.h"
#include "tests/sched/random/failure_log.h"
#include "tests/sched/random/plan_properties.h"
#include "tests/sched/random/random_cluster.h"

namespace tessera::testing {
namespace {

constexpr uint64_t kFirstSeed = 3'000'000;
constexpr uint64_t kSeeds = 3000;
constexpr uint64_t kRunSeeds = 500;
constexpr int kCycles = 5;

TEST(RandomDeterminism, SameSnapshotAndCopyGiveTheSamePlan) {
  const SeedRange seeds = SeedsFromEnvironment(kFirstSeed, kSeeds);
  FailureLog log;
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    RunRandomCycles(seed, 2, [&](const CycleRun& run) {
      const Plan again = RunCycle(*run.snapshot, *run.config, run.now);
      std::string diff = PlanDifference(*run.plan, again);
      if (!diff.empty()) log.Add("same-snapshot", run.seed, run.cycle, diff);
      const ClusterSnapshot copy = *run.snapshot;
      const Plan from_copy = RunCycle(copy, *run.config, run.now);
      diff = PlanDifference(*run.plan, from_copy);
      if (!diff.empty()) log.Add("copied-snapshot", run.seed, run.cycle, diff);
    });
  }
  EXPECT_TRUE(log.empty()) << log.Summary();
}

TEST(RandomDeterminism, ARunReplaysIdentically) {
  // Generator, config, plans and CarryOutPlan together: two runs of a seed match.
  const SeedRange seeds = SeedsFromEnvironment(kFirstSeed, kRunSeeds);
  FailureLog log;
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    std::vector<Plan> first;
    RunRandomCycles(seed, kCycles, [&](const CycleRun& run) { first.push_back(*run.plan); });
    RunRandomCycles(seed, kCycles, [&](const CycleRun& run) {
      const std::string diff = PlanDifference(first[run.cycle], *run.plan);
      if (!diff.empty()) log.Add("replay", run.seed, run.cycle, diff);
    });
  }
  EXPECT_TRUE(log.empty()) << log.Summary();
}

}  // namespace
}  // namespace tessera::testing
