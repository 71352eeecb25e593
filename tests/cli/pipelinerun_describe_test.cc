// `tessera describe pipelinerun`: the DAG drawn from the run's recorded status.
#include "cli/commands/pipelinerun_describe.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using nlohmann::json;

json Step(const std::string& name, std::vector<std::string> depends_on = {}) {
  json step{{"name", name}, {"template", {{"spec", {{"containers", {{{"name", "main"}, {"command", {"true"}}}}}}}}}};
  if (!depends_on.empty()) step["dependsOn"] = depends_on;
  return step;
}

TEST(PipelineRunDescribeTest, TheDagIsDrawnWithEachNodesState) {
  // a succeeded, b failed, c (after b) omitted.
  json run{{"status",
            {{"pipelineSpec", {{"steps", {Step("a"), Step("b", {"a"}), Step("c", {"b"})}}}},
             {"parameters", json::object()},
             {"nodes",
              {{"a", {{"phase", "Succeeded"}, {"attempts", 1}}},
               {"b", {{"phase", "Failed"}, {"attempts", 1}, {"message", "exit code 1"}}},
               {"c", {{"phase", "Omitted"}, {"message", "upstream b failed"}}}}}}}};
  const std::vector<std::string> lines = PipelineRunDagLines(run);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a        Succeeded  attempt 1/1");
  EXPECT_EQ(lines[1], "└─ b     Failed     attempt 1/1: exit code 1");
  EXPECT_EQ(lines[2], "   └─ c  Omitted    upstream b failed");
}

TEST(PipelineRunDescribeTest, ARunNotStartedSaysWhy) {
  // No recorded spec yet: the Pipeline it names does not exist.
  json run{{"status", {{"phase", "Pending"}, {"message", "spec.pipelineRef.name: Pipeline \"p\" not found"}}}};
  EXPECT_EQ(PipelineRunDagLines(run),
            std::vector<std::string>{"<not started: spec.pipelineRef.name: Pipeline \"p\" not found>"});
}

}  // namespace
}  // namespace tessera
