// `tessera top`: allocation and utilisation per node and namespace from /metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands/submit_command.h"
#include "cli/commands/top_command.h"
#include "common/node_annotations.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

class TopTest : public CliTest {};

TEST_F(TopTest, WithoutNodesSaysHowToAddOne) {
  CommandRun r = Run(RunTop);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("No nodes: start an agent"));
  EXPECT_THAT(r.out, HasSubstr("No namespace holds GPUs or waits for them."));
}

TEST_F(TopTest, NodesAndNamespacesWithAllocationAndUtilisation) {
  RegisterNode("gpu-1", "4xA100-80GB");
  SubmitOptions submit;
  submit.name = "nb";
  submit.queue = "default";
  submit.gpu = "2";
  submit.command = {"sleep", "600"};
  ASSERT_EQ(Run([&](const CommandContext& c) { return RunSubmit(c, submit); }).rc, 0);
  // The agent's sample, as it publishes it: every device 80 % busy, 1 GiB used on device 0.
  ApiClient admin = Admin();
  const nlohmann::json patch{
      {"metadata",
       {{"annotations",
         {{std::string(kGpuUsageAnnotation),
           R"([{"index":0,"utilizationPercent":80,"memoryUsedBytes":1073741824},)"
           R"({"index":1,"utilizationPercent":80,"memoryUsedBytes":0},)"
           R"({"index":2,"utilizationPercent":80,"memoryUsedBytes":0},)"
           R"({"index":3,"utilizationPercent":80,"memoryUsedBytes":0}])"}}}}}};
  auto p = admin.Request("PATCH", "/api/v1/nodes/gpu-1", patch.dump(), "application/merge-patch+json");
  ASSERT_TRUE(p && p->status == 200) << (p ? p->body : p.error().ToString());
  CommandRun r;
  ASSERT_TRUE(Eventually([&] {
    r = Run(RunTop);
    return r.out.find("1.6") != std::string::npos && r.out.find("80%") != std::string::npos;
  })) << r.out;
  const auto rows = ParseTable(r.out.substr(0, r.out.find("\n\n")));
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].at("NODE"), "gpu-1");
  EXPECT_EQ(rows[0].at("READY"), "True");
  EXPECT_EQ(rows[0].at("GPUS"), "4");
  EXPECT_EQ(rows[0].at("ALLOCATED"), "2");
  EXPECT_EQ(rows[0].at("UTILISATION"), "80%");
  EXPECT_EQ(rows[0].at("GPU MEMORY"), "1.0Gi");
  const auto teams = ParseTable(r.out.substr(r.out.find("\n\n") + 2));
  ASSERT_EQ(teams.size(), 1u) << r.out;
  EXPECT_EQ(teams[0].at("NAMESPACE"), "default");
  EXPECT_EQ(teams[0].at("ALLOCATED GPUS"), "2");
  EXPECT_EQ(teams[0].at("USED GPUS"), "1.6");  // 2 GPUs x 80 %
  EXPECT_EQ(teams[0].at("PENDING"), "0");
}

}  // namespace
}  // namespace tessera
