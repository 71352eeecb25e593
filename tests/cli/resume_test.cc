// `tessera resume`: a suspended workload (by its name or its Job's) queues again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands/resume_command.h"
#include "cli/commands/submit_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

class ResumeTest : public CliTest {};

TEST_F(ResumeTest, ByJobNameSetsTheWorkloadActive) {
  SubmitOptions submit;
  submit.name = "nb1";
  submit.queue = "default";
  submit.type = "notebook";
  submit.command = {"jupyter", "lab"};
  ASSERT_EQ(Run([&](const CommandContext& c) { return RunSubmit(c, submit); }).rc, 0);
  ASSERT_TRUE(Eventually([&] {
    return !GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-nb1").is_null();
  }));
  CommandRun r = Run([](const CommandContext& c) { return RunResume(c, "nb1"); });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/job-nb1 resumed\n");
  const auto w = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-nb1");
  EXPECT_EQ(w["spec"]["active"], true);
  EXPECT_EQ(w["metadata"]["annotations"]["tessera.dev/type"], "notebook");  // from the Job
}

TEST_F(ResumeTest, UnknownNameIsAnError) {
  CommandRun r = Run([](const CommandContext& c) { return RunResume(c, "ghost"); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("no workload \"ghost\" (nor one for a job of that name) in namespace default"));
}

}  // namespace
}  // namespace tessera
