// Tests of the simulator's metrics: nearest-rank summaries, weighted max-min fair
// shares, Jain's index, and ComputeMetrics on hand-built and simulated outcomes.
#include "sim/sim_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace tessera {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;

constexpr double kEps = 1e-9;
constexpr double kGpuHour = 1000.0 * 3600.0;  // milli-GPU x s

// ---------------------------------------------------------------------------
// Summarize

TEST(SummarizeTest, EmptyIsAllZero) {
  Distribution d = Summarize({});
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.mean, 0);
  EXPECT_EQ(d.p50, 0);
  EXPECT_EQ(d.p90, 0);
  EXPECT_EQ(d.p99, 0);
  EXPECT_EQ(d.max, 0);
}

TEST(SummarizeTest, OneValueIsEveryPercentile) {
  Distribution d = Summarize({7});
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.mean, 7);
  EXPECT_EQ(d.p50, 7);
  EXPECT_EQ(d.p90, 7);
  EXPECT_EQ(d.p99, 7);
  EXPECT_EQ(d.max, 7);
}

TEST(SummarizeTest, NearestRankOnUnsortedInput) {
  // {30, 10, 20}: sorted 10, 20, 30; rank ceil(3 x 0.5) = 2 -> 20; ceil(2.7) = 3 -> 30.
  Distribution d = Summarize({30, 10, 20});
  EXPECT_EQ(d.count, 3);
  EXPECT_DOUBLE_EQ(d.mean, 20);
  EXPECT_EQ(d.p50, 20);
  EXPECT_EQ(d.p90, 30);
  EXPECT_EQ(d.p99, 30);
  EXPECT_EQ(d.max, 30);
  // {4, 1, 3, 2}: rank ceil(2) = 2 -> 2 (not the interpolated 2.5); ceil(3.6) = 4 -> 4.
  Distribution four = Summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(four.mean, 2.5);
  EXPECT_EQ(four.p50, 2);
  EXPECT_EQ(four.p90, 4);
  EXPECT_EQ(four.p99, 4);
}

TEST(SummarizeTest, OneToAHundredShuffled) {
  // 1..100: the p-th percentile is p itself; mean 50.5.
  std::vector<int64_t> values(100);
  std::iota(values.begin(), values.end(), int64_t{1});
  std::mt19937 rng(3);
  std::shuffle(values.begin(), values.end(), rng);
  Distribution d = Summarize(values);
  EXPECT_EQ(d.count, 100);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_EQ(d.p50, 50);
  EXPECT_EQ(d.p90, 90);
  EXPECT_EQ(d.p99, 99);
  EXPECT_EQ(d.max, 100);
}

TEST(SummarizeTest, TenValuesAndATailPercentile) {
  // 10 values 0, 10, ..., 90: p50 = 5th = 40, p90 = 9th = 80, p99 = ceil(9.9) = 10th = 90.
  std::vector<int64_t> values;
  for (int i = 9; i >= 0; --i) values.push_back(10 * i);
  Distribution d = Summarize(values);
  EXPECT_EQ(d.p50, 40);
  EXPECT_EQ(d.p90, 80);
  EXPECT_EQ(d.p99, 90);
  EXPECT_DOUBLE_EQ(d.mean, 45);
  // 1000 values 1..1000: p99 is the 990th.
  std::vector<int64_t> many(1000);
  std::iota(many.begin(), many.end(), int64_t{1});
  EXPECT_EQ(Summarize(many).p99, 990);
}

// ---------------------------------------------------------------------------
// WeightedMaxMinShares

TEST(WeightedMaxMinSharesTest, EqualWeightsWaterFill) {
  // 12 among demands 2, 5, 10 with equal weights: 2 is met (fair part 4), then 5
  // (fair part of the 10 left: 5), the last takes the remaining 5.
  EXPECT_THAT(WeightedMaxMinShares(12, {1, 1, 1}, {2, 5, 10}), Pointwise(DoubleNear(kEps), {2.0, 5.0, 5.0}));
}

TEST(WeightedMaxMinSharesTest, WeightsSplitWhatNobodyCanFill) {
  // 30 among two who want 100 each, weights 2:1 -> 20 and 10.
  EXPECT_THAT(WeightedMaxMinShares(30, {2, 1}, {100, 100}), Pointwise(DoubleNear(kEps), {20.0, 10.0}));
  // weights 3:1, demands 6 and 100, total 10: the heavy one's part 7.5 is more
  // than its 6; the rest, 4, goes to the other.
  EXPECT_THAT(WeightedMaxMinShares(10, {3, 1}, {6, 100}), Pointwise(DoubleNear(kEps), {6.0, 4.0}));
}

TEST(WeightedMaxMinSharesTest, DemandCapsTheShares) {
  // Plenty for everyone: each gets its demand and the rest is left over.
  EXPECT_THAT(WeightedMaxMinShares(10, {1, 1}, {1, 2}), Pointwise(DoubleNear(kEps), {1.0, 2.0}));
  // Zero demand gets zero; its weight does not hold anything back.
  EXPECT_THAT(WeightedMaxMinShares(10, {1, 1}, {0, 20}), Pointwise(DoubleNear(kEps), {0.0, 10.0}));
}

TEST(WeightedMaxMinSharesTest, ZeroWeightGetsNothing) {
  EXPECT_THAT(WeightedMaxMinShares(10, {0, 1}, {5, 5}), Pointwise(DoubleNear(kEps), {0.0, 5.0}));
  EXPECT_THAT(WeightedMaxMinShares(10, {0, 0}, {5, 5}), Pointwise(DoubleNear(kEps), {0.0, 0.0}));
}

TEST(WeightedMaxMinSharesTest, OrderOfClaimantsDoesNotMatter) {
  // The same claimants listed in reverse get the same shares, reversed.
  const std::vector<double> weights = {3, 1, 2, 2}, demands = {4, 9, 1, 30};
  std::vector<double> forward = WeightedMaxMinShares(20, weights, demands);
  std::vector<double> rw(weights.rbegin(), weights.rend()), rd(demands.rbegin(), demands.rend());
  std::vector<double> backward = WeightedMaxMinShares(20, rw, rd);
  std::reverse(backward.begin(), backward.end());
  EXPECT_THAT(forward, Pointwise(DoubleNear(kEps), backward));
  // 20 by weights 3:1:2:2 -> parts 7.5, 2.5, 5, 5; levels 4/3, 9, 0.5, 15:
  // 1 (weight 2) first: 1; then 4 (weight 3): part 19 x 3/6 = 9.5 -> 4; then 9
  // (weight 1): part 15 x 1/3 = 5; the last gets 10.
  EXPECT_THAT(forward, Pointwise(DoubleNear(kEps), {4.0, 5.0, 1.0, 10.0}));
  EXPECT_NEAR(std::accumulate(forward.begin(), forward.end(), 0.0), 20, kEps);
}

TEST(WeightedMaxMinSharesTest, NoClaimantsNoShares) {
  EXPECT_TRUE(WeightedMaxMinShares(10, {}, {}).empty());
}

// ---------------------------------------------------------------------------
// JainIndex

TEST(JainIndexTest, WorkedValues) {
  EXPECT_DOUBLE_EQ(JainIndex({}), 1);
  EXPECT_DOUBLE_EQ(JainIndex({3, 3, 3}), 1);
  EXPECT_DOUBLE_EQ(JainIndex({1, 0}), 0.5);               // 1 / (2 x 1)
  EXPECT_DOUBLE_EQ(JainIndex({4, 0, 0, 0}), 0.25);        // 16 / (4 x 16): one of four served
  EXPECT_DOUBLE_EQ(JainIndex({1, 2, 3}), 36.0 / 42.0);    // 6^2 / (3 x 14)
  EXPECT_DOUBLE_EQ(JainIndex({0, 0}), 1);                 // nobody got anything: equal
}

// ---------------------------------------------------------------------------
// ComputeMetrics

JobRecord Record(int32_t team, int64_t submit, int64_t start, int64_t end, int64_t gpu, int64_t duration,
                 int64_t run) {
  JobRecord j;
  j.team = team;
  j.submit_s = submit;
  j.first_start_s = start;
  j.end_s = end;
  j.gpu_milli = gpu;
  j.held_gpu_milli = start >= 0 ? gpu : 0;
  j.duration_s = duration;
  j.run_gpu_milli_s = run;
  return j;
}

TEST(ComputeMetricsTest, EmptyResultIsAllZeroAndFair) {
  SimResult empty;
  empty.policy = "static";
  PolicyMetrics m = ComputeMetrics(empty);
  EXPECT_EQ(m.policy, "static");
  EXPECT_EQ(m.jobs, 0);
  EXPECT_EQ(m.finished, 0);
  EXPECT_EQ(m.unfinished, 0);
  EXPECT_EQ(m.dropped, 0);
  EXPECT_EQ(m.left_out, 0);
  EXPECT_EQ(m.jct_s.count, 0);
  EXPECT_EQ(m.queue_s.count, 0);
  EXPECT_EQ(m.makespan_s, 0);
  EXPECT_EQ(m.allocation_pct, 0);
  EXPECT_EQ(m.fragmentation_pct, 0);
  EXPECT_EQ(m.preemptions, 0);
  EXPECT_EQ(m.gpu_hours_lost, 0);
  EXPECT_EQ(m.jain_index, 1);
  EXPECT_TRUE(m.teams.empty());
}

// Two teams on 4 GPUs, x (nominal 3) and y (nominal 1), over 300 s:
//   x1: 2 GPUs, submit 0, runs 0-100;  x2: 1 GPU, submit 0, runs 50-150, preempted
//   once (20 s lost, so 120 s held);   y1: 1 GPU, submit 10, runs 10-210;
//   y2: 1 GPU for 50 s, submit 20, never started; y3: dropped (1 GPU, 10 s).
SimResult TwoTeams() {
  SimResult r;
  r.policy = "preemption";
  r.teams = {"x", "y"};
  r.team_nominal_gpu_milli = {3000, 1000};
  r.total_gpu_milli = 4000;
  r.jobs.push_back(Record(0, 0, 0, 100, 2000, 100, 200000));
  JobRecord x2 = Record(0, 0, 50, 150, 1000, 100, 120000);
  x2.preemptions = 1;
  x2.lost_gpu_milli_s = 20000;
  r.jobs.push_back(x2);
  r.jobs.push_back(Record(1, 10, 10, 210, 1000, 200, 200000));
  r.jobs.push_back(Record(1, 20, -1, -1, 1000, 50, 0));
  JobRecord y3 = Record(1, 30, -1, -1, 1000, 10, 0);
  y3.dropped = true;
  r.jobs.push_back(y3);
  for (size_t i = 0; i < r.jobs.size(); ++i) r.jobs[i].trace_index = static_cast<int32_t>(i);
  r.samples = {{.t_s = 0, .allocated_gpu_milli = 2000, .running = 1},
               {.t_s = 10, .allocated_gpu_milli = 3000, .running = 2},
               {.t_s = 50, .allocated_gpu_milli = 4000, .running = 3},
               {.t_s = 100, .allocated_gpu_milli = 2000, .stranded_gpu_milli = 250, .running = 2},
               {.t_s = 150, .allocated_gpu_milli = 1000, .running = 1},
               {.t_s = 210, .allocated_gpu_milli = 0, .pending = 1}};
  r.jobs_left_out = 7;
  r.cycles = 12;
  r.preemptions = 1;
  r.end_s = 300;
  return r;
}

TEST(ComputeMetricsTest, CountsAndDistributionsOverFinishedJobs) {
  PolicyMetrics m = ComputeMetrics(TwoTeams());
  EXPECT_EQ(m.policy, "preemption");
  EXPECT_EQ(m.jobs, 5);
  EXPECT_EQ(m.finished, 3);
  EXPECT_EQ(m.unfinished, 1);
  EXPECT_EQ(m.dropped, 1);
  EXPECT_EQ(m.left_out, 7);
  EXPECT_EQ(m.cycles, 12);
  EXPECT_EQ(m.preemptions, 1);
  // JCT: 100, 150, 200; queueing: 0, 50, 0.
  EXPECT_EQ(m.jct_s.count, 3);
  EXPECT_DOUBLE_EQ(m.jct_s.mean, 150);
  EXPECT_EQ(m.jct_s.p50, 150);
  EXPECT_EQ(m.jct_s.max, 200);
  EXPECT_DOUBLE_EQ(m.queue_s.mean, 50.0 / 3);
  EXPECT_EQ(m.queue_s.p50, 0);
  EXPECT_EQ(m.queue_s.p90, 50);
  // An unfinished job stretches the makespan to the end of the run: max(210, 300).
  EXPECT_EQ(m.makespan_s, 300);
  EXPECT_NEAR(m.gpu_hours_lost, 20000 / kGpuHour, kEps);
}

TEST(ComputeMetricsTest, AllocationAndFragmentationAreTimeWeighted) {
  // Allocated milli x s over [0, 300]: 2000 x 10 + 3000 x 40 + 4000 x 50 + 2000 x 50
  // + 1000 x 60 + 0 x 90 = 500,000 of 4000 x 300 = 1,200,000 -> 41.67 %.
  // Free: 2000 x 10 + 1000 x 40 + 0 + 2000 x 50 + 3000 x 60 + 4000 x 90 = 700,000;
  // stranded: 250 x 50 = 12,500 -> 1.79 %.
  PolicyMetrics m = ComputeMetrics(TwoTeams());
  EXPECT_NEAR(m.allocation_pct, 100.0 * 500000 / 1200000, 1e-9);
  EXPECT_NEAR(m.fragmentation_pct, 100.0 * 12500 / 700000, 1e-9);
}

TEST(ComputeMetricsTest, TeamSharesComeFromTheIntegralsAndJainFromTheResult) {
  // Allocated 300 and 100 (milli-GPU s) against fair shares 200 and 200: shares
  // 0.75 / 0.25 received, 0.5 / 0.5 deserved; Jain's index is the simulator's.
  SimResult r;
  r.policy = "p";
  r.teams = {"x", "y"};
  r.team_nominal_gpu_milli = {1000, 1000};
  r.team_allocated_gpu_milli_s = {300, 100};
  r.team_fair_gpu_milli_s = {200, 200};
  r.fairness_jain = 0.8;
  PolicyMetrics m = ComputeMetrics(r);
  ASSERT_EQ(m.teams.size(), 2u);
  EXPECT_NEAR(m.teams[0].share_received, 0.75, kEps);
  EXPECT_NEAR(m.teams[1].share_received, 0.25, kEps);
  EXPECT_NEAR(m.teams[0].share_deserved, 0.5, kEps);
  EXPECT_NEAR(m.teams[1].share_deserved, 0.5, kEps);
  EXPECT_DOUBLE_EQ(m.jain_index, 0.8);
}

TEST(ComputeMetricsTest, FairnessWhileATeamWaits) {
  // 4 GPUs, teams a and b with 2 each in one cohort, borrowing, no preemption.
  // a runs four 1-GPU jobs 0-100 (two borrowed); b's two jobs arrive at 10 and
  // wait until 100. From 10 to 100 (contended): 4 GPUs allocated, demands a 4,
  // b 2, equal weights: fair shares 2 and 2; a has 2x its share, b none: Jain
  // (2 + 0)^2 / (2 x (4 + 0)) = 0.5. Nobody waits before 10 or after 100.
  Result<std::vector<Node>> nodes = LoadSimNodes("1x4xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster = SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {"a", "b"}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  Result<SimPolicy> policy = BuiltinPolicy("borrowing", JobOrder::kFifo);
  ASSERT_TRUE(policy.has_value());
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(TraceJob{.name = "a" + std::to_string(i), .team = "a", .submit_s = 0, .duration_s = 100,
                            .gpu_milli = 1000});
  }
  for (int i = 0; i < 2; ++i) {
    jobs.push_back(TraceJob{.name = "b" + std::to_string(i), .team = "b", .submit_s = 10, .duration_s = 100,
                            .gpu_milli = 1000});
  }
  Result<SimResult> result = Simulate(*cluster, jobs, *policy, SimOptions{});
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  EXPECT_EQ(result->contended_s, 90);
  EXPECT_NEAR(result->fairness_jain, 0.5, kEps);
  PolicyMetrics m = ComputeMetrics(*result);
  EXPECT_NEAR(m.jain_index, 0.5, kEps);
  // GPU time allocated: a 4 x 100, b 2 x 100 (of 600); fair: a 2 x 90 + 4 x 10,
  // b 2 x 90 + 2 x 100.
  EXPECT_NEAR(m.teams[0].share_received, 400.0 / 600, kEps);
  EXPECT_NEAR(m.teams[0].share_deserved, 220.0 / 600, kEps);
  EXPECT_NEAR(m.teams[1].share_deserved, 380.0 / 600, kEps);
}

TEST(ComputeMetricsTest, HandScenarioFromTheSimulator) {
  // 4 GPUs, one team: A (4 GPUs) 0-100, B (1 GPU, submitted at 10) 100-150.
  // Allocation: (4000 x 100 + 1000 x 50) / (4000 x 150) = 75 %; nothing stranded.
  // JCT 100 and 140 (mean 120); queueing 0 and 90 (mean 45). One team gets
  // everything it asked for: shares 1, Jain 1.
  Result<std::vector<Node>> nodes = LoadSimNodes("1x4xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster = SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {"a"}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  Result<SimPolicy> policy = BuiltinPolicy("borrowing", JobOrder::kFifo);
  ASSERT_TRUE(policy.has_value());
  TraceJob a{.name = "A", .team = "a", .submit_s = 0, .duration_s = 100, .gpu_milli = 4000};
  TraceJob b{.name = "B", .team = "a", .submit_s = 10, .duration_s = 50, .gpu_milli = 1000};
  Result<SimResult> result = Simulate(*cluster, {a, b}, *policy, SimOptions{});
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  PolicyMetrics m = ComputeMetrics(*result);
  EXPECT_EQ(m.policy, "borrowing");
  EXPECT_EQ(m.jobs, 2);
  EXPECT_EQ(m.finished, 2);
  EXPECT_EQ(m.makespan_s, 150);
  EXPECT_NEAR(m.allocation_pct, 75, 1e-9);
  EXPECT_EQ(m.fragmentation_pct, 0);
  EXPECT_DOUBLE_EQ(m.jct_s.mean, 120);
  EXPECT_EQ(m.jct_s.max, 140);
  EXPECT_DOUBLE_EQ(m.queue_s.mean, 45);
  EXPECT_EQ(m.queue_s.max, 90);
  ASSERT_EQ(m.teams.size(), 1u);
  EXPECT_EQ(m.teams[0].team, "a");
  EXPECT_DOUBLE_EQ(m.teams[0].nominal_gpus, 4);
  EXPECT_NEAR(m.teams[0].gpu_hours_received, 450000 / kGpuHour, kEps);
  EXPECT_NEAR(m.teams[0].share_received, 1, kEps);
  EXPECT_NEAR(m.teams[0].share_deserved, 1, kEps);
  EXPECT_DOUBLE_EQ(m.jain_index, 1);
}

TEST(ComputeMetricsTest, EmptySimulationDoesNotDivideByZero) {
  // An empty trace through Simulate, then ComputeMetrics: zeros, Jain 1.
  Result<std::vector<Node>> nodes = LoadSimNodes("1x4xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster = SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {}));
  ASSERT_TRUE(cluster.has_value());
  Result<SimPolicy> policy = BuiltinPolicy("fractional", JobOrder::kFifo);
  ASSERT_TRUE(policy.has_value());
  Result<SimResult> result = Simulate(*cluster, {}, *policy, SimOptions{});
  ASSERT_TRUE(result.has_value());
  PolicyMetrics m = ComputeMetrics(*result);
  EXPECT_EQ(m.jobs, 0);
  EXPECT_EQ(m.makespan_s, 0);
  EXPECT_EQ(m.allocation_pct, 0);
  EXPECT_EQ(m.fragmentation_pct, 0);
  EXPECT_EQ(m.jain_index, 1);
  EXPECT_TRUE(m.teams.empty());
}

}  // namespace
}  // namespace tessera
