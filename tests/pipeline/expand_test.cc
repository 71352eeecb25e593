// Expand and FinalTemplate: a spec and parameter values become concrete
// nodes, edges and templates; upstream results are substituted only when
// the node starts.
#include "pipeline/dag.h"

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;
using testing::ExpandOrFail;
using testing::MakePipeline;
using testing::MakeStep;
using testing::Parse;
using testing::PodRunning;

std::vector<std::string> Names(const Dag& dag) {
  std::vector<std::string> out;
  for (const DagNode& n : dag.nodes) out.push_back(n.name);
  return out;
}

std::string CommandOf(const json& pod_template) {
  return pod_template.at("spec").at("containers").at(0).at("command").at(2).get<std::string>();
}

TEST(Expand, FansOutOneNodePerItemWithTheItemSubstituted) {
  // Three learning rates: train-0, train-1, train-2, in item order.
  Dag dag = ExpandOrFail(
      MakePipeline().Step(MakeStep("train").WithItems({"0.01", "0.1", 1}).Command("train --lr {{item}}")).Build());
  EXPECT_EQ(Names(dag), (std::vector<std::string>{"train-0", "train-1", "train-2"}));
  EXPECT_EQ(CommandOf(dag.nodes[0].pod_template), "train --lr 0.01");
  EXPECT_EQ(CommandOf(dag.nodes[2].pod_template), "train --lr 1");  // a number item, as its JSON text
  EXPECT_EQ(dag.nodes[1].item, 1u);
  EXPECT_EQ(dag.steps[0].nodes.size(), 3u);
}

TEST(Expand, SubstitutesKeysOfObjectItemsAndWholeObjects) {
  Dag dag = ExpandOrFail(MakePipeline()
                             .Step(MakeStep("train")
                                       .WithItems(json::array({{{"lr", 0.1}, {"opt", "adam"}}}))
                                       .Command("train --lr {{item.lr}} --opt {{item.opt}} # {{item}}"))
                             .Build());
  EXPECT_EQ(CommandOf(dag.nodes[0].pod_template), R"(train --lr 0.1 --opt adam # {"lr":0.1,"opt":"adam"})");
}

TEST(Expand, AFannedOutDependencyMeansAllOfItsNodes) {
  // prepare -> train x3 -> evaluate: evaluate waits on every train node.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Step(MakeStep("prepare"))
                             .Step(MakeStep("train").DependsOn({"prepare"}).WithItems({"a", "b", "c"}))
                             .Step(MakeStep("evaluate").DependsOn({"train"}))
                             .Build());
  EXPECT_EQ(Names(dag), (std::vector<std::string>{"prepare", "train-0", "train-1", "train-2", "evaluate"}));
  const DagNode& evaluate = dag.node(*dag.Find("evaluate"));
  EXPECT_EQ(evaluate.deps.size(), 3u);
  EXPECT_EQ(evaluate.inputs, (std::vector<std::string>{"train-0", "train-1", "train-2"}));
  EXPECT_EQ(dag.node(*dag.Find("prepare")).dependents.size(), 3u);
  EXPECT_EQ(dag.Edges().size(), 6u);  // 3 from prepare, 3 into evaluate
}

TEST(Expand, OrdersNodesDepthFirstUnderTheirLatestDependency) {
  // Two independent chains written interleaved: a, b roots; a2 after a, b2 after b.
  // Depth-first keeps each chain together: a, a2, b, b2.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Step(MakeStep("a"))
                             .Step(MakeStep("b"))
                             .Step(MakeStep("b2").DependsOn({"b"}))
                             .Step(MakeStep("a2").DependsOn({"a"}))
                             .Build());
  EXPECT_EQ(Names(dag), (std::vector<std::string>{"a", "a2", "b", "b2"}));
}

TEST(Expand, KeepsStepReferencesUntilFinalTemplateSubstitutesThem) {
  // evaluate reads train's result, known only once train has finished.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Param("dataset", "cifar10")
                             .Step(MakeStep("train").Command("train {{params.dataset}}"))
                             .Step(MakeStep("evaluate")
                                       .DependsOn({"train"})
                                       .Command("eval {{params.dataset}} {{steps.train.outputs.result}}"))
                             .Build());
  const NodeId evaluate = *dag.Find("evaluate");
  EXPECT_EQ(CommandOf(dag.node(evaluate).pod_template), "eval cifar10 {{steps.train.outputs.result}}");
  const NodeStates states = {{"train", {NodeState::kSucceeded, 1}}};
  EXPECT_EQ(CommandOf(FinalTemplate(dag, evaluate, states, {{"train", "/models/best.pt"}})),
            "eval cifar10 /models/best.pt");
  // A step that wrote no result reads as "".
  EXPECT_EQ(CommandOf(FinalTemplate(dag, evaluate, states, {})), "eval cifar10 ");
}

TEST(Expand, AFannedOutStepsResultIsAListOfItsNodesResults) {
  Dag dag =
      ExpandOrFail(MakePipeline()
                       .Step(MakeStep("train").WithItems({"a", "b"}))
                       .Step(MakeStep("pick").DependsOn({"train"}).Command("pick '{{steps.train.outputs.result}}'"))
                       .Build());
  const NodeStates states = {{"train-0", {NodeState::kSucceeded, 1}}, {"train-1", {NodeState::kCached, 0}}};
  EXPECT_EQ(CommandOf(FinalTemplate(dag, *dag.Find("pick"), states, {{"train-0", "0.91"}, {"train-1", "0.95"}})),
            R"(pick '["0.91","0.95"]')");
}

TEST(Expand, SubstitutesInOnePassSoAValueIsNotScannedAgain) {
  // A parameter whose value looks like a reference stays as the user wrote it.
  Dag dag = ExpandOrFail(MakePipeline()
                             .Param("msg", "{{steps.a.outputs.result}}")
                             .Step(MakeStep("a"))
                             .Step(MakeStep("b").DependsOn({"a"}).Command("echo {{params.msg}}"))
                             .Build());
  const NodeId b = *dag.Find("b");
  EXPECT_EQ(CommandOf(FinalTemplate(dag, b, {{"a", {NodeState::kSucceeded, 1}}}, {{"a", "secret"}})),
            "echo {{steps.a.outputs.result}}");
}

TEST(Expand, SubstitutesEveryStringOfTheTemplateButNotItsKeys) {
  json tmpl = {{"metadata", {{"labels", {{"dataset", "{{params.d}}"}}}}},
               {"spec",
                {{"containers", json::array({{{"name", "m"},
                                              {"image", "img:{{params.d}}"},
                                              {"env", json::array({{{"name", "D"}, {"value", "{{params.d}}"}}})}}})}}}};
  Dag dag = ExpandOrFail(MakePipeline().Param("d", "x").Step(MakeStep("a").Template(tmpl)).Build());
  const json& t = dag.nodes[0].pod_template;
  EXPECT_EQ(t.at("metadata").at("labels").at("dataset"), "x");
  EXPECT_EQ(t.at("spec").at("containers").at(0).at("image"), "img:x");
  EXPECT_EQ(t.at("spec").at("containers").at(0).at("env").at(0).at("value"), "x");
}

TEST(Expand, RefusesParameterValuesThatLackADeclaredParameter) {
  PipelineSpec spec = Parse(MakePipeline().Param("d").Step(MakeStep("a")).Build());
  auto dag = Expand(spec, ParameterValues{});
  ASSERT_FALSE(dag.has_value());
  EXPECT_EQ(dag.error().message(),
            "spec.parameters: no value for parameter \"d\" (resolve the run's parameters first)");
}

}  // namespace
}  // namespace tessera::pipeline
