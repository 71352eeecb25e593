// The real kubectl against a real server over HTTPS: discovery, tables (wide,
// yaml, json, name), errors worded as kubectl prints them for a Kubernetes
// apiserver, auth can-i and whoami, watches, and the kubeconfig that
// `tessera kubeconfig` writes. Skipped, saying so, only where kubectl is not
// installed (it is on the development machines and in CI).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "client/api_client.h"
#include "api/kinds.h"
#include "client/kubeconfig.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/read_file.h"
#include "tests/testing/seed_dir.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/team_users.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct KubectlRun {
  int rc = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

class KubectlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { has_kubectl_ = std::system("kubectl version --client >/dev/null 2>&1") == 0; }
  void SetUp() override {
    if (!has_kubectl_) GTEST_SKIP() << "kubectl is not installed";
    dir_ = testing::FreshTestDir("tessera-kubectl");
    std::ofstream(dir_ / "tokens.csv") << testing::kTeamUsersTokenFile;
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    cert_ = testing::WriteSelfSignedCert(dir_, "server");
    ASSERT_FALSE(cert_.cert.empty());
    options.http.tls_cert_file = cert_.cert;
    options.http.tls_key_file = cert_.key;
    server_ = testing::StartLocalServer((dir_ / "server").string(), options);
    ASSERT_NE(server_, nullptr);
    admin_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token(),
                                         TlsClientOptions{.certificate_authority = cert_.cert});
    ASSERT_NO_FATAL_FAILURE(testing::CreateTeamUsers(*admin_, "team-a"));
    for (const auto& [user, token] : {std::pair{"admin", server_->admin_token()}, std::pair{"erin", std::string("erin-token")},
                                      std::pair{"bob", std::string("bob-token")}}) {
      ClientConfig config{.server = server_->url(), .token = token,
                          .tls = {.certificate_authority = cert_.cert}};
      auto text = KubeconfigYaml(config, {.name = user, .ns = user == std::string("admin") ? "default" : "team-a"});
      ASSERT_TRUE(text.has_value()) << text.error().ToString();
      std::ofstream(dir_ / (std::string(user) + ".kubeconfig")) << *text;
    }
  }
  void TearDown() override {
    admin_.reset();
    server_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // kubectl as `user` (admin, erin or bob), with its stdout and stderr apart.
  KubectlRun Kubectl(const std::string& user, const std::string& args, const std::string& stdin_text = "") {
    const fs::path out = dir_ / "kubectl.out", err = dir_ / "kubectl.err", in = dir_ / "kubectl.in";
    std::ofstream(in) << stdin_text;
    const std::string command = "kubectl --kubeconfig " + (dir_ / (user + ".kubeconfig")).string() + " " + args +
                                " <" + in.string() + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(command.c_str());
    return KubectlRun{.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1, .out = testing::ReadFile(out.string()),
               .err = testing::ReadFile(err.string())};
  }
  static bool Eventually(const std::function<bool()>& condition) {
    for (int i = 0; i < 200; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  void Create(const std::string& path, const json& object) {
    auto r = admin_->Request("POST", path, object.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  }

  static inline bool has_kubectl_ = false;
  fs::path dir_;
  testing::CertFiles cert_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> admin_;
};

TEST_F(KubectlTest, DiscoveryListsEveryKindWithItsShortNames) {
  KubectlRun versions = Kubectl("admin", "api-versions");
  ASSERT_EQ(versions.rc, 0) << versions.err;
  for (const char* v : {"v1", "batch/v1", "kueue.x-k8s.io/v1beta1", "tessera.dev/v1", "rbac.authorization.k8s.io/v1"}) {
    EXPECT_NE(versions.out.find(std::string(v) + "\n"), std::string::npos) << v << "\n" << versions.out;
  }
  KubectlRun resources = Kubectl("admin", "api-resources");
  ASSERT_EQ(resources.rc, 0) << resources.err;
  EXPECT_NE(resources.out.find("SHORTNAMES"), std::string::npos) << resources.out;
  for (const char* line : {"clusterqueues", "workloads", "notebooks", "inferenceservices"}) {
    EXPECT_NE(resources.out.find(line), std::string::npos) << line << "\n" << resources.out;
  }
  KubectlRun version = Kubectl("admin", "version");
  EXPECT_EQ(version.rc, 0) << version.err;
  EXPECT_NE(version.out.find("Server Version: v1.32"), std::string::npos) << version.out;
}

TEST_F(KubectlTest, GetPrintsTheKindsColumnsInEveryForm) {
  KubectlRun cq = Kubectl("admin", "get cq");
  ASSERT_EQ(cq.rc, 0) << cq.err;
  EXPECT_TRUE(cq.out.starts_with("NAME      COHORT   STRATEGY         PENDING WORKLOADS   ADMITTED WORKLOADS   AGE\n"))
      << cq.out;
  EXPECT_NE(cq.out.find("default"), std::string::npos) << cq.out;
  KubectlRun name = Kubectl("admin", "get clusterqueues -o name");
  EXPECT_EQ(name.out, "clusterqueue.kueue.x-k8s.io/default\n") << name.err;
  KubectlRun yaml = Kubectl("admin", "get cq default -o yaml");
  EXPECT_NE(yaml.out.find("kind: ClusterQueue"), std::string::npos) << yaml.out << yaml.err;
  KubectlRun js = Kubectl("admin", "get priorityclasses -o json");
  ASSERT_EQ(js.rc, 0) << js.err;
  const json list = json::parse(js.out, nullptr, false);
  ASSERT_TRUE(list.is_object()) << js.out;
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"].size(), 4u) << js.out;
  // A pending workload: where it waits and why, and the scheduler's words with -o wide.
  Create("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/workloads", json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "train"},
    "spec": {"queueName": "nowhere", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
      "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}}]}})"));
  KubectlRun wl = Kubectl("erin", "get wl");
  ASSERT_EQ(wl.rc, 0) << wl.err;
  EXPECT_TRUE(wl.out.starts_with("NAME    QUEUE     RESERVED IN   ADMITTED   FINISHED   POSITION   REASON"))
      << wl.out;
  KubectlRun wide = Kubectl("erin", "get workloads -o wide");
  EXPECT_NE(wide.out.find("MESSAGE"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("PRIORITY"), std::string::npos) << wide.out;
  // kubectl get all: what a team runs.
  KubectlRun all = Kubectl("erin", "get all");
  EXPECT_EQ(all.rc, 0) << all.err;
}

// Every kind the server stores, by its qualified resource name, in each form.
TEST_F(KubectlTest, EveryKindIsListedInEveryForm) {
  for (const KindInfo& k : AllKinds()) {
    if (!k.stored) continue;
    const std::string resource = k.group.empty() ? std::string(k.plural) : std::string(k.plural) + "." + std::string(k.group);
    for (const char* form : {"", " -o wide", " -o yaml", " -o json", " -o name"}) {
      KubectlRun got = Kubectl("admin", "get -A " + resource + form);
      EXPECT_EQ(got.rc, 0) << resource << form << ": " << got.err;
      EXPECT_EQ(got.err.find("error"), std::string::npos) << resource << form << ": " << got.err;
    }
  }
}

TEST_F(KubectlTest, ErrorsReadAsTheyDoAgainstKubernetes) {
  KubectlRun missing = Kubectl("erin", "get pod nope");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_EQ(missing.err, "Error from server (NotFound): pods \"nope\" not found\n");
  KubectlRun forbidden = Kubectl("bob", "get pods -n team-a");
  EXPECT_EQ(forbidden.rc, 1);
  EXPECT_EQ(forbidden.err,
            "Error from server (Forbidden): pods is forbidden: User \"bob\" cannot list resource \"pods\" in API "
            "group \"\" in the namespace \"team-a\"\n");
  KubectlRun unknown = Kubectl("erin", "get gizmos");
  EXPECT_EQ(unknown.rc, 1);
  EXPECT_NE(unknown.err.find("the server doesn't have a resource type \"gizmos\""), std::string::npos) << unknown.err;
  const std::string cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\"}\n";
  EXPECT_EQ(Kubectl("erin", "create -f -", cm).rc, 0);
  KubectlRun exists = Kubectl("erin", "create -f -", cm);
  EXPECT_EQ(exists.rc, 1);
  EXPECT_EQ(exists.err, "Error from server (AlreadyExists): error when creating \"STDIN\": configmaps \"settings\" "
                        "already exists\n");
}

TEST_F(KubectlTest, AuthCanIAndWhoAmI) {
  KubectlRun yes = Kubectl("erin", "auth can-i create jobs");
  EXPECT_EQ(yes.rc, 0) << yes.err;
  EXPECT_EQ(yes.out, "yes\n");
  KubectlRun no = Kubectl("erin", "auth can-i create jobs -n team-b");
  EXPECT_EQ(no.rc, 1);
  EXPECT_EQ(no.out, "no\n") << no.err;
  KubectlRun who = Kubectl("erin", "auth whoami");
  EXPECT_EQ(who.rc, 0) << who.err;
  EXPECT_NE(who.out.find("erin"), std::string::npos) << who.out;
}

// The seed's manifests: created, applied again unchanged, and a changed field
// configured (a built-in kind by strategic merge patch, a CRD by merge patch).
TEST_F(KubectlTest, TheSeedAppliesThenIsUnchangedThenConfigured) {
  const std::string seed = testing::SeedDir().string();
  KubectlRun first = Kubectl("admin", "apply -f " + seed);
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.out.find("clusterqueue.kueue.x-k8s.io/gpu-cluster-queue created"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("job.batch.volcano.sh/distributed-llm-training created"), std::string::npos) << first.out;
  KubectlRun again = Kubectl("admin", "apply -f " + seed);
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.out.find("created"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("configured"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("namespace/team-nlp unchanged"), std::string::npos) << again.out;
  // A changed field of a built-in kind and of a CRD.
  const fs::path changed = dir_ / "seed";
  fs::create_directories(changed);
  for (const auto& entry : fs::directory_iterator(seed)) {
    if (entry.path().extension() == ".yaml") fs::copy_file(entry.path(), changed / entry.path().filename());
  }
  auto edit = [&](const std::string& file, const std::string& from, const std::string& to) {
    std::string text = testing::ReadFile(changed / file);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(changed / file) << text;
  };
  edit("05-priorityclasses.yaml", "value: 1000\n", "value: 1001\n");
  edit("06-kueue.yaml", "withinClusterQueue: LowerPriority", "withinClusterQueue: Never");
  KubectlRun third = Kubectl("admin", "apply -f " + changed.string());
  ASSERT_EQ(third.rc, 0) << third.err;
  EXPECT_NE(third.out.find("priorityclass.scheduling.k8s.io/exploratory configured"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("clusterqueue.kueue.x-k8s.io/gpu-cluster-queue configured"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("namespace/team-nlp unchanged"), std::string::npos) << third.out;
  EXPECT_EQ(Kubectl("admin", "get cq gpu-cluster-queue -o jsonpath={.spec.preemption.withinClusterQueue}").out, "Never");
  // Every kind the seed made, in every form, and described.
  for (const char* kind : {"namespaces", "resourcequotas", "roles", "networkpolicies", "priorityclasses",
                           "clusterqueues", "localqueues", "jobs.batch.volcano.sh", "workloads"}) {
    for (const char* form : {"", " -o wide", " -o yaml", " -o json", " -o name"}) {
      KubectlRun got = Kubectl("admin", std::string("get -A ") + kind + form);
      EXPECT_EQ(got.rc, 0) << kind << form << ": " << got.err;
      EXPECT_FALSE(got.out.empty()) << kind << form;
    }
    KubectlRun described = Kubectl("admin", std::string("describe -A ") + kind);
    EXPECT_EQ(described.rc, 0) << kind << ": " << described.err;
    EXPECT_NE(described.out.find("Name:"), std::string::npos) << kind << ": " << described.out;
  }
}

// Unknown fields are refused by the server (kubectl leaves validation to it:
// the OpenAPI documents say the server takes fieldValidation), with the path.
TEST_F(KubectlTest, AnUnknownFieldIsRefusedAtItsPath) {
  KubectlRun bad = Kubectl("erin", "apply -f -",
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\ndatta: {}\n");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "The ConfigMap \"c\" is invalid: datta: unknown field; did you mean \"data\"?\n");
  // --validate=warn: the unknown field is dropped and said; --validate=false: dropped.
  KubectlRun warned = Kubectl("erin", "apply --validate=warn -f -",
                              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata: {a: \"1\"}\ndatta: {}\n");
  EXPECT_EQ(warned.rc, 0) << warned.err;
  EXPECT_NE(warned.err.find("Warning: unknown field \"datta\""), std::string::npos) << warned.err;
  KubectlRun ignored = Kubectl("erin", "apply --validate=false -f -",
                               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: i}\ndata: {a: \"1\"}\ndatta: {}\n");
  EXPECT_EQ(ignored.rc, 0) << ignored.err;
  EXPECT_EQ(ignored.err, "");
  EXPECT_EQ(Kubectl("erin", "get cm i -o jsonpath={.data.a}").out, "1");
  KubectlRun explain = Kubectl("admin", "explain clusterqueue.spec.resourceGroups");
  ASSERT_EQ(explain.rc, 0) << explain.err;
  EXPECT_NE(explain.out.find("coveredResources"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("groups of resources"), std::string::npos) << explain.out;
}

TEST_F(KubectlTest, ServerSideApplyReportsConflictsAndForceTakesThem) {
  const std::string cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\", b: \"2\"}\n";
  ASSERT_EQ(Kubectl("erin", "apply -f -", cm).rc, 0);
  const std::string changed = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"9\"}\n";
  KubectlRun conflict = Kubectl("erin", "apply --server-side -f -", changed);
  EXPECT_EQ(conflict.rc, 1);
  EXPECT_NE(conflict.err.find("Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a"),
            std::string::npos)
      << conflict.err;
  KubectlRun forced = Kubectl("erin", "apply --server-side --force-conflicts -f -", changed);
  EXPECT_EQ(forced.rc, 0) << forced.err;
  EXPECT_EQ(forced.out, "configmap/settings serverside-applied\n");
  EXPECT_EQ(Kubectl("erin", "get cm settings -o jsonpath={.data.a}").out, "9");
  KubectlRun fields = Kubectl("erin", "get cm settings -o yaml --show-managed-fields");
  EXPECT_NE(fields.out.find("operation: Apply"), std::string::npos) << fields.out;
}

TEST_F(KubectlTest, WatchDeleteWaitScaleAndPatches) {
  Create("/apis/batch/v1/namespaces/team-a/jobs", json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "j"}, "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "main", "command": ["true"]}]}}}})"));
  // get -w sees a change as a new row.
  const fs::path watch_out = dir_ / "watch.out";
  const std::string watch = "timeout 5 kubectl --kubeconfig " + (dir_ / "erin.kubeconfig").string() +
                            " get job j -w --output-watch-events >" + watch_out.string() + " 2>&1 &";
  ASSERT_EQ(std::system(watch.c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return testing::ReadFile(watch_out).find("ADDED") != std::string::npos; }))
      << testing::ReadFile(watch_out);
  EXPECT_EQ(Kubectl("erin", "label job j seen=yes").rc, 0);
  EXPECT_TRUE(Eventually([&] { return testing::ReadFile(watch_out).find("MODIFIED") != std::string::npos; }))
      << testing::ReadFile(watch_out);
  // scale: a Job's parallelism.
  KubectlRun scaled = Kubectl("erin", "scale job j --replicas=3");
  EXPECT_EQ(scaled.out, "job.batch/j scaled\n") << scaled.err;
  EXPECT_EQ(Kubectl("erin", "get job j -o jsonpath={.spec.parallelism}").out, "3");
  // The three patch types.
  EXPECT_EQ(Kubectl("erin", "patch job j --type=json -p '[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"1\"}]'").rc, 0);
  EXPECT_EQ(Kubectl("erin", "patch job j --type=merge -p '{\"metadata\":{\"labels\":{\"b\":\"2\"}}}'").rc, 0);
  EXPECT_EQ(Kubectl("erin", "patch job j -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\",\"args\":[\"x\"]}]}}}}'").rc, 0);
  const json job = json::parse(Kubectl("erin", "get job j -o json").out);
  EXPECT_EQ(job["metadata"]["labels"]["a"], "1");
  EXPECT_EQ(job["metadata"]["labels"]["b"], "2");
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["command"], json::array({"true"})) << "merged by name";
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["args"], json::array({"x"}));
  // delete --wait returns once it is gone.
  KubectlRun deleted = Kubectl("erin", "delete job j --wait --timeout=20s");
  EXPECT_EQ(deleted.rc, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "job.batch \"j\" deleted\n");
  EXPECT_EQ(Kubectl("erin", "get job j").rc, 1);
}

TEST_F(KubectlTest, TheKubeconfigNeedsHttpsAndAToken) {
  auto plain = KubeconfigYaml(ClientConfig{.server = "http://127.0.0.1:7070", .token = "t"}, {});
  ASSERT_FALSE(plain.has_value());
  EXPECT_NE(plain.error().message().find("https://"), std::string::npos);
  auto tokenless = KubeconfigYaml(ClientConfig{.server = "https://127.0.0.1:7070"}, {});
  ASSERT_FALSE(tokenless.has_value());
  EXPECT_NE(tokenless.error().message().find("token"), std::string::npos);
  KubectlRun context = Kubectl("erin", "config view --minify -o jsonpath={.contexts[0].context.namespace}");
  EXPECT_EQ(context.out, "team-a") << context.err;
}

}  // namespace
}  // namespace tessera
