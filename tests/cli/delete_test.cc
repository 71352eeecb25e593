// `tessera delete`: by name, by TYPE/NAME, by selector and from manifests.
#include <gtest/gtest.h>

#include "cli/commands/delete_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

class DeleteTest : public CliTest {
 protected:
  CommandRun Delete(DeleteOptions options, const std::string& ns = "default") {
    return Run([&](const CommandContext& ctx) { return RunDelete(ctx, options); }, ns);
  }
};

// Deleting by name prints kind/name deleted and the object is gone.
TEST_F(DeleteTest, ByName) {
  ApplySeed();
  CommandRun r = Delete({.args = {"localqueue", "team-nlp-queue"}}, "team-nlp");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "localqueue.kueue.x-k8s.io/team-nlp-queue deleted\n");
  EXPECT_TRUE(GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/localqueues/team-nlp-queue").is_null());
  CommandRun typed = Delete({.args = {"pc/exploratory", "pc/scheduled-training"}});
  EXPECT_EQ(typed.out,
            "priorityclass.scheduling.k8s.io/exploratory deleted\npriorityclass.scheduling.k8s.io/scheduled-training "
            "deleted\n");
}

// NotFound is an error (exit 1, the server's message) unless --ignore-not-found;
// the other names are still deleted.
TEST_F(DeleteTest, MissingObjectIsAnErrorUnlessIgnored) {
  ApplySeed();
  CommandRun r = Delete({.args = {"pc", "nope", "exploratory"}});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): priorityclasses.scheduling.k8s.io \"nope\" not found\n");
  EXPECT_EQ(r.out, "priorityclass.scheduling.k8s.io/exploratory deleted\n");
  CommandRun ignored = Delete({.args = {"pc", "nope"}, .ignore_not_found = true});
  EXPECT_EQ(ignored.rc, 0);
  EXPECT_EQ(ignored.out, "");
  EXPECT_EQ(ignored.err, "");
}

// delete -f deletes the manifests' objects, each in its own namespace.
TEST_F(DeleteTest, FromManifests) {
  ApplySeed();
  CommandRun r = Delete({.files = {(SeedDir() / "06-kueue.yaml").string(), (SeedDir() / "07-volcano-job.yaml").string()}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "clusterqueue.kueue.x-k8s.io/gpu-cluster-queue deleted\n"
            "localqueue.kueue.x-k8s.io/team-nlp-queue deleted\n"
            "job.batch.volcano.sh/distributed-llm-training deleted\n");
}

// -l deletes what the selector matches in the namespace.
TEST_F(DeleteTest, BySelector) {
  ASSERT_EQ(ApplyText("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: a\n"
                      "  labels: {tier: low}\nvalue: 1\n---\n"
                      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: b\nvalue: 2\n")
                .rc,
            0);
  CommandRun r = Delete({.args = {"priorityclasses"}, .selector = "tier=low"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "priorityclass.scheduling.k8s.io/a deleted\n");
  EXPECT_FALSE(GetJson("/apis/scheduling.k8s.io/v1/priorityclasses/b").is_null());
}

// A kind without names or selector, or both -f and names, are usage errors.
TEST_F(DeleteTest, UsageErrors) {
  EXPECT_EQ(Delete({.args = {"pods"}}).rc, 2);
  EXPECT_EQ(Delete({}).rc, 2);
  EXPECT_EQ(Delete({.args = {"pods", "x"}, .files = {"a.yaml"}}).rc, 2);
  EXPECT_EQ(Delete({.args = {"gizmo", "x"}}).rc, 2);
}

}  // namespace
}  // namespace tessera
