// ParsePipelineSpec: what a Pipeline's spec means, and every refusal with the
// exact message a user sees (the field path, what is wrong, what to do).
#include "pipeline/pipeline_spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;
using testing::ErrorOf;
using testing::MakePipeline;
using testing::MakeStep;
using testing::Parse;

// The train-eval pipeline of the issue: prepare, a fan-out over learning
// rates, and a conditional evaluation.
json TrainEval() {
  return MakePipeline()
      .Param("dataset", "cifar10")
      .Param("evaluate")
      .Step(MakeStep("prepare").Command("fetch {{params.dataset}}").Retries(2, 10))
      .Step(MakeStep("train").DependsOn({"prepare"}).WithItems({"0.01", "0.1", "1"}).Command("train --lr {{item}}"))
      .Step(MakeStep("evaluate")
                .DependsOn({"train"})
                .When("{{params.evaluate}} == true && {{steps.train.status}} == Succeeded")
                .Command("eval {{steps.train.outputs.result}}")
                .Cache(false))
      .Build();
}

TEST(ParsePipelineSpec, ReadsParametersStepsAndTheirDefaults) {
  // The example: defaults where a field is absent (no retries, cache on).
  PipelineSpec spec = Parse(TrainEval());
  ASSERT_EQ(spec.parameters.size(), 2u);
  EXPECT_EQ(spec.parameters[0].default_value, "cifar10");
  EXPECT_EQ(spec.parameters[1].default_value, std::nullopt);  // required
  ASSERT_EQ(spec.steps.size(), 3u);
  EXPECT_EQ(spec.steps[0].retries.limit, 2);
  EXPECT_EQ(spec.steps[0].retries.max_attempts(), 3);  // 1 + limit
  EXPECT_EQ(spec.steps[0].retries.backoff, Duration::Seconds(10));
  EXPECT_EQ(spec.steps[1].retries.limit, 0);
  EXPECT_TRUE(spec.steps[1].cache);
  EXPECT_FALSE(spec.steps[2].cache);
  ASSERT_TRUE(spec.steps[1].with_items.has_value());
  EXPECT_EQ(spec.steps[1].with_items->size(), 3u);
  EXPECT_EQ(spec.steps[0].references, (std::set<std::string>{"params.dataset"}));
  EXPECT_EQ(spec.steps[2].references,
            (std::set<std::string>{"params.evaluate", "steps.train.status", "steps.train.outputs.result"}));
  ASSERT_TRUE(spec.steps[2].when.has_value());
  EXPECT_EQ(spec.steps[2].when->text(), "{{params.evaluate}} == true && {{steps.train.status}} == Succeeded");
}

TEST(ParsePipelineSpec, ErrorsArePathedBelowTheGivenPrefix) {
  // A PipelineRun's inline spec is checked under spec.pipelineSpec.
  json spec = MakePipeline().Step(MakeStep("Bad")).Build();
  auto parsed = ParsePipelineSpec(spec, "spec.pipelineSpec");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message(),
            "spec.pipelineSpec.steps[0].name: \"Bad\" is not a DNS-1123 label: use lowercase letters, digits and '-', "
            "starting and ending with a letter or digit");
}

TEST(ParsePipelineSpec, RefusesASpecWithoutSteps) {
  // Parameters alone are not a pipeline.
  EXPECT_EQ(ErrorOf(MakePipeline().Param("x", "1").Build()),
            "spec.steps: is required: a pipeline has at least one step");
  EXPECT_EQ(ErrorOf(json{{"steps", json::array()}}), "spec.steps: must have at least one step");
}

TEST(ParsePipelineSpec, RefusesAStepWithoutATemplate) {
  json spec = MakePipeline().Step(json{{"name", "a"}}).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[0].template: is required: the pod template the step runs");
}

TEST(ParsePipelineSpec, RefusesDuplicateStepNames) {
  // The second "train" is the one named, with where the first is.
  json spec = MakePipeline().Step(MakeStep("prepare")).Step(MakeStep("train")).Step(MakeStep("train")).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[2].name: duplicate step name \"train\" (also spec.steps[1].name)");
}

TEST(ParsePipelineSpec, RefusesStepNamesThatAreNotDns1123Labels) {
  // Upper case, an underscore and a trailing dash each break the label rule.
  for (const char* name : {"Train", "train_1", "train-"}) {
    EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep(name)).Build()),
              fmt::format("spec.steps[0].name: \"{}\" is not a DNS-1123 label: use lowercase letters, digits and '-', "
                          "starting and ending with a letter or digit",
                          name));
  }
}

TEST(ParsePipelineSpec, RefusesAStepNameOver63Characters) {
  const std::string name(64, 'a');
  EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep(name)).Build()),
            fmt::format("spec.steps[0].name: \"{}\" is 64 characters, over 63", name));
}

TEST(ParsePipelineSpec, RefusesAFannedOutStepNameWithNoRoomForItsSuffixes) {
  // 61 characters fit alone, but 11 items need suffixes up to "-10": 61 + 3 = 64 > 63.
  const std::string name(61, 'a');
  json items = json::array();
  for (int i = 0; i < 11; ++i) items.push_back(std::to_string(i));
  EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep(name).WithItems(items)).Build()),
            fmt::format("spec.steps[0].name: \"{0}\" is too long for 11 items: node names such as \"{0}-10\" would be "
                        "64 characters, over 63; shorten it to at most 60 characters",
                        name));
  // With 10 items the longest suffix is "-9": 61 + 2 = 63 fits.
  items.erase(items.size() - 1);
  Parse(MakePipeline().Step(MakeStep(name).WithItems(items)).Build());
}

TEST(ParsePipelineSpec, RefusesAStepNamedLikeANodeOfAFannedOutStep) {
  // train's items make nodes train-0 and train-1; a step "train-1" would share a name.
  json spec = MakePipeline().Step(MakeStep("train").WithItems({"a", "b"})).Step(MakeStep("train-1")).Build();
  EXPECT_EQ(
      ErrorOf(spec),
      "spec.steps[1].name: \"train-1\" is also the name of node 1 of step \"train\" (spec.steps[0].withItems[1]); "
      "rename one of the steps");
  json reversed = MakePipeline().Step(MakeStep("train-1")).Step(MakeStep("train").WithItems({"a", "b"})).Build();
  EXPECT_EQ(ErrorOf(reversed),
            "spec.steps[1].withItems[1]: node name \"train-1\" is taken by step \"train-1\" (spec.steps[0]); rename "
            "one of the steps");
}

TEST(ParsePipelineSpec, RefusesAnUnknownDependencyWithASuggestion) {
  json spec = MakePipeline().Step(MakeStep("train")).Step(MakeStep("evaluate").DependsOn({"trian"})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[1].dependsOn[0]: no step named \"trian\"; did you mean \"train\"?");
}

TEST(ParsePipelineSpec, RefusesAnUnknownDependencyListingTheStepsWhenNoneIsClose) {
  json spec = MakePipeline().Step(MakeStep("train")).Step(MakeStep("evaluate").DependsOn({"deploy"})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[1].dependsOn[0]: no step named \"deploy\" (steps: train, evaluate)");
}

TEST(ParsePipelineSpec, RefusesADependencyListedTwice) {
  json spec = MakePipeline().Step(MakeStep("a")).Step(MakeStep("b").DependsOn({"a", "a"})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[1].dependsOn[1]: \"a\" is listed twice");
}

TEST(ParsePipelineSpec, NamesADependencyCycleInRunOrder) {
  // b runs after a, c after b, a after c: a -> b -> c -> a, from the first step.
  json spec = MakePipeline()
                  .Step(MakeStep("a").DependsOn({"c"}))
                  .Step(MakeStep("b").DependsOn({"a"}))
                  .Step(MakeStep("c").DependsOn({"b"}))
                  .Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps: dependency cycle a -> b -> c -> a");
}

TEST(ParsePipelineSpec, NamesATwoStepCycle) {
  json spec = MakePipeline().Step(MakeStep("a").DependsOn({"b"})).Step(MakeStep("b").DependsOn({"a"})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps: dependency cycle a -> b -> a");
}

TEST(ParsePipelineSpec, NamesASelfDependencyAsACycle) {
  json spec = MakePipeline().Step(MakeStep("root")).Step(MakeStep("a").DependsOn({"root", "a"})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps: dependency cycle a -> a");
}

TEST(ParsePipelineSpec, RefusesEmptyWithItems) {
  json spec = MakePipeline().Step(MakeStep("train").WithItems(json::array())).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[0].withItems: must not be empty (remove it to run the step once)");
}

TEST(ParsePipelineSpec, RefusesAListAsAnItem) {
  json spec = MakePipeline().Step(MakeStep("train").WithItems({json::array({1, 2})})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[0].withItems[0]: must be a string, number, boolean or object, not array");
}

TEST(ParsePipelineSpec, RefusesNegativeRetries) {
  EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep("a").Retries(-1, 10)).Build()),
            "spec.steps[0].retries.limit: must not be negative, got -1");
  EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep("a").Retries(1, -5)).Build()),
            "spec.steps[0].retries.backoffSeconds: must not be negative, got -5");
}

TEST(ParsePipelineSpec, RefusesABackoffOverTheSixMinuteCap) {
  EXPECT_EQ(ErrorOf(MakePipeline().Step(MakeStep("a").Retries(1, 361)).Build()),
            "spec.steps[0].retries.backoffSeconds: must be at most 360 (the back-off is capped at 6 minutes)");
}

TEST(ParsePipelineSpec, RefusesRetriesThatAreNotIntegers) {
  json spec = MakePipeline().Step(MakeStep("a").Set("retries", {{"limit", "2"}})).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[0].retries.limit: must be an integer, not string");
}

TEST(ParsePipelineSpec, RefusesMalformedWhenConditionsAtTheColumnOfTheProblem) {
  struct Case {
    const char* when;
    const char* error;
  };
  const Case cases[] = {
      {"{{params.go}} ==", "column 17: expected a value after '==', found the end"},
      {"{{params.go}} = true", "column 15: '=' is not an operator; did you mean '=='?"},
      {"a == b & c == d", "column 8: '&' is not an operator; did you mean '&&'?"},
      {"(a == b", "column 8: expected '&&', '||' or ')' to close '(' at column 1, found the end"},
      {"a == b)", "column 7: expected '&&', '||' or the end, found ')'"},
      {"a == b == c", "column 8: expected '&&', '||' or the end, found '=='"},
      {"&& a", "column 1: expected a value, '!' or '(', found '&&'"},
      {"", "column 1: expected a value, '!' or '(', found the end"},
      {"a == 'b", "column 6: unclosed quote ': end the value with '"},
      {"{{params.go == true", "column 1: unclosed {{: end the reference with }}"},
  };
  for (const Case& c : cases) {
    json spec = MakePipeline().Param("go", "true").Step(MakeStep("a").When(c.when)).Build();
    EXPECT_EQ(ErrorOf(spec), std::string("spec.steps[0].when: ") + c.error) << c.when;
  }
}

TEST(ParsePipelineSpec, RefusesAnUnknownParameterWithASuggestion) {
  json spec = MakePipeline().Param("dataset", "cifar10").Step(MakeStep("a").Command("fetch {{params.datset}}")).Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[0].template.spec.containers[0].command[2]: {{params.datset}}: no parameter named \"datset\"; "
            "did you mean \"dataset\"?");
}

TEST(ParsePipelineSpec, RefusesAParameterReferenceWhenThePipelineHasNone) {
  json spec = MakePipeline().Step(MakeStep("a").Command("fetch {{ params.dataset }}")).Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[0].template.spec.containers[0].command[2]: {{params.dataset}}: no parameter named \"dataset\" "
            "(the pipeline has no parameters)");
}

TEST(ParsePipelineSpec, RefusesAnUnknownKindOfReferenceWithASuggestion) {
  json spec = MakePipeline().Param("x", "1").Step(MakeStep("a").Command("echo {{parms.x}}")).Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[0].template.spec.containers[0].command[2]: {{parms.x}}: unknown reference (did you mean "
            "\"params\"?); use {{params.NAME}}, {{item}}, {{item.KEY}}, {{steps.STEP.status}} or "
            "{{steps.STEP.outputs.result}}");
}

TEST(ParsePipelineSpec, RefusesAnUnknownStepOutput) {
  json spec = MakePipeline()
                  .Step(MakeStep("a"))
                  .Step(MakeStep("b").DependsOn({"a"}).Command("echo {{steps.a.outputs.reslt}}"))
                  .Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[1].template.spec.containers[0].command[2]: {{steps.a.outputs.reslt}}: a step offers "
            "{{steps.a.status}} and {{steps.a.outputs.result}}");
}

TEST(ParsePipelineSpec, RefusesAnItemReferenceInAStepWithoutWithItems) {
  json spec = MakePipeline().Step(MakeStep("train").Command("train --lr {{item}}")).Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[0].template.spec.containers[0].command[2]: {{item}}: step \"train\" has no withItems");
}

TEST(ParsePipelineSpec, RefusesAnItemKeyMissingFromAnItem) {
  // The second item spells the key "drop_out".
  json spec = MakePipeline()
                  .Step(MakeStep("train")
                            .WithItems(json::array({{{"dropout", "0.1"}}, {{"drop_out", "0.2"}}}))
                            .Command("train --dropout {{item.dropout}}"))
                  .Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[0].template.spec.containers[0].command[2]: {{item.dropout}}: withItems[1] has no key "
            "\"dropout\"; did you mean \"drop_out\"?");
}

TEST(ParsePipelineSpec, RefusesAnItemKeyOnAScalarItem) {
  json spec = MakePipeline().Step(MakeStep("train").WithItems({"0.1"}).Command("train --lr {{item.lr}}")).Build();
  EXPECT_EQ(
      ErrorOf(spec),
      "spec.steps[0].template.spec.containers[0].command[2]: {{item.lr}}: withItems[0] is a string, not an object");
}

TEST(ParsePipelineSpec, RefusesAStepReferenceToAStepThatIsNotUpstream) {
  // b and c are siblings: c cannot read b's result, b may not have run.
  json spec = MakePipeline()
                  .Step(MakeStep("a"))
                  .Step(MakeStep("b").DependsOn({"a"}))
                  .Step(MakeStep("c").DependsOn({"a"}).Command("echo {{steps.b.outputs.result}}"))
                  .Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[2].template.spec.containers[0].command[2]: {{steps.b.outputs.result}}: step \"b\" is not "
            "upstream of \"c\"; add it to dependsOn");
}

TEST(ParsePipelineSpec, AcceptsAReferenceToAnAncestorThatIsNotADirectDependency) {
  // c depends on b, b on a: a's result is known when c starts.
  Parse(MakePipeline()
            .Step(MakeStep("a"))
            .Step(MakeStep("b").DependsOn({"a"}))
            .Step(MakeStep("c").DependsOn({"b"}).Command("echo {{steps.a.outputs.result}}"))
            .Build());
}

TEST(ParsePipelineSpec, RefusesAStepReferringToItself) {
  json spec = MakePipeline().Step(MakeStep("a").When("{{steps.a.status}} == Succeeded")).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.steps[0].when: {{steps.a.status}}: a step cannot refer to itself");
}

TEST(ParsePipelineSpec, RefusesAnUnknownStepInAWhenConditionWithASuggestion) {
  json spec = MakePipeline()
                  .Step(MakeStep("train"))
                  .Step(MakeStep("evaluate").DependsOn({"train"}).When("{{steps.trian.status}} == Succeeded"))
                  .Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.steps[1].when: {{steps.trian.status}}: no step named \"trian\"; did you mean \"train\"?");
}

TEST(ParsePipelineSpec, RefusesDuplicateParameterNames) {
  json spec = MakePipeline().Param("lr", "0.1").Param("epochs", "3").Param("lr").Step(MakeStep("a")).Build();
  EXPECT_EQ(ErrorOf(spec), "spec.parameters[2].name: duplicate parameter name \"lr\" (also spec.parameters[0].name)");
}

TEST(ParsePipelineSpec, RefusesAParameterNameThatCannotBeReferredTo) {
  json spec = MakePipeline().Param("learning.rate", "0.1").Step(MakeStep("a")).Build();
  EXPECT_EQ(ErrorOf(spec),
            "spec.parameters[0].name: \"learning.rate\" is not a parameter name: use letters, digits, '-' and '_' (it "
            "is referred to as {{params.NAME}})");
}

TEST(ParsePipelineSpec, LeavesAnUnclosedBraceInATemplateAsText) {
  // Shell text such as "echo {{" is not a reference.
  PipelineSpec spec = Parse(MakePipeline().Step(MakeStep("a").Command("echo {{ not closed")).Build());
  EXPECT_TRUE(spec.steps[0].references.empty());
}

}  // namespace
}  // namespace tessera::pipeline
