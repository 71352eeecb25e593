// Tenancy over real HTTP on 127.0.0.1 with real tokens (DESIGN.md section 12):
// who may do what under Kubernetes RBAC, as kube-apiserver decides it. The
// seed's team Role, subresources and resourceNames, escalation prevention,
// live aggregation, read-your-writes of bindings, the self reviews, the node
// rules of an agent's credential, and what anonymous and unbound users get.
//
// Users come from a token-auth file (kube-apiserver's CSV); every one of them
// also has the group system:authenticated, so the default bindings
// (system:basic-user, system:discovery) apply to all of them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/manifest.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/read_file.h"
#include "tests/testing/seed_dir.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

// The token-auth file's users (token,user,uid,"groups").
constexpr const char* kDana = "dana-token";      // data-scientists: the seed's team Role and view, by group
constexpr const char* kTed = "ted-token";        // team-a-admins: ClusterRole admin in team-a, by name
constexpr const char* kNobody = "nobody-token";  // no group of its own, no binding
constexpr const char* kLogan = "logan-token";
constexpr const char* kStella = "stella-token";
constexpr const char* kNina = "nina-token";
constexpr const char* kCarol = "carol-token";
constexpr const char* kVera = "vera-token";
constexpr const char* kAda = "ada-token";
constexpr const char* kRita = "rita-token";
constexpr const char* kEve = "eve-token";
constexpr const char* kRoot = "root-token";
constexpr const char* kProm = "prom-token";  // system:monitoring: GET /metrics

constexpr const char* kTokenFileText =
    "dana-token,dana,uid-dana,\"data-scientists\"\n"
    "ted-token,ted,uid-ted,\"team-a-admins\"\n"
    "nobody-token,nobody,uid-nobody\n"
    "logan-token,logan,uid-logan\n"
    "stella-token,stella,uid-stella\n"
    "nina-token,nina,uid-nina\n"
    "carol-token,carol,uid-carol\n"
    "vera-token,vera,uid-vera\n"
    "ada-token,ada,uid-ada\n"
    "rita-token,rita,uid-rita\n"
    "eve-token,eve,uid-eve\n"
    "root-token,root,uid-root\n"
    "prom-token,prom,uid-prom,\"system:monitoring\"\n";

constexpr const char* kMergePatch = "application/merge-patch+json";

json Body(const ApiResponse& r) {
  json parsed = json::parse(r.body, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

std::string Message(const ApiResponse& r) { return Body(r).value("message", std::string()); }

// ---------------------------------------------------------------------------
// Builders.

// One rbac/v1 PolicyRule: Rule().Groups({"batch"}).Resources({"jobs"}).Verbs({"get"}).
class RuleBuilder {
 public:
  RuleBuilder& Groups(std::vector<std::string> groups) {
    rule_["apiGroups"] = std::move(groups);
    return *this;
  }
  RuleBuilder& Resources(std::vector<std::string> resources) {
    rule_["resources"] = std::move(resources);
    return *this;
  }
  RuleBuilder& Verbs(std::vector<std::string> verbs) {
    rule_["verbs"] = std::move(verbs);
    return *this;
  }
  RuleBuilder& Names(std::vector<std::string> names) {
    rule_["resourceNames"] = std::move(names);
    return *this;
  }
  RuleBuilder& Urls(std::vector<std::string> urls) {
    rule_["nonResourceURLs"] = std::move(urls);
    return *this;
  }
  const json& Build() const { return rule_; }

 private:
  json rule_ = json::object();
};

RuleBuilder Rule() { return RuleBuilder(); }

// A Role (In a namespace) or a ClusterRole.
class RoleBuilder {
 public:
  RoleBuilder(std::string kind, std::string name) {
    role_ = json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", std::move(kind)},
                 {"metadata", {{"name", std::move(name)}}},
                 {"rules", json::array()}};
  }
  RoleBuilder& In(std::string ns) {
    role_["metadata"]["namespace"] = std::move(ns);
    return *this;
  }
  RoleBuilder& Grant(const RuleBuilder& rule) {
    role_["rules"].push_back(rule.Build());
    return *this;
  }
  RoleBuilder& Label(const std::string& key, std::string value) {
    role_["metadata"]["labels"][key] = std::move(value);
    return *this;
  }
  // aggregationRule: the ClusterRoles labelled key="true".
  RoleBuilder& AggregateLabelled(const std::string& key) {
    role_["aggregationRule"]["clusterRoleSelectors"].push_back({{"matchLabels", {{key, "true"}}}});
    return *this;
  }
  json Build() const { return role_; }

 private:
  json role_;
};

RoleBuilder MakeRole(std::string name) { return RoleBuilder("Role", std::move(name)); }
RoleBuilder MakeClusterRole(std::string name) { return RoleBuilder("ClusterRole", std::move(name)); }

// A RoleBinding (In a namespace) or a ClusterRoleBinding.
class BindingBuilder {
 public:
  BindingBuilder(std::string kind, std::string name) {
    binding_ = json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", std::move(kind)},
                    {"metadata", {{"name", std::move(name)}}},
                    {"subjects", json::array()}};
  }
  BindingBuilder& In(std::string ns) {
    binding_["metadata"]["namespace"] = std::move(ns);
    return *this;
  }
  BindingBuilder& ToRole(std::string name) { return Ref("Role", std::move(name)); }
  BindingBuilder& ToClusterRole(std::string name) { return Ref("ClusterRole", std::move(name)); }
  BindingBuilder& User(std::string name) { return Subject("User", std::move(name)); }
  BindingBuilder& Group(std::string name) { return Subject("Group", std::move(name)); }
  json Build() const { return binding_; }

 private:
  BindingBuilder& Ref(std::string kind, std::string name) {
    binding_["roleRef"] = {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", std::move(kind)}, {"name", std::move(name)}};
    return *this;
  }
  BindingBuilder& Subject(std::string kind, std::string name) {
    binding_["subjects"].push_back(
        {{"kind", std::move(kind)}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", std::move(name)}});
    return *this;
  }
  json binding_;
};

BindingBuilder MakeRoleBinding(std::string name) { return BindingBuilder("RoleBinding", std::move(name)); }
BindingBuilder MakeClusterRoleBinding(std::string name) { return BindingBuilder("ClusterRoleBinding", std::move(name)); }

// A one-container pod, optionally bound to a node (only an admin may create it so).
class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    pod_ = json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", std::move(name)}, {"namespace", "default"}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers", json::array({{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "3600"}}}})}}}};
  }
  PodBuilder& In(std::string ns) {
    pod_["metadata"]["namespace"] = std::move(ns);
    return *this;
  }
  PodBuilder& OnNode(std::string node) {
    pod_["spec"]["nodeName"] = std::move(node);
    return *this;
  }
  json Build() const { return pod_; }

 private:
  json pod_;
};

PodBuilder MakePod(std::string name) { return PodBuilder(std::move(name)); }

// A batch/v1 Job of one pod.
class JobBuilder {
 public:
  explicit JobBuilder(std::string name) {
    job_ = json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", std::move(name)}, {"namespace", "default"}}},
                {"spec",
                 {{"template",
                   {{"spec",
                     {{"restartPolicy", "Never"},
                      {"containers",
                       json::array({{{"name", "train"}, {"image", "busybox"}, {"command", {"sleep", "1"}}}})}}}}}}}};
  }
  JobBuilder& In(std::string ns) {
    job_["metadata"]["namespace"] = std::move(ns);
    return *this;
  }
  json Build() const { return job_; }

 private:
  json job_;
};

JobBuilder MakeJob(std::string name) { return JobBuilder(std::move(name)); }

json MakeNamespace(const std::string& name) {
  return json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

json MakeNode(const std::string& name) {
  return json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
}

// A node's heartbeat Lease (in tessera-node-lease unless `ns` says otherwise).
json MakeLease(const std::string& node, const std::string& ns = "tessera-node-lease") {
  return json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", node}, {"namespace", ns}}},
              {"spec", {{"holderIdentity", node}, {"leaseDurationSeconds", 40}}}};
}

// A TokenRequest, bound to a pod when `pod` is set.
json MakeTokenRequest(const std::string& pod = "") {
  json request{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}};
  if (!pod.empty()) request["spec"]["boundObjectRef"] = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", pod}};
  return request;
}

json ResourceReview(json attributes) {
  return json{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SelfSubjectAccessReview"},
              {"spec", {{"resourceAttributes", std::move(attributes)}}}};
}

json PathReview(const std::string& verb, const std::string& path) {
  return json{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SelfSubjectAccessReview"},
              {"spec", {{"nonResourceAttributes", {{"verb", verb}, {"path", path}}}}}};
}

json RulesReview(const std::string& ns) {
  return json{{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SelfSubjectRulesReview"}, {"spec", {{"namespace", ns}}}};
}

constexpr const char* kAccessReviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
constexpr const char* kRulesReviews = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
constexpr const char* kWhoAmI = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

// One request per Kubernetes verb on a namespaced collection and on its
// object `name` (which exists): what a test checks each verb with.
struct VerbRequest {
  std::string verb;
  std::string method;
  std::string path;
  std::string body;
  std::string content_type = "application/json";
  bool names_object = false;  // the request names an object: the message says which
};

std::vector<VerbRequest> EveryVerb(const std::string& collection, const json& existing, const json& fresh) {
  const std::string item = collection + "/" + existing["metadata"]["name"].get<std::string>();
  json changed = existing;
  changed["metadata"]["labels"]["touched"] = "yes";
  return {
      {.verb = "get", .method = "GET", .path = item, .names_object = true},
      {.verb = "list", .method = "GET", .path = collection},
      {.verb = "watch", .method = "GET", .path = collection + "?watch=true"},
      {.verb = "create", .method = "POST", .path = collection, .body = fresh.dump()},
      {.verb = "update", .method = "PUT", .path = item, .body = changed.dump(), .names_object = true},
      {.verb = "patch",
       .method = "PATCH",
       .path = item,
       .body = R"({"metadata":{"labels":{"touched":"yes"}}})",
       .content_type = kMergePatch,
       .names_object = true},
      {.verb = "delete", .method = "DELETE", .path = item, .names_object = true},
      {.verb = "deletecollection", .method = "DELETE", .path = collection},
  };
}

// kube-apiserver's 403 message for `user` asking `verb` on `resource` (plural,
// with "/subresource" when there is one) of `group` in `ns` ("" at the cluster
// scope), about object `name` ("" when the request names none).
std::string ForbiddenMessage(const std::string& user, const std::string& verb, const std::string& resource,
                             const std::string& group, const std::string& ns, const std::string& name = "") {
  const std::string plural = resource.substr(0, resource.find('/'));
  const std::string qualified = group.empty() ? plural : plural + "." + group;
  std::string out = name.empty() ? qualified + " is forbidden: " : qualified + " \"" + name + "\" is forbidden: ";
  out += "User \"" + user + "\" cannot " + verb + " resource \"" + resource + "\" in API group \"" + group + "\"";
  out += ns.empty() ? std::string(" at the cluster scope") : " in the namespace \"" + ns + "\"";
  return out;
}

// ---------------------------------------------------------------------------
// The fixture: a server with the token file, and the admin's hands.

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-security");
    const std::filesystem::path tokens = dir_ / "tokens.csv";
    std::ofstream(tokens) << kTokenFileText;
    ServerOptions options;
    options.token_auth_file = tokens.string();
    options.rate.per_second = 0;  // no request-rate limit: the tests send many requests at once
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  ApiClient As(const std::string& token) { return ApiClient(server_->url(), token); }
  ApiClient Admin() { return As(server_->admin_token()); }

  static ApiResponse Send(ApiClient& client, const std::string& method, const std::string& path,
                          const std::string& body = "", const std::string& content_type = "application/json") {
    auto r = client.Request(method, path, body, content_type);
    EXPECT_TRUE(r.has_value()) << method << " " << path << ": " << (r ? "" : r.error().ToString());
    return r ? *r : ApiResponse{};
  }
  static ApiResponse Send(ApiClient& client, const VerbRequest& v) {
    return Send(client, v.method, v.path, v.body, v.content_type);
  }
  // POSTs `object` to its collection.
  static ApiResponse Create(ApiClient& client, const json& object) {
    return Send(client, "POST", ObjectPath(object, /*item=*/false), object.dump());
  }
  static int Get(ApiClient& client, const std::string& path) { return Send(client, "GET", path).status; }

  // The admin (system:masters) creates `object`; a failure of the test otherwise.
  void AdminCreates(const json& object) {
    auto admin = Admin();
    const ApiResponse r = Create(admin, object);
    ASSERT_EQ(r.status, 201) << ObjectPath(object, false) << ": " << r.body;
  }
  void AdminCreatesNamespace(const std::string& name) { AdminCreates(MakeNamespace(name)); }
  int AdminGets(const std::string& path) {
    auto admin = Admin();
    return Get(admin, path);
  }
  json AdminReads(const std::string& path) {
    auto admin = Admin();
    const ApiResponse r = Send(admin, "GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return Body(r);
  }

  // Every document of the seed's `file`, created by the admin.
  void AdminAppliesSeed(const std::string& file) {
    const std::filesystem::path dir = testing::SeedDir();
    ASSERT_FALSE(dir.empty()) << "the seed manifests (../shared/examples/seed) are missing";
    auto docs = ParseManifests(testing::ReadFile(dir / file));
    ASSERT_TRUE(docs.has_value()) << file << ": " << docs.error().ToString();
    ASSERT_FALSE(docs->empty()) << file;
    for (const ManifestDocument& doc : *docs) ASSERT_NO_FATAL_FAILURE(AdminCreates(doc.object)) << file << " " << doc.Where();
  }

  // The seed's namespaces and team Role, and the group data-scientists bound
  // in team-data-science to that Role and to ClusterRole view (which grants
  // pods/log, a resource of its own that the seed's Role does not list).
  void SetUpDataScientists() {
    ASSERT_NO_FATAL_FAILURE(AdminAppliesSeed("01-namespaces.yaml"));
    ASSERT_NO_FATAL_FAILURE(AdminAppliesSeed("03-rbac.yaml"));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("data-scientists-gpu")
                                             .In("team-data-science")
                                             .ToRole("gpu-workload-role")
                                             .Group("data-scientists")
                                             .Build()));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(
        MakeRoleBinding("data-scientists-view").In("team-data-science").ToClusterRole("view").Group("data-scientists").Build()));
  }

  // ted, bound to ClusterRole admin in team-a by a RoleBinding.
  void SetUpTeamAdmin() {
    ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("ted-admin").In("team-a").ToClusterRole("admin").User("ted").Build()));
  }

  // A node agent's credential, as `tessera up` mints it: POST /api/v1/nodes/NAME/token.
  std::string NodeToken(const std::string& node) {
    auto admin = Admin();
    const ApiResponse r = Send(admin, "POST", "/api/v1/nodes/" + node + "/token", MakeTokenRequest().dump());
    EXPECT_EQ(r.status, 201) << r.body;
    const std::string token = Body(r)["status"].value("token", std::string());
    EXPECT_FALSE(token.empty()) << r.body;
    return token;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
};

// ===========================================================================
// 1. The seed's team Role.

TEST_F(SecurityTest, DataScientistCreatesJobsAndReadsPodsAndLogsInTheirNamespace) {
  // dana (group data-scientists) works in team-data-science: the seed's Role
  // grants jobs and pods there, view grants pods/log.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  const ApiResponse job = Create(dana, MakeJob("train").In("team-data-science").Build());
  EXPECT_EQ(job.status, 201) << job.body;  // gpu-workload-role: batch jobs create
  EXPECT_EQ(Body(job)["metadata"]["annotations"]["tessera.dev/created-by"], "dana");
  const ApiResponse pod = Create(dana, MakePod("notebook").In("team-data-science").Build());
  EXPECT_EQ(pod.status, 201) << pod.body;  // gpu-workload-role: "" pods create

  const ApiResponse list = Send(dana, "GET", "/api/v1/namespaces/team-data-science/pods");
  EXPECT_EQ(list.status, 200) << list.body;  // pods list
  bool listed = false;
  for (const json& item : Body(list).value("items", json::array())) listed |= item["metadata"]["name"] == "notebook";
  EXPECT_TRUE(listed) << list.body;
  EXPECT_EQ(Get(dana, "/api/v1/namespaces/team-data-science/pods/notebook"), 200);  // pods get
  EXPECT_EQ(Get(dana, "/apis/batch/v1/namespaces/team-data-science/jobs/train"), 200);  // jobs get

  // pods/log is not in the seed's Role (a subresource is a resource of its
  // own); view grants it. The answer is about the pod, not a refusal: it is
  // on no node yet, so it has no log.
  const ApiResponse log = Send(dana, "GET", "/api/v1/namespaces/team-data-science/pods/notebook/log");
  EXPECT_NE(log.status, 403) << log.body;
  EXPECT_EQ(log.status, 400) << log.body;
  EXPECT_NE(Message(log).find("not on a node"), std::string::npos) << log.body;
}

TEST_F(SecurityTest, DataScientistIsForbiddenEveryVerbOnJobsAndPodsInAnotherTeamsNamespace) {
  // team-nlp holds a Job and a pod of the admin's; no binding of dana's
  // applies in team-nlp, so every verb is refused and nothing changes there.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  const json nlp_job = MakeJob("nlp-train").In("team-nlp").Build();
  const json nlp_pod = MakePod("nlp-pod").In("team-nlp").Build();
  ASSERT_NO_FATAL_FAILURE(AdminCreates(nlp_job));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(nlp_pod));
  auto dana = As(kDana);
  struct Kind {
    std::string collection, resource, group;
    json existing, fresh;
  };
  const std::vector<Kind> kinds = {
      {"/apis/batch/v1/namespaces/team-nlp/jobs", "jobs", "batch", nlp_job, MakeJob("from-dana").In("team-nlp").Build()},
      {"/api/v1/namespaces/team-nlp/pods", "pods", "", nlp_pod, MakePod("from-dana").In("team-nlp").Build()},
  };
  for (const Kind& k : kinds) {
    const std::string name = k.existing["metadata"]["name"];
    for (const VerbRequest& v : EveryVerb(k.collection, k.existing, k.fresh)) {
      const ApiResponse r = Send(dana, v);
      EXPECT_EQ(r.status, 403) << v.verb << " " << v.path << ": " << r.body;
      EXPECT_EQ(Message(r), ForbiddenMessage("dana", v.verb, k.resource, k.group, "team-nlp", v.names_object ? name : ""))
          << v.verb << " " << v.path;
    }
    // Nothing was stored, changed or deleted by the refused requests.
    EXPECT_EQ(AdminGets(k.collection + "/from-dana"), 404);                  // create refused
    const json kept = AdminReads(k.collection + "/" + name);                 // delete refused
    EXPECT_FALSE(kept["metadata"].value("labels", json::object()).contains("touched")) << kept.dump();  // update, patch refused
  }
}

TEST_F(SecurityTest, ForbiddenAnswersAreKubernetesStatusesInItsWords) {
  // Three refusals of dana's, word for word as kube-apiserver writes them,
  // with Status.details {name when the request names one, group unless core, kind: the resource}.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);

  const ApiResponse create = Create(dana, MakeJob("j").In("team-nlp").Build());
  ASSERT_EQ(create.status, 403) << create.body;
  EXPECT_EQ(Body(create)["kind"], "Status");
  EXPECT_EQ(Body(create)["status"], "Failure");
  EXPECT_EQ(Body(create)["reason"], "Forbidden");
  EXPECT_EQ(Body(create)["code"], 403);
  EXPECT_EQ(Message(create),
            R"(jobs.batch is forbidden: User "dana" cannot create resource "jobs" in API group "batch" in the namespace "team-nlp")");
  EXPECT_EQ(Body(create)["details"], (json{{"group", "batch"}, {"kind", "jobs"}}));  // a create names no object

  const ApiResponse all_pods = Send(dana, "GET", "/api/v1/pods");
  ASSERT_EQ(all_pods.status, 403) << all_pods.body;
  EXPECT_EQ(Message(all_pods), R"(pods is forbidden: User "dana" cannot list resource "pods" in API group "" at the cluster scope)");
  EXPECT_EQ(Body(all_pods)["details"], (json{{"kind", "pods"}}));  // the core group is omitted

  const ApiResponse queue = Send(dana, "DELETE", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/gpu-cluster-queue");
  ASSERT_EQ(queue.status, 403) << queue.body;
  EXPECT_EQ(Message(queue),
            R"(clusterqueues.kueue.x-k8s.io "gpu-cluster-queue" is forbidden: User "dana" cannot delete resource "clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope)");
  EXPECT_EQ(Body(queue)["details"],
            (json{{"name", "gpu-cluster-queue"}, {"group", "kueue.x-k8s.io"}, {"kind", "clusterqueues"}}));
}

TEST_F(SecurityTest, DataScientistReadsQueuesAndFlavorsButWritesNoClusterScopedPolicy) {
  // A RoleBinding grants only within its namespace: dana creates none of the
  // cluster-scoped ClusterQueues, ResourceFlavors and PriorityClasses (the
  // defaults exist), and no create is stored. Queues and flavors (quotas and
  // prices) every signed-in user reads, through system:basic-user; priority
  // classes she may not even read.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  struct Kind {
    std::string collection, resource, group, existing;
    json fresh;
    bool readable = true;
  };
  const std::vector<Kind> kinds = {
      {"/apis/kueue.x-k8s.io/v1beta1/clusterqueues", "clusterqueues", "kueue.x-k8s.io", "default",
       json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ClusterQueue"}, {"metadata", {{"name", "from-dana"}}},
            {"spec", json::object()}}},
      {"/apis/kueue.x-k8s.io/v1beta1/resourceflavors", "resourceflavors", "kueue.x-k8s.io", "default",
       json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "from-dana"}}}}},
      {"/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclasses", "scheduling.k8s.io", "batch",
       json{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "from-dana"}}},
            {"value", 1000000}},
       false},
  };
  for (const Kind& k : kinds) {
    const ApiResponse list = Send(dana, "GET", k.collection);
    const ApiResponse get = Send(dana, "GET", k.collection + "/" + k.existing);
    if (k.readable) {
      EXPECT_EQ(list.status, 200) << list.body;
      EXPECT_EQ(get.status, 200) << get.body;
    } else {
      EXPECT_EQ(list.status, 403) << list.body;
      EXPECT_EQ(Message(list), ForbiddenMessage("dana", "list", k.resource, k.group, ""));
      EXPECT_EQ(get.status, 403) << get.body;
      EXPECT_EQ(Message(get), ForbiddenMessage("dana", "get", k.resource, k.group, "", k.existing));
    }
    const ApiResponse del = Send(dana, "DELETE", k.collection + "/" + k.existing);
    EXPECT_EQ(del.status, 403) << del.body;
    const ApiResponse create = Send(dana, "POST", k.collection, k.fresh.dump());
    EXPECT_EQ(create.status, 403) << create.body;
    EXPECT_EQ(Message(create), ForbiddenMessage("dana", "create", k.resource, k.group, ""));
    EXPECT_EQ(AdminGets(k.collection + "/from-dana"), 404);  // nothing stored
  }
}

TEST_F(SecurityTest, DataScientistCannotListAcrossNamespaces) {
  // A list without a namespace is a cluster-scope request: only a
  // ClusterRoleBinding could grant it, and dana has none.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  const ApiResponse pods = Send(dana, "GET", "/api/v1/pods");
  EXPECT_EQ(pods.status, 403) << pods.body;
  const ApiResponse jobs = Send(dana, "GET", "/apis/batch/v1/jobs");
  EXPECT_EQ(jobs.status, 403) << jobs.body;
  EXPECT_EQ(Message(jobs), ForbiddenMessage("dana", "list", "jobs", "batch", ""));
  const ApiResponse watch = Send(dana, "GET", "/apis/batch/v1/jobs?watch=true");
  EXPECT_EQ(watch.status, 403) << watch.body;
  EXPECT_EQ(Message(watch), ForbiddenMessage("dana", "watch", "jobs", "batch", ""));
}

TEST_F(SecurityTest, DataScientistReadsTheirOwnNamespaceObjectOnly) {
  // As in Kubernetes, a request about a Namespace is in that namespace: view
  // bound in team-data-science grants reading that Namespace, not team-nlp.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  EXPECT_EQ(Get(dana, "/api/v1/namespaces/team-data-science"), 200);
  const ApiResponse other = Send(dana, "GET", "/api/v1/namespaces/team-nlp");
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(Message(other), ForbiddenMessage("dana", "get", "namespaces", "", "team-nlp", "team-nlp"));
  EXPECT_EQ(Get(dana, "/api/v1/namespaces"), 403);  // listing namespaces is cluster-scoped
}

// ===========================================================================
// 2. Subresources and resource names.

TEST_F(SecurityTest, APodsLogRuleReadsLogsButNotThePods) {
  // logan's Role lists "pods/log" alone: the log subresource is a resource of
  // its own, and granting it grants nothing about the pods themselves.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("log-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"pods/log"}).Verbs({"get"})).Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("logan-logs").In("team-a").ToRole("log-reader").User("logan").Build()));
  auto logan = As(kLogan);
  const ApiResponse log = Send(logan, "GET", "/api/v1/namespaces/team-a/pods/p/log");
  EXPECT_EQ(log.status, 400) << log.body;  // allowed: the pod simply has no node, hence no log, yet
  const ApiResponse pod = Send(logan, "GET", "/api/v1/namespaces/team-a/pods/p");
  EXPECT_EQ(pod.status, 403) << pod.body;  // "pods/log" does not cover "pods"
  EXPECT_EQ(Message(pod), ForbiddenMessage("logan", "get", "pods", "", "team-a", "p"));
  EXPECT_EQ(Get(logan, "/api/v1/namespaces/team-a/pods"), 403);
}

TEST_F(SecurityTest, APodsRuleCoversNoneOfItsSubresourcesNorDoesPodsSlashStar) {
  // Kubernetes' matching: "pods" is the object only, and "pods/*" is no
  // wildcard (only "*/log" or "pods/log" name the log subresource).
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("pod-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"pods", "pods/*"}).Verbs({"get"})).Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("logan-pods").In("team-a").ToRole("pod-reader").User("logan").Build()));
  auto logan = As(kLogan);
  EXPECT_EQ(Get(logan, "/api/v1/namespaces/team-a/pods/p"), 200);
  const ApiResponse log = Send(logan, "GET", "/api/v1/namespaces/team-a/pods/p/log");
  EXPECT_EQ(log.status, 403) << log.body;
  EXPECT_EQ(Message(log), ForbiddenMessage("logan", "get", "pods/log", "", "team-a", "p"));
  EXPECT_EQ(Body(log)["details"], (json{{"name", "p"}, {"kind", "pods"}}));
  EXPECT_EQ(Get(logan, "/api/v1/namespaces/team-a/pods/p/status"), 403);
}

TEST_F(SecurityTest, AStarSlashStatusRuleWritesTheStatusOfEveryKindButNotTheObjects) {
  // stella's ClusterRole (bound in team-a) grants "*/status" in every group:
  // the status of a pod and of a Job, and nothing of the objects themselves.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeJob("j").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeClusterRole("status-writer").Grant(Rule().Groups({"*"}).Resources({"*/status"}).Verbs({"get", "patch"})).Build()));
  ASSERT_NO_FATAL_FAILURE(
      AdminCreates(MakeRoleBinding("stella-status").In("team-a").ToClusterRole("status-writer").User("stella").Build()));
  auto stella = As(kStella);
  const std::string status = R"({"status":{"message":"checked by stella"}})";
  const ApiResponse pod_status = Send(stella, "PATCH", "/api/v1/namespaces/team-a/pods/p/status", status, kMergePatch);
  EXPECT_EQ(pod_status.status, 200) << pod_status.body;  // "*/status" covers pods/status
  const ApiResponse job_status = Send(stella, "PATCH", "/apis/batch/v1/namespaces/team-a/jobs/j/status", status, kMergePatch);
  EXPECT_EQ(job_status.status, 200) << job_status.body;  // and jobs/status, "*" being every group
  EXPECT_EQ(Get(stella, "/api/v1/namespaces/team-a/pods/p/status"), 200);
  const ApiResponse pod = Send(stella, "GET", "/api/v1/namespaces/team-a/pods/p");
  EXPECT_EQ(pod.status, 403) << pod.body;  // "*/status" is no rule for the pod itself
  const ApiResponse patch = Send(stella, "PATCH", "/api/v1/namespaces/team-a/pods/p",
                                 R"({"metadata":{"labels":{"by":"stella"}}})", kMergePatch);
  EXPECT_EQ(patch.status, 403) << patch.body;
  EXPECT_EQ(Message(patch), ForbiddenMessage("stella", "patch", "pods", "", "team-a", "p"));
}

TEST_F(SecurityTest, ResourceNamesGrantTheNamedObjectOnlyAndNeverAList) {
  // nina may get, list and watch pods named p1: a get of p1 is allowed; p2 is
  // another name; a list or watch names no object, so a rule with
  // resourceNames never matches it.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p1").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p2").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRole("one-pod")
                                           .In("team-a")
                                           .Grant(Rule().Groups({""}).Resources({"pods"}).Names({"p1"}).Verbs(
                                               {"get", "list", "watch", "delete"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("nina-p1").In("team-a").ToRole("one-pod").User("nina").Build()));
  auto nina = As(kNina);
  EXPECT_EQ(Get(nina, "/api/v1/namespaces/team-a/pods/p1"), 200);
  const ApiResponse p2 = Send(nina, "GET", "/api/v1/namespaces/team-a/pods/p2");
  EXPECT_EQ(p2.status, 403) << p2.body;
  EXPECT_EQ(Message(p2), ForbiddenMessage("nina", "get", "pods", "", "team-a", "p2"));
  EXPECT_EQ(Send(nina, "DELETE", "/api/v1/namespaces/team-a/pods/p2").status, 403);
  EXPECT_EQ(AdminGets("/api/v1/namespaces/team-a/pods/p2"), 200);  // still there
  const ApiResponse list = Send(nina, "GET", "/api/v1/namespaces/team-a/pods");
  EXPECT_EQ(list.status, 403) << list.body;
  EXPECT_EQ(Message(list), ForbiddenMessage("nina", "list", "pods", "", "team-a"));
  EXPECT_EQ(Send(nina, "GET", "/api/v1/namespaces/team-a/pods?watch=true").status, 403);
  EXPECT_EQ(Send(nina, "DELETE", "/api/v1/namespaces/team-a/pods").status, 403);  // deletecollection names none either
}

TEST_F(SecurityTest, AListSelectingOneNameIsAuthorizedByResourceNamesAsKubernetesDoes) {
  // kube-apiserver's RequestInfo takes a list's or watch's name from
  // fieldSelector=metadata.name=NAME, so that `kubectl get pod p1 --watch`
  // works for a user whose rule names p1: that list is authorized as a
  // request about p1, and holds p1 only.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p1").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p2").In("team-a").Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("one-pod")
          .In("team-a")
          .Grant(Rule().Groups({""}).Resources({"pods"}).Names({"p1"}).Verbs({"get", "list", "watch"}))
          .Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("nina-p1").In("team-a").ToRole("one-pod").User("nina").Build()));
  auto nina = As(kNina);
  const ApiResponse one = Send(nina, "GET", "/api/v1/namespaces/team-a/pods?fieldSelector=metadata.name%3Dp1");
  EXPECT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(Body(one).value("items", json::array()).size(), 1u) << one.body;
  const ApiResponse other = Send(nina, "GET", "/api/v1/namespaces/team-a/pods?fieldSelector=metadata.name%3Dp2");
  EXPECT_EQ(other.status, 403) << other.body;  // p2 is not among the rule's names
}

// ===========================================================================
// 3. Escalation prevention.

TEST_F(SecurityTest, ANamespaceAdminGrantsWhatTheyHold) {
  // ted holds ClusterRole admin in team-a (edit and view aggregated into it):
  // a Role granting pods get is within that, and so is binding edit, every
  // rule of which admin holds.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const ApiResponse role =
      Create(ted, MakeRole("pod-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"pods"}).Verbs({"get"})).Build());
  EXPECT_EQ(role.status, 201) << role.body;
  const ApiResponse to_role = Create(ted, MakeRoleBinding("read-pods").In("team-a").ToRole("pod-reader").User("dana").Build());
  EXPECT_EQ(to_role.status, 201) << to_role.body;
  const ApiResponse to_edit = Create(ted, MakeRoleBinding("dana-edit").In("team-a").ToClusterRole("edit").User("dana").Build());
  EXPECT_EQ(to_edit.status, 201) << to_edit.body;
}

TEST_F(SecurityTest, ANamespaceAdminCannotGrantNodesList) {
  // Nodes are nothing admin holds: the Role is refused in kube-apiserver's
  // words, the groups as the server knows them (the token file's, then
  // system:authenticated), and nothing is stored.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const ApiResponse r =
      Create(ted, MakeRole("node-lister").In("team-a").Grant(Rule().Groups({""}).Resources({"nodes"}).Verbs({"list"})).Build());
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Body(r)["reason"], "Forbidden");
  EXPECT_EQ(Message(r),
            "roles.rbac.authorization.k8s.io \"node-lister\" is forbidden: user \"ted\" "
            "(groups=[\"team-a-admins\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"list\"]}");
  EXPECT_EQ(Body(r)["details"], (json{{"name", "node-lister"}, {"group", "rbac.authorization.k8s.io"}, {"kind", "roles"}}));
  EXPECT_EQ(AdminGets("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/node-lister"), 404);
}

TEST_F(SecurityTest, ANamespaceAdminCannotGrantWhatItDoesNotHold) {
  // admin holds no rule on persistentvolumes: a Role reading them is refused.
  // (Secrets it holds, as Kubernetes' admin does, so it may grant those.)
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const ApiResponse r = Create(
      ted, MakeRole("pv-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"persistentvolumes"}).Verbs({"get"})).Build());
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Message(r),
            "roles.rbac.authorization.k8s.io \"pv-reader\" is forbidden: user \"ted\" "
            "(groups=[\"team-a-admins\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n{APIGroups:[\"\"], Resources:[\"persistentvolumes\"], Verbs:[\"get\"]}");
  EXPECT_EQ(AdminGets("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/pv-reader"), 404);
  const ApiResponse secrets = Create(
      ted, MakeRole("secret-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"secrets"}).Verbs({"get"})).Build());
  EXPECT_EQ(secrets.status, 201) << secrets.body;
}

TEST_F(SecurityTest, MissingRulesArePrintedCompactedAndSortedAsKubernetesPrintsThem) {
  // kube-apiserver (ConfirmNoEscalation) merges the missing atomic rules that
  // differ only by verb (CompactRules) and prints them sorted: persistentvolumes
  // get and list are one line, and nodes (asked second) sorts before them.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const ApiResponse r = Create(ted, MakeRole("too-much")
                                        .In("team-a")
                                        .Grant(Rule().Groups({""}).Resources({"persistentvolumes"}).Verbs({"get", "list"}))
                                        .Grant(Rule().Groups({""}).Resources({"nodes"}).Verbs({"list"}))
                                        .Build());
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Message(r),
            "roles.rbac.authorization.k8s.io \"too-much\" is forbidden: user \"ted\" "
            "(groups=[\"team-a-admins\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n"
            "{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"list\"]}\n"
            "{APIGroups:[\"\"], Resources:[\"persistentvolumes\"], Verbs:[\"get\" \"list\"]}");
}

TEST_F(SecurityTest, ANamespaceAdminCannotWidenAnExistingRoleByPutOrPatch) {
  // The admin made Role pod-reader (pods get) in team-a. ted may rewrite it
  // within what ted holds (pods list, from view), but neither PUT nor PATCH
  // may add nodes list; the stored rules stay as they were.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("pod-reader").In("team-a").Grant(Rule().Groups({""}).Resources({"pods"}).Verbs({"get"})).Build()));
  const std::string path = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/pod-reader";
  auto ted = As(kTed);

  const json wider = MakeRole("pod-reader")
                         .In("team-a")
                         .Grant(Rule().Groups({""}).Resources({"pods"}).Verbs({"get"}))
                         .Grant(Rule().Groups({""}).Resources({"nodes"}).Verbs({"list"}))
                         .Build();
  const ApiResponse put = Send(ted, "PUT", path, wider.dump());
  EXPECT_EQ(put.status, 403) << put.body;
  EXPECT_NE(Message(put).find("is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], "
                              "Resources:[\"nodes\"], Verbs:[\"list\"]}"),
            std::string::npos)
      << put.body;
  const ApiResponse patch = Send(ted, "PATCH", path, json{{"rules", wider["rules"]}}.dump(), kMergePatch);
  EXPECT_EQ(patch.status, 403) << patch.body;
  EXPECT_EQ(AdminReads(path)["rules"], (json::array({Rule().Groups({""}).Resources({"pods"}).Verbs({"get"}).Build()})));

  const json held = json::array({Rule().Groups({""}).Resources({"pods"}).Verbs({"get", "list"}).Build()});
  const ApiResponse within = Send(ted, "PATCH", path, json{{"rules", held}}.dump(), kMergePatch);
  EXPECT_EQ(within.status, 200) << within.body;  // pods list is held (view, aggregated into admin)
}

TEST_F(SecurityTest, BindingClusterAdminNeedsBindOnItUntilGranted) {
  // ted holds nothing like cluster-admin's rules, so a RoleBinding to it is
  // refused (both of its rules missing); once the admin grants ted `bind` on
  // clusterroles named cluster-admin, the same binding is allowed.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const json binding = MakeRoleBinding("ted-root").In("team-a").ToClusterRole("cluster-admin").User("ted").Build();
  const ApiResponse refused = Create(ted, binding);
  ASSERT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(Message(refused),
            "rolebindings.rbac.authorization.k8s.io \"ted-root\" is forbidden: user \"ted\" "
            "(groups=[\"team-a-admins\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n{NonResourceURLs:[\"*\"], "
            "Verbs:[\"*\"]}");
  EXPECT_EQ(AdminGets("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/ted-root"), 404);

  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("bind-cluster-admin")
                                           .Grant(Rule()
                                                      .Groups({"rbac.authorization.k8s.io"})
                                                      .Resources({"clusterroles"})
                                                      .Names({"cluster-admin"})
                                                      .Verbs({"bind"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(
      AdminCreates(MakeRoleBinding("ted-may-bind").In("team-a").ToClusterRole("bind-cluster-admin").User("ted").Build()));
  const ApiResponse allowed = Create(ted, binding);
  EXPECT_EQ(allowed.status, 201) << allowed.body;  // bind on clusterroles/cluster-admin in team-a
}

TEST_F(SecurityTest, BindOnOneRoleNameDoesNotLetBindAnother) {
  // `bind` limited by resourceNames to cluster-admin says nothing of another
  // ClusterRole that ted does not hold.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("node-reader")
                                           .Grant(Rule().Groups({""}).Resources({"nodes"}).Verbs({"get"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("bind-cluster-admin")
                                           .Grant(Rule()
                                                      .Groups({"rbac.authorization.k8s.io"})
                                                      .Resources({"clusterroles"})
                                                      .Names({"cluster-admin"})
                                                      .Verbs({"bind"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(
      AdminCreates(MakeRoleBinding("ted-may-bind").In("team-a").ToClusterRole("bind-cluster-admin").User("ted").Build()));
  auto ted = As(kTed);
  const ApiResponse r = Create(ted, MakeRoleBinding("nodes").In("team-a").ToClusterRole("node-reader").User("ted").Build());
  EXPECT_EQ(r.status, 403) << r.body;
}

TEST_F(SecurityTest, TheEscalateVerbLetsARoleGrantWhatItsAuthorDoesNotHold) {
  // eve may create Roles in team-a and holds `escalate` on roles there: the
  // escalation check does not apply to her.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRole("role-escalator")
                                           .In("team-a")
                                           .Grant(Rule()
                                                      .Groups({"rbac.authorization.k8s.io"})
                                                      .Resources({"roles"})
                                                      .Verbs({"create", "escalate"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("eve-escalates").In("team-a").ToRole("role-escalator").User("eve").Build()));
  auto eve = As(kEve);
  const ApiResponse r =
      Create(eve, MakeRole("node-lister").In("team-a").Grant(Rule().Groups({""}).Resources({"nodes"}).Verbs({"list"})).Build());
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(SecurityTest, ABindingToAMissingRoleByAUserWithoutBindIsNotFound) {
  // kube-apiserver resolves the role a binding names (GetRoleReferenceRules)
  // before comparing rules: a role that does not exist is its NotFound.
  ASSERT_NO_FATAL_FAILURE(SetUpTeamAdmin());
  auto ted = As(kTed);
  const ApiResponse r = Create(ted, MakeRoleBinding("ghost").In("team-a").ToClusterRole("no-such-role").User("ted").Build());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Message(r), R"(clusterroles.rbac.authorization.k8s.io "no-such-role" not found)");
}

TEST_F(SecurityTest, AnAggregationRuleNeedsEscalate) {
  // carol may write ClusterRoles but holds no `escalate`: an aggregationRule
  // can gather anything, so it is refused in kube-apiserver's words; with
  // escalate granted the same ClusterRole is accepted.
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("clusterrole-writer")
                                           .Grant(Rule()
                                                      .Groups({"rbac.authorization.k8s.io"})
                                                      .Resources({"clusterroles"})
                                                      .Verbs({"create", "get", "update", "patch"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRoleBinding("carol-writes").ToClusterRole("clusterrole-writer").User("carol").Build()));
  auto carol = As(kCarol);
  const json aggregated = MakeClusterRole("gatherer").AggregateLabelled("example.com/aggregate-to-gatherer").Build();
  const ApiResponse refused = Create(carol, aggregated);
  ASSERT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(Message(refused),
            R"(clusterroles.rbac.authorization.k8s.io "gatherer" is forbidden: must have cluster-admin privileges to use the aggregationRule)");
  EXPECT_EQ(AdminGets("/apis/rbac.authorization.k8s.io/v1/clusterroles/gatherer"), 404);

  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("clusterrole-escalator")
                                           .Grant(Rule()
                                                      .Groups({"rbac.authorization.k8s.io"})
                                                      .Resources({"clusterroles"})
                                                      .Verbs({"escalate"}))
                                           .Build()));
  ASSERT_NO_FATAL_FAILURE(
      AdminCreates(MakeClusterRoleBinding("carol-escalates").ToClusterRole("clusterrole-escalator").User("carol").Build()));
  const ApiResponse allowed = Create(carol, aggregated);
  EXPECT_EQ(allowed.status, 201) << allowed.body;
}

TEST_F(SecurityTest, AUserHoldingFullAuthorityMayUseAnAggregationRuleWithoutEscalate) {
  // kube-apiserver's ClusterRole storage lets an aggregationRule through for
  // whoever holds full authority (`*` on `*.*` and on every URL) — root, bound
  // to cluster-admin by a ClusterRoleBinding without system:masters.
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRoleBinding("root-is-admin").ToClusterRole("cluster-admin").User("root").Build()));
  auto root = As(kRoot);
  const ApiResponse r = Create(root, MakeClusterRole("gatherer").AggregateLabelled("example.com/aggregate-to-gatherer").Build());
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(SecurityTest, ARoleBindingsRoleRefCannotChange) {
  // rbac/v1 validation: roleRef is immutable on update (to change the role a
  // binding grants, delete it and create another), even for the admin.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("dana-view").In("team-a").ToClusterRole("view").User("dana").Build()));
  auto admin = Admin();
  const ApiResponse r = Send(admin, "PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/dana-view",
                             R"({"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"}})",
                             kMergePatch);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(Message(r).find("roleRef"), std::string::npos) << r.body;
  EXPECT_EQ(AdminReads("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/dana-view")["roleRef"]["name"], "view");
}

// ===========================================================================
// 4. Aggregation, live.

TEST_F(SecurityTest, AClusterRoleLabelledAggregateToViewWidensViewAtOnceAndUnlabellingNarrowsIt) {
  // vera is bound to view in team-a; view grants no Leases. A ClusterRole
  // labelled aggregate-to-view granting leases get is in view from the next
  // request on; without the label it is out again.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeLease("l", "team-a")));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("vera-view").In("team-a").ToClusterRole("view").User("vera").Build()));
  const std::string lease = "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/l";
  auto vera = As(kVera);
  EXPECT_EQ(Get(vera, lease), 403);  // view: no leases

  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("lease-viewer")
                                           .Label("rbac.authorization.k8s.io/aggregate-to-view", "true")
                                           .Grant(Rule().Groups({"coordination.k8s.io"}).Resources({"leases"}).Verbs({"get"}))
                                           .Build()));
  EXPECT_EQ(Get(vera, lease), 200);  // view now aggregates lease-viewer

  auto admin = Admin();
  const ApiResponse unlabel =
      Send(admin, "PATCH", "/apis/rbac.authorization.k8s.io/v1/clusterroles/lease-viewer",
           R"({"metadata":{"labels":{"rbac.authorization.k8s.io/aggregate-to-view":null}}})", kMergePatch);
  ASSERT_EQ(unlabel.status, 200) << unlabel.body;
  EXPECT_EQ(Get(vera, lease), 403);  // no longer selected by view's aggregationRule
}

TEST_F(SecurityTest, AggregationToViewReachesEditAndAdminAndDeletingTheRoleTakesItBack) {
  // view is itself aggregated into edit, and edit into admin: a rule added to
  // view reaches ada (bound to admin); deleting the ClusterRole removes it.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("ada-admin").In("team-a").ToClusterRole("admin").User("ada").Build()));
  auto ada = As(kAda);
  const std::string leases = "/apis/coordination.k8s.io/v1/namespaces/team-a/leases";
  EXPECT_EQ(Get(ada, leases), 403);
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeClusterRole("lease-lister")
                                           .Label("rbac.authorization.k8s.io/aggregate-to-view", "true")
                                           .Grant(Rule().Groups({"coordination.k8s.io"}).Resources({"leases"}).Verbs({"list"}))
                                           .Build()));
  EXPECT_EQ(Get(ada, leases), 200);  // lease-lister -> view -> edit -> admin
  auto admin = Admin();
  ASSERT_EQ(Send(admin, "DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/lease-lister").status, 200);
  EXPECT_EQ(Get(ada, leases), 403);
}

// ===========================================================================
// 5. Read-your-writes.

TEST_F(SecurityTest, ABindingAuthorizesTheNextRequestAndItsDeletionRefusesTheNext) {
  // Right after the admin's POST of a RoleBinding returns, rita's next request
  // is allowed; right after its DELETE returns, refused. No sleep, and again
  // and again, so that a late application would show.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  auto admin = Admin();
  auto rita = As(kRita);
  const json binding = MakeRoleBinding("rita-view").In("team-a").ToClusterRole("view").User("rita").Build();
  const std::string pods = "/api/v1/namespaces/team-a/pods";
  for (int round = 0; round < 10; ++round) {
    ASSERT_EQ(Create(admin, binding).status, 201) << "round " << round;
    EXPECT_EQ(Get(rita, pods), 200) << "round " << round;  // bound a moment ago
    ASSERT_EQ(Send(admin, "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/rita-view").status, 200);
    EXPECT_EQ(Get(rita, pods), 403) << "round " << round;  // unbound a moment ago
  }
}

TEST_F(SecurityTest, ARoleUpdateAuthorizesTheNextRequest) {
  // rita's Role grants pods get; the admin's PATCH adding list is in force
  // for her very next request, and the PATCH taking it away too.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("pods").In("team-a").Grant(Rule().Groups({""}).Resources({"pods"}).Verbs({"get"})).Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("rita-pods").In("team-a").ToRole("pods").User("rita").Build()));
  auto admin = Admin();
  auto rita = As(kRita);
  const std::string role = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/pods";
  const std::string pods = "/api/v1/namespaces/team-a/pods";
  EXPECT_EQ(Get(rita, pods), 403);
  const json with_list = json::array({Rule().Groups({""}).Resources({"pods"}).Verbs({"get", "list"}).Build()});
  ASSERT_EQ(Send(admin, "PATCH", role, json{{"rules", with_list}}.dump(), kMergePatch).status, 200);
  EXPECT_EQ(Get(rita, pods), 200);
  const json without = json::array({Rule().Groups({""}).Resources({"pods"}).Verbs({"get"}).Build()});
  ASSERT_EQ(Send(admin, "PATCH", role, json{{"rules", without}}.dump(), kMergePatch).status, 200);
  EXPECT_EQ(Get(rita, pods), 403);
}

// ===========================================================================
// 6. The self reviews.

TEST_F(SecurityTest, SelfSubjectAccessReviewAnswersForTheUserAsking) {
  // dana asks about herself: what the seed's Role and view grant in
  // team-data-science is allowed, anything in team-nlp or at the cluster
  // scope is not; the admin is allowed everything.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  struct Case {
    json attributes;
    bool allowed;
  };
  const std::vector<Case> cases = {
      {{{"namespace", "team-data-science"}, {"verb", "create"}, {"group", "batch"}, {"resource", "jobs"}}, true},
      {{{"namespace", "team-nlp"}, {"verb", "create"}, {"group", "batch"}, {"resource", "jobs"}}, false},
      {{{"namespace", "team-data-science"}, {"verb", "get"}, {"resource", "pods"}, {"name", "any"}}, true},
      {{{"namespace", "team-data-science"}, {"verb", "get"}, {"resource", "pods"}, {"subresource", "log"}, {"name", "p"}}, true},  // view
      {{{"namespace", "team-data-science"}, {"verb", "update"}, {"resource", "pods"}, {"subresource", "status"}}, false},
      {{{"namespace", "team-data-science"}, {"verb", "update"}, {"group", "batch"}, {"resource", "jobs"}}, false},  // neither role updates jobs
      {{{"verb", "get"}, {"group", "kueue.x-k8s.io"}, {"resource", "clusterqueues"}, {"name", "gpu-cluster-queue"}}, true},  // system:basic-user
      {{{"verb", "update"}, {"group", "kueue.x-k8s.io"}, {"resource", "clusterqueues"}, {"name", "gpu-cluster-queue"}}, false},
      {{{"verb", "get"}, {"group", "scheduling.k8s.io"}, {"resource", "priorityclasses"}, {"name", "batch"}}, false},
      {{{"verb", "list"}, {"resource", "pods"}}, false},  // cluster scope
  };
  for (const Case& c : cases) {
    const ApiResponse r = Send(dana, "POST", kAccessReviews, ResourceReview(c.attributes).dump());
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(Body(r)["kind"], "SelfSubjectAccessReview");
    EXPECT_EQ(Body(r)["status"]["allowed"], c.allowed) << c.attributes.dump();
  }
  auto admin = Admin();
  const ApiResponse root = Send(admin, "POST", kAccessReviews,
                                ResourceReview({{"verb", "delete"}, {"resource", "nodes"}, {"name", "n1"}}).dump());
  EXPECT_EQ(Body(root)["status"]["allowed"], true) << root.body;  // system:masters
}

TEST_F(SecurityTest, SelfSubjectAccessReviewAnswersForNonResourcePaths) {
  // /metrics is granted to the group system:monitoring (prom) and to the
  // admin, not to dana; /healthz to every signed-in user (system:public-info-viewer).
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  auto prom = As(kProm);
  auto admin = Admin();
  EXPECT_EQ(Body(Send(dana, "POST", kAccessReviews, PathReview("get", "/metrics").dump()))["status"]["allowed"], false);
  EXPECT_EQ(Body(Send(prom, "POST", kAccessReviews, PathReview("get", "/metrics").dump()))["status"]["allowed"], true);
  EXPECT_EQ(Body(Send(admin, "POST", kAccessReviews, PathReview("get", "/metrics").dump()))["status"]["allowed"], true);
  EXPECT_EQ(Body(Send(dana, "POST", kAccessReviews, PathReview("get", "/healthz").dump()))["status"]["allowed"], true);
  EXPECT_EQ(Body(Send(prom, "POST", kAccessReviews, PathReview("post", "/metrics").dump()))["status"]["allowed"], false);
}

TEST_F(SecurityTest, SelfSubjectAccessReviewNamesRespectResourceNames) {
  // nina's rule names pod p1: a review about p1 is allowed, about p2 or about
  // no name (a list) is not, exactly as the requests themselves are decided.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      MakeRole("one-pod").In("team-a").Grant(Rule().Groups({""}).Resources({"pods"}).Names({"p1"}).Verbs({"get", "list"})).Build()));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeRoleBinding("nina-p1").In("team-a").ToRole("one-pod").User("nina").Build()));
  auto nina = As(kNina);
  auto allowed = [&](json attributes) {
    return Body(Send(nina, "POST", kAccessReviews, ResourceReview(std::move(attributes)).dump()))["status"]["allowed"];
  };
  EXPECT_EQ(allowed({{"namespace", "team-a"}, {"verb", "get"}, {"resource", "pods"}, {"name", "p1"}}), true);
  EXPECT_EQ(allowed({{"namespace", "team-a"}, {"verb", "get"}, {"resource", "pods"}, {"name", "p2"}}), false);
  EXPECT_EQ(allowed({{"namespace", "team-a"}, {"verb", "list"}, {"resource", "pods"}}), false);
}

TEST_F(SecurityTest, SelfSubjectAccessReviewWithBothOrNeitherAttributesIsInvalid) {
  // spec must hold exactly one of resourceAttributes and nonResourceAttributes.
  auto nobody = As(kNobody);
  json both = ResourceReview({{"verb", "get"}, {"resource", "pods"}, {"namespace", "team-a"}});
  both["spec"]["nonResourceAttributes"] = {{"verb", "get"}, {"path", "/metrics"}};
  const ApiResponse r1 = Send(nobody, "POST", kAccessReviews, both.dump());
  EXPECT_EQ(r1.status, 422) << r1.body;
  EXPECT_EQ(Body(r1)["reason"], "Invalid");
  const json neither{{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SelfSubjectAccessReview"}, {"spec", json::object()}};
  const ApiResponse r2 = Send(nobody, "POST", kAccessReviews, neither.dump());
  EXPECT_EQ(r2.status, 422) << r2.body;
  EXPECT_EQ(Body(r2)["reason"], "Invalid");
}

TEST_F(SecurityTest, SelfSubjectRulesReviewListsTheRulesOfTheNamespaceAsked) {
  // In team-data-science dana's rules include the seed Role's batch jobs rule
  // and view's pods/log; in team-nlp only what every signed-in user has.
  ASSERT_NO_FATAL_FAILURE(SetUpDataScientists());
  auto dana = As(kDana);
  auto grants = [](const json& rules, const std::string& group, const std::string& resource, const std::string& verb) {
    for (const json& r : rules) {
      auto has = [&](const char* field, const std::string& v) {
        for (const json& x : r.value(field, json::array())) {
          if (x == v || x == "*") return true;
        }
        return false;
      };
      if (has("apiGroups", group) && has("resources", resource) && has("verbs", verb)) return true;
    }
    return false;
  };
  const ApiResponse own = Send(dana, "POST", kRulesReviews, RulesReview("team-data-science").dump());
  ASSERT_EQ(own.status, 201) << own.body;
  const json own_rules = Body(own)["status"]["resourceRules"];
  EXPECT_TRUE(grants(own_rules, "batch", "jobs", "create")) << own.body;  // gpu-workload-role
  EXPECT_TRUE(grants(own_rules, "", "pods/log", "get")) << own.body;      // view
  EXPECT_TRUE(grants(own_rules, "authorization.k8s.io", "selfsubjectaccessreviews", "create")) << own.body;  // basic-user
  EXPECT_FALSE(Body(own)["status"]["nonResourceRules"].empty()) << own.body;  // discovery
  EXPECT_EQ(Body(own)["status"]["incomplete"], false);

  const ApiResponse other = Send(dana, "POST", kRulesReviews, RulesReview("team-nlp").dump());
  ASSERT_EQ(other.status, 201) << other.body;
  const json other_rules = Body(other)["status"]["resourceRules"];
  EXPECT_FALSE(grants(other_rules, "batch", "jobs", "create")) << other.body;
  EXPECT_FALSE(grants(other_rules, "", "pods", "get")) << other.body;
  EXPECT_TRUE(grants(other_rules, "authorization.k8s.io", "selfsubjectaccessreviews", "create")) << other.body;
}

TEST_F(SecurityTest, ANodesSelfSubjectAccessReviewAnswersByTheNodeRules) {
  // kube-apiserver answers a review with its whole authorizer chain, the Node
  // authorizer included: n1 may read any Node (as its requests are allowed),
  // so `can-i get nodes/n2` as n1 is yes, and `can-i create namespaces` no.
  auto n1 = As(NodeToken("n1"));
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeNode("n2")));
  EXPECT_EQ(Get(n1, "/api/v1/nodes/n2"), 200);  // the request itself
  const ApiResponse review = Send(n1, "POST", kAccessReviews, ResourceReview({{"verb", "get"}, {"resource", "nodes"}, {"name", "n2"}}).dump());
  ASSERT_EQ(review.status, 201) << review.body;
  EXPECT_EQ(Body(review)["status"]["allowed"], true) << review.body;
  const ApiResponse no = Send(n1, "POST", kAccessReviews, ResourceReview({{"verb", "create"}, {"resource", "namespaces"}}).dump());
  EXPECT_EQ(Body(no)["status"]["allowed"], false) << no.body;
}

// ===========================================================================
// 7. The node rules of an agent's credential.

class NodeRulesTest : public SecurityTest {
 protected:
  void SetUp() override {
    SecurityTest::SetUp();
    if (HasFatalFailure()) return;
    n1_token_ = NodeToken("n1");
    ASSERT_FALSE(n1_token_.empty());
  }
  // Namespace ml with nodes n1 and n2 and pods p1, p3 on n1 and p2 on n2, made by the admin.
  void SetUpPods() {
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeNode("n1")));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeNode("n2")));
    ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("ml"));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p1").In("ml").OnNode("n1").Build()));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p2").In("ml").OnNode("n2").Build()));
    ASSERT_NO_FATAL_FAILURE(AdminCreates(MakePod("p3").In("ml").OnNode("n1").Build()));
  }
  std::string n1_token_;
};

TEST_F(NodeRulesTest, ANodeCredentialIsTheNodesIdentity) {
  // The token minted for n1 authenticates as system:node:n1 in system:nodes.
  auto n1 = As(n1_token_);
  const ApiResponse r = Send(n1, "POST", kWhoAmI, R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["status"]["userInfo"]["username"], "system:node:n1");
  EXPECT_EQ(Body(r)["status"]["userInfo"]["groups"], (json{"system:nodes", "system:authenticated"}));
}

TEST_F(NodeRulesTest, ANodeCreatesAndUpdatesOnlyItsOwnNodeAndStatus) {
  // n1 registers itself and reports its status; n2's Node (the admin's) it
  // may read but neither create nor change.
  auto n1 = As(n1_token_);
  const ApiResponse own = Create(n1, MakeNode("n1"));
  EXPECT_EQ(own.status, 201) << own.body;
  const ApiResponse other = Create(n1, MakeNode("n2"));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(AdminGets("/api/v1/nodes/n2"), 404);  // nothing stored
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeNode("n2")));

  const std::string labels = R"({"metadata":{"labels":{"tessera.dev/agent":"yes"}}})";
  const std::string status = R"({"status":{"capacity":{"cpu":"8"}}})";
  EXPECT_EQ(Send(n1, "PATCH", "/api/v1/nodes/n1", labels, kMergePatch).status, 200);
  EXPECT_EQ(Send(n1, "PATCH", "/api/v1/nodes/n1/status", status, kMergePatch).status, 200);
  // Once the loop gave n1 its pod range (its write would make a PUT read before it stale).
  auto admin = Admin();
  json n1_node = WaitForObject(admin, "/api/v1/nodes/n1", [](const json& n) {
    return !n.value("spec", json::object()).value("podCIDR", "").empty();
  });
  EXPECT_EQ(Send(n1, "PUT", "/api/v1/nodes/n1", n1_node.dump()).status, 200);
  n1_node = AdminReads("/api/v1/nodes/n1");
  EXPECT_EQ(Send(n1, "PUT", "/api/v1/nodes/n1/status", n1_node.dump()).status, 200);

  EXPECT_EQ(Get(n1, "/api/v1/nodes/n2"), 200);  // any Node may be read
  EXPECT_EQ(Send(n1, "PATCH", "/api/v1/nodes/n2", labels, kMergePatch).status, 403);
  EXPECT_EQ(Send(n1, "PATCH", "/api/v1/nodes/n2/status", status, kMergePatch).status, 403);
  const json n2_node = AdminReads("/api/v1/nodes/n2");
  EXPECT_EQ(Send(n1, "PUT", "/api/v1/nodes/n2", n2_node.dump()).status, 403);
  EXPECT_EQ(Send(n1, "PUT", "/api/v1/nodes/n2/status", n2_node.dump()).status, 403);
  const json after = AdminReads("/api/v1/nodes/n2");
  EXPECT_FALSE(after["metadata"].value("labels", json::object()).contains("tessera.dev/agent")) << after.dump();
  EXPECT_FALSE(after.value("status", json::object()).contains("capacity")) << after.dump();
}

TEST_F(NodeRulesTest, ANodeWritesOnlyItsOwnLease) {
  // tessera-node-lease/n1 is n1's heartbeat; n2's Lease is not n1's to write.
  auto n1 = As(n1_token_);
  EXPECT_EQ(Create(n1, MakeLease("n1")).status, 201);
  const std::string own = "/apis/coordination.k8s.io/v1/namespaces/tessera-node-lease/leases/n1";
  json lease = AdminReads(own);
  lease["spec"]["renewTime"] = "2030-01-01T00:00:00.000000Z";
  EXPECT_EQ(Send(n1, "PUT", own, lease.dump()).status, 200);
  EXPECT_EQ(Send(n1, "PATCH", own, R"({"spec":{"leaseDurationSeconds":41}})", kMergePatch).status, 200);

  EXPECT_EQ(Create(n1, MakeLease("n2")).status, 403);
  const std::string other = "/apis/coordination.k8s.io/v1/namespaces/tessera-node-lease/leases/n2";
  EXPECT_EQ(AdminGets(other), 404);  // nothing stored
  ASSERT_NO_FATAL_FAILURE(AdminCreates(MakeLease("n2")));
  json theirs = AdminReads(other);
  theirs["spec"]["holderIdentity"] = "n1";
  EXPECT_EQ(Send(n1, "PUT", other, theirs.dump()).status, 403);
  EXPECT_EQ(Send(n1, "PATCH", other, R"({"spec":{"holderIdentity":"n1"}})", kMergePatch).status, 403);
  EXPECT_EQ(Send(n1, "DELETE", other).status, 403);
  EXPECT_EQ(AdminReads(other)["spec"]["holderIdentity"], "n2");
}

TEST_F(NodeRulesTest, ANodeReadsNamespacesButCannotCreateThem) {
  // An agent reads a pod's Namespace (its uid range); it makes none.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  auto n1 = As(n1_token_);
  EXPECT_EQ(Get(n1, "/api/v1/namespaces/team-a"), 200);
  const ApiResponse create = Create(n1, MakeNamespace("from-node"));
  EXPECT_EQ(create.status, 403) << create.body;
  EXPECT_EQ(Message(create), ForbiddenMessage("system:node:n1", "create", "namespaces", "", ""));
  EXPECT_EQ(AdminGets("/api/v1/namespaces/from-node"), 404);
}

TEST_F(NodeRulesTest, ANodePatchesTheStatusOfOnlyThePodsBoundToIt) {
  // p1 runs on n1, p2 on n2: n1 reports p1's status; p2's is refused and stays as it was.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto n1 = As(n1_token_);
  const std::string running = R"({"status":{"phase":"Running"}})";
  const ApiResponse own = Send(n1, "PATCH", "/api/v1/namespaces/ml/pods/p1/status", running, kMergePatch);
  EXPECT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(AdminReads("/api/v1/namespaces/ml/pods/p1")["status"]["phase"], "Running");
  const ApiResponse other = Send(n1, "PATCH", "/api/v1/namespaces/ml/pods/p2/status", running, kMergePatch);
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(Body(other)["reason"], "Forbidden");
  EXPECT_NE(AdminReads("/api/v1/namespaces/ml/pods/p2").value("status", json::object()).value("phase", ""), "Running");
}

TEST_F(NodeRulesTest, ANodeGetsOnlyThePodsBoundToIt) {
  // n1 reads p1 (bound to it), not p2 (bound to n2): the refusal says nothing of p2.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto n1 = As(n1_token_);
  EXPECT_EQ(Get(n1, "/api/v1/namespaces/ml/pods/p1"), 200);
  const ApiResponse other = Send(n1, "GET", "/api/v1/namespaces/ml/pods/p2");
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(other.body.find("\"spec\""), std::string::npos) << other.body;  // nothing of p2 leaks
}

TEST_F(NodeRulesTest, ANodeDeletesOnlyThePodsBoundToIt) {
  // p3 is on n1: deleted; p2 is on n2: refused and still there.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto n1 = As(n1_token_);
  EXPECT_EQ(Send(n1, "DELETE", "/api/v1/namespaces/ml/pods/p3").status, 200);
  EXPECT_EQ(AdminGets("/api/v1/namespaces/ml/pods/p3"), 404);
  EXPECT_EQ(Send(n1, "DELETE", "/api/v1/namespaces/ml/pods/p2").status, 403);
  EXPECT_EQ(AdminGets("/api/v1/namespaces/ml/pods/p2"), 200);
}

TEST_F(NodeRulesTest, ANodeSeesOtherNodesPodsOnlyAsTheirNetworkView) {
  // The pod network needs every pod's labels and IP (NetworkPolicy peers, a
  // gang's rank 0), and nothing more: commands, variables and images of the
  // pods not asked for by its own node selector stay hidden.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto n1 = As(n1_token_);
  for (const char* path : {"/api/v1/pods", "/api/v1/namespaces/ml/pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2"}) {
    const ApiResponse all = Send(n1, "GET", path);
    ASSERT_EQ(all.status, 200) << path << ": " << all.body;
    const json items = Body(all)["items"];
    ASSERT_FALSE(items.empty()) << path;
    for (const json& pod : items) {
      EXPECT_TRUE(pod["metadata"].contains("labels") || pod["metadata"].contains("name")) << pod.dump();
      EXPECT_FALSE(pod["spec"].contains("serviceAccountName")) << pod.dump();
      for (const json& c : pod["spec"]["containers"]) {
        for (const char* hidden : {"command", "args", "env", "envFrom", "image", "volumeMounts"}) {
          EXPECT_FALSE(c.contains(hidden)) << hidden << " of " << pod.dump();
        }
      }
    }
  }
  // Its own, asked for by its selector, whole.
  const ApiResponse mine = Send(n1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
  ASSERT_EQ(mine.status, 200);
  EXPECT_TRUE(Body(mine)["items"][0]["spec"]["containers"][0].contains("command")) << mine.body;
  // It still may not change another node's pod.
  EXPECT_EQ(Send(n1, "DELETE", "/api/v1/namespaces/ml/pods/p2").status, 403);
}

TEST_F(NodeRulesTest, ANodeListsAndWatchesItsOwnPodsWhole) {
  // fieldSelector spec.nodeName=n1 is the agent's view of its own pods.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto n1 = As(n1_token_);
  const ApiResponse mine = Send(n1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
  ASSERT_EQ(mine.status, 200) << mine.body;
  const json listed = Body(mine);
  std::vector<std::string> names;
  for (const json& item : listed["items"]) names.push_back(item["metadata"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"p1", "p3"}));

  // The allowed watch streams: its first event is one of n1's pods (a
  // watchdog ends the stream should none come, so that a failure cannot hang).
  std::string first;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (!done_cv.wait_for(lock, std::chrono::seconds(10), [&] { return done; })) n1.Cancel();
  });
  Status s = n1.Stream("/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1", [&](const std::string& line) {
    first = line;
    return false;
  });
  {
    std::lock_guard lock(mu);
    done = true;
  }
  done_cv.notify_all();
  watchdog.join();
  const json event = json::parse(first, nullptr, false);
  ASSERT_TRUE(event.is_object()) << first << " " << s.ToString();
  EXPECT_EQ(event["type"], "ADDED") << first;
  EXPECT_EQ(event["object"]["spec"]["nodeName"], "n1") << first;
}

TEST_F(NodeRulesTest, ANodeRequestsTokensOnlyForItsPodsOwnServiceAccountBoundToThePod) {
  // p1 (on n1) runs as ServiceAccount default: n1 may have a token for it
  // bound to p1. Not bound to p2 (another node's), not unbound, and not for
  // another ServiceAccount of the namespace.
  ASSERT_NO_FATAL_FAILURE(SetUpPods());
  auto admin = Admin();
  WaitForObject(admin, "/api/v1/namespaces/ml/serviceaccounts/default", [](const json&) { return true; });
  ASSERT_NO_FATAL_FAILURE(AdminCreates(
      json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "other"}, {"namespace", "ml"}}}}));
  auto n1 = As(n1_token_);
  const std::string token = "/api/v1/namespaces/ml/serviceaccounts/default/token";
  const ApiResponse own = Send(n1, "POST", token, MakeTokenRequest("p1").dump());
  ASSERT_EQ(own.status, 201) << own.body;
  const std::string issued = Body(own)["status"].value("token", std::string());
  ASSERT_FALSE(issued.empty()) << own.body;
  // The token is the pod's ServiceAccount, bound to p1.
  auto pod_identity = As(issued);
  const ApiResponse who = Send(pod_identity, "POST", kWhoAmI, R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_EQ(who.status, 201) << who.body;
  EXPECT_EQ(Body(who)["status"]["userInfo"]["username"], "system:serviceaccount:ml:default");
  EXPECT_EQ(Body(who)["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"], (json{"p1"}));

  const ApiResponse other_pod = Send(n1, "POST", token, MakeTokenRequest("p2").dump());
  EXPECT_EQ(other_pod.status, 403) << other_pod.body;
  const ApiResponse unbound = Send(n1, "POST", token, MakeTokenRequest().dump());
  EXPECT_EQ(unbound.status, 403) << unbound.body;
  const ApiResponse other_account =
      Send(n1, "POST", "/api/v1/namespaces/ml/serviceaccounts/other/token", MakeTokenRequest("p1").dump());
  EXPECT_EQ(other_account.status, 403) << other_account.body;
}

// ===========================================================================
// 8. Anonymous requests and users without a binding.

TEST_F(SecurityTest, RequestsWithoutATokenAreUnauthorizedForEveryVerb) {
  // No credential is 401 before any authorization, whatever the verb, and
  // for the self reviews too.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  const json pod = MakePod("p").In("team-a").Build();
  ASSERT_NO_FATAL_FAILURE(AdminCreates(pod));
  auto anonymous = As("");
  for (const VerbRequest& v : EveryVerb("/api/v1/namespaces/team-a/pods", pod, MakePod("fresh").In("team-a").Build())) {
    const ApiResponse r = Send(anonymous, v);
    EXPECT_EQ(r.status, 401) << v.verb << ": " << r.body;
    EXPECT_EQ(Body(r)["reason"], "Unauthorized") << v.verb;
  }
  EXPECT_EQ(Send(anonymous, "POST", kAccessReviews, PathReview("get", "/healthz").dump()).status, 401);
  EXPECT_EQ(Send(anonymous, "POST", kWhoAmI, "").status, 401);
  EXPECT_EQ(AdminGets("/api/v1/namespaces/team-a/pods/fresh"), 404);
}

TEST_F(SecurityTest, AUserWithoutBindingsIsForbiddenEveryVerb) {
  // nobody is signed in, but no binding names them or a group of theirs
  // beyond system:authenticated, whose defaults grant no resource.
  ASSERT_NO_FATAL_FAILURE(AdminCreatesNamespace("team-a"));
  const json pod = MakePod("p").In("team-a").Build();
  ASSERT_NO_FATAL_FAILURE(AdminCreates(pod));
  auto nobody = As(kNobody);
  for (const VerbRequest& v : EveryVerb("/api/v1/namespaces/team-a/pods", pod, MakePod("fresh").In("team-a").Build())) {
    const ApiResponse r = Send(nobody, v);
    EXPECT_EQ(r.status, 403) << v.verb << ": " << r.body;
    EXPECT_EQ(Message(r), ForbiddenMessage("nobody", v.verb, "pods", "", "team-a", v.names_object ? "p" : "")) << v.verb;
  }
  EXPECT_EQ(AdminGets("/api/v1/namespaces/team-a/pods/fresh"), 404);
  EXPECT_EQ(AdminGets("/api/v1/namespaces/team-a/pods/p"), 200);
}

TEST_F(SecurityTest, AUserWithoutBindingsMayStillAskWhoTheyAreAndWhatTheyMayDo) {
  // system:basic-user, bound to system:authenticated, grants the three self
  // reviews to everyone signed in.
  auto nobody = As(kNobody);
  const ApiResponse who = Send(nobody, "POST", kWhoAmI, R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_EQ(who.status, 201) << who.body;
  EXPECT_EQ(Body(who)["status"]["userInfo"]["username"], "nobody");
  EXPECT_EQ(Body(who)["status"]["userInfo"]["groups"], (json{"system:authenticated"}));
  const ApiResponse access =
      Send(nobody, "POST", kAccessReviews, ResourceReview({{"namespace", "default"}, {"verb", "list"}, {"resource", "pods"}}).dump());
  ASSERT_EQ(access.status, 201) << access.body;
  EXPECT_EQ(Body(access)["status"]["allowed"], false);
  const ApiResponse rules = Send(nobody, "POST", kRulesReviews, RulesReview("default").dump());
  ASSERT_EQ(rules.status, 201) << rules.body;
  EXPECT_TRUE(Body(rules)["status"].contains("resourceRules")) << rules.body;
}

}  // namespace
}  // namespace tessera
