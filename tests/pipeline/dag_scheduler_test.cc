// Next: whole runs driven through FakeRun (the controller's part in memory),
// with the times of each start, failure and retry written beside the checks.
#include "pipeline/dag_scheduler.h"

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;
using testing::At;
using testing::ExpandOrFail;
using testing::FakeRun;
using testing::MakePipeline;
using testing::MakeStep;

using Names = std::vector<std::string>;

json Diamond() {
  return MakePipeline()
      .Step(MakeStep("a"))
      .Step(MakeStep("b").DependsOn({"a"}))
      .Step(MakeStep("c").DependsOn({"a"}))
      .Step(MakeStep("d").DependsOn({"b", "c"}))
      .Build();
}

TEST(Next, DiamondRunsEachNodeAfterItsDependencies) {
  // a -> b, c -> d: a alone, then b and c together, then d once both are done.
  FakeRun run(ExpandOrFail(Diamond()));
  EXPECT_EQ(run.Tick(At(0)).start, (Names{"a"}));
  EXPECT_TRUE(run.Tick(At(1)).start.empty());  // a still running
  run.Succeed("a", At(10));
  EXPECT_EQ(run.Tick(At(10)).start, (Names{"b", "c"}));
  run.Succeed("b", At(20));
  EXPECT_TRUE(run.Tick(At(20)).start.empty());  // d waits for c
  run.Succeed("c", At(30));
  Decision d = run.Tick(At(30));
  EXPECT_EQ(d.start, (Names{"d"}));
  EXPECT_EQ(d.phase, RunPhase::kRunning);
  run.Succeed("d", At(40));
  EXPECT_EQ(run.Tick(At(40)).phase, RunPhase::kSucceeded);
  EXPECT_EQ(run.started, (Names{"a#1", "b#1", "c#1", "d#1"}));
}

TEST(Next, FansOutOverThreeItemsAndFansInWhenAllHaveSucceeded) {
  // prepare -> train-0..2 (in parallel) -> evaluate.
  FakeRun run(ExpandOrFail(MakePipeline()
                               .Step(MakeStep("prepare"))
                               .Step(MakeStep("train").DependsOn({"prepare"}).WithItems({"0.01", "0.1", "1"}))
                               .Step(MakeStep("evaluate").DependsOn({"train"}))
                               .Build()));
  run.Tick(At(0));
  run.Succeed("prepare", At(5));
  EXPECT_EQ(run.Tick(At(5)).start, (Names{"train-0", "train-1", "train-2"}));
  run.Succeed("train-2", At(6));
  run.Succeed("train-0", At(7));
  EXPECT_TRUE(run.Tick(At(7)).start.empty());  // train-1 still running
  run.Succeed("train-1", At(8));
  EXPECT_EQ(run.Tick(At(8)).start, (Names{"evaluate"}));
  run.Succeed("evaluate", At(9));
  EXPECT_EQ(run.Tick(At(9)).phase, RunPhase::kSucceeded);
}

TEST(Next, RetriesAFailedStepAfterItsBackoffAndSucceedsOnTheSecondAttempt) {
  // flaky has retries {limit: 2, backoffSeconds: 10}: 3 attempts at most.
  FakeRun run(ExpandOrFail(
      MakePipeline().Step(MakeStep("flaky").Retries(2, 10)).Step(MakeStep("after").DependsOn({"flaky"})).Build()));
  EXPECT_EQ(run.Tick(At(0)).start, (Names{"flaky"}));
  run.Fail("flaky", At(100), "exit code 1");
  // First retry after 10 s * 2^0 = 10 s: due at 100 + 10 = 110.
  Decision waiting = run.Tick(At(105));
  EXPECT_TRUE(waiting.retry.empty());
  EXPECT_EQ(waiting.next_retry_at, At(110));
  EXPECT_EQ(waiting.phase, RunPhase::kRunning);  // attempts left: not failed
  EXPECT_TRUE(run.Tick(At(109)).retry.empty());
  EXPECT_EQ(run.Tick(At(110)).retry, (Names{"flaky"}));
  EXPECT_EQ(run.states["flaky"].attempts, 2);
  run.Succeed("flaky", At(130));
  EXPECT_EQ(run.Tick(At(130)).start, (Names{"after"}));
  run.Succeed("after", At(140));
  EXPECT_EQ(run.Tick(At(140)).phase, RunPhase::kSucceeded);
  EXPECT_EQ(run.started, (Names{"flaky#1", "flaky#2", "after#1"}));
}

TEST(RetryPolicy, BackoffDoublesEachRetryAndIsCappedAtSixMinutes) {
  const RetryPolicy p{10, Duration::Seconds(10)};
  EXPECT_EQ(p.DelayAfter(1), Duration::Seconds(10));   // 10 * 2^0
  EXPECT_EQ(p.DelayAfter(2), Duration::Seconds(20));   // 10 * 2^1
  EXPECT_EQ(p.DelayAfter(3), Duration::Seconds(40));   // 10 * 2^2
  EXPECT_EQ(p.DelayAfter(6), Duration::Seconds(320));  // 10 * 2^5
  EXPECT_EQ(p.DelayAfter(7), Duration::Seconds(360));  // 640 capped at 360
  EXPECT_EQ(p.DelayAfter(1000), Duration::Seconds(360));
  EXPECT_EQ((RetryPolicy{1, Duration::Seconds(0)}).DelayAfter(3), Duration::Seconds(0));
}

TEST(Next, APermanentFailureOmitsItsDependentsAndFailsTheRun) {
  // a -> b -> c, and b fails both of its 2 attempts (limit 1, back-off 5 s).
  FakeRun run(ExpandOrFail(MakePipeline()
                               .Step(MakeStep("a"))
                               .Step(MakeStep("b").DependsOn({"a"}).Retries(1, 5))
                               .Step(MakeStep("c").DependsOn({"b"}))
                               .Step(MakeStep("d").DependsOn({"c"}))
                               .Build()));
  run.Tick(At(0));
  run.Succeed("a", At(1));
  run.Tick(At(1));
  run.Fail("b", At(2), "exit code 1");
  EXPECT_EQ(run.Tick(At(7)).retry, (Names{"b"}));  // 2 + 5 s
  run.Fail("b", At(8), "exit code 1");
  Decision d = run.Tick(At(8));
  EXPECT_TRUE(d.retry.empty());  // 2 of 2 attempts used
  EXPECT_EQ(d.omit, (std::vector<NodeMark>{{"c", "upstream b failed"}, {"d", "upstream c was omitted"}}));
  EXPECT_EQ(d.phase, RunPhase::kFailed);
  EXPECT_EQ(d.message, "b failed after 2 attempts: exit code 1");
  EXPECT_EQ(d.next_retry_at, Timestamp::Never());
}

TEST(Next, AFailureLetsIndependentBranchesFinishBeforeTheRunFails) {
  // Diamond where b fails for good while c still runs: d is omitted, c finishes.
  FakeRun run(ExpandOrFail(Diamond()));
  run.Tick(At(0));
  run.Succeed("a", At(1));
  run.Tick(At(1));
  run.Fail("b", At(2), "OOMKilled");
  Decision d = run.Tick(At(2));
  EXPECT_EQ(d.omit, (std::vector<NodeMark>{{"d", "upstream b failed"}}));
  EXPECT_EQ(d.phase, RunPhase::kRunning);  // c is still running
  run.Succeed("c", At(3));
  Decision end = run.Tick(At(3));
  EXPECT_EQ(end.phase, RunPhase::kFailed);
  EXPECT_EQ(end.message, "b failed after 1 attempt: OOMKilled");
}

TEST(Next, AFalseConditionSkipsTheNodeAndItsDependentsStillRun) {
  // evaluate runs only when asked; report depends on it and runs anyway.
  FakeRun run(ExpandOrFail(MakePipeline()
                               .Param("evaluate", "false")
                               .Step(MakeStep("train"))
                               .Step(MakeStep("evaluate").DependsOn({"train"}).When("{{params.evaluate}} == true"))
                               .Step(MakeStep("report").DependsOn({"evaluate"}))
                               .Build()));
  run.Tick(At(0));
  run.Succeed("train", At(1));
  Decision d = run.Tick(At(1));
  EXPECT_EQ(d.skip, (std::vector<NodeMark>{{"evaluate", "when \"{{params.evaluate}} == true\" is false"}}));
  EXPECT_EQ(d.start, (Names{"report"}));  // in the same call: a skipped dependency is done
  run.Succeed("report", At(2));
  EXPECT_EQ(run.Tick(At(2)).phase, RunPhase::kSucceeded);  // Skipped counts as done
}

TEST(Next, AConditionReadsAnUpstreamStatusAndResult) {
  // deploy only when train succeeded and its result (an accuracy) beats 0.9.
  json spec = MakePipeline()
                  .Step(MakeStep("train"))
                  .Step(MakeStep("deploy").DependsOn({"train"}).When(
                      "{{steps.train.status}} == Succeeded && {{steps.train.outputs.result}} > 0.9"))
                  .Build();
  FakeRun good(ExpandOrFail(spec));
  good.Tick(At(0));
  good.Succeed("train", At(1), "0.93");
  EXPECT_EQ(good.Tick(At(1)).start, (Names{"deploy"}));  // 0.93 > 0.9

  FakeRun poor(ExpandOrFail(spec));
  poor.Tick(At(0));
  poor.Succeed("train", At(1), "0.85");
  EXPECT_EQ(poor.Tick(At(1)).skip.size(), 1u);  // 0.85 <= 0.9
}

TEST(Next, AConditionThatCannotBeDecidedFailsItsNodeForGood) {
  // go is "maybe": neither true nor false. The node fails without retries.
  FakeRun run(ExpandOrFail(
      MakePipeline().Param("go", "maybe").Step(MakeStep("a").When("{{params.go}}").Retries(3, 10)).Build()));
  Decision d = run.Tick(At(0));
  EXPECT_EQ(d.fail, (std::vector<NodeMark>{{"a", "when: {{params.go}} is \"maybe\", not true or false"}}));
  EXPECT_EQ(d.phase, RunPhase::kFailed);
  EXPECT_EQ(d.message, "a failed: when: {{params.go}} is \"maybe\", not true or false");
}

TEST(Next, ACachedNodeCountsAsSucceeded) {
  // The controller found a's key in its cache and recorded it Cached.
  FakeRun run(ExpandOrFail(MakePipeline().Step(MakeStep("a")).Step(MakeStep("b").DependsOn({"a"})).Build()));
  run.states["a"].state = NodeState::kCached;
  EXPECT_EQ(run.Tick(At(0)).start, (Names{"b"}));
  run.Succeed("b", At(1));
  EXPECT_EQ(run.Tick(At(1)).phase, RunPhase::kSucceeded);
}

TEST(Next, ReportsTheEarliestOfSeveralPendingRetries) {
  // x fails at 100 (back-off 30 s: due 130), y at 110 (back-off 10 s: due 120).
  FakeRun run(
      ExpandOrFail(MakePipeline().Step(MakeStep("x").Retries(1, 30)).Step(MakeStep("y").Retries(1, 10)).Build()));
  run.Tick(At(0));
  run.Fail("x", At(100), "e");
  run.Fail("y", At(110), "e");
  EXPECT_EQ(run.Tick(At(115)).next_retry_at, At(120));
  Decision d = run.Tick(At(120));
  EXPECT_EQ(d.retry, (Names{"y"}));
  EXPECT_EQ(d.next_retry_at, At(130));
}

}  // namespace
}  // namespace tessera::pipeline
