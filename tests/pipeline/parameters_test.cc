// ResolveParameters: a run's values over the pipeline's defaults, and the
// refusals a PipelineRun gets, pathed in the run's spec.
#include "pipeline/parameters.h"

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;
using testing::MakePipeline;
using testing::MakeStep;
using testing::Parse;

PipelineSpec DatasetAndEvaluate() {
  return Parse(MakePipeline().Param("dataset", "cifar10").Param("evaluate").Step(MakeStep("a")).Build());
}

std::string ErrorOf(const json& run_parameters) {
  auto values = ResolveParameters(DatasetAndEvaluate(), run_parameters);
  EXPECT_FALSE(values.has_value());
  return values ? "" : values.error().message();
}

TEST(ResolveParameters, RunValuesOverrideDefaultsAndDefaultsFillTheRest) {
  // The run gives evaluate (required) and overrides nothing else.
  auto values = ResolveParameters(DatasetAndEvaluate(), json::parse(R"([{"name": "evaluate", "value": "true"}])"));
  ASSERT_TRUE(values.has_value()) << values.error().ToString();
  EXPECT_EQ(*values, (ParameterValues{{"dataset", "cifar10"}, {"evaluate", "true"}}));

  auto overridden =
      ResolveParameters(DatasetAndEvaluate(),
                        json::parse(R"([{"name": "evaluate", "value": "no"}, {"name": "dataset", "value": "mnist"}])"));
  ASSERT_TRUE(overridden.has_value());
  EXPECT_EQ(overridden->at("dataset"), "mnist");
}

TEST(ResolveParameters, NumbersAndBooleansBecomeTheirText) {
  // YAML `value: true` and `value: 0.5` arrive as JSON scalars.
  auto values = ResolveParameters(DatasetAndEvaluate(), json::parse(R"([{"name": "evaluate", "value": true},
                                                                        {"name": "dataset", "value": 0.5}])"));
  ASSERT_TRUE(values.has_value());
  EXPECT_EQ(values->at("evaluate"), "true");
  EXPECT_EQ(values->at("dataset"), "0.5");
}

TEST(ResolveParameters, RefusesAnUnknownParameterWithASuggestion) {
  EXPECT_EQ(ErrorOf(json::parse(R"([{"name": "evaluate", "value": "true"}, {"name": "datset", "value": "x"}])")),
            "spec.parameters[1].name: the pipeline has no parameter \"datset\"; did you mean \"dataset\"?");
}

TEST(ResolveParameters, RefusesAnUnknownParameterListingTheDeclaredOnes) {
  EXPECT_EQ(ErrorOf(json::parse(R"([{"name": "epochs", "value": "3"}])")),
            "spec.parameters[0].name: the pipeline has no parameter \"epochs\" (it declares dataset, evaluate)");
}

TEST(ResolveParameters, RefusesAMissingRequiredParameter) {
  // evaluate has no default and the run gives only dataset.
  EXPECT_EQ(ErrorOf(json::parse(R"([{"name": "dataset", "value": "mnist"}])")),
            "spec.parameters: parameter \"evaluate\" is required (the pipeline gives it no default); add {name: "
            "evaluate, value: ...}");
  EXPECT_EQ(ErrorOf(nullptr),
            "spec.parameters: parameter \"evaluate\" is required (the pipeline gives it no default); add {name: "
            "evaluate, value: ...}");
}

TEST(ResolveParameters, RefusesAParameterGivenTwice) {
  EXPECT_EQ(ErrorOf(json::parse(R"([{"name": "evaluate", "value": "true"}, {"name": "evaluate", "value": "no"}])")),
            "spec.parameters[1].name: parameter \"evaluate\" is given twice (also spec.parameters[0].name)");
}

TEST(ResolveParameters, RefusesAParameterWithoutAValue) {
  EXPECT_EQ(ErrorOf(json::parse(R"([{"name": "evaluate"}])")), "spec.parameters[0].value: is required");
}

}  // namespace
}  // namespace tessera::pipeline
