// `tessera rollout undo isvc/NAME` and `tessera describe isvc`: an
// InferenceService's template goes back to its last fully ready revision
// (status.stableTemplate, as the controller keeps it); with none, an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands/describe_command.h"
#include "cli/commands/rollout_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr const char* kIsvc = "/apis/tessera.dev/v1/namespaces/default/inferenceservices/llm";

constexpr const char* kManifest = R"(apiVersion: tessera.dev/v1
kind: InferenceService
metadata:
  name: llm
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: server
          command: ["serve", "v2"]
)";

class RolloutTest : public CliTest {};

TEST_F(RolloutTest, UndoPutsTheStableTemplateBackOrSaysThereIsNone) {
  ASSERT_EQ(ApplyText(kManifest).rc, 0);
  ASSERT_TRUE(Eventually([&] { return GetJson(kIsvc)["status"].contains("revision"); }));
  CommandRun none = Run([](const CommandContext& c) { return RunRolloutUndo(c, "isvc/llm"); });
  EXPECT_EQ(none.rc, 1);
  EXPECT_THAT(none.err, HasSubstr("was ever fully ready: nothing to roll back to"));
  CommandRun wrong = Run([](const CommandContext& c) { return RunRolloutUndo(c, "deployment/llm"); });
  EXPECT_EQ(wrong.rc, 2);
  EXPECT_THAT(wrong.err, HasSubstr("write isvc/NAME"));

  // As the controller records a revision that was fully ready (v1's).
  json isvc = GetJson(kIsvc);
  isvc["status"]["stableRevision"] = "v1v1v1v1v1";
  isvc["status"]["stableTemplate"] = {{"spec", {{"containers", {{{"name", "server"}, {"command", {"serve", "v1"}}}}}}}};
  auto put = Admin().Request("PUT", std::string(kIsvc) + "/status", isvc.dump());
  ASSERT_TRUE(put.has_value());
  ASSERT_EQ(put->status, 200) << put->body;
  CommandRun undo = Run([](const CommandContext& c) { return RunRolloutUndo(c, "isvc/llm"); });
  EXPECT_EQ(undo.rc, 0) << undo.err;
  EXPECT_EQ(undo.out, "inferenceservice.tessera.dev/llm rolled back\n");
  EXPECT_TRUE(Eventually([&] {
    const json now = GetJson(kIsvc);
    return now["spec"]["template"]["spec"]["containers"][0]["command"][1] == "v1" &&
           !now["metadata"].value("annotations", json::object()).contains("tessera.dev/rollback");
  })) << GetJson(kIsvc).dump();
}

TEST_F(RolloutTest, DescribeShowsTheRevisionsAndWhyAReplicaWaits) {
  ASSERT_EQ(ApplyText(kManifest).rc, 0);
  ASSERT_TRUE(Eventually([&] { return GetJson(kIsvc)["status"].contains("message"); }));
  CommandRun r = Run([](const CommandContext& c) { return RunDescribe(c, {.args = {"isvc", "llm"}}); });
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Revisions:"));
  EXPECT_THAT(r.out, HasSubstr("Replicas:"));
  EXPECT_THAT(r.out, HasSubstr("Workload"));
  EXPECT_THAT(r.out, HasSubstr("Pending: "));  // no node registered: it waits, in the scheduler's words
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Stable Template")));
}

}  // namespace
}  // namespace tessera
