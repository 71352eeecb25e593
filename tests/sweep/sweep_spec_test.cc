// ParseSweepSpec: Katib's fields typed with their defaults, and every refusal
// naming the field to fix.
#include "sweep/sweep_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sweep/early_stopping.h"
#include "sweep/rng.h"
#include "sweep/suggest_trials.h"
#include "sweep/sweep_status.h"
#include "sweep_testing.h"

namespace tessera::sweep {
namespace {

using nlohmann::json;
using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::MustParse;

// The example of the brief, as a Katib user writes it; `{EXTRA}` takes more fields.
std::string Spec(const std::string& algorithm = R"({"algorithmName": "random"})", const std::string& parameters = R"([
      {"name": "lr", "parameterType": "double",
       "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
      {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8", "step": "1"}},
      {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
      {"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["16", "32", "64"]}}])",
                 const std::string& extra = "") {
  return R"({
    "objective": {"type": "minimize", "goal": 0.05, "objectiveMetricName": "loss",
                  "additionalMetricNames": ["acc"]},
    "algorithm": )" +
         algorithm + R"(,
    "parallelTrialCount": 4, "maxTrialCount": 30, "maxFailedTrialCount": 3,
    "parameters": )" +
         parameters + extra + "}";
}

std::string OneParameter(const std::string& parameter) {
  return Spec(R"({"algorithmName": "random"})", "[" + parameter + "]");
}

TEST(ParseSweepSpec, TheBriefsExampleParsesWithItsTypesAndDefaults) {
  // Four parameters of the four types; counts as written; strategies defaulted.
  SweepSpec spec = MustParse(Spec());
  EXPECT_EQ(spec.objective.type, ObjectiveType::kMinimize);
  EXPECT_EQ(spec.objective.metric, "loss");
  EXPECT_EQ(spec.objective.goal, 0.05);
  EXPECT_EQ(spec.objective.strategies.at("loss"), MetricStrategy::kMin);    // minimize -> min
  EXPECT_EQ(spec.objective.strategies.at("acc"), MetricStrategy::kLatest);  // additional -> latest
  EXPECT_EQ(spec.algorithm.name, SearchAlgorithm::kRandom);
  EXPECT_FALSE(spec.early_stopping.has_value());
  EXPECT_EQ(spec.parallel_trial_count, 4);
  EXPECT_EQ(spec.max_trial_count, 30);
  EXPECT_EQ(spec.max_failed_trial_count, 3);
  ASSERT_EQ(spec.parameters.size(), 4u);
  const ParameterSpec& lr = spec.parameters[0];
  EXPECT_EQ(lr.type, ParameterType::kDouble);
  EXPECT_EQ(lr.distribution, Distribution::kLogUniform);
  EXPECT_EQ(lr.min, 0.0001);
  EXPECT_EQ(lr.max, 0.1);
  EXPECT_FALSE(lr.IsFinite());
  EXPECT_EQ(spec.parameters[1].Count(), 8u);  // 1..8 step 1
  EXPECT_EQ(spec.parameters[2].list, (std::vector<std::string>{"sgd", "adam"}));
  EXPECT_EQ(spec.parameters[3].list_numbers, (std::vector<double>{16, 32, 64}));
}

TEST(ParseSweepSpec, IssueAliasesNameTheSameCounts) {
  // parallelTrials, maxTrials and maxFailedTrials are issue 20's spellings.
  SweepSpec spec = MustParse(R"({"objective": {"type": "maximize", "objectiveMetricName": "acc"},
    "algorithm": {"algorithmName": "random"}, "parallelTrials": 2, "maxTrials": 10, "maxFailedTrials": 0,
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": 1, "max": 4}}]})");
  EXPECT_EQ(spec.parallel_trial_count, 2);
  EXPECT_EQ(spec.max_trial_count, 10);
  EXPECT_EQ(spec.max_failed_trial_count, 0);
  EXPECT_EQ(spec.objective.strategies.at("acc"), MetricStrategy::kMax);  // maximize -> max
}

TEST(ParseSweepSpec, BothSpellingsOfACountAreRefused) {
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "x", "parameterType": "int",
                "feasibleSpace": {"min": "1", "max": "4"}}])",
                           R"(, "maxTrials": 5)")),
              HasSubstr("spec.maxTrials: is an alias of maxTrialCount; set one of them"));
}

TEST(ParseSweepSpec, DefaultsAreKatibsWhenCountsAreLeftOut) {
  // parallelTrialCount 3; maxFailedTrialCount none; a grid needs no maxTrialCount.
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "grid"},
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}]})");
  EXPECT_EQ(spec.parallel_trial_count, 3);
  EXPECT_FALSE(spec.max_trial_count.has_value());
  EXPECT_FALSE(spec.max_failed_trial_count.has_value());
  EXPECT_EQ(spec.parameters[0].step, 1.0);
}

TEST(ParseSweepSpec, UnknownAlgorithmIsRefusedWithASuggestion) {
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "rnadom"})")),
              HasSubstr("spec.algorithm.algorithmName: unknown algorithm \"rnadom\"; did you mean \"random\"? "
                        "(supported: \"grid\", \"random\", \"tpe\")"));
}

TEST(ParseSweepSpec, UnsupportedKatibAlgorithmListsWhatIsSupported) {
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "bayesianoptimization"})")),
              HasSubstr("unknown algorithm \"bayesianoptimization\" (supported: \"grid\", \"random\", \"tpe\")"));
}

TEST(ParseSweepSpec, ObjectiveTypeMustBeMinimizeOrMaximize) {
  EXPECT_THAT(ErrorOf(R"({"objective": {"type": "minimise", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "grid"},
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}]})"),
              HasSubstr("spec.objective.type: unknown objective type \"minimise\"; did you mean \"minimize\"?"));
}

TEST(ParseSweepSpec, MinAtOrAboveMaxIsRefused) {
  EXPECT_THAT(ErrorOf(OneParameter(R"({"name": "lr", "parameterType": "double",
                                       "feasibleSpace": {"min": "0.1", "max": "0.1"}})")),
              HasSubstr("spec.parameters[0].feasibleSpace.min: must be less than max (0.1 >= 0.1)"));
}

TEST(ParseSweepSpec, LogUniformNeedsAPositiveMin) {
  EXPECT_THAT(ErrorOf(OneParameter(R"({"name": "lr", "parameterType": "double",
                                       "feasibleSpace": {"min": "0", "max": "0.1", "distribution": "logUniform"}})")),
              HasSubstr("spec.parameters[0].feasibleSpace.min: must be positive for distribution logUniform, not 0"));
}

TEST(ParseSweepSpec, IntBoundsMustBeIntegers) {
  EXPECT_THAT(
      ErrorOf(OneParameter(R"({"name": "layers", "parameterType": "int",
                                       "feasibleSpace": {"min": "1.5", "max": "8"}})")),
      HasSubstr("spec.parameters[0].feasibleSpace.min: an int parameter's min must be an integer, not \"1.5\""));
}

TEST(ParseSweepSpec, AWholeYamlFloatIsAnIntBound) {
  // YAML `max: 8.0` arrives as the JSON number 8.0: an integer still.
  SweepSpec spec = MustParse(OneParameter(R"({"name": "layers", "parameterType": "int",
                                              "feasibleSpace": {"min": 1, "max": 8.0}})"));
  EXPECT_EQ(spec.parameters[0].max, 8);
}

TEST(ParseSweepSpec, EmptyCategoricalListIsRefused) {
  EXPECT_THAT(
      ErrorOf(OneParameter(R"({"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": []}})")),
      HasSubstr("spec.parameters[0].feasibleSpace.list: a categorical parameter needs a non-empty list"));
}

TEST(ParseSweepSpec, DuplicateListEntriesAreRefused) {
  // "16" and 16.0 are one number for a discrete parameter.
  EXPECT_THAT(ErrorOf(OneParameter(R"({"name": "bs", "parameterType": "discrete",
                                       "feasibleSpace": {"list": ["16", 16.0]}})")),
              HasSubstr("spec.parameters[0].feasibleSpace.list[1]: 16 is listed twice"));
}

TEST(ParseSweepSpec, DiscreteEntriesMustBeNumbers) {
  EXPECT_THAT(
      ErrorOf(OneParameter(R"({"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["big"]}})")),
      HasSubstr("spec.parameters[0].feasibleSpace.list[0]: \"big\" is not a number"));
}

TEST(ParseSweepSpec, DuplicateParameterNamesAreRefused) {
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([
      {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.1", "max": "1"}},
      {"name": "lr", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}}])")),
              HasSubstr("spec.parameters[1].name: \"lr\" is the name of spec.parameters[0] already"));
}

TEST(ParseSweepSpec, GridOverADoubleWithoutStepIsRefused) {
  // Katib's rule: grid needs int, discrete, categorical, or a double with step.
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "grid"})")),
              HasSubstr("spec.parameters[0].feasibleSpace.step: is required for algorithm grid over the double "
                        "parameter \"lr\""));
}

TEST(ParseSweepSpec, GridOverADoubleWithStepIsAccepted) {
  SweepSpec spec = MustParse(Spec(R"({"algorithmName": "grid"})", R"([{"name": "lr", "parameterType": "double",
                                  "feasibleSpace": {"min": "0.1", "max": "0.5", "step": "0.1"}}])"));
  EXPECT_EQ(spec.parameters[0].Count(), 5u);  // 0.1, 0.2, 0.3, 0.4, 0.5
}

TEST(ParseSweepSpec, BadSettingValuesAreRefused) {
  EXPECT_THAT(ErrorOf(Spec(
                  R"({"algorithmName": "random", "algorithmSettings": [{"name": "random_state", "value": "seven"}]})")),
              HasSubstr("spec.algorithm.algorithmSettings[0].value: random_state must be an integer, not \"seven\""));
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "tpe", "algorithmSettings": [{"name": "gamma", "value": "1.5"}]})")),
              HasSubstr("spec.algorithm.algorithmSettings[0].value: gamma must be strictly between 0 and 1, not 1.5"));
}

TEST(ParseSweepSpec, UnknownSettingNamesAreRefusedWithASuggestion) {
  EXPECT_THAT(
      ErrorOf(Spec(R"({"algorithmName": "tpe", "algorithmSettings": [{"name": "n_startup_trial", "value": "3"}]})")),
      HasSubstr("spec.algorithm.algorithmSettings[0].name: unknown setting \"n_startup_trial\"; did you mean "
                "\"n_startup_trials\"?"));
  EXPECT_THAT(
      ErrorOf(Spec(R"({"algorithmName": "grid", "algorithmSettings": [{"name": "random_state", "value": "3"}]})",
                   R"([{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}])")),
      HasSubstr("unknown setting \"random_state\"; grid takes no settings"));
}

TEST(ParseSweepSpec, TpeSettingsAcceptOptunaAndHyperoptSpellings) {
  SweepSpec spec = MustParse(Spec(R"({"algorithmName": "tpe", "algorithmSettings": [
      {"name": "n_startup_jobs", "value": "8"}, {"name": "n_EI_candidates", "value": 50},
      {"name": "gamma", "value": "0.2"}, {"name": "random_state", "value": "7"}]})"));
  EXPECT_EQ(spec.algorithm.tpe.n_startup_trials, 8);
  EXPECT_EQ(spec.algorithm.tpe.n_ei_candidates, 50);
  EXPECT_EQ(spec.algorithm.tpe.gamma, 0.2);
  EXPECT_EQ(spec.algorithm.random_state, 7u);
}

TEST(ParseSweepSpec, MaxTrialCountBelowOneIsRefused) {
  EXPECT_THAT(ErrorOf(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "random"}, "maxTrialCount": 0,
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}]})"),
              HasSubstr("spec.maxTrialCount: must be at least 1, not 0"));
}

TEST(ParseSweepSpec, ParallelTrialCountMustBePositive) {
  EXPECT_THAT(ErrorOf(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "random"}, "maxTrialCount": 5, "parallelTrials": 0,
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}]})"),
              HasSubstr("spec.parallelTrials: must be at least 1, not 0"));
}

TEST(ParseSweepSpec, RandomWithoutMaxTrialCountIsRefused) {
  // Only a grid ends by itself.
  EXPECT_THAT(ErrorOf(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "random"},
    "parameters": [{"name": "x", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4"}}]})"),
              HasSubstr("spec.maxTrialCount: is required for algorithm random"));
}

TEST(ParseSweepSpec, UnknownFieldsInsideTheSweepsObjectsAreRefusedWithASuggestion) {
  EXPECT_THAT(ErrorOf(OneParameter(R"({"name": "lr", "parameterType": "double",
                                       "feasibleSpace": {"min": "0.1", "max": "1", "distribtion": "uniform"}})")),
              HasSubstr("spec.parameters[0].feasibleSpace.distribtion: unknown field; did you mean \"distribution\"?"));
}

TEST(ParseSweepSpec, EarlyStoppingSettingsAreTypedAndChecked) {
  // ASHA with eta 3 from step 1 to 27; hyperband without max_resource is refused.
  SweepSpec spec = MustParse(Spec(R"({"algorithmName": "random"})", R"([{"name": "x", "parameterType": "int",
      "feasibleSpace": {"min": "1", "max": "4"}}])",
                                  R"(, "earlyStopping": {"algorithmName": "asha",
      "algorithmSettings": [{"name": "eta", "value": "3"}, {"name": "min_resource", "value": "1"},
                            {"name": "max_resource", "value": "27"}]})"));
  ASSERT_TRUE(spec.early_stopping.has_value());
  EXPECT_EQ(spec.early_stopping->name, EarlyStoppingAlgorithm::kAsha);
  EXPECT_EQ(spec.early_stopping->eta, 3);
  EXPECT_EQ(spec.early_stopping->max_resource, 27);

  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "x", "parameterType": "int",
      "feasibleSpace": {"min": "1", "max": "4"}}])",
                           R"(, "earlyStopping": {"algorithmName": "hyperband"})")),
              HasSubstr("spec.earlyStopping.algorithmSettings: hyperband needs max_resource"));
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "x", "parameterType": "int",
      "feasibleSpace": {"min": "1", "max": "4"}}])",
                           R"(, "earlyStopping": {"algorithmName": "medianstop",
      "algorithmSettings": [{"name": "start_step", "value": "0"}]})")),
              HasSubstr("spec.earlyStopping.algorithmSettings[0].value: start_step must be between 1 and"));
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "x", "parameterType": "int",
      "feasibleSpace": {"min": "1", "max": "4"}}])",
                           R"(, "earlyStopping": {"algorithmName": "medianstop",
      "algorithmSettings": [{"name": "eta", "value": "3"}]})")),
              HasSubstr("unknown setting \"eta\"; medianstop takes \"min_trials_required\", \"start_step\""));
}

TEST(ParseSweepSpec, TrialTemplateReferencesAreCheckedAtParse) {
  // A typo in the template is refused when the sweep is created, not when its first trial is.
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "lr", "parameterType": "double",
      "feasibleSpace": {"min": "0.1", "max": "1"}}])",
                           R"(, "trialTemplate": {"spec": {"containers": [
      {"name": "main", "command": ["python", "train.py", "--lr=${params.lrr}"]}]}})")),
              HasSubstr("spec.trialTemplate.spec.containers[0].command[2]: unknown parameter \"lrr\"; did you mean "
                        "\"lr\"?"));
}

TEST(ParseSweepSpec, KatibTrialParametersRenameParametersForTheTemplate) {
  // Katib's form: trialParameters [{name: learningRate, reference: lr}] and ${trialParameters.learningRate}.
  SweepSpec spec = MustParse(Spec(R"({"algorithmName": "random"})", R"([{"name": "lr", "parameterType": "double",
      "feasibleSpace": {"min": "0.1", "max": "1"}}])",
                                  R"(, "trialTemplate": {
      "trialParameters": [{"name": "learningRate", "reference": "lr", "description": "learning rate"}],
      "trialSpec": {"command": ["train", "--lr=${trialParameters.learningRate}"]}})"));
  EXPECT_EQ(spec.trial_parameters.at("learningRate"), "lr");
  Assignment a;
  a.Add({"lr", "0.5", 0.5});
  Result<json> trial = RenderTrial(spec, a);
  ASSERT_TRUE(trial.has_value()) << trial.error().ToString();
  EXPECT_EQ((*trial)["trialSpec"]["command"][1], "--lr=0.5");
}

TEST(ParseSweepSpec, ATrialParameterReferencingNoParameterIsRefused) {
  EXPECT_THAT(ErrorOf(Spec(R"({"algorithmName": "random"})", R"([{"name": "lr", "parameterType": "double",
      "feasibleSpace": {"min": "0.1", "max": "1"}}])",
                           R"(, "trialTemplate": {
      "trialParameters": [{"name": "learningRate", "reference": "lrate"}], "trialSpec": {}})")),
              HasSubstr("spec.trialTemplate.trialParameters[0].reference: unknown parameter \"lrate\""));
}

TEST(ParseSweepSpec, ARangeWiderThanADoubleIsRefused) {
  EXPECT_THAT(ErrorOf(OneParameter(R"({"name": "x", "parameterType": "double",
                                       "feasibleSpace": {"min": "-1e308", "max": "1e308"}})")),
              HasSubstr("spec.parameters[0].feasibleSpace: the range [-1e308, 1e308] is too wide"));
}

// Replaces one leaf of `doc` (chosen by `rng`) by a value of a random kind.
void MutateOneLeaf(json& doc, Rng& rng) {
  std::vector<json*> leaves;
  std::vector<json*> stack = {&doc};
  while (!stack.empty()) {
    json* j = stack.back();
    stack.pop_back();
    if (j->is_object() || j->is_array()) {
      if (j->empty()) leaves.push_back(j);
      for (auto& child : *j) stack.push_back(&child);
    } else {
      leaves.push_back(j);
    }
  }
  json* leaf = leaves[rng.Below(leaves.size())];
  static const std::vector<json> kValues = {json(nullptr),
                                            json(0),
                                            json(-1),
                                            json(1),
                                            json(2),
                                            json(1e308),
                                            json(-1e308),
                                            json(0.5),
                                            json(""),
                                            json("0"),
                                            json("-1"),
                                            json("1e-300"),
                                            json("1e300"),
                                            json("x"),
                                            json("grid"),
                                            json("tpe"),
                                            json("asha"),
                                            json("logUniform"),
                                            json(true),
                                            json::array(),
                                            json::object(),
                                            json::array({"a", "a"}),
                                            json("${params.lr}"),
                                            json("${params.nope}"),
                                            json("${params."),
                                            json(9007199254740993LL)};
  *leaf = kValues[rng.Below(kValues.size())];
}

TEST(ParseSweepSpec, SeededMutationsParseOrFailCleanlyAndWhatParsesCanBeSearched) {
  // 3,000 specs (seeds 1..3000), each the full example with one to three leaves replaced:
  // the parser answers a value or a field-path error, never a crash, and every spec it
  // accepts can be searched, rendered and judged.
  json base = json::parse(Spec(R"({"algorithmName": "tpe", "algorithmSettings": [{"name": "n_startup_trials",
      "value": "2"}]})",
                               R"([
      {"name": "lr", "parameterType": "double",
       "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
      {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8", "step": "1"}},
      {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
      {"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["16", "32", "64"]}}])",
                               R"(, "earlyStopping": {"algorithmName": "asha", "algorithmSettings": [
      {"name": "eta", "value": "3"}, {"name": "max_resource", "value": "9"}]},
      "trialTemplate": {"command": ["train", "--lr=${params.lr}", "--opt=${params.opt}"]})"));
  int accepted = 0;
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    Rng rng(seed);
    json doc = base;
    for (uint64_t m = 0; m <= rng.Below(3); ++m) MutateOneLeaf(doc, rng);
    Result<SweepSpec> spec = ParseSweepSpec(doc);
    if (!spec.has_value()) {
      ASSERT_EQ(spec.error().code(), StatusCode::kInvalidArgument) << doc.dump();
      ASSERT_TRUE(spec.error().message().starts_with("spec")) << spec.error().message();
      continue;
    }
    ++accepted;
    std::vector<TrialRecord> history;
    for (int round = 0; round < 3; ++round) {
      for (Assignment& a : SuggestTrials(*spec, history, 2, seed)) {
        ASSERT_TRUE(RenderTrial(*spec, a).has_value()) << doc.dump();
        TrialRecord t = testing::MakeTrial("t" + std::to_string(history.size())).Running().Build();
        t.assignment = std::move(a);
        t.observations.try_emplace(spec->objective.metric).first->second.Add(1, rng.Uniform());
        if (history.size() % 2 == 0) t.state = TrialState::kSucceeded;
        history.push_back(std::move(t));
      }
      TrialsToStop(*spec, history);
      EvaluateSweep(*spec, history);
    }
  }
  EXPECT_GT(accepted, 100);  // the mutations do not all break the spec
}

TEST(ParseAssignment, ReadsAStoredAssignmentBackInTheSpecsOrder) {
  // Katib's [{name, value}] in any order -> the spec's order; equal to the suggested one.
  SweepSpec spec = MustParse(Spec());
  Result<Assignment> a = ParseAssignment(spec, json::parse(R"([{"name": "opt", "value": "adam"},
      {"name": "bs", "value": "32"}, {"name": "layers", "value": "4"}, {"name": "lr", "value": "0.001"}])"),
                                         "status.parameterAssignments");
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  EXPECT_EQ(a->ToString(), "lr=0.001, layers=4, opt=adam, bs=32");
  EXPECT_EQ(a->Find("layers")->number, 4.0);
  Result<Assignment> again = ParseAssignment(spec, AssignmentToJson(*a), "x");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *a);
}

TEST(ParseAssignment, AValueOutsideTheSpaceIsRefusedWithItsPath) {
  SweepSpec spec = MustParse(Spec());
  Result<Assignment> a = ParseAssignment(spec, json::parse(R"([{"name": "opt", "value": "adamw"},
      {"name": "bs", "value": "32"}, {"name": "layers", "value": "4"}, {"name": "lr", "value": "0.001"}])"),
                                         "a");
  ASSERT_FALSE(a.has_value());
  EXPECT_THAT(a.error().message(), HasSubstr("a[0].value: \"adamw\" is not in the list of parameter \"opt\""));
}

}  // namespace
}  // namespace tessera::sweep
