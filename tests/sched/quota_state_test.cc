// QuotaState: the cohort arithmetic of nominal quota, lending and borrowing.
#include "sched/quota_state.h"

#include <gtest/gtest.h>

#include "sched/snapshot_builder.h"

namespace tessera {
namespace {

// Two queues in one cohort on one flavor, GPU quota only.
ClusterSnapshot TwoQueues(int64_t a_nominal, Limit a_borrow, Limit a_lend, int64_t b_nominal, Limit b_borrow,
                          Limit b_lend) {
  SnapshotBuilder b;
  const FlavorId f = b.AddFlavor(ResourceFlavor{.name = "default"});
  const CohortId c = b.Cohort("c");
  for (auto [name, nominal, borrow, lend] : {std::tuple{"a", a_nominal, a_borrow, a_lend},
                                             std::tuple{"b", b_nominal, b_borrow, b_lend}}) {
    ClusterQueue cq{.name = name, .cohort = c};
    ResourceGroup g{.covered_resources = {ResourceKind::kGpu}};
    g.flavors.push_back(FlavorQuotas{
        .flavor = f,
        .resources = {ResourceQuotaSpec{.resource = ResourceKind::kGpu, .nominal = nominal,
                                        .borrowing_limit = borrow, .lending_limit = lend}}});
    cq.resource_groups.push_back(g);
    b.AddClusterQueue(cq);
  }
  return b.Build();
}

Resources Gpus(int64_t milli) { return Resources::Of(ResourceKind::kGpu, milli); }

TEST(QuotaStateTest, QueueWithoutCohortIsCappedAtNominal) {
  // A single queue with 4 GPUs nominal and no cohort cannot borrow.
  SnapshotBuilder b;
  const FlavorId f = b.AddFlavor(ResourceFlavor{.name = "default"});
  ClusterQueue cq{.name = "solo"};
  ResourceGroup g{.covered_resources = {ResourceKind::kGpu}};
  g.flavors.push_back(FlavorQuotas{.flavor = f, .resources = {{.resource = ResourceKind::kGpu, .nominal = 4000}}});
  cq.resource_groups.push_back(g);
  b.AddClusterQueue(cq);
  const ClusterSnapshot s = b.Build();
  QuotaState q(s, SchedulerConfig{});
  EXPECT_TRUE(q.Fits(0, 0, Gpus(4000), nullptr));   // 4 <= 4
  FlavorAttempt why;
  EXPECT_FALSE(q.Fits(0, 0, Gpus(4001), &why));     // 4.001 > 4
  EXPECT_EQ(why.nominal, 4000);
  EXPECT_FALSE(why.in_cohort);
}

TEST(QuotaStateTest, BorrowsUnusedNominalOfTheCohortUpToTheBorrowingLimit) {
  // a: nominal 4, borrowing limit 2; b: nominal 4 unused. Pool = 4 + 4 = 8.
  const ClusterSnapshot s = TwoQueues(4000, Limit::Of(2000), Limit::Unlimited(), 4000, Limit::Unlimited(),
                                      Limit::Unlimited());
  QuotaState q(s, SchedulerConfig{});
  EXPECT_TRUE(q.Fits(0, 0, Gpus(6000), nullptr));   // 6 <= 4 + 2, pool 6 <= 8
  EXPECT_FALSE(q.Fits(0, 0, Gpus(6001), nullptr));  // beyond the borrowing limit
  q.Add(0, 0, Gpus(6000));
  EXPECT_TRUE(q.IsBorrowing(0));
  FlavorAttempt why;
  // b may use only what is left of the pool: 8 - 6 = 2, though its nominal is 4.
  EXPECT_TRUE(q.Fits(1, 0, Gpus(2000), nullptr));
  EXPECT_FALSE(q.Fits(1, 0, Gpus(3000), &why));
  EXPECT_EQ(why.cohort_can_lend, 0);  // free pool 2 is b's own unused lendable quota: others lend 0
}

TEST(QuotaStateTest, LendingLimitKeepsPartOfNominalGuaranteed) {
  // b lends at most 1 of its 4: a (nominal 0) can borrow 1 only; b keeps 3 for itself.
  const ClusterSnapshot s = TwoQueues(0, Limit::Unlimited(), Limit::Unlimited(), 4000, Limit::Unlimited(),
                                      Limit::Of(1000));
  QuotaState q(s, SchedulerConfig{});
  EXPECT_TRUE(q.Fits(0, 0, Gpus(1000), nullptr));   // pool = 0 + 1 = 1
  EXPECT_FALSE(q.Fits(0, 0, Gpus(1001), nullptr));
  q.Add(0, 0, Gpus(1000));
  EXPECT_TRUE(q.Fits(1, 0, Gpus(3000), nullptr));   // b's guaranteed 3 is untouched
  EXPECT_FALSE(q.Fits(1, 0, Gpus(3001), nullptr));  // its 4th GPU is lent out
}

TEST(QuotaStateTest, WeightedShareIsBorrowedOverPoolDividedByWeight) {
  // a (nominal 0) borrows 2 of a pool of 8: share = 2/8 = 250000 millionths; weight 1.
  const ClusterSnapshot s = TwoQueues(0, Limit::Unlimited(), Limit::Unlimited(), 8000, Limit::Unlimited(),
                                      Limit::Unlimited());
  QuotaState q(s, SchedulerConfig{});
  EXPECT_EQ(q.WeightedShare(0), 0);
  q.Add(0, 0, Gpus(2000));
  EXPECT_EQ(q.WeightedShare(0), 250000);
  EXPECT_EQ(q.WeightedShare(1), 0);  // within nominal
}

TEST(QuotaStateTest, BorrowingSwitchedOffCapsEveryQueueAtNominal) {
  const ClusterSnapshot s = TwoQueues(4000, Limit::Unlimited(), Limit::Unlimited(), 4000, Limit::Unlimited(),
                                      Limit::Unlimited());
  SchedulerConfig config;
  config.enable_borrowing = false;
  QuotaState q(s, config);
  EXPECT_TRUE(q.Fits(0, 0, Gpus(4000), nullptr));
  EXPECT_FALSE(q.Fits(0, 0, Gpus(5000), nullptr));  // b's unused 4 is not lent
}

TEST(QuotaStateTest, ReleasingUsageGivesThePoolBack) {
  const ClusterSnapshot s = TwoQueues(0, Limit::Unlimited(), Limit::Unlimited(), 2000, Limit::Unlimited(),
                                      Limit::Unlimited());
  QuotaState q(s, SchedulerConfig{});
  q.Add(0, 0, Gpus(2000));
  EXPECT_FALSE(q.Fits(1, 0, Gpus(1000), nullptr));  // all of b's nominal is lent to a
  q.Add(0, 0, Gpus(-2000));
  EXPECT_TRUE(q.Fits(1, 0, Gpus(2000), nullptr));
}

}  // namespace
}  // namespace tessera
