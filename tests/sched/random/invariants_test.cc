// CheckPlanInvariants over generated clusters: one cycle for many seeds, then
// five cycles per seed with each plan carried out between them (CarryOutPlan).
// Seeds are a fixed range; a failure names the seed, which
// TESSERA_RANDOM_SEED=<seed> replays with every snapshot and plan printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "sched/cycle.h"
#include "sched/invariants.h"
#include "tests/sched/random/failure_log.h"
#include "tests/sched/random/random_cluster.h"

namespace tessera::testing {
namespace {

constexpr uint64_t kOneCycleSeeds = 20000;
constexpr uint64_t kMultiCycleFirstSeed = 1'000'000;
constexpr uint64_t kMultiCycleSeeds = 5000;
constexpr int kCycles = 5;
// Self-check runs fork a child each, so they cover fewer seeds.
constexpr uint64_t kSelfCheckFirstSeed = 4'000'000;
constexpr uint64_t kSelfCheckSeeds = 300;

void CheckInvariants(const CycleRun& run, FailureLog& log) {
  const Status s = CheckPlanInvariants(*run.snapshot, *run.plan, *run.config);
  if (!s.ok()) {
    log.Add("plan-invariants, " + MessageShape(s.message()), run.seed, run.cycle,
            s.message() + " [" + DescribeConfig(*run.config) + "]");
  }
}

TEST(RandomInvariants, OneCycleKeepsPlanInvariants) {
  // Each seed: a fresh cluster with running work, one RunCycle under random toggles.
  const SeedRange seeds = SeedsFromEnvironment(0, kOneCycleSeeds);
  FailureLog log;
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    RunRandomCycles(seed, 1, [&](const CycleRun& run) {
      if (seeds.replay) std::fputs(DescribeCycle(run).c_str(), stdout);
      CheckInvariants(run, log);
    });
  }
  EXPECT_TRUE(log.empty()) << log.Summary();
}

TEST(RandomInvariants, EveryCycleOfARunKeepsPlanInvariants) {
  // Each seed: five cycles; between them admitted work starts, victims and
  // terminated work return to the queue, some work finishes, new work arrives.
  const SeedRange seeds = SeedsFromEnvironment(kMultiCycleFirstSeed, kMultiCycleSeeds);
  FailureLog log;
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    RunRandomCycles(seed, kCycles, [&](const CycleRun& run) {
      if (seeds.replay) std::fputs(DescribeCycle(run).c_str(), stdout);
      CheckInvariants(run, log);
    });
  }
  EXPECT_TRUE(log.empty()) << log.Summary();
}

TEST(RandomInvariants, CycleSelfCheckAcceptsPlansTheCheckerAccepts) {
  // With SchedulerConfig::check_invariants the cycle checks its own plan and
  // aborts on a broken invariant. It must judge the plan under the config it ran
  // with: wherever CheckPlanInvariants(snapshot, plan, config) passes, the
  // self-checking cycle must not abort. Each run is a death-test child, so an
  // abort fails this test instead of ending the binary.
  const SeedRange seeds = SeedsFromEnvironment(kSelfCheckFirstSeed, kSelfCheckSeeds);
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    bool failed = false;
    RunRandomCycles(seed, 1, [&](const CycleRun& run) {
      if (!CheckPlanInvariants(*run.snapshot, *run.plan, *run.config).ok()) return;
      SchedulerConfig checking = *run.config;
      checking.check_invariants = true;
      EXPECT_EXIT(
          {
            RunCycle(*run.snapshot, checking, run.now);
            std::exit(0);
          },
          ::testing::ExitedWithCode(0), "")
          << "seed " << seed << " [" << DescribeConfig(*run.config) << "]";
      failed = ::testing::Test::HasFailure();
    });
    if (failed) break;  // one seed tells the story; the rest would repeat it
  }
}

}  // namespace
}  // namespace tessera::testing
