// Early stopping: the median rule, ASHA and Hyperband on hand-computed
// histories, and a simulated 30-trial sweep where ASHA stops the bad trials.
#include "sweep/early_stopping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sweep/rng.h"
#include "sweep/suggest_trials.h"
#include "sweep/sweep_status.h"
#include "sweep_testing.h"

namespace tessera::sweep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeTrial;
using testing::MustParse;

std::string SpecWith(const std::string& objective, const std::string& early_stopping) {
  return R"({"objective": )" + objective + R"(, "algorithm": {"algorithmName": "random"}, "maxTrialCount": 30,
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "9"}}],
    "earlyStopping": )" +
         early_stopping + "}";
}

const char* kMinimizeLoss = R"({"type": "minimize", "objectiveMetricName": "loss"})";

SweepSpec MedianSpec() {
  return MustParse(SpecWith(kMinimizeLoss, R"({"algorithmName": "medianstop", "algorithmSettings": [
      {"name": "min_trials_required", "value": "3"}, {"name": "start_step", "value": "2"}]})"));
}

// Three finished trials; their running averages up to step 2:
// a (1.0 + 0.8) / 2 = 0.9, b (0.9 + 0.7) / 2 = 0.8, c (1.2 + 1.0) / 2 = 1.1; median 0.9.
std::vector<TrialRecord> ThreeFinished() {
  return {MakeTrial("a").Succeeded().Curve("loss", {1.0, 0.8, 0.6}).Build(),
          MakeTrial("b").Succeeded().Curve("loss", {0.9, 0.7, 0.5}).Build(),
          MakeTrial("c").Succeeded().Curve("loss", {1.2, 1.0, 0.9}).Build()};
}

TEST(MedianStop, StopsATrialWhoseBestIsWorseThanTheMedianOfRunningAverages) {
  // d at step 2, best 1.1 > median 0.9: stopped.
  std::vector<TrialRecord> history = ThreeFinished();
  history.push_back(MakeTrial("d").Running().Curve("loss", {1.3, 1.1}).Build());
  std::vector<StopDecision> stops = EarlyStopDecisions(MedianSpec(), history);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].trial, "d");
  EXPECT_THAT(stops[0].reason, HasSubstr("best loss 1.1 by step 2 is worse than 0.9, the median of the running "
                                         "averages of 3 other trials"));
}

TEST(MedianStop, KeepsATrialWhoseBestBeatsTheMedian) {
  // e at step 2, best 0.85 < median 0.9: continues.
  std::vector<TrialRecord> history = ThreeFinished();
  history.push_back(MakeTrial("e").Running().Curve("loss", {1.0, 0.85}).Build());
  EXPECT_THAT(TrialsToStop(MedianSpec(), history), IsEmpty());
}

TEST(MedianStop, WaitsForStartStep) {
  // d at step 1 < start_step 2: not judged, however bad (1.9 against a median of 1.0 at step 1).
  std::vector<TrialRecord> history = ThreeFinished();
  history.push_back(MakeTrial("d").Running().Curve("loss", {1.9}).Build());
  EXPECT_THAT(TrialsToStop(MedianSpec(), history), IsEmpty());
}

TEST(MedianStop, WaitsForMinTrialsRequiredAtTheSameStep) {
  // c has reported step 1 only: 2 trials (a, b) reached step 2, fewer than 3.
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {1.0, 0.8}).Build(),
                                      MakeTrial("b").Succeeded().Curve("loss", {0.9, 0.7}).Build(),
                                      MakeTrial("c").EarlyStopped().Curve("loss", {1.2}).Build(),
                                      MakeTrial("d").Running().Curve("loss", {1.3, 1.1}).Build()};
  EXPECT_THAT(TrialsToStop(MedianSpec(), history), IsEmpty());
}

TEST(MedianStop, FailedTrialsDoNotCount) {
  // c failed: a and b remain, fewer than 3.
  std::vector<TrialRecord> history = ThreeFinished();
  history[2].state = TrialState::kFailed;
  history.push_back(MakeTrial("d").Running().Curve("loss", {1.3, 1.1}).Build());
  EXPECT_THAT(TrialsToStop(MedianSpec(), history), IsEmpty());
}

TEST(MedianStop, RunningTrialsCountAsOthers) {
  // Two running trials judge each other with a and b: for d, the averages up to
  // step 2 are a 0.9, b 0.8, e (1.0 + 0.85) / 2 = 0.925; median 0.9 < d's best 1.1: stopped.
  // For e: a 0.9, b 0.8, d (1.3 + 1.1) / 2 = 1.2; median 0.9 > e's best 0.85: continues.
  std::vector<TrialRecord> history = ThreeFinished();
  history.pop_back();
  history.push_back(MakeTrial("d").Running().Curve("loss", {1.3, 1.1}).Build());
  history.push_back(MakeTrial("e").Running().Curve("loss", {1.0, 0.85}).Build());
  EXPECT_THAT(TrialsToStop(MedianSpec(), history), ElementsAre("d"));
}

TEST(MedianStop, MaximizeStopsTrialsBelowTheMedian) {
  // acc averages up to step 2: a 0.6, b 0.7, c 0.5; median 0.6 > d's best 0.5: stopped.
  SweepSpec spec = MustParse(SpecWith(R"({"type": "maximize", "objectiveMetricName": "acc"})",
                                      R"({"algorithmName": "medianstop", "algorithmSettings": [
                                          {"name": "start_step", "value": "2"}]})"));
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("acc", {0.5, 0.7}).Build(),
                                      MakeTrial("b").Succeeded().Curve("acc", {0.6, 0.8}).Build(),
                                      MakeTrial("c").Succeeded().Curve("acc", {0.4, 0.6}).Build(),
                                      MakeTrial("d").Running().Curve("acc", {0.3, 0.5}).Build()};
  EXPECT_THAT(TrialsToStop(spec, history), ElementsAre("d"));
}

SweepSpec AshaSpec() {
  return MustParse(SpecWith(kMinimizeLoss, R"({"algorithmName": "asha", "algorithmSettings": [
      {"name": "eta", "value": "3"}, {"name": "min_resource", "value": "1"},
      {"name": "max_resource", "value": "27"}]})"));
}

TEST(Asha, RungsAreMinResourceTimesPowersOfEtaBelowMaxResource) {
  // 1, 3, 9 (27 is the full budget); without max_resource they go on: 1, 3, 9, 27 up to step 30.
  EarlyStoppingSpec rule = *AshaSpec().early_stopping;
  EXPECT_THAT(RungSteps(rule, 1, 1000), ElementsAre(1, 3, 9));
  rule.max_resource.reset();
  EXPECT_THAT(RungSteps(rule, 1, 30), ElementsAre(1, 3, 9, 27));
}

// Five finished trials whose values at step 3 are 0.1 .. 0.5.
std::vector<TrialRecord> FiveAtRungThree() {
  std::vector<TrialRecord> out;
  for (int i = 1; i <= 5; ++i) {
    out.push_back(MakeTrial("f" + std::to_string(i)).Succeeded().Curve("loss", {1.0, 0.9, 0.1 * i, 0.05}).Build());
  }
  return out;
}

TEST(Asha, StopsATrialOutsideTheTopThirdOfItsRung) {
  // t at step 4 is judged at rung 3 with 0.35: 6 trials there, the best 6 / 3 = 2 continue;
  // 3 are better (0.1, 0.2, 0.3): stopped.
  std::vector<TrialRecord> history = FiveAtRungThree();
  history.push_back(MakeTrial("t").Running().Curve("loss", {0.2, 0.2, 0.35, 0.3}).Build());
  std::vector<StopDecision> stops = EarlyStopDecisions(AshaSpec(), history);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].trial, "t");
  EXPECT_THAT(stops[0].reason, HasSubstr("asha: loss 0.35 at the rung of step 3 ranks 4 of the 6 trials there; the "
                                         "best 2 (1/3) continue"));
}

TEST(Asha, KeepsATrialInTheTopThirdOfItsRung) {
  // 0.15 at rung 3: 1 better (0.1) < 2 kept: continues.
  std::vector<TrialRecord> history = FiveAtRungThree();
  history.push_back(MakeTrial("t").Running().Curve("loss", {0.9, 0.9, 0.15, 0.14}).Build());
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Asha, ContinuesWithFewerThanEtaTrialsAtTheRung) {
  // 2 trials at rung 3 (< eta 3): t continues though it is the worse.
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {0.5, 0.5, 0.1}).Build(),
                                      MakeTrial("t").Running().Curve("loss", {0.9, 0.9, 0.9}).Build()};
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Asha, TiesContinue) {
  // 3 trials at rung 3, 3 / 3 = 1 continues; t ties the best (0.1): none is strictly better.
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {0.5, 0.5, 0.1}).Build(),
                                      MakeTrial("b").Succeeded().Curve("loss", {0.5, 0.5, 0.4}).Build(),
                                      MakeTrial("t").Running().Curve("loss", {0.9, 0.9, 0.1}).Build()};
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Asha, JudgesOnlyAtTheHighestRungReached) {
  // t was the worst at rung 1 (0.9 against 0.1..0.5) but at step 3 it is judged at rung 3,
  // where its 0.05 is the best of 6: continues.
  std::vector<TrialRecord> history;
  for (int i = 1; i <= 5; ++i) {
    history.push_back(MakeTrial("f" + std::to_string(i)).Succeeded().Curve("loss", {0.1 * i, 0.5, 0.5}).Build());
  }
  history.push_back(MakeTrial("t").Running().Curve("loss", {0.9, 0.5, 0.05}).Build());
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Asha, TheValueAtARungIsTheFirstPointAtOrAfterIt) {
  // t reports at steps 2 and 4 only: at rung 3 its value is step 4's 0.45 (not step 2's 0.01);
  // 0.1, 0.2, 0.3 and 0.4 are better, 4 >= the 6 / 3 = 2 kept: stopped.
  std::vector<TrialRecord> history = FiveAtRungThree();
  history.push_back(MakeTrial("t").Running().Report("loss", 2, 0.01).Report("loss", 4, 0.45).Build());
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), ElementsAre("t"));
}

TEST(Asha, ATrialAtMaxResourceIsNotStopped) {
  // t at step 27 has had its full budget, however bad.
  std::vector<TrialRecord> history = FiveAtRungThree();
  std::vector<double> bad(27, 5.0);
  history.push_back(MakeTrial("t").Running().Curve("loss", bad).Build());
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Asha, ATrialWithoutObjectiveReportsIsNeverStopped) {
  std::vector<TrialRecord> history = FiveAtRungThree();
  history.push_back(MakeTrial("t").Running().Curve("acc", {0.1, 0.1, 0.1, 0.1}).Build());
  EXPECT_THAT(TrialsToStop(AshaSpec(), history), IsEmpty());
}

TEST(Hyperband, BracketsGetHyperbandsShareOfTrials) {
  // eta 3, resources 1..27: s_max = 3; n_b = ceil(4 / (s + 1) * 3^s), s = 3 - b:
  // b0 = ceil(4/4 * 27) = 27, b1 = ceil(4/3 * 9) = 12, b2 = ceil(4/2 * 3) = 6, b3 = ceil(4/1 * 1) = 4;
  // one round of 49 trials deals exactly those.
  EarlyStoppingSpec rule;
  rule.name = EarlyStoppingAlgorithm::kHyperband;
  rule.eta = 3;
  rule.min_resource = 1;
  rule.max_resource = 27;
  std::vector<size_t> brackets = HyperbandBrackets(rule, 49);
  std::vector<int> counts(4, 0);
  for (size_t b : brackets) counts.at(b)++;
  EXPECT_THAT(counts, ElementsAre(27, 12, 6, 4));
}

TEST(Hyperband, DealsBracketsBySmoothWeightedRoundRobin) {
  // eta 2, resources 1..4: s_max = 2, weights b0 = ceil(3/3 * 4) = 4, b1 = ceil(3/2 * 2) = 3,
  // b2 = ceil(3/1 * 1) = 3, total 10. Running credits (each gains its weight, the pick pays 10):
  // [4,3,3]->0, [-2,6,6]->1, [2,-1,9]->2, [6,2,2]->0, [0,5,5]->1, [4,-2,8]->2, [8,1,1]->0, ...
  EarlyStoppingSpec rule;
  rule.name = EarlyStoppingAlgorithm::kHyperband;
  rule.eta = 2;
  rule.min_resource = 1;
  rule.max_resource = 4;
  EXPECT_THAT(HyperbandBrackets(rule, 10), ElementsAre(0, 1, 2, 0, 1, 2, 0, 1, 2, 0));
}

TEST(Hyperband, JudgesEachTrialAgainstItsOwnBracket) {
  // eta 2, resources 1..4; trials 0..8 fall in brackets 0,1,2,0,1,2,0,1,2.
  // Bracket 0 (rungs 1, 2): t6 at step 2 with 0.5 against 0.1 (t0) and 0.2 (t3): 3 there, 3 / 2 = 1
  //   continues, 2 are better: stopped.
  // Bracket 1 (rung 2): t7 with 0.5 against 0.9 (t1) and 0.8 (t4): the best: continues.
  // Bracket 2 (first rung 4 = max_resource: no rung): t8 with 9.9 is never stopped.
  SweepSpec spec = MustParse(SpecWith(kMinimizeLoss, R"({"algorithmName": "hyperband", "algorithmSettings": [
      {"name": "eta", "value": "2"}, {"name": "max_resource", "value": "4"}]})"));
  std::vector<double> at_step_two = {0.1, 0.9, 0.1, 0.2, 0.8, 0.1};
  std::vector<TrialRecord> history;
  for (size_t i = 0; i < at_step_two.size(); ++i) {
    history.push_back(
        MakeTrial("t" + std::to_string(i)).Succeeded().Curve("loss", {1.0, at_step_two[i], 0.1, 0.1}).Build());
  }
  history.push_back(MakeTrial("t6").Running().Curve("loss", {1.0, 0.5}).Build());
  history.push_back(MakeTrial("t7").Running().Curve("loss", {1.0, 0.5}).Build());
  history.push_back(MakeTrial("t8").Running().Curve("loss", {9.9, 9.9, 9.9}).Build());
  std::vector<StopDecision> stops = EarlyStopDecisions(spec, history);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].trial, "t6");
  EXPECT_THAT(stops[0].reason, HasSubstr("hyperband bracket 0: loss 0.5 at the rung of step 2 ranks 3 of the 3"));
}

// ---- a simulated sweep ---------------------------------------------------------

// A bowl in log10(lr) and layers: the loss a trial converges to.
double Floor(const Assignment& a) {
  double l = std::log10(*a.Find("lr")->number) + 2.5;
  double d = *a.Find("layers")->number - 5;
  return l * l + 0.1 * d * d;
}

TEST(Asha, ASimulatedThirtyTrialSweepStopsBadTrialsEarlyAndKeepsTheBest) {
  // 30 random trials, 4 at a time, each a learning curve floor + 1/sqrt(step) with
  // seeded noise of +-0.005, run to 27 steps unless ASHA (eta 3, rungs 1, 3, 9) stops it.
  // Each tick: create trials into free slots, advance every running trial one step,
  // then stop what ASHA says.
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "random"}, "maxTrialCount": 30, "parallelTrialCount": 4,
    "parameters": [
      {"name": "lr", "parameterType": "double",
       "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
      {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8"}}],
    "earlyStopping": {"algorithmName": "asha", "algorithmSettings": [
      {"name": "eta", "value": "3"}, {"name": "min_resource", "value": "1"},
      {"name": "max_resource", "value": "27"}]}})");
  Rng noise(17);
  std::vector<TrialRecord> history;
  int ticks = 0;
  while (EvaluateSweep(spec, history).phase == SweepPhase::kRunning && ticks++ < 10000) {
    for (Assignment& a : SuggestTrials(spec, history, TrialsToCreate(spec, history), 2024)) {
      TrialRecord t = MakeTrial("trial-" + std::to_string(history.size())).Running().Build();
      t.assignment = std::move(a);
      history.push_back(std::move(t));
    }
    for (TrialRecord& t : history) {
      if (t.state != TrialState::kRunning) continue;
      const MetricSeries* s = t.Series("loss");
      int64_t step = s == nullptr ? 1 : s->latest()->step + 1;
      double loss = Floor(t.assignment) + 1.0 / std::sqrt(static_cast<double>(step)) + 0.01 * (noise.Uniform() - 0.5);
      t.observations.try_emplace("loss").first->second.Add(step, loss);
      if (step == 27) t.state = TrialState::kSucceeded;
    }
    for (const std::string& name : TrialsToStop(spec, history)) {
      for (TrialRecord& t : history) {
        if (t.name == name) t.state = TrialState::kEarlyStopped;
      }
    }
  }
  EXPECT_EQ(EvaluateSweep(spec, history).reason, "MaxTrialsReached");
  ASSERT_EQ(history.size(), 30u);

  // The trial with the lowest floor is the sweep's best, and ran its full 27 steps.
  size_t truth = 0;
  for (size_t i = 0; i < history.size(); ++i) {
    if (Floor(history[i].assignment) < Floor(history[truth].assignment)) truth = i;
  }
  EXPECT_EQ(history[truth].state, TrialState::kSucceeded);
  EXPECT_EQ(history[truth].Series("loss")->latest()->step, 27);
  ASSERT_TRUE(FindBestTrial(spec, history).has_value());
  EXPECT_EQ(FindBestTrial(spec, history)->index, truth);

  // Most trials were stopped early, and the sweep used well under its full budget of 30 * 27 = 810 steps.
  TrialCounts counts = CountTrials(history);
  int64_t steps = 0;
  double worst_survivor = -INFINITY;
  double best_stopped = INFINITY;
  for (const TrialRecord& t : history) {
    steps += t.Series("loss")->latest()->step;
    if (t.state == TrialState::kSucceeded) worst_survivor = std::max(worst_survivor, Floor(t.assignment));
    if (t.state == TrialState::kEarlyStopped) best_stopped = std::min(best_stopped, Floor(t.assignment));
  }
  EXPECT_GE(counts.early_stopped, 15) << "succeeded " << counts.succeeded;
  EXPECT_LT(steps, 810 / 2);
  // Every stopped trial was worse than the best.
  EXPECT_GT(best_stopped, Floor(history[truth].assignment));
  RecordProperty("steps", std::to_string(steps));
  RecordProperty("early_stopped", std::to_string(counts.early_stopped));
  RecordProperty("worst_survivor", std::to_string(worst_survivor));
}

}  // namespace
}  // namespace tessera::sweep
