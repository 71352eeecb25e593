// Validation of the Pipeline and PipelineRun kinds: bad specs are refused with
// the field path of the problem (the schema's shape, then ParsePipelineSpec's
// DAG rules), and a Pipeline's spec may not change.
#include <gtest/gtest.h>

#include <string>

#include "api/kinds.h"
#include "api/printer_columns.h"
#include "api/validation.h"

namespace tessera {
namespace {

using nlohmann::json;

json Step(const std::string& name, std::vector<std::string> depends_on = {}) {
  json step{{"name", name}, {"template", {{"spec", {{"containers", {{{"name", "main"}, {"command", {"true"}}}}}}}}}};
  if (!depends_on.empty()) step["dependsOn"] = depends_on;
  return step;
}

json Pipeline(json steps) {
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "Pipeline"},
              {"metadata", {{"name", "p"}, {"namespace", "team"}}},
              {"spec", {{"steps", std::move(steps)}}}};
}

const KindInfo& PipelineKind() { return *FindKindByStoreKey("tessera.dev/Pipeline"); }
const KindInfo& RunKind() { return *FindKindByStoreKey("tessera.dev/PipelineRun"); }

TEST(PipelineValidationTest, ADiamondIsValid) {
  // a -> (b, c) -> d.
  EXPECT_TRUE(ValidateObject(PipelineKind(), Pipeline({Step("a"), Step("b", {"a"}), Step("c", {"a"}),
                                                       Step("d", {"b", "c"})}))
                  .ok());
}

TEST(PipelineValidationTest, ACycleIsRefusedWithItsFieldPath) {
  // a after b, b after a.
  const Status s = ValidateObject(PipelineKind(), Pipeline({Step("a", {"b"}), Step("b", {"a"})}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "spec.steps: dependency cycle a -> b -> a");
}

TEST(PipelineValidationTest, AnUnknownDependencyIsRefusedWithItsFieldPath) {
  // b depends on "aa", which does not exist (did you mean "a"?).
  const Status s = ValidateObject(PipelineKind(), Pipeline({Step("a"), Step("b", {"aa"})}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("spec.steps[1].dependsOn[0]", 0), 0u) << s.message();
}

TEST(PipelineValidationTest, ARunNeedsExactlyOneOfPipelineRefAndPipelineSpec) {
  // Neither is given.
  json run{{"apiVersion", "tessera.dev/v1"},
           {"kind", "PipelineRun"},
           {"metadata", {{"name", "r"}, {"namespace", "team"}}},
           {"spec", json::object()}};
  const Status s = ValidateObject(RunKind(), run);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("spec: set exactly one of pipelineRef"), std::string::npos) << s.message();
}

TEST(PipelineValidationTest, AnInlineSpecOfARunIsCheckedBelowSpecPipelineSpec) {
  // The run's inline spec has an unknown dependency.
  json run{{"apiVersion", "tessera.dev/v1"},
           {"kind", "PipelineRun"},
           {"metadata", {{"name", "r"}, {"namespace", "team"}}},
           {"spec", {{"pipelineSpec", {{"steps", {Step("a", {"zz"})}}}}}}};
  const Status s = ValidateObject(RunKind(), run);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("spec.pipelineSpec.steps[0].dependsOn[0]", 0), 0u) << s.message();
}

TEST(PipelineValidationTest, APipelineSpecMayNotChange) {
  // A second step added to a stored Pipeline; a label change alone is fine.
  const json stored = Pipeline({Step("a")});
  json relabelled = stored;
  relabelled["metadata"]["labels"] = {{"team", "nlp"}};
  EXPECT_TRUE(ValidateUpdate(PipelineKind(), stored, relabelled).ok());
  const Status s = ValidateUpdate(PipelineKind(), stored, Pipeline({Step("a"), Step("b")}));
  EXPECT_EQ(s.message(), "spec: a Pipeline is immutable; create a new version (a new name)");
}

TEST(PipelineValidationTest, TheRunsTableShowsItsPipelineStatusAndStepsDone) {
  // A run of "train" with 3 nodes: one Succeeded, one Cached, one Running (2 of 3 done).
  json run{{"metadata", {{"name", "r1"}, {"namespace", "team"}}},
           {"spec", {{"pipelineRef", {{"name", "train"}}}}},
           {"status",
            {{"phase", "Running"},
             {"nodes",
              {{"a", {{"phase", "Succeeded"}}}, {"b", {{"phase", "Cached"}}}, {"c", {{"phase", "Running"}}}}}}}};
  const ColumnOptions options;
  EXPECT_EQ(TableHeaders(RunKind(), options), (std::vector<std::string>{"NAME", "PIPELINE", "STATUS", "STEPS", "AGE"}));
  const std::vector<std::string> row = TableRow(RunKind(), run, options);
  ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(row[1], "train");
  EXPECT_EQ(row[2], "Running");
  EXPECT_EQ(row[3], "2/3");
  EXPECT_EQ(TableHeaders(PipelineKind(), options), (std::vector<std::string>{"NAME", "STEPS", "AGE"}));
  EXPECT_EQ(TableRow(PipelineKind(), Pipeline({Step("a"), Step("b")}), options)[1], "2");
}

}  // namespace
}  // namespace tessera
