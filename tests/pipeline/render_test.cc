// RenderDag: the DAG of a run as `describe pipelinerun` prints it.
#include "pipeline/render.h"

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using testing::ExpandOrFail;
using testing::MakePipeline;
using testing::MakeStep;

using Lines = std::vector<std::string>;

TEST(RenderDag, DrawsADiamondAsATreeListingTheDepsOfTheJoin) {
  // a -> b, c -> d, as the run starts: a running, the rest pending.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Step(MakeStep("a"))
                             .Step(MakeStep("b").DependsOn({"a"}))
                             .Step(MakeStep("c").DependsOn({"a"}))
                             .Step(MakeStep("d").DependsOn({"b", "c"}))
                             .Build());
  const NodeStates states = {{"a", {NodeState::kRunning, 1}}};
  EXPECT_EQ(RenderDag(dag, states), (Lines{
                                        "a               Running    attempt 1/1",
                                        "├─ b            Pending",
                                        "└─ c            Pending",
                                        "   └─ d ← b, c  Pending",
                                    }));
}

TEST(RenderDag, ShowsAttemptsCacheHitsResumesAndMessages) {
  // prepare resumed from run-1; train-0 cached, train-1 on its 2nd of 3
  // attempts, train-2 failed for good; evaluate omitted; notify skipped.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Step(MakeStep("prepare"))
                             .Step(MakeStep("train").DependsOn({"prepare"}).WithItems({"a", "b", "c"}).Retries(2, 10))
                             .Step(MakeStep("evaluate").DependsOn({"train"}))
                             .Step(MakeStep("notify").DependsOn({"prepare"}).When("false"))
                             .Build());
  NodeStates states;
  states["prepare"] = {NodeState::kSucceeded, 0, {}, false, "", "run-1"};
  states["train-0"] = {NodeState::kCached, 0};
  states["train-1"] = {NodeState::kFailed, 2, {}, false, "exit code 137"};
  states["train-2"] = {NodeState::kFailed, 3, {}, false, "exit code 1"};
  states["evaluate"] = {NodeState::kOmitted, 0, {}, false, "upstream train-2 failed"};
  states["notify"] = {NodeState::kSkipped, 0, {}, false, "when \"false\" is false"};
  EXPECT_EQ(RenderDag(dag, states),
            (Lines{
                "prepare                      Succeeded  resumed from run-1",
                "├─ train-0                   Cached",
                "├─ train-1                   Failed     attempt 2/3, will retry: exit code 137",
                "├─ train-2                   Failed     attempt 3/3: exit code 1",
                "│  └─ evaluate ← train-0..2  Omitted    upstream train-2 failed",
                "└─ notify                    Skipped    when \"false\" is false",
            }));
}

}  // namespace
}  // namespace tessera::pipeline
