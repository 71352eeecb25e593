// Where a sweep stands: best trial, goal, completion, failure and how many
// trials to create.
#include "sweep/sweep_status.h"

#include <gtest/gtest.h>

#include "sweep_testing.h"

namespace tessera::sweep {
namespace {

using testing::MakeTrial;
using testing::MustParse;

std::string SpecWith(const std::string& objective, const std::string& rest) {
  return R"({"objective": )" + objective + R"(, "algorithm": {"algorithmName": "random"},
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "9"}}])" +
         rest + "}";
}

SweepSpec Minimize() {
  return MustParse(SpecWith(R"({"type": "minimize", "objectiveMetricName": "loss", "goal": 0.05})",
                            R"(, "maxTrialCount": 4, "parallelTrialCount": 2, "maxFailedTrialCount": 1)"));
}

TEST(FindBestTrial, IsTheBestCompletedValueTiesToTheEarliest) {
  // b and c tie at 0.2 (their minimum); b came first. The running d (0.1) does not count.
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {0.5, 0.3}).Build(),
                                      MakeTrial("b").EarlyStopped().Curve("loss", {0.2}).Build(),
                                      MakeTrial("c").Succeeded().Curve("loss", {0.4, 0.2, 0.3}).Build(),
                                      MakeTrial("d").Running().Curve("loss", {0.1}).Build()};
  std::optional<BestTrial> best = FindBestTrial(Minimize(), history);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->index, 1u);
  EXPECT_EQ(best->value, 0.2);
}

TEST(FindBestTrial, LatestStrategyTakesTheLastValue) {
  // metricStrategies latest: a's 0.4 (last) beats b's 0.5, though a once reported 0.1.
  SweepSpec spec = MustParse(SpecWith(R"({"type": "minimize", "objectiveMetricName": "loss",
      "metricStrategies": [{"name": "loss", "value": "latest"}]})",
                                      R"(, "maxTrialCount": 4)"));
  std::vector<TrialRecord> history = {MakeTrial("b").Succeeded().Curve("loss", {0.5}).Build(),
                                      MakeTrial("a").Succeeded().Curve("loss", {0.1, 0.4}).Build()};
  EXPECT_EQ(FindBestTrial(spec, history)->index, 1u);
  EXPECT_EQ(FindBestTrial(spec, history)->value, 0.4);
}

TEST(GoalReached, WhenTheBestReachesTheGoalInTheObjectivesDirection) {
  // minimize, goal 0.05: 0.05 reaches it (<=), 0.051 does not.
  SweepSpec spec = Minimize();
  EXPECT_TRUE(GoalReached(spec, {MakeTrial("a").Succeeded().Curve("loss", {0.05}).Build()}));
  EXPECT_FALSE(GoalReached(spec, {MakeTrial("a").Succeeded().Curve("loss", {0.051}).Build()}));
  // maximize, goal 0.9: 0.95 reaches it (>=).
  SweepSpec max = MustParse(
      SpecWith(R"({"type": "maximize", "objectiveMetricName": "acc", "goal": "0.9"})", R"(, "maxTrialCount": 4)"));
  EXPECT_TRUE(GoalReached(max, {MakeTrial("a").Succeeded().Curve("acc", {0.95}).Build()}));
}

TEST(EvaluateSweep, GoalReachedSucceedsEvenWithTrialsRunning) {
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {0.01}).Build(),
                                      MakeTrial("b").Running().Build()};
  SweepVerdict v = EvaluateSweep(Minimize(), history);
  EXPECT_EQ(v.phase, SweepPhase::kSucceeded);
  EXPECT_EQ(v.reason, "GoalReached");
  EXPECT_EQ(v.message, "the best loss 0.01 (trial a) reached the goal 0.05");
  EXPECT_TRUE(SweepComplete(Minimize(), history));
}

TEST(EvaluateSweep, MaxTrialsReachedOnlyOnceNoneRuns) {
  // 4 trials of maxTrialCount 4: running while d runs, succeeded once it ends.
  std::vector<TrialRecord> history = {MakeTrial("a").Succeeded().Curve("loss", {0.5}).Build(),
                                      MakeTrial("b").Succeeded().Curve("loss", {0.5}).Build(),
                                      MakeTrial("c").Failed().Build(), MakeTrial("d").Running().Build()};
  EXPECT_FALSE(SweepComplete(Minimize(), history));
  EXPECT_EQ(TrialsToCreate(Minimize(), history), 0);  // 4 - 4 = 0 left
  history[3].state = TrialState::kSucceeded;
  EXPECT_EQ(EvaluateSweep(Minimize(), history).reason, "MaxTrialsReached");
  EXPECT_TRUE(SweepComplete(Minimize(), history));
}

TEST(EvaluateSweep, FailsWhenMoreTrialsFailedThanAllowed) {
  // maxFailedTrialCount 1: one failure is allowed, the second fails the sweep.
  std::vector<TrialRecord> history = {MakeTrial("a").Failed().Build()};
  EXPECT_FALSE(SweepFailed(Minimize(), history));
  history.push_back(MakeTrial("b").Failed().Build());
  EXPECT_TRUE(SweepFailed(Minimize(), history));
  EXPECT_EQ(EvaluateSweep(Minimize(), history).reason, "MaxFailedTrialsReached");
  EXPECT_FALSE(SweepComplete(Minimize(), history));
  EXPECT_EQ(TrialsToCreate(Minimize(), history), 0);
}

TEST(EvaluateSweep, AGridEndsWhenExhaustedAndNoneRuns) {
  // A grid of 2 points, both tried.
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "grid"},
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}}]})");
  std::vector<TrialRecord> history = {MakeTrial("a").Param("x", "1").Succeeded().Build(),
                                      MakeTrial("b").Param("x", "2").Running().Build()};
  EXPECT_TRUE(GridExhausted(spec, history));
  EXPECT_FALSE(SweepComplete(spec, history));
  history[1].state = TrialState::kSucceeded;
  EXPECT_EQ(EvaluateSweep(spec, history).reason, "GridExhausted");
}

TEST(TrialsToCreate, FillsFreeParallelSlotsWithinMaxTrialCount) {
  // parallel 2, max 4: none yet -> 2; one running of 1 -> 1; 3 trials, none running -> min(2, 1) = 1.
  SweepSpec spec = Minimize();
  EXPECT_EQ(TrialsToCreate(spec, {}), 2);
  EXPECT_EQ(TrialsToCreate(spec, {MakeTrial("a").Running().Build()}), 1);
  std::vector<TrialRecord> three = {MakeTrial("a").Succeeded().Curve("loss", {0.5}).Build(),
                                    MakeTrial("b").Succeeded().Curve("loss", {0.5}).Build(),
                                    MakeTrial("c").EarlyStopped().Curve("loss", {0.5}).Build()};
  EXPECT_EQ(TrialsToCreate(spec, three), 1);
}

TEST(CountTrials, CountsEachState) {
  std::vector<TrialRecord> history = {MakeTrial("a").Running().Build(), MakeTrial("b").Failed().Build(),
                                      MakeTrial("c").Failed().Build(), MakeTrial("d").EarlyStopped().Build()};
  EXPECT_EQ(CountTrials(history), (TrialCounts{1, 0, 2, 1}));
  EXPECT_EQ(CountTrials(history).total(), 4);
}

}  // namespace
}  // namespace tessera::sweep
