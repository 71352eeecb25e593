// Properties the invariant checker does not cover (plan_properties.h), over the
// same kind of generated runs as invariants_test.cc: five cycles per seed.
// Each test checks one property; a failure names the seeds that break it.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/sched/random/failure_log.h"
#include "tests/sched/random/plan_properties.h"
#include "tests/sched/random/random_cluster.h"

namespace tessera::testing {
namespace {

constexpr uint64_t kFirstSeed = 2'000'000;
constexpr uint64_t kSeeds = 3000;
constexpr int kCycles = 5;

// Runs every seed and expects the named property after each cycle.
void ExpectProperty(const std::string& name) {
  const PlanProperty* property = nullptr;
  for (const PlanProperty& p : PlanProperties()) {
    if (p.name == name) property = &p;
  }
  ASSERT_NE(property, nullptr) << "no property named " << name;
  const SeedRange seeds = SeedsFromEnvironment(kFirstSeed, kSeeds);
  FailureLog log;
  for (uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    RunRandomCycles(seed, kCycles, [&](const CycleRun& run) {
      if (seeds.replay) std::fputs(DescribeCycle(run).c_str(), stdout);
      const Status s = property->check(*run.snapshot, *run.plan, *run.config, run.now);
      if (!s.ok()) log.Add(name, run.seed, run.cycle, s.message() + " [" + DescribeConfig(*run.config) + "]");
    });
  }
  EXPECT_TRUE(log.empty()) << log.Summary();
}

TEST(RandomPlanProperties, NeverPolicyWorkloadsDoNotPreempt) { ExpectProperty("never-preempts"); }

TEST(RandomPlanProperties, VictimsAreAllowedByThePreemptorsQueuePolicy) { ExpectProperty("victim-policy"); }

TEST(RandomPlanProperties, WaitingForPreemptionCountsItsVictims) { ExpectProperty("waiting-for-preemption"); }

TEST(RandomPlanProperties, AdmissionsGoToTheWorkloadsActiveQueueAndItsFlavors) { ExpectProperty("admission-target"); }

TEST(RandomPlanProperties, PodsTolerateTheirNodesTaints) { ExpectProperty("taints"); }

TEST(RandomPlanProperties, RequiredTopologyIsKept) { ExpectProperty("required-topology"); }

TEST(RandomPlanProperties, GpuMemoryRequestsGetADeviceWithThatMemory) { ExpectProperty("gpu-memory"); }

TEST(RandomPlanProperties, StrictFifoAdmitsNothingBehindItsBlockedHead) { ExpectProperty("strict-fifo"); }

TEST(RandomPlanProperties, ReservationsFollowTheBackfillSettings) { ExpectProperty("reservations"); }

TEST(RandomPlanProperties, BackfillNeverDelaysAReservation) { ExpectProperty("reservation-honoured"); }

TEST(RandomPlanProperties, ReservationsDoNotClaimTheSameDeviceAtOnce) { ExpectProperty("reservations-disjoint"); }

}  // namespace
}  // namespace tessera::testing
