// `tessera apply`: create, update or leave alone each object of the manifests,
// with kubectl's words for each, and failures reported per document.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands/apply_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using nlohmann::json;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}


class ApplyTest : public CliTest {
 protected:
  CommandRun Apply(std::vector<std::string> files, const std::string& ns = "default", const std::string& in = "") {
    return Run([&](const CommandContext& ctx) { return RunApply(ctx, {.files = files}); }, ns, in);
  }
};

// The seed (7 files, 13 objects) applies unchanged: every object is created,
// in file order; applying it again changes nothing and says so per object.
TEST_F(ApplyTest, SeedIsCreatedThenUnchanged) {
  ASSERT_FALSE(SeedDir().empty());
  CommandRun first = Apply({SeedDir().string()});
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_EQ(first.err, "");
  const std::vector<std::string> created = Lines(first.out);
  // 3 namespaces + 2 quotas + 1 role + 1 network policy + 3 priority classes + 1 CQ + 1 LQ + 1 Volcano job = 13
  ASSERT_EQ(created.size(), 13u) << first.out;
  for (const std::string& line : created) EXPECT_TRUE(line.ends_with(" created")) << line;
  EXPECT_EQ(created.front(), "namespace/ml-research created");
  EXPECT_NE(first.out.find("clusterqueue.kueue.x-k8s.io/gpu-cluster-queue created\n"), std::string::npos);
  EXPECT_NE(first.out.find("localqueue.kueue.x-k8s.io/team-nlp-queue created\n"), std::string::npos);
  EXPECT_NE(first.out.find("priorityclass.scheduling.k8s.io/exploratory created\n"), std::string::npos);
  EXPECT_EQ(created.back(), "job.batch.volcano.sh/distributed-llm-training created");

  CommandRun second = Apply({SeedDir().string()});
  ASSERT_EQ(second.rc, 0) << second.err;
  const std::vector<std::string> again = Lines(second.out);
  ASSERT_EQ(again.size(), 13u) << second.out;
  for (size_t i = 0; i < again.size(); ++i) {
    // Same object, same order, "unchanged" instead of "created".
    EXPECT_EQ(again[i], created[i].substr(0, created[i].size() - std::string("created").size()) + "unchanged");
  }
}

// A changed field makes the object "configured", and the server keeps the change.
TEST_F(ApplyTest, ChangedObjectIsConfigured) {
  const std::string pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: nightly\n"
                         "value: 10\n";
  ASSERT_EQ(Apply({"-"}, "default", pc).out, "priorityclass.scheduling.k8s.io/nightly created\n");
  CommandRun changed = Apply({"-"}, "default", pc + "description: nightly batch\n");
  EXPECT_EQ(changed.rc, 0) << changed.err;
  EXPECT_EQ(changed.out, "priorityclass.scheduling.k8s.io/nightly configured\n");
  EXPECT_EQ(GetJson("/apis/scheduling.k8s.io/v1/priorityclasses/nightly")["description"], "nightly batch");
  // A label counts as a change too; the same text again does not.
  CommandRun labelled = Apply({"-"}, "default",
                              "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: nightly\n"
                              "  labels: {tier: low}\nvalue: 10\ndescription: nightly batch\n");
  EXPECT_EQ(labelled.out, "priorityclass.scheduling.k8s.io/nightly configured\n");
  EXPECT_EQ(GetJson("/apis/scheduling.k8s.io/v1/priorityclasses/nightly")["metadata"]["labels"]["tier"], "low");
}

// A Node's manifest names no pod range; the server gives it one, which may
// not change once given. Applying the manifest again keeps that range (as
// kubectl's merge keeps fields a manifest never set): unchanged, and then
// configured for a new label, never refused.
TEST_F(ApplyTest, ANodeAppliedAgainKeepsItsPodCidr) {
  const std::string node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n";
  ASSERT_EQ(Apply({"-"}, "default", node).out, "node/gpu-1 created\n");
  std::string cidr;
  ASSERT_TRUE(Eventually([&] {
    const json n = GetJson("/api/v1/nodes/gpu-1");
    cidr = n.is_object() ? n.value("spec", json::object()).value("podCIDR", "") : "";
    return !cidr.empty();
  }));
  CommandRun again = Apply({"-"}, "default", node);
  EXPECT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.out, "node/gpu-1 unchanged\n");
  CommandRun labelled = Apply({"-"}, "default", node + "  labels: {zone: a}\n");
  EXPECT_EQ(labelled.rc, 0) << labelled.err;
  EXPECT_EQ(labelled.out, "node/gpu-1 configured\n");
  const json stored = GetJson("/api/v1/nodes/gpu-1");
  ASSERT_TRUE(stored.is_object());
  EXPECT_EQ(stored.value("spec", json::object()).value("podCIDR", ""), cidr);
  EXPECT_EQ(stored["metadata"].value("labels", json::object()).value("zone", ""), "a");
}

// A Service's manifest names no address; the server allocates one and fills
// in its defaults. Applied again it is unchanged, and a changed port keeps
// the address.
TEST_F(ApplyTest, AServiceAppliedAgainKeepsItsClusterIp) {
  const std::string svc = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n"
                          "  ports:\n  - port: 80\n";
  ASSERT_EQ(Apply({"-"}, "default", svc).out, "service/web created\n");
  const std::string ip = GetJson("/api/v1/namespaces/default/services/web")["spec"].value("clusterIP", "");
  ASSERT_FALSE(ip.empty());
  EXPECT_EQ(Apply({"-"}, "default", svc).out, "service/web unchanged\n");
  CommandRun changed = Apply({"-"}, "default", svc + "    targetPort: 8080\n");
  EXPECT_EQ(changed.rc, 0) << changed.err;
  EXPECT_EQ(changed.out, "service/web configured\n");
  const json stored = GetJson("/api/v1/namespaces/default/services/web");
  EXPECT_EQ(stored["spec"].value("clusterIP", ""), ip);
  EXPECT_EQ(stored["spec"]["ports"][0]["targetPort"], 8080);
}

// An object without metadata.namespace goes to -n.
TEST_F(ApplyTest, ObjectWithoutNamespaceGoesToTheNamespaceFlag) {
  ASSERT_EQ(Apply({"-"}, "default", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n").rc, 0);
  CommandRun r = Apply({"-"}, "team-a",
                       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
                       "spec:\n  clusterQueue: default\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "localqueue.kueue.x-k8s.io/q created\n");
  EXPECT_EQ(GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues/q")["spec"]["clusterQueue"], "default");
}

// With -n given, a manifest naming another namespace is refused, as kubectl does.
TEST_F(ApplyTest, ExplicitNamespaceMustMatchTheManifests) {
  CommandContext ctx = Context("default");
  ctx.ns_explicit = true;
  CommandRun r = RunWith(ctx, [](const CommandContext& c) { return RunApply(c, {.files = {"-"}}); },
                         "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
                         "  namespace: team-b\nspec:\n  clusterQueue: default\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("the namespace from the provided object \"team-b\" does not match the namespace \"default\""),
            std::string::npos)
      << r.err;
}

// A failed object is reported with its file, document and line and the
// server's message; the next object still applies; the exit code is 1.
TEST_F(ApplyTest, KeepsGoingAfterAFailedObject) {
  CommandRun r = Apply({"-"}, "default",
                       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
                       "  namespace: nowhere\nspec:\n  clusterQueue: default\n"
                       "---\n"
                       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: ok\nvalue: 1\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "priorityclass.scheduling.k8s.io/ok created\n");
  EXPECT_NE(r.err.find("Error from server (NotFound): error when creating \"STDIN\" document 1 (line 1): "
                       "namespaces \"nowhere\" not found\n"),
            std::string::npos)
      << r.err;
}

// The server's validation message reaches the user with the document's position.
TEST_F(ApplyTest, InvalidObjectShowsTheServersFieldPath) {
  CommandRun r = Apply({"-"}, "default",
                       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: a\nvalue: 1\n"
                       "---\n"
                       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: b\nvalu: 1\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error from server (Invalid): error when creating \"STDIN\" document 2 (line 7): "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("valu"), std::string::npos) << r.err;
}

// A directory applies its manifest files in name order (the namespace in a.yaml
// before the queue in b.yaml that needs it); other files are ignored.
TEST_F(ApplyTest, DirectoryAppliesManifestFilesInNameOrder) {
  const std::filesystem::path dir = dir_ / "manifests";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "b.yml") << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
                                  "  namespace: team-a\nspec:\n  clusterQueue: default\n";
  std::ofstream(dir / "a.json") << R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})";
  std::ofstream(dir / "notes.txt") << "not a manifest";
  CommandRun r = Apply({dir.string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "namespace/team-a created\nlocalqueue.kueue.x-k8s.io/q created\n");
}

// A path that does not exist is reported; the other -f arguments still apply.
TEST_F(ApplyTest, MissingPathIsReportedAndTheRestApplies) {
  CommandRun r = Apply({(dir_ / "missing.yaml").string(), "-"}, "default",
                       R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "namespace/x created\n");
  EXPECT_NE(r.err.find("missing.yaml\" does not exist"), std::string::npos) << r.err;
}

// apply without -f sends nothing and is a usage error.
TEST_F(ApplyTest, WithoutFilesIsAUsageError) {
  CommandRun r = Apply({});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-f"), std::string::npos);
}

}  // namespace
}  // namespace tessera
