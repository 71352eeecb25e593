// Tests of Simulate: tiny hand-made traces whose outcome is worked out by hand
// (arrival, admission, preemption, checkpoint loss, completion times), the
// built-in policies, determinism on a generated trace, and bad input.
#include "sim/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Builders

// Job("train").Team("b").At(10).For(100).Gpu(2000).Pods(2): a trace job; team "a",
// 1 GPU, submitted at 0 for 0 s unless set.
class Job {
 public:
  explicit Job(std::string name) {
    job_.name = std::move(name);
    job_.team = "a";
    job_.gpu_milli = 1000;
  }
  Job& Team(std::string team) { job_.team = std::move(team); return *this; }
  Job& At(int64_t submit_s) { job_.submit_s = submit_s; return *this; }
  Job& For(int64_t duration_s) { job_.duration_s = duration_s; return *this; }
  Job& Gpu(int64_t milli) { job_.gpu_milli = milli; return *this; }
  Job& Pods(int32_t pods) { job_.pods = pods; return *this; }
  Job& Cpu(int64_t milli) { job_.cpu_milli = milli; return *this; }
  Job& Class(std::string priority_class) { job_.priority_class = std::move(priority_class); return *this; }
  Job& Models(std::vector<std::string> models) { job_.gpu_models = std::move(models); return *this; }
  operator TraceJob() const { return job_; }  // NOLINT: builders convert implicitly

 private:
  TraceJob job_;
};

constexpr std::string_view kFlavor = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
)";

// A ClusterQueue named after the team in cohort "all" with `gpus` nominal GPUs,
// and the team's LocalQueue in the namespace of its name. `extra` is appended to
// the ClusterQueue's spec (indented two spaces).
std::string Queue(const std::string& team, int64_t gpus, const std::string& extra = "") {
  return "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: \"" + team +
         "\"\nspec:\n  cohort: all\n  namespaceSelector: {}\n  resourceGroups:\n"
         "  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n    - name: default\n      resources:\n"
         "      - name: nvidia.com/gpu\n        nominalQuota: " +
         std::to_string(gpus) + "\n" + extra +
         "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: \"" + team +
         "\"\n  namespace: \"" + team + "\"\nspec:\n  clusterQueue: \"" + team + "\"\n";
}

// A PriorityClass; `extra` adds top-level fields ("preemptionPolicy: Never\n"),
// `metadata` fields under metadata (indented two spaces).
std::string Class(const std::string& name, int32_t value, const std::string& extra = "",
                  std::string_view metadata = "") {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " + name + "\n" +
         std::string(metadata) + "value: " + std::to_string(value) + "\n" + extra;
}

constexpr std::string_view kNonPreemptible = "  annotations:\n    tessera.dev/non-preemptible: \"true\"\n";

SimCluster Cluster(const std::string& spec, const std::string& manifests) {
  Result<std::vector<Node>> nodes = LoadSimNodes(spec);
  EXPECT_TRUE(nodes.has_value()) << nodes.error().ToString();
  Result<SimCluster> cluster = SimClusterFromManifests(nodes.value_or(std::vector<Node>{}), manifests);
  EXPECT_TRUE(cluster.has_value()) << cluster.error().ToString();
  return cluster.value_or(SimCluster{});
}

SimPolicy Policy(std::string_view name, JobOrder order = JobOrder::kFifo) {
  Result<SimPolicy> policy = BuiltinPolicy(name, order);
  EXPECT_TRUE(policy.has_value()) << policy.error().ToString();
  return policy.value_or(SimPolicy{});
}

SimResult Sim(const SimCluster& cluster, const std::vector<TraceJob>& jobs, std::string_view policy,
              const SimOptions& options = {}, JobOrder order = JobOrder::kFifo) {
  Result<SimResult> result = Simulate(cluster, jobs, Policy(policy, order), options);
  EXPECT_TRUE(result.has_value()) << result.error().ToString();
  return result.value_or(SimResult{});
}

// The record of trace job `index`; a default record (never started) when absent.
JobRecord Rec(const SimResult& r, int32_t index) {
  for (const JobRecord& j : r.jobs) {
    if (j.trace_index == index) return j;
  }
  ADD_FAILURE() << "no record for trace job " << index;
  return JobRecord{};
}

// (first_start_s, end_s) of every record, in trace order.
std::vector<std::pair<int64_t, int64_t>> Times(const SimResult& r) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const JobRecord& j : r.jobs) out.emplace_back(j.first_start_s, j.end_s);
  return out;
}
using T = std::pair<int64_t, int64_t>;

// The sample in force at `t_s` (the last one at or before it).
SimSample At(const SimResult& r, int64_t t_s) {
  SimSample found{.t_s = -1};
  for (const SimSample& s : r.samples) {
    if (s.t_s <= t_s) found = s;
  }
  return found;
}

MATCHER_P5(IsSample, t, allocated, stranded, running, pending, "") {
  return arg.t_s == t && arg.allocated_gpu_milli == allocated && arg.stranded_gpu_milli == stranded &&
         arg.running == running && arg.pending == pending;
}

// ---------------------------------------------------------------------------
// FIFO, quota, borrowing

TEST(SimulatorTest, FifoOnAFullClusterWaitsForTheRunningJob) {
  // 4 GPUs. A takes all 4 at 0 for 100 s; B (1 GPU, 50 s) arrives at 10, waits
  // until A ends at 100, and ends at 150.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster, {Job("A").At(0).For(100).Gpu(4000), Job("B").At(10).For(50)}, "borrowing");
  EXPECT_EQ(r.policy, "borrowing");
  EXPECT_THAT(r.teams, ElementsAre("a"));
  EXPECT_THAT(r.team_nominal_gpu_milli, ElementsAre(4000));
  EXPECT_EQ(r.total_gpu_milli, 4000);
  ASSERT_EQ(r.jobs.size(), 2u);
  const JobRecord a = Rec(r, 0), b = Rec(r, 1);
  EXPECT_EQ(a.submit_s, 0);
  EXPECT_EQ(a.first_start_s, 0);
  EXPECT_EQ(a.end_s, 100);
  EXPECT_EQ(a.gpu_milli, 4000);
  EXPECT_EQ(a.held_gpu_milli, 4000);
  EXPECT_EQ(a.run_gpu_milli_s, 400000);  // 4000 x 100 s
  EXPECT_EQ(a.duration_s, 100);
  EXPECT_EQ(b.submit_s, 10);
  EXPECT_EQ(b.first_start_s, 100);
  EXPECT_EQ(b.end_s, 150);
  EXPECT_EQ(b.held_gpu_milli, 1000);
  EXPECT_EQ(b.run_gpu_milli_s, 50000);  // 1000 x 50 s
  EXPECT_EQ(b.preemptions, 0);
  EXPECT_EQ(b.lost_gpu_milli_s, 0);
  EXPECT_FALSE(b.dropped);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.jobs_left_out, 0);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.end_s, 150);
  // Cycles at 0, 10 and 100 (none at 150: nothing pending).
  EXPECT_GE(r.cycles, 3);
  EXPECT_LE(r.cycles, 4);
  // One sample per instant where something changed.
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 4000, 0, 1, 0), IsSample(10, 4000, 0, 1, 1),
                                     IsSample(100, 1000, 0, 1, 0), IsSample(150, 0, 0, 0, 0)));
}

TEST(SimulatorTest, QueueOrderIsSubmissionTimeAtACompletionInstant) {
  // 1 GPU. A runs 0-100; B arrives at 50 and C at exactly 100, the instant A
  // ends: completions come first, then arrivals, and B (older) takes the GPU:
  // B 100-150, C 150-160.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  SimResult r = Sim(cluster, {Job("A").At(0).For(100), Job("B").At(50).For(50), Job("C").At(100).For(10)},
                    "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 150}, T{150, 160}));
}

TEST(SimulatorTest, ArrivalAtTheInstantOfACompletionStartsAtOnce) {
  // 1 GPU. A runs 0-100; B arrives at 100 and starts at once: no queueing delay.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  SimResult r = Sim(cluster, {Job("A").At(0).For(100), Job("B").At(100).For(50)}, "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 150}));
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 1000, 0, 1, 0), IsSample(150, 0, 0, 0, 0)));
}

TEST(SimulatorTest, StaticPolicyCapsATeamAtItsQuota) {
  // 4 GPUs, teams a and b with 2 each; only a submits, 4 x 1 GPU x 100 s at 0.
  // Without borrowing a runs 2 (the first two by trace order) then 2 more at 100.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job("a" + std::to_string(i)).At(0).For(100));
  SimResult r = Sim(cluster, jobs, "static");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{0, 100}, T{100, 200}, T{100, 200}));
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 2000, 0, 2, 2), IsSample(100, 2000, 0, 2, 0),
                                     IsSample(200, 0, 0, 0, 0)));
  EXPECT_THAT(r.teams, ElementsAre("a"));  // b has no jobs
  EXPECT_THAT(r.team_nominal_gpu_milli, ElementsAre(2000));
}

TEST(SimulatorTest, BorrowingLendsIdleQuota) {
  // The same trace with borrowing: a borrows b's idle 2 GPUs and all four run at 0.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job("a" + std::to_string(i)).At(0).For(100));
  SimResult r = Sim(cluster, jobs, "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{0, 100}, T{0, 100}, T{0, 100}));
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 4000, 0, 4, 0), IsSample(100, 0, 0, 0, 0)));
}

TEST(SimulatorTest, QueueOutsideACohortCannotBorrow) {
  // Team a's queue has no cohort: even with borrowing on it is capped at its 2 GPUs.
  const std::string a = Queue("a", 2);
  std::string no_cohort = a;
  no_cohort.erase(no_cohort.find("  cohort: all\n"), 14);
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + no_cohort + Queue("b", 2));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(Job("a" + std::to_string(i)).At(0).For(100));
  SimResult r = Sim(cluster, jobs, "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{0, 100}, T{100, 200}));
}

// ---------------------------------------------------------------------------
// Fractions

TEST(SimulatorTest, FractionalPolicyPacksFractionsOnOneDevice) {
  // Four 0.25-GPU jobs at 0 on 4 GPUs: with sharing they fill one device (nothing
  // stranded), each holding 250.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job("f" + std::to_string(i)).At(0).For(100).Gpu(250));
  SimResult r = Sim(cluster, jobs, "fractional");
  for (const JobRecord& j : r.jobs) {
    EXPECT_EQ(j.first_start_s, 0);
    EXPECT_EQ(j.end_s, 100);
    EXPECT_EQ(j.gpu_milli, 250);
    EXPECT_EQ(j.held_gpu_milli, 250);
    EXPECT_EQ(j.run_gpu_milli_s, 25000);  // 250 x 100 s
  }
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 1000, 0, 4, 0), IsSample(100, 0, 0, 0, 0)));
}

TEST(SimulatorTest, FractionsLeaveStrandedCapacityOnAPartlyUsedDevice) {
  // Three 0.25-GPU jobs share a device: 750 allocated, 250 stranded on it; when
  // the 50 s one ends, 500 allocated and 500 stranded.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster,
                    {Job("f0").At(0).For(100).Gpu(250), Job("f1").At(0).For(100).Gpu(250),
                     Job("f2").At(0).For(50).Gpu(250)},
                    "fractional");
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 750, 250, 3, 0), IsSample(50, 500, 500, 2, 0),
                                     IsSample(100, 0, 0, 0, 0)));
}

TEST(SimulatorTest, WithoutSharingAFractionTakesAWholeDevice) {
  // The same four 0.25-GPU jobs with sharing off: each holds a whole device.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job("f" + std::to_string(i)).At(0).For(100).Gpu(250));
  SimResult r = Sim(cluster, jobs, "borrowing");
  for (const JobRecord& j : r.jobs) {
    EXPECT_EQ(j.first_start_s, 0);
    EXPECT_EQ(j.end_s, 100);
    EXPECT_EQ(j.gpu_milli, 250);       // as requested
    EXPECT_EQ(j.held_gpu_milli, 1000);  // as held
    EXPECT_EQ(j.run_gpu_milli_s, 100000);
  }
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 4000, 0, 4, 0), IsSample(100, 0, 0, 0, 0)));
}

TEST(SimulatorTest, WithoutSharingAFractionIsChargedAWholeGpuOfQuota) {
  // Quota 1 GPU, static: two 0.5-GPU jobs cannot both run without sharing (each
  // charged 1000) but can with the fractional policy.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 1) + Queue("b", 3));
  std::vector<TraceJob> jobs = {Job("h0").At(0).For(100).Gpu(500), Job("h1").At(0).For(100).Gpu(500)};
  EXPECT_THAT(Times(Sim(cluster, jobs, "static")), ElementsAre(T{0, 100}, T{100, 200}));
  EXPECT_THAT(Times(Sim(cluster, jobs, "fractional")), ElementsAre(T{0, 100}, T{0, 100}));
}

// ---------------------------------------------------------------------------
// Preemption and checkpoints

// Teams a and b with 2 GPUs each; a borrows the whole cluster with 4 x 1 GPU x 200 s
// at the given times, and b's 1-GPU, 100 s job arrives at 70.
std::vector<TraceJob> ReclaimTrace(std::vector<int64_t> a_starts) {
  std::vector<TraceJob> jobs;
  for (size_t i = 0; i < a_starts.size(); ++i) {
    jobs.push_back(Job("a" + std::to_string(i)).Team("a").At(a_starts[i]).For(200));
  }
  jobs.push_back(Job("b").Team("b").At(70).For(100));
  return jobs;
}

TEST(SimulatorTest, ReclaimKeepsTheVictimsWorkUpToItsLastCheckpoint) {
  // Checkpoints every 30 s. At 70 b reclaims one of a's borrowed GPUs: the victims
  // tie (all lost 10 s since their checkpoint at 60), the first by trace order
  // goes. a0 keeps 60 s, loses 10 s (1000 x 10), re-queues behind b, and resumes
  // when b ends at 170 with 140 s to go: it ends at 310.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), "preemption", options);
  EXPECT_EQ(r.preemptions, 1);
  const JobRecord a0 = Rec(r, 0), b = Rec(r, 4);
  EXPECT_EQ(a0.preemptions, 1);
  EXPECT_EQ(a0.first_start_s, 0);
  EXPECT_EQ(a0.end_s, 310);                 // 170 + (200 - 60)
  EXPECT_EQ(a0.lost_gpu_milli_s, 10000);    // 1000 x (70 - 60)
  EXPECT_EQ(a0.run_gpu_milli_s, 210000);    // 1000 x (70 + 140)
  EXPECT_EQ(a0.held_gpu_milli, 1000);
  EXPECT_EQ(b.first_start_s, 70);
  EXPECT_EQ(b.end_s, 170);
  EXPECT_EQ(b.preemptions, 0);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(Rec(r, i).preemptions, 0) << i;
    EXPECT_EQ(Rec(r, i).end_s, 200) << i;
  }
  EXPECT_EQ(At(r, 70).allocated_gpu_milli, 4000);
  EXPECT_EQ(At(r, 70).running, 4);
  EXPECT_EQ(At(r, 70).pending, 1);
  EXPECT_EQ(At(r, 170).pending, 0);
}

TEST(SimulatorTest, WithoutCheckpointsAVictimRestartsFromScratch) {
  // The same with checkpoint_interval 0: a0 loses all 70 s and needs 200 s again
  // from 170: it ends at 370.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(0);
  SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), "preemption", options);
  EXPECT_EQ(r.preemptions, 1);
  const JobRecord a0 = Rec(r, 0);
  EXPECT_EQ(a0.preemptions, 1);
  EXPECT_EQ(a0.end_s, 370);               // 170 + 200
  EXPECT_EQ(a0.lost_gpu_milli_s, 70000);  // 1000 x 70
  EXPECT_EQ(a0.run_gpu_milli_s, 270000);  // 1000 x (70 + 200)
  EXPECT_EQ(Rec(r, 4).first_start_s, 70);
}

TEST(SimulatorTest, TheVictimIsTheOneThatLosesLeastSinceItsCheckpoint) {
  // a0..a3 start at 0, 5, 10, 15; checkpoints every 30 s. At 70 the work since the
  // last checkpoint is 10, 5, 0 and 25 s: a2 goes and loses nothing, keeping 60 s;
  // it resumes at 170 and ends at 310.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(cluster, ReclaimTrace({0, 5, 10, 15}), "preemption", options);
  EXPECT_EQ(r.preemptions, 1);
  const JobRecord a2 = Rec(r, 2);
  EXPECT_EQ(a2.preemptions, 1);
  EXPECT_EQ(a2.lost_gpu_milli_s, 0);
  EXPECT_EQ(a2.first_start_s, 10);
  EXPECT_EQ(a2.end_s, 310);  // 170 + (200 - 60)
  EXPECT_EQ(a2.run_gpu_milli_s, 200000);
  EXPECT_EQ(Rec(r, 0).end_s, 200);
  EXPECT_EQ(Rec(r, 1).end_s, 205);
  EXPECT_EQ(Rec(r, 3).end_s, 215);
}

TEST(SimulatorTest, PoliciesWithoutPreemptionMakeTheOwnerWait) {
  // With borrowing but no preemption b waits for a's first job to end at 200.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  for (const char* policy : {"borrowing", "fractional"}) {
    SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), policy);
    EXPECT_EQ(r.preemptions, 0) << policy;
    EXPECT_EQ(Rec(r, 4).first_start_s, 200) << policy;
    EXPECT_EQ(Rec(r, 4).end_s, 300) << policy;
  }
}

TEST(SimulatorTest, ConfiguredPolicyWithoutPreemptionSettingsPreemptsNothing) {
  // "configured" takes the queues as written: no preemption block means Never.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), "configured");
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(Rec(r, 4).first_start_s, 200);
}

TEST(SimulatorTest, ConfiguredPolicyUsesTheQueuesPreemptionSettings) {
  // The same queues with reclaimWithinCohort Any written in: b reclaims at 70.
  const std::string reclaim = "  preemption:\n    reclaimWithinCohort: Any\n";
  SimCluster cluster =
      Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2, reclaim) + Queue("b", 2, reclaim));
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), "configured", options);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(Rec(r, 4).first_start_s, 70);
  EXPECT_EQ(Rec(r, 0).end_s, 310);
}

TEST(SimulatorTest, HigherPriorityPreemptsWithinAQueue) {
  // One queue of 4 GPUs; classes high (100) and low (10). Four low 1-GPU jobs run
  // from 0 for 100 s; at 40 a high 2-GPU job (50 s) arrives and preempts two of
  // them (the first two by trace order: all tie at 10 s lost since the checkpoint
  // at 30). It runs 40-90; the victims keep 30 s, resume at 90 with 70 s to go and
  // end at 160.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4) + Class("high", 100) +
                                                    Class("low", 10));
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job("low" + std::to_string(i)).At(0).For(100).Class("low"));
  jobs.push_back(Job("high").At(40).For(50).Gpu(2000).Class("high"));
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(cluster, jobs, "preemption", options);
  EXPECT_EQ(r.preemptions, 2);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 160}, T{0, 160}, T{0, 100}, T{0, 100}, T{40, 90}));
  for (int i = 0; i < 2; ++i) {
    const JobRecord v = Rec(r, i);
    EXPECT_EQ(v.preemptions, 1);
    EXPECT_EQ(v.lost_gpu_milli_s, 10000);   // 1000 x (40 - 30)
    EXPECT_EQ(v.run_gpu_milli_s, 110000);   // 1000 x (40 + 70)
  }
  EXPECT_EQ(Rec(r, 4).held_gpu_milli, 2000);
  // Without preemption the high job waits for two low ones to end at 100.
  SimResult waits = Sim(cluster, jobs, "fractional", options);
  EXPECT_EQ(waits.preemptions, 0);
  EXPECT_EQ(Rec(waits, 4).first_start_s, 100);
}

TEST(SimulatorTest, DefaultClassesProductionIsNeverAVictimAndBatchNeverPreempts) {
  // Tessera's default classes, 2 GPUs in one queue. production and batch run from
  // 0 for 100 s. A training job (10-30) preempts batch, not production; batch0
  // (no checkpoint yet) loses its 10 s and is back at 30 with 100 s to go: 30-130.
  // batch1 arrives at 15 and waits: batch preempts nothing; it runs when
  // production ends: 100-105.
  SimCluster cluster = Cluster("1x2xA100-80GB", std::string(kFlavor) + Queue("a", 2));
  std::vector<TraceJob> jobs = {Job("prod").At(0).For(100).Class("production"),
                                Job("batch0").At(0).For(100).Class("batch"),
                                Job("train").At(10).For(20).Class("training"),
                                Job("batch1").At(15).For(5).Class("batch")};
  SimResult r = Sim(cluster, jobs, "preemption");
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{0, 130}, T{10, 30}, T{100, 105}));
  EXPECT_EQ(Rec(r, 0).preemptions, 0);
  EXPECT_EQ(Rec(r, 1).preemptions, 1);
  EXPECT_EQ(Rec(r, 1).lost_gpu_milli_s, 10000);  // 1000 x 10 s, no checkpoint in 1800 s
}

TEST(SimulatorTest, NonPreemptibleClassIsNeverAVictimEvenOfHigherPriority) {
  // serving (1000, non-preemptible) holds the only GPU 0-100; urgent (5000) at 10
  // waits for it.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1) +
                                                    Class("serving", 1000, "", kNonPreemptible) +
                                                    Class("urgent", 5000));
  ASSERT_NE(cluster.FindPriorityClass("serving"), nullptr);
  ASSERT_TRUE(cluster.FindPriorityClass("serving")->non_preemptible);
  const std::vector<TraceJob> jobs = {Job("serve").At(0).For(100).Class("serving"),
                                      Job("urgent").At(10).For(10).Class("urgent")};
  SimResult r = Sim(cluster, jobs, "preemption");
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 110}));
  // Without the annotation urgent preempts serving at 10 and runs 10-20.
  SimCluster plain = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1) + Class("serving", 1000) +
                                                  Class("urgent", 5000));
  SimResult preempted = Sim(plain, jobs, "preemption");
  EXPECT_EQ(preempted.preemptions, 1);
  EXPECT_EQ(Rec(preempted, 1).first_start_s, 10);
}

TEST(SimulatorTest, PreemptionPolicyNeverWaitsWhileOthersPreempt) {
  // 1 GPU; filler (0) runs from 0 for 100 s. scavenger (50, preemptionPolicy Never)
  // arrives at 10 and waits; normal (100) arrives at 20 and preempts filler (no
  // checkpoint: 20 s lost). normal runs 20-30, then scavenger (higher than filler)
  // 30-40, then filler again with its 100 s: 40-140.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1) + Class("filler", 0) +
                                                    Class("scavenger", 50, "preemptionPolicy: Never\n") +
                                                    Class("normal", 100));
  SimResult r = Sim(cluster,
                    {Job("filler").At(0).For(100).Class("filler"), Job("scav").At(10).For(10).Class("scavenger"),
                     Job("normal").At(20).For(10).Class("normal")},
                    "preemption");
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 140}, T{30, 40}, T{20, 30}));
  EXPECT_EQ(Rec(r, 0).lost_gpu_milli_s, 20000);
  EXPECT_EQ(Rec(r, 0).run_gpu_milli_s, 120000);  // 20 + 100 s
}

TEST(SimulatorTest, GlobalDefaultClassAppliesToJobsWithoutOne) {
  // low is the global default: a job without a class is low, and high preempts it.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1) +
                                                    Class("low", 1, "globalDefault: true\n") + Class("high", 100));
  SimResult r = Sim(cluster, {Job("plain").At(0).For(100), Job("high").At(10).For(10).Class("high")}, "preemption");
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 120}, T{10, 20}));
}

TEST(SimulatorTest, APreemptorKeepsTheFreeRoomItCountedOn) {
  // 2 nodes x 4 GPUs, one queue of 8. low0 (batch, 4 GPUs) runs from 0 for 100 s.
  // At 50 a training gang (2 pods x 4 GPUs, 40 s) and low1 (batch, 1 GPU) arrive.
  // The gang needs low0's node and the free one: it preempts low0 (no checkpoint:
  // 50 s lost) and runs 50-90; low1 must not take the free node meanwhile, or the
  // gang preempts it, low0 takes the other node back, and so on. After the gang,
  // low0 (older) and low1 run 90-190. One preemption in all.
  SimCluster cluster = Cluster("2x4xA100-80GB", std::string(kFlavor) + Queue("a", 8));
  SimResult r = Sim(cluster,
                    {Job("low0").At(0).For(100).Gpu(4000).Class("batch"),
                     Job("gang").At(50).For(40).Gpu(4000).Pods(2).Class("training"),
                     Job("low1").At(50).For(100).Class("batch")},
                    "preemption");
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 190}, T{50, 90}, T{90, 190}));
  EXPECT_EQ(Rec(r, 0).lost_gpu_milli_s, 200000);  // 4000 x 50 s
  EXPECT_EQ(Rec(r, 2).preemptions, 0);
}

// ---------------------------------------------------------------------------
// Gangs, backfill, ordering

TEST(SimulatorTest, GangRunsOnlyWhenAllItsPodsFit) {
  // 2 nodes x 2 GPUs. j0 holds one GPU 0-100. The gang (2 pods x 2 GPUs) arrives
  // at 10 and needs both nodes whole: it waits until 100 and ends at 150; a 1-GPU
  // job arriving at 20 fits beside j0 and runs 20-50 (no runtime limits: no
  // reservation holds it back). No GPU is held by a partial gang. (Quota 8: the
  // nodes, not the quota, hold the gang back.)
  SimCluster cluster = Cluster("2x2xA100-80GB", std::string(kFlavor) + Queue("a", 8));
  SimResult r = Sim(cluster,
                    {Job("j0").At(0).For(100), Job("gang").At(10).For(50).Gpu(2000).Pods(2),
                     Job("j2").At(20).For(30)},
                    "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 150}, T{20, 50}));
  const JobRecord gang = Rec(r, 1);
  EXPECT_EQ(gang.gpu_milli, 4000);
  EXPECT_EQ(gang.held_gpu_milli, 4000);
  EXPECT_EQ(gang.run_gpu_milli_s, 200000);
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 1000, 0, 1, 0), IsSample(10, 1000, 0, 1, 1),
                                     IsSample(20, 2000, 0, 2, 1), IsSample(50, 1000, 0, 1, 1),
                                     IsSample(100, 4000, 0, 1, 0), IsSample(150, 0, 0, 0, 0)));
}

TEST(SimulatorTest, RuntimeLimitsLetBackfillReserveForTheGang) {
  // As above plus a long 1-GPU job (200 s) at 30. Without runtime limits it takes
  // the free GPU at once and the gang waits for it: 30-230, gang 230-280. With
  // runtime limits the gang reserves both nodes from 100 (j0's end): the short
  // j2 (ends at 50) backfills, the long job waits until the gang is done at 150.
  SimCluster cluster = Cluster("2x2xA100-80GB", std::string(kFlavor) + Queue("a", 8));
  std::vector<TraceJob> jobs = {Job("j0").At(0).For(100), Job("gang").At(10).For(50).Gpu(2000).Pods(2),
                                Job("j2").At(20).For(30), Job("long").At(30).For(200)};
  SimResult greedy = Sim(cluster, jobs, "borrowing");
  EXPECT_THAT(Times(greedy), ElementsAre(T{0, 100}, T{230, 280}, T{20, 50}, T{30, 230}));
  SimOptions limits;
  limits.runtime_limits = true;
  SimResult reserved = Sim(cluster, jobs, "borrowing", limits);
  EXPECT_THAT(Times(reserved), ElementsAre(T{0, 100}, T{100, 150}, T{20, 50}, T{150, 350}));
}

TEST(SimulatorTest, WorkBlockedByQuotaGetsNoReservation) {
  // docs/scheduling.md: reservations are for work blocked by capacity, not quota.
  // Quota 4 on 4 GPUs: j0 uses 1, so the 4-GPU job exceeds the quota (1 + 4 > 4)
  // and reserves nothing; the long 1-GPU job fits the quota and starts at 30 even
  // with runtime limits; the big job waits for both: 230-280.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimOptions limits;
  limits.runtime_limits = true;
  const std::vector<TraceJob> jobs = {Job("j0").At(0).For(100), Job("big").At(10).For(50).Gpu(4000),
                                      Job("long").At(30).For(200)};
  SimResult r = Sim(cluster, jobs, "borrowing", limits);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{230, 280}, T{30, 230}));
  // With quota 8 the nodes are what blocks it: it reserves from 100 and the long job waits.
  SimCluster roomy = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 8));
  SimResult reserved = Sim(roomy, jobs, "borrowing", limits);
  EXPECT_THAT(Times(reserved), ElementsAre(T{0, 100}, T{100, 150}, T{150, 350}));
}

TEST(SimulatorTest, ShortestJobFirstOrdersTheQueueByRunTime) {
  // 1 GPU busy 0-100; jobs of 300, 100 and 200 s queue behind it (at 1, 2, 3).
  // FIFO: 100-400, 400-500, 500-700. SJF: the 100 s job, then 200, then 300.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  std::vector<TraceJob> jobs = {Job("run").At(0).For(100), Job("j300").At(1).For(300),
                                Job("j100").At(2).For(100), Job("j200").At(3).For(200)};
  EXPECT_THAT(Times(Sim(cluster, jobs, "borrowing")),
              ElementsAre(T{0, 100}, T{100, 400}, T{400, 500}, T{500, 700}));
  EXPECT_THAT(Times(Sim(cluster, jobs, "borrowing", {}, JobOrder::kSjf)),
              ElementsAre(T{0, 100}, T{400, 700}, T{100, 200}, T{200, 400}));
}

TEST(SimulatorTest, ShortestJobFirstRanksBelowThePriorityClass) {
  // simulator.h: SJF is "a priority below the class's": a production job of 500 s
  // still goes before a development job of 10 s; SJF only orders within a class.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  std::vector<TraceJob> jobs = {Job("run").At(0).For(100), Job("prod").At(1).For(500).Class("production"),
                                Job("dev").At(2).For(10).Class("development")};
  SimResult r = Sim(cluster, jobs, "borrowing", {}, JobOrder::kSjf);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 600}, T{600, 610}));
}

TEST(SimulatorTest, GpuModelConstraintSelectsNodesByLabel) {
  // One A100 node and one T4 node. Two T4-only jobs at 0: the second waits for the
  // T4 (100-150) while a job of any model takes the A100 at once.
  SimCluster cluster = Cluster("1x1xA100-80GB,1x1xT4", std::string(kFlavor) + Queue("a", 2));
  SimResult r = Sim(cluster,
                    {Job("t4a").At(0).For(100).Models({"T4"}), Job("t4b").At(0).For(50).Models({"T4"}),
                     Job("any").At(0).For(10)},
                    "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, 150}, T{0, 10}));
}

TEST(SimulatorTest, GpuModelListAllowsOnlyTheListedModels) {
  // trace.h: gpu_models are the allowed models. A job allowing V100 or H100 must
  // not run on a cluster of A100s and T4s.
  SimCluster cluster = Cluster("1x1xA100-80GB,1x1xT4", std::string(kFlavor) + Queue("a", 2));
  SimResult r = Sim(cluster, {Job("old").At(0).For(100).Models({"V100", "H100"})}, "borrowing");
  EXPECT_EQ(Rec(r, 0).first_start_s, -1);
  EXPECT_EQ(Rec(r, 0).end_s, -1);
}

TEST(SimulatorTest, CpuOnlyJobRunsBesideAFullGpuLoad) {
  // All 4 GPUs are busy; a CPU-only job (8 cores) still starts at once.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster, {Job("gpu").At(0).For(100).Gpu(4000), Job("cpu").At(5).For(10).Gpu(0).Cpu(8000)},
                    "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{5, 15}));
  EXPECT_EQ(Rec(r, 1).held_gpu_milli, 0);
  EXPECT_EQ(Rec(r, 1).run_gpu_milli_s, 0);
}

// ---------------------------------------------------------------------------
// Options: drop_unschedulable, horizon

TEST(SimulatorTest, DropUnschedulableDropsWhatDoesNotFitAtArrival) {
  // 4 GPUs; j0 takes 3 at 0. j1 (2 GPUs) arrives at 10, does not fit and is
  // dropped; j2 (1 GPU) at 20 fits and runs 20-70.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimOptions options;
  options.drop_unschedulable = true;
  SimResult r = Sim(cluster,
                    {Job("j0").At(0).For(100).Gpu(3000), Job("j1").At(10).For(10).Gpu(2000),
                     Job("j2").At(20).For(50)},
                    "borrowing", options);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{-1, -1}, T{20, 70}));
  EXPECT_FALSE(Rec(r, 0).dropped);
  EXPECT_TRUE(Rec(r, 1).dropped);
  EXPECT_FALSE(Rec(r, 2).dropped);
  EXPECT_EQ(Rec(r, 1).run_gpu_milli_s, 0);
  // A dropped job is never pending: the sample at 10 would equal the one at 0.
  EXPECT_THAT(r.samples, ElementsAre(IsSample(0, 3000, 0, 1, 0), IsSample(20, 4000, 0, 2, 0),
                                     IsSample(70, 3000, 0, 1, 0), IsSample(100, 0, 0, 0, 0)));
}

TEST(SimulatorTest, WithoutDroppingAJobTooBigForTheClusterStaysPending) {
  // 8 GPUs asked of a 4-GPU cluster: never started, never finished; the run ends.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster, {Job("huge").At(0).For(10).Gpu(8000), Job("small").At(5).For(10)}, "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{-1, -1}, T{5, 15}));
  EXPECT_EQ(r.end_s, 15);
  EXPECT_EQ(r.samples.back().pending, 1);
}

TEST(SimulatorTest, DropUnschedulableDoesNotDropAPreemptorWaitingForItsVictims) {
  // With preemption, b's job at 70 does fit once it reclaims a GPU from team a: it
  // should run 70-170, not be dropped while its victim is evicted for nothing.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimOptions options;
  options.drop_unschedulable = true;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(cluster, ReclaimTrace({0, 0, 0, 0}), "preemption", options);
  const JobRecord b = Rec(r, 4);
  EXPECT_FALSE(b.dropped);
  EXPECT_EQ(b.first_start_s, 70);
  EXPECT_EQ(b.end_s, 170);
}

TEST(SimulatorTest, HorizonLeavesUnfinishedJobsWithoutAnEnd) {
  // 1 GPU; j0 0-100, j1 from 100 (needs 100 s), j2 arrives at 200: with a horizon
  // of 150 j1 is started but unfinished and j2 never arrives.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  SimOptions options;
  options.horizon_s = 150;
  SimResult r = Sim(cluster, {Job("j0").At(0).For(100), Job("j1").At(10).For(100), Job("j2").At(200).For(10)},
                    "borrowing", options);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 100}, T{100, -1}, T{-1, -1}));
  EXPECT_EQ(r.end_s, 100);  // the last event processed
  EXPECT_EQ(r.samples.back().running, 1);
  // Without the horizon all three finish.
  EXPECT_THAT(Times(Sim(cluster, {Job("j0").At(0).For(100), Job("j1").At(10).For(100), Job("j2").At(200).For(10)},
                        "borrowing")),
              ElementsAre(T{0, 100}, T{100, 200}, T{200, 210}));
}

TEST(SimulatorTest, HorizonIncludesEventsAtTheHorizon) {
  // An arrival exactly at the horizon is processed; one just after is not.
  SimCluster cluster = Cluster("1x2xA100-80GB", std::string(kFlavor) + Queue("a", 2));
  SimOptions options;
  options.horizon_s = 50;
  SimResult r = Sim(cluster, {Job("j0").At(0).For(10), Job("j1").At(50).For(10), Job("j2").At(51).For(10)},
                    "borrowing", options);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 10}, T{50, -1}, T{-1, -1}));
  EXPECT_EQ(r.end_s, 50);
}

// ---------------------------------------------------------------------------
// Zero durations

TEST(SimulatorTest, ZeroDurationJobsStartAndEndAtOnce) {
  // A 0-s job at 0 starts and ends at 0; behind a full cluster another 0-s job
  // runs at the instant the GPUs free up (100) and a 1-GPU job beside it too.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster,
                    {Job("zero0").At(0).For(0), Job("full").At(0).For(100).Gpu(4000), Job("zero1").At(10).For(0),
                     Job("after").At(20).For(30)},
                    "borrowing");
  EXPECT_THAT(Times(r), ElementsAre(T{0, 0}, T{0, 100}, T{100, 100}, T{100, 130}));
  EXPECT_EQ(Rec(r, 0).run_gpu_milli_s, 0);
  EXPECT_EQ(Rec(r, 2).run_gpu_milli_s, 0);
  EXPECT_EQ(r.end_s, 130);
  // The samples at one instant keep the state at its end.
  EXPECT_EQ(r.samples.front().t_s, 0);
  EXPECT_EQ(At(r, 0).allocated_gpu_milli, 4000);
  EXPECT_EQ(At(r, 100).allocated_gpu_milli, 1000);
  EXPECT_EQ(At(r, 100).running, 1);
}

// ---------------------------------------------------------------------------
// Teams and queues

TEST(SimulatorTest, TeamsWithoutALocalQueueAreLeftOutAndCounted) {
  // Queues for a and b; team c (2 jobs) and the team-less job (queue "default")
  // have none: left out with a warning per team; the others keep their trace index.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 2) + Queue("b", 2));
  SimResult r = Sim(cluster,
                    {Job("a0").Team("a").For(10), Job("c0").Team("c").For(10), Job("b0").Team("b").At(1).For(10),
                     Job("c1").Team("c").At(2).For(10), Job("none").Team("").At(3).For(10)},
                    "borrowing");
  EXPECT_EQ(r.jobs_left_out, 3);
  EXPECT_THAT(r.warnings,
              ElementsAre("2 jobs of team \"c\" left out: no LocalQueue in namespace c or named c in the policy",
                          "1 jobs of team \"default\" left out: no LocalQueue in namespace default or named default "
                          "in the policy"));
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].trace_index, 0);
  EXPECT_EQ(r.jobs[1].trace_index, 2);
  EXPECT_THAT(r.teams, ElementsAre("a", "b"));
  EXPECT_EQ(r.jobs[1].team, 1);
  EXPECT_THAT(Times(r), ElementsAre(T{0, 10}, T{1, 11}));
}

TEST(SimulatorTest, ASingleLocalQueueTakesEveryTeam) {
  // One LocalQueue: every team's jobs go there; teams are still reported apart,
  // in order of first appearance, each with that queue's nominal quota.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("shared", 4));
  SimResult r = Sim(cluster, {Job("y").Team("Y").For(10), Job("x").Team("x").For(10), Job("n").Team("").For(10)},
                    "borrowing");
  EXPECT_EQ(r.jobs_left_out, 0);
  EXPECT_THAT(r.teams, ElementsAre("y", "x", "default"));
  EXPECT_THAT(r.team_nominal_gpu_milli, ElementsAre(4000, 4000, 4000));
  EXPECT_EQ(r.jobs[2].team, 2);
}

TEST(SimulatorTest, TeamNameIsSanitisedToFindItsQueue) {
  // Team "ML Research" maps to namespace "ml-research"; a LocalQueue named after a
  // team in another namespace is found by name.
  const std::string policy = std::string(kFlavor) + Queue("ml-research", 2) + Queue("cv", 2) +
                             "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n"
                             "  name: speech\n  namespace: labs\nspec:\n  clusterQueue: cv\n";
  SimCluster cluster = Cluster("1x4xA100-80GB", policy);
  SimResult r = Sim(cluster, {Job("m").Team("ML Research").For(10), Job("s").Team("Speech").For(10)}, "borrowing");
  EXPECT_EQ(r.jobs_left_out, 0);
  EXPECT_THAT(r.teams, ElementsAre("ml-research", "speech"));
  EXPECT_THAT(r.team_nominal_gpu_milli, ElementsAre(2000, 2000));
}

TEST(SimulatorTest, DefaultPolicyGivesEachTeamAnEqualShare) {
  // DefaultPolicyManifests for teams a, b on 4 GPUs: 2 each, in one cohort, with
  // reclaim. Under "configured", b reclaims from a at 70 just as under "preemption".
  Result<std::vector<Node>> nodes = LoadSimNodes("1x4xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster = SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {"a", "b"}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(30);
  SimResult r = Sim(*cluster, ReclaimTrace({0, 0, 0, 0}), "configured", options);
  EXPECT_THAT(r.team_nominal_gpu_milli, ElementsAre(2000, 2000));
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(Rec(r, 4).first_start_s, 70);
  EXPECT_EQ(Rec(r, 0).end_s, 310);
}

// ---------------------------------------------------------------------------
// BuiltinPolicy

TEST(BuiltinPolicyTest, EachPolicySwitchesTheCoreActions) {
  struct Want {
    const char* name;
    bool borrowing, sharing, preemption, default_preemption;
  };
  for (const Want& w : {Want{"static", false, false, false, false}, Want{"borrowing", true, false, false, false},
                        Want{"fractional", true, true, false, false}, Want{"preemption", true, true, true, true},
                        Want{"configured", true, true, true, false}}) {
    SimPolicy p = Policy(w.name, JobOrder::kSjf);
    EXPECT_EQ(p.name, w.name);
    EXPECT_EQ(p.order, JobOrder::kSjf) << w.name;
    EXPECT_EQ(p.config.enable_borrowing, w.borrowing) << w.name;
    EXPECT_EQ(p.config.enable_gpu_sharing, w.sharing) << w.name;
    EXPECT_EQ(p.config.enable_preemption, w.preemption) << w.name;
    EXPECT_EQ(p.default_preemption, w.default_preemption) << w.name;
    EXPECT_TRUE(p.config.enable_backfill) << w.name;
  }
}

TEST(BuiltinPolicyTest, UnknownNameListsTheValidOnes) {
  for (const char* name : {"nope", "", "Static"}) {
    Result<SimPolicy> p = BuiltinPolicy(name, JobOrder::kFifo);
    ASSERT_FALSE(p.has_value()) << name;
    EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(p.error().message(), std::string("unknown policy \"") + name +
                                       "\": use static, borrowing, fractional, preemption or configured");
  }
}

// ---------------------------------------------------------------------------
// Bad input

TEST(SimulatorTest, EmptyTraceIsAnEmptyResult) {
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  SimResult r = Sim(cluster, {}, "preemption");
  EXPECT_EQ(r.policy, "preemption");
  EXPECT_TRUE(r.jobs.empty());
  EXPECT_TRUE(r.samples.empty());
  EXPECT_TRUE(r.teams.empty());
  EXPECT_EQ(r.total_gpu_milli, 4000);
  EXPECT_EQ(r.cycles, 0);
  EXPECT_EQ(r.end_s, 0);
}

TEST(SimulatorTest, TraceOutOfSubmitOrderIsRefused) {
  // Simulate's input is a trace as the readers return it, sorted by submit time;
  // time must never run backwards, so one out of order is an error naming it.
  SimCluster cluster = Cluster("1x1xA100-80GB", std::string(kFlavor) + Queue("a", 1));
  std::vector<TraceJob> unsorted = {Job("late").At(50).For(10), Job("early").At(10).For(100)};
  Result<SimResult> r = Simulate(cluster, unsorted, Policy("borrowing"), SimOptions{});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("\"early\""));
  EXPECT_THAT(r.error().message(), HasSubstr("submission order"));
}

TEST(SimulatorTest, MalformedJobsAreRefusedWithAnError) {
  // TraceJob's contract: duration >= 0, pods >= 1, gpu_milli 0..999 or whole GPUs,
  // (a gang of fractions is fine). A job built in code may break it: Simulate
  // says which job and what is wrong rather than crashing or guessing.
  SimCluster cluster = Cluster("1x4xA100-80GB", std::string(kFlavor) + Queue("a", 4));
  const std::vector<std::pair<const char*, TraceJob>> bad = {
      {"negative duration", Job("j").For(-5)},
      {"zero pods", Job("j").For(5).Pods(0)},
      {"1.5 GPUs", Job("j").For(5).Gpu(1500)},
      {"negative GPUs", Job("j").For(5).Gpu(-1000)},
  };
  for (const auto& [what, job] : bad) {
    Result<SimResult> r = Simulate(cluster, {job}, Policy("fractional"), SimOptions{});
    ASSERT_FALSE(r.has_value()) << what;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << what;
    EXPECT_THAT(r.error().message(), HasSubstr("\"j\"")) << what;
  }
}

// ---------------------------------------------------------------------------
// Determinism and invariants on a generated trace

// A few thousand jobs of 3 teams, seeded: fractions, whole GPUs, gangs of whole
// nodes, a few CPU-only jobs, default priority classes, arrivals every 0-120 s
// (about 3.5 GPU-hours asked per hour of 64 GPUs... a busy, not hopeless, cluster).
std::vector<TraceJob> GeneratedTrace(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* teams[] = {"alpha", "beta", "gamma"};
  const char* classes[] = {"", "training", "development", "batch"};
  std::vector<TraceJob> jobs;
  int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    t += pick(0, 120);
    Job job("g" + std::to_string(i));
    job.Team(teams[pick(0, 2)]).At(t).For(pick(0, 3) == 0 ? pick(0, 60) : pick(60, 1800)).Class(classes[pick(0, 3)]);
    const int kind = pick(0, 99);
    if (kind < 30) {
      job.Gpu(std::array<int64_t, 4>{125, 250, 500, 750}[pick(0, 3)]);
    } else if (kind < 80) {
      job.Gpu(std::array<int64_t, 4>{1000, 2000, 4000, 8000}[pick(0, 3)]);
    } else if (kind < 95) {
      job.Gpu(std::array<int64_t, 3>{2000, 4000, 8000}[pick(0, 2)]).Pods(2);
    } else {
      job.Gpu(0).Cpu(4000);
    }
    jobs.push_back(job);
  }
  return jobs;
}

void ExpectIdentical(const SimResult& a, const SimResult& b, const std::string& policy) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size()) << policy;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const JobRecord &x = a.jobs[i], &y = b.jobs[i];
    ASSERT_TRUE(x.trace_index == y.trace_index && x.team == y.team && x.submit_s == y.submit_s &&
                x.first_start_s == y.first_start_s && x.end_s == y.end_s && x.gpu_milli == y.gpu_milli &&
                x.held_gpu_milli == y.held_gpu_milli && x.duration_s == y.duration_s &&
                x.preemptions == y.preemptions && x.lost_gpu_milli_s == y.lost_gpu_milli_s &&
                x.run_gpu_milli_s == y.run_gpu_milli_s && x.dropped == y.dropped)
        << policy << ": job " << i << " differs";
  }
  ASSERT_EQ(a.samples.size(), b.samples.size()) << policy;
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const SimSample &x = a.samples[i], &y = b.samples[i];
    ASSERT_TRUE(x.t_s == y.t_s && x.allocated_gpu_milli == y.allocated_gpu_milli &&
                x.stranded_gpu_milli == y.stranded_gpu_milli && x.running == y.running && x.pending == y.pending)
        << policy << ": sample " << i << " differs";
  }
  EXPECT_EQ(a.teams, b.teams);
  EXPECT_EQ(a.team_nominal_gpu_milli, b.team_nominal_gpu_milli);
  EXPECT_EQ(a.cycles, b.cycles) << policy;
  EXPECT_EQ(a.preemptions, b.preemptions) << policy;
  EXPECT_EQ(a.end_s, b.end_s) << policy;
  EXPECT_EQ(a.warnings, b.warnings);
}

void ExpectInvariants(const SimResult& r, const std::string& policy) {
  for (const JobRecord& j : r.jobs) {
    SCOPED_TRACE(policy + ": trace job " + std::to_string(j.trace_index));
    if (j.first_start_s >= 0) {
      ASSERT_GE(j.first_start_s, j.submit_s);
    }
    if (j.end_s >= 0) {
      ASSERT_GE(j.first_start_s, 0);
      ASSERT_GE(j.end_s, j.first_start_s + j.duration_s);
      if (j.preemptions == 0) {
        ASSERT_EQ(j.end_s, j.first_start_s + j.duration_s);
        ASSERT_EQ(j.run_gpu_milli_s, j.held_gpu_milli * j.duration_s);
        ASSERT_EQ(j.lost_gpu_milli_s, 0);
      }
    }
    ASSERT_LE(j.lost_gpu_milli_s, j.run_gpu_milli_s);
    ASSERT_GE(j.held_gpu_milli, j.first_start_s >= 0 ? j.gpu_milli : 0);
    ASSERT_FALSE(j.dropped);
  }
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const SimSample& s = r.samples[i];
    ASSERT_LE(s.allocated_gpu_milli, r.total_gpu_milli) << policy << " at " << s.t_s;
    ASSERT_GE(s.allocated_gpu_milli, 0);
    ASSERT_LE(s.allocated_gpu_milli + s.stranded_gpu_milli, r.total_gpu_milli) << policy << " at " << s.t_s;
    if (i > 0) {
      ASSERT_LT(r.samples[i - 1].t_s, s.t_s) << policy;
    }
  }
  ASSERT_FALSE(r.samples.empty());
  EXPECT_EQ(r.samples.back().allocated_gpu_milli, 0) << policy;  // everything fits on 8x8 in the end
  EXPECT_EQ(r.samples.back().running, 0) << policy;
}

TEST(SimulatorDeterminismTest, TwoRunsGiveIdenticalOutcomesUnderEveryPolicy) {
  // 3000 jobs on 64 GPUs with the default policy for 3 teams, every built-in
  // policy, simulated twice: the same records, samples and counters.
  Result<std::vector<Node>> nodes = LoadSimNodes("8x8xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster =
      SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {"alpha", "beta", "gamma"}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  const std::vector<TraceJob> jobs = GeneratedTrace(3000, 20240611);
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(300);
  for (const char* policy : {"static", "borrowing", "fractional", "preemption", "configured"}) {
    SimResult first = Sim(*cluster, jobs, policy, options);
    SimResult second = Sim(*cluster, jobs, policy, options);
    ASSERT_EQ(first.jobs.size(), jobs.size()) << policy;
    ExpectIdentical(first, second, policy);
    ExpectInvariants(first, policy);
    for (const JobRecord& j : first.jobs) EXPECT_GE(j.end_s, 0) << policy << ": job " << j.trace_index;
    if (std::string(policy) == "static" || std::string(policy) == "borrowing") {
      for (const JobRecord& j : first.jobs) {
        if (j.gpu_milli > 0 && j.gpu_milli < 1000) {
          ASSERT_EQ(j.held_gpu_milli, 1000) << policy;
        }
      }
    }
    if (std::string(policy) == "preemption") {
      EXPECT_GT(first.preemptions, 0);
    }
  }
}

TEST(SimulatorDeterminismTest, SjfAndRuntimeLimitsAreDeterministicToo) {
  Result<std::vector<Node>> nodes = LoadSimNodes("8x8xA100-80GB");
  ASSERT_TRUE(nodes.has_value());
  Result<SimCluster> cluster =
      SimClusterFromManifests(*nodes, DefaultPolicyManifests(*nodes, {"alpha", "beta", "gamma"}));
  ASSERT_TRUE(cluster.has_value());
  const std::vector<TraceJob> jobs = GeneratedTrace(1000, 7);
  SimOptions options;
  options.runtime_limits = true;
  options.checkpoint_interval = Duration::Seconds(0);
  SimResult first = Sim(*cluster, jobs, "preemption", options, JobOrder::kSjf);
  SimResult second = Sim(*cluster, jobs, "preemption", options, JobOrder::kSjf);
  ExpectIdentical(first, second, "preemption/sjf");
  ExpectInvariants(first, "preemption/sjf");
}

}  // namespace
}  // namespace tessera
