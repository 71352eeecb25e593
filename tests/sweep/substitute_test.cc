// SubstituteParameters: both reference forms, strings only, and errors with
// the path of the string in the template.
#include "sweep/substitute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tessera::sweep {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

Assignment LrAndLayers() {
  Assignment a;
  a.Add({"lr", "0.001", 0.001});
  a.Add({"layers", "4", 4});
  return a;
}

TEST(SubstituteParameters, ReplacesOursAndKatibsReferencesInEveryString) {
  // ${params.lr} and ${trialParameters.layers}, in a command list and an env value.
  json t = json::parse(R"({"spec": {"containers": [{"name": "main",
      "command": ["python", "train.py", "--lr=${params.lr}", "--layers=${trialParameters.layers}"],
      "env": [{"name": "LR", "value": "${params.lr}"}]}]}})");
  Result<json> out = SubstituteParameters(t, LrAndLayers());
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  const json& c = (*out)["spec"]["containers"][0];
  EXPECT_EQ(c["command"][2], "--lr=0.001");
  EXPECT_EQ(c["command"][3], "--layers=4");
  EXPECT_EQ(c["env"][0]["value"], "0.001");
}

TEST(SubstituteParameters, AWholeStringReferenceStaysAString) {
  // "${params.layers}" in a field becomes "4", a string: the caller's schema converts.
  Result<json> out = SubstituteParameters(json::parse(R"({"replicas": "${params.layers}"})"), LrAndLayers());
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)["replicas"], json("4"));
}

TEST(SubstituteParameters, SeveralReferencesInOneString) {
  Result<json> out =
      SubstituteParameters(json("lr=${params.lr},layers=${params.layers},again=${params.lr}"), LrAndLayers());
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, json("lr=0.001,layers=4,again=0.001"));
}

TEST(SubstituteParameters, LeavesOtherDollarBracesKeysAndNonStringsAlone) {
  // A shell's ${HOME}, an object key that looks like a reference, numbers and booleans.
  json t = json::parse(R"({"cmd": "echo ${HOME} ${params}", "${params.lr}": 1, "n": 3, "b": true})");
  Result<json> out = SubstituteParameters(t, LrAndLayers());
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  EXPECT_EQ(*out, t);
}

TEST(SubstituteParameters, AnUnknownNameIsAnErrorWithItsPathAndASuggestion) {
  json t = json::parse(R"({"spec": {"containers": [{"command": ["python", "train.py", "--lr=${params.lrr}"]}]}})");
  Result<json> out = SubstituteParameters(t, LrAndLayers());
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().message(),
            "spec.trialTemplate.spec.containers[0].command[2]: unknown parameter \"lrr\"; did you mean \"lr\"?");
}

TEST(SubstituteParameters, AnUnknownNameWithNothingCloseListsTheParameters) {
  Result<json> out = SubstituteParameters(json::parse(R"({"a": "${params.momentum}"})"), LrAndLayers());
  ASSERT_FALSE(out.has_value());
  EXPECT_THAT(
      out.error().message(),
      HasSubstr("spec.trialTemplate.a: unknown parameter \"momentum\" (the sweep's parameters: \"lr\", \"layers\")"));
}

TEST(SubstituteParameters, AnUnclosedReferenceIsAnError) {
  Result<json> out = SubstituteParameters(json::parse(R"({"a": ["--lr=${params.lr"]})"), LrAndLayers());
  ASSERT_FALSE(out.has_value());
  EXPECT_THAT(out.error().message(), HasSubstr("spec.trialTemplate.a[0]: \"${params.lr\" is not closed"));
}

TEST(SubstituteParameters, KatibTrialParametersMayRenameAParameter) {
  // trialParameters [{name: learningRate, reference: lr}] as a map.
  SubstitutionOptions options;
  options.trial_parameters = {{"learningRate", "lr"}};
  Result<json> out = SubstituteParameters(json("--lr=${trialParameters.learningRate}"), LrAndLayers(), options);
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  EXPECT_EQ(*out, json("--lr=0.001"));
}

}  // namespace
}  // namespace tessera::sweep
