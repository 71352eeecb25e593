// The isolation matrix (DESIGN.md section 12), over real HTTP on 127.0.0.1 with
// real tokens: every served kind (AllKinds(), so that a kind added later is
// covered or fails loudly) x every verb and subresource x (own namespace
// team-a, another namespace team-b, the cluster scope), asked by five callers:
//   editor      erin, ClusterRole edit bound by a RoleBinding in team-a
//   viewer      vic, ClusterRole view in team-a
//   team admin  ted, ClusterRole admin in team-a
//   agent       node n1's agent (system:node:n1), minted by POST /api/v1/nodes/n1/token
//   anonymous   no token at all
// Each cell's answer is checked against a table written here from the intent
// of the default roles (auth/bootstrap_policy.cc) and Kubernetes' semantics,
// not derived from the server's code: a denial is exactly 403 Forbidden in
// Kubernetes' Status (401 Unauthorized for anonymous); an allowed cell is
// anything but 401 and 403 (authorization passed: 200, 201, 404, 405, 409 and
// 422 all say so). After every denied write the admin checks that nothing
// changed. All mismatches are reported at once, one line per cell.
//
// The scopes: a namespaced kind is asked in team-a and team-b (every verb and
// subresource on an object there, its collection), and listed and watched
// across all namespaces; a cluster-scoped kind is asked at the cluster scope;
// a Namespace object is asked about in its own namespace, as Kubernetes does
// (so GET /api/v1/namespaces/team-a is a team-a request), and its collection
// at the cluster scope.
//
// The agent: the pods in team-a it is asked about are bound to n1 (its own),
// those in team-b to n2; beside the main matrix come the objects that only a
// node may own (node n1 itself, its Lease in tessera-node-lease and n2's, pods
// listed by spec.nodeName, tokens bound to a pod), asked by every caller.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/kinds.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Verbs, as RBAC names them; a set of them is a bit mask.

using Verbs = uint32_t;
enum Verb : Verbs {
  kGet = 1 << 0,
  kList = 1 << 1,
  kWatch = 1 << 2,
  kCreate = 1 << 3,
  kUpdate = 1 << 4,
  kPatch = 1 << 5,
  kDelete = 1 << 6,
  kDeleteCollection = 1 << 7,
};
constexpr Verbs kNone = 0;
constexpr Verbs kRead = kGet | kList | kWatch;
constexpr Verbs kWrite = kCreate | kUpdate | kPatch | kDelete | kDeleteCollection;
constexpr Verbs kEvery = kRead | kWrite;

std::string_view VerbName(Verb v) {
  switch (v) {
    case kGet: return "get";
    case kList: return "list";
    case kWatch: return "watch";
    case kCreate: return "create";
    case kUpdate: return "update";
    case kPatch: return "patch";
    case kDelete: return "delete";
    case kDeleteCollection: return "deletecollection";
  }
  return "?";
}

// The verbs a subresource is asked with (those its handler serves).
std::vector<Verb> SubresourceVerbs(std::string_view subresource) {
  if (subresource == "status") return {kGet, kUpdate, kPatch};
  if (subresource == "log") return {kGet};
  if (subresource == "token") return {kCreate};
  if (subresource == "approval") return {kUpdate, kPatch};
  if (subresource == "render") return {kCreate};
  return {};
}

constexpr std::string_view kOwnNs = "team-a";
constexpr std::string_view kOtherNs = "team-b";
constexpr std::string_view kLeaseNs = "tessera-node-lease";
constexpr std::string_view kNode = "n1";       // the agent's node
constexpr std::string_view kOtherNode = "n2";  // somebody else's

// ---------------------------------------------------------------------------
// The expectations: what each caller may do to each stored kind, keyed by store
// key. Written from the default roles' intent, independently of the server:
//   view   reads what a team runs and is charged (pods and their logs, jobs,
//          workloads, queues, quotas, budgets, approvals, service accounts,
//          network policies, Services and EndpointSlices, events, its own
//          Namespace), never RBAC objects, leases or anything cluster-scoped;
//   edit   also writes pods, service accounts (and asks their tokens), Secrets,
//          Services, Jobs, Volcano Jobs, Workloads and NetworkPolicies, but no
//          status, no EndpointSlices, queues, quotas, budgets or approvals;
//   admin  also Roles and RoleBindings, and approves (approvalrequests/approval);
// all three in team-a only, where the RoleBinding is. The agent (Kubernetes'
// Node authorizer): reads any Node, Namespace, NetworkPolicy, Service and
// EndpointSlice, writes events anywhere, and
// acts on its own things only: its Node (and status), its Lease, the pods bound
// to it (and their status), tokens bound to such a pod; nothing else. Every
// signed-in caller (system:basic-user) reads the template catalogue and renders
// from it (templates, templates/render), and nothing else of the cluster scope.

struct Grants {
  Verbs view = kNone;       // ClusterRole view, in its RoleBinding's namespace
  Verbs edit = kNone;       // what edit adds (edit aggregates view)
  Verbs admin = kNone;      // what admin adds (admin aggregates edit)
  Verbs agent_any = kNone;  // node n1's agent, on any object of the kind
  Verbs agent_own = kNone;  // ... and on its own (bound to n1, named n1)
  Verbs signed_in = kNone;  // every signed-in caller, anywhere (system:basic-user): the template catalogue
};

struct KindExpectation {
  std::string_view store_key;
  Grants object;
  // Subresources beside status (which every stored kind serves): log, token,
  // approval; a "status" entry gives status' grants (none when absent).
  std::vector<std::pair<std::string_view, Grants>> subresources;
  // A minimal valid object's fields beside apiVersion, kind and metadata.
  std::string_view fields;
};

constexpr std::string_view kContainers = R"([{"name":"main","image":"busybox","command":["sleep","1"]}])";

const std::vector<KindExpectation>& ExpectationTable() {
  static const std::vector<KindExpectation> table = {
      // An agent reads Namespaces (uid blocks, and the labels NetworkPolicies select on).
      {.store_key = "/Namespace",
       .object = {.view = kRead, .agent_any = kRead},
       .subresources = {{"status", {.view = kGet}}},
       .fields = "{}"},
      {.store_key = "/ResourceQuota",
       .object = {.view = kRead},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"hard":{"pods":"10"}}})"},
      {.store_key = "/Pod",
       // Any agent lists and watches every pod, answered with their network view
       // only (tests/server/security_test.cc checks what it leaves out).
       .object = {.view = kRead,
                  .edit = kWrite,
                  .agent_any = kList | kWatch,
                  .agent_own = kGet | kList | kWatch | kUpdate | kPatch | kDelete},
       .subresources = {{"status", {.view = kGet, .agent_own = kGet | kUpdate | kPatch}}, {"log", {.view = kGet}}},
       .fields = R"({"spec":{"restartPolicy":"Never","containers":CONTAINERS}})"},
      {.store_key = "/Node",
       .object = {.agent_any = kRead, .agent_own = kCreate | kUpdate | kPatch},
       .subresources = {{"status", {.agent_own = kGet | kUpdate | kPatch}}, {"token", {}}},
       .fields = "{}"},
      {.store_key = "/Event",
       .object = {.view = kRead, .agent_any = kCreate | kUpdate | kPatch},
       .fields = R"({"involvedObject":{"kind":"Pod","name":"p"},"reason":"Matrix","message":"m","type":"Normal"})"},
      {.store_key = "/ServiceAccount",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"token", {.edit = kCreate, .agent_own = kCreate}}},
       .fields = "{}"},
      // A viewer does not read Secrets, as in Kubernetes; an agent reads only those its pods name.
      {.store_key = "/Secret", .object = {.edit = kEvery}, .fields = R"({"type":"Opaque","data":{"k":"dg=="}})"},
      // Services as Kubernetes' roles have them; an agent reads them and their
      // EndpointSlices (kube-proxy's needs), which only the server's controller writes.
      {.store_key = "/Service",
       .object = {.view = kRead, .edit = kWrite, .agent_any = kRead},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"ports":[{"port":80}]}})"},
      {.store_key = "discovery.k8s.io/EndpointSlice",
       .object = {.view = kRead, .agent_any = kRead},
       .fields = R"({"addressType":"IPv4","endpoints":[],"ports":[]})"},
      // A viewer reads ConfigMaps (unlike Secrets); an agent reads only those its pods name.
      {.store_key = "/ConfigMap", .object = {.view = kRead, .edit = kWrite}, .fields = R"({"data":{"k":"v"}})"},
      // Claims as Kubernetes' roles have them; an agent reads only those its pods name.
      {.store_key = "/PersistentVolumeClaim",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}})"},
      {.store_key = "batch/Job",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":CONTAINERS}}}})"},
      {.store_key = "scheduling.k8s.io/PriorityClass", .object = {}, .fields = R"({"value":1,"description":"matrix"})"},
      {.store_key = "rbac.authorization.k8s.io/Role",
       .object = {.admin = kEvery},
       .fields = R"({"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]})"},
      {.store_key = "rbac.authorization.k8s.io/RoleBinding",
       .object = {.admin = kEvery},
       .fields = R"({"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},)"
                 R"("subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"matrix-nobody"}]})"},
      {.store_key = "rbac.authorization.k8s.io/ClusterRole",
       .object = {},
       .fields = R"({"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]})"},
      {.store_key = "rbac.authorization.k8s.io/ClusterRoleBinding",
       .object = {},
       .fields = R"({"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},)"
                 R"("subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"matrix-nobody"}]})"},
      {.store_key = "networking.k8s.io/NetworkPolicy",
       .object = {.view = kRead, .edit = kWrite, .agent_any = kRead},
       .fields = R"({"spec":{"podSelector":{},"policyTypes":["Ingress"]}})"},
      {.store_key = "coordination.k8s.io/Lease",
       .object = {.agent_own = kGet | kCreate | kUpdate | kPatch | kDelete},
       .fields = R"({"spec":{"holderIdentity":"matrix","leaseDurationSeconds":40}})"},
      // Flavors (prices) and quotas: every signed-in caller reads them.
      {.store_key = "kueue.x-k8s.io/ResourceFlavor", .object = {.signed_in = kRead}, .fields = R"({"spec":{}})"},
      {.store_key = "kueue.x-k8s.io/ClusterQueue", .object = {.signed_in = kRead}, .fields = R"({"spec":{}})"},
      {.store_key = "kueue.x-k8s.io/LocalQueue",
       .object = {.view = kRead},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"clusterQueue":"matrix-none"}})"},
      {.store_key = "kueue.x-k8s.io/Workload",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"active":false,"podSets":[{"name":"main","count":1,)"
                 R"("template":{"spec":{"restartPolicy":"Never","containers":CONTAINERS}}}]}})"},
      {.store_key = "batch.volcano.sh/Job",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"minAvailable":1,"tasks":[{"name":"main","replicas":1,)"
                 R"("template":{"spec":{"restartPolicy":"Never","containers":CONTAINERS}}}]}})"},
      {.store_key = "tessera.dev/UsageRecord",
       .object = {.view = kRead},
       .fields = R"({"spec":{"workload":"w","gpuMilli":0,"start":"2025-01-01T00:00:00Z"}})"},
      {.store_key = "tessera.dev/ApprovalPolicy",
       .object = {},
       .fields = R"({"spec":{"namespaceSelector":{"matchLabels":{"matrix":"nowhere"}},"thresholds":{"gpus":"100"}}})"},
      // The admin's request is for a Workload of the same name (the controller
      // deletes a request whose workload is gone): see EnsureTarget.
      {.store_key = "tessera.dev/ApprovalRequest",
       .object = {.view = kRead},
       .subresources = {{"status", {.view = kGet}}, {"approval", {.admin = kUpdate | kPatch}}},
       .fields = R"({"spec":{"workload":"w","requiredApprovals":1}})"},
      {.store_key = "tessera.dev/Budget",
       .object = {.view = kRead},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"period":"Monthly","gpuHours":"100"}})"},
      {.store_key = "tessera.dev/TrainingJob",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"replicas":1,"template":{"spec":{"containers":CONTAINERS}}}})"},
      {.store_key = "tessera.dev/Pipeline",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"steps":[{"name":"a","template":{"spec":{"containers":CONTAINERS}}}]}})"},
      {.store_key = "tessera.dev/PipelineRun",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"pipelineRef":{"name":"matrix-none"}}})"},
      {.store_key = "tessera.dev/Notebook",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"gpu":"0.25"}})"},
      // The catalogue: read and rendered from by everyone signed in; written by cluster-admin.
      {.store_key = "tessera.dev/Template",
       .object = {.signed_in = kRead},
       .subresources = {{"render", {.signed_in = kCreate}}},
       .fields = R"({"spec":{"displayName":"matrix","object":{"apiVersion":"batch/v1","kind":"Job","spec":{)"
                 R"("template":{"spec":{"restartPolicy":"Never","containers":CONTAINERS}}}}}})"},
      {.store_key = "tessera.dev/InferenceService",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"replicas":1,"template":{"spec":{"containers":CONTAINERS}}}})"},
      {.store_key = "tessera.dev/Sweep",
       .object = {.view = kRead, .edit = kWrite},
       .subresources = {{"status", {.view = kGet}}},
       .fields = R"({"spec":{"objective":{"type":"minimize","objectiveMetricName":"loss"},)"
                 R"("algorithm":{"algorithmName":"random"},"maxTrialCount":1,)"
                 R"("parameters":[{"name":"lr","parameterType":"double","feasibleSpace":{"min":"0.1","max":"1"}}],)"
                 R"("trialTemplate":{"template":{"spec":{"restartPolicy":"Never","containers":CONTAINERS}}}}})"},
  };
  return table;
}

const KindExpectation* FindExpectation(std::string_view store_key) {
  for (const KindExpectation& e : ExpectationTable()) {
    if (e.store_key == store_key) return &e;
  }
  return nullptr;
}

Grants GrantsFor(const KindExpectation& e, std::string_view subresource) {
  if (subresource.empty()) return e.object;
  for (const auto& [name, grants] : e.subresources) {
    if (name == subresource) return grants;
  }
  return Grants{};  // status where the table lists none: nobody
}

// ---------------------------------------------------------------------------
// Callers.

enum class Role { kEditor, kViewer, kTeamAdmin, kAgent, kAnonymous };

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kEditor: return "editor";
    case Role::kViewer: return "viewer";
    case Role::kTeamAdmin: return "team admin";
    case Role::kAgent: return "agent n1";
    case Role::kAnonymous: return "anonymous";
  }
  return "?";
}

constexpr const char* kTokenFileText =
    "erin-token,erin,uid-erin\n"
    "vic-token,vic,uid-vic\n"
    "ted-token,ted,uid-ted\n";

// ---------------------------------------------------------------------------
// One cell: a request of one verb on one resource of a kind in one scope.

struct Cell {
  const KindInfo* kind = nullptr;
  const KindExpectation* expectation = nullptr;
  std::string subresource;
  Verb verb = kGet;
  std::string scope;  // for the report: "team-a", "team-b", "cluster", "node n1's lease"...
  std::string ns;     // the object's or collection's namespace; "" at the cluster scope
  // The key (AddTarget) of the object it names, or whose survival a refused
  // deletecollection is checked by; "" for list, watch and create.
  std::string target;
  std::string query;        // more of the query string ("fieldSelector=...")
  std::string create_name;  // the name a create gives (one that may exist); "" for a fresh one
  std::string token_pod;    // a TokenRequest bound to this pod
  bool agent_owns = false;  // the object, collection or token is node n1's own
};

// What a target object is: created by the admin when first needed, and again
// after a cell deleted it (under a fresh name unless its name is fixed).
struct TargetSpec {
  const KindInfo* kind = nullptr;
  std::string ns;
  std::string fixed_name;       // "" for a fresh unique one
  std::string node;             // a pod bound to this node
  std::string service_account;  // a pod running as this service account
};

struct Target {
  TargetSpec spec;
  std::string name;
  std::string uid;
  bool present = false;
};

std::string KindPath(const KindInfo& k) {
  return k.group.empty() ? "/api/" + std::string(k.version)
                         : "/apis/" + std::string(k.group) + "/" + std::string(k.version);
}

std::string CollectionPath(const KindInfo& k, const std::string& ns) {
  std::string p = KindPath(k);
  if (k.namespaced && !ns.empty()) p += "/namespaces/" + ns;
  return p + "/" + std::string(k.plural);
}

std::string ItemPath(const KindInfo& k, const std::string& ns, const std::string& name,
                     const std::string& subresource = "") {
  std::string p = CollectionPath(k, k.namespaced ? ns : "") + "/" + name;
  return subresource.empty() ? p : p + "/" + subresource;
}

std::string Resource(const Cell& c) {
  std::string r(c.kind->plural);
  if (!c.kind->group.empty()) r += "." + std::string(c.kind->group);
  return c.subresource.empty() ? r : r + "/" + c.subresource;
}

json Parse(const std::string& body) {
  json parsed = json::parse(body, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

std::string StringAt(const json& obj, std::initializer_list<const char*> path) {
  const json* at = &obj;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "";
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : "";
}

// A minimal valid object of `e`'s kind named `name` in `ns`, marked with the
// label matrix-cell=`marker` when one is given.
json MinimalObject(const KindInfo& kind, const KindExpectation& e, const std::string& ns, const std::string& name,
                   const std::string& marker = "") {
  std::string fields(e.fields);
  for (size_t at; (at = fields.find("CONTAINERS")) != std::string::npos;) fields.replace(at, 10, kContainers);
  json obj = json::parse(fields);
  obj["apiVersion"] = std::string(kind.api_version);
  obj["kind"] = std::string(kind.kind);
  obj["metadata"] = {{"name", name}};
  if (kind.namespaced) obj["metadata"]["namespace"] = ns;
  if (!marker.empty()) obj["metadata"]["labels"]["matrix-cell"] = marker;
  return obj;
}

json TokenRequest(const std::string& pod) {
  json request{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}};
  if (!pod.empty()) request["spec"]["boundObjectRef"] = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", pod}};
  return request;
}

// ---------------------------------------------------------------------------
// A watch's answer without the client's help: a 200 streams until the client
// goes, so only its status line is read; any other answer is read whole.

struct RawAnswer {
  int status = 0;
  std::string body;
  std::string error;  // why there is no answer
};

RawAnswer AskWatch(uint16_t port, const std::string& token, const std::string& target) {
  RawAnswer out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {.error = "socket failed"};
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return {.error = "connect failed"};
  }
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "Connection: close\r\n\r\n";
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      return {.error = "send failed"};
    }
    sent += static_cast<size_t>(n);
  }
  std::string got;
  char buffer[4096];
  size_t head_end = std::string::npos;
  std::optional<size_t> length;
  while (true) {
    if (head_end == std::string::npos && (head_end = got.find("\r\n\r\n")) != std::string::npos) {
      if (got.size() > 12) out.status = std::atoi(got.substr(9, 3).c_str());  // "HTTP/1.1 403 ..."
      if (out.status == 200) break;
      std::string head = got.substr(0, head_end);
      std::transform(head.begin(), head.end(), head.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (const size_t at = head.find("content-length:"); at != std::string::npos) {
        length = static_cast<size_t>(std::atoll(head.c_str() + at + 15));
      }
    }
    if (head_end != std::string::npos && length && got.size() >= head_end + 4 + *length) break;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (head_end == std::string::npos) return {.error = "no complete answer: " + got.substr(0, 200)};
  out.body = got.substr(head_end + 4);
  return out;
}

// ---------------------------------------------------------------------------
// The fixture: the server, the callers, the target objects.

class IsolationMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-isolation");
    const std::filesystem::path tokens = dir_ / "tokens.csv";
    std::ofstream(tokens) << kTokenFileText;
    ServerOptions options;
    options.token_auth_file = tokens.string();
    options.rate.per_second = 0;  // thousands of requests from each caller
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    admin_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token(), TlsClientOptions{}, kTimeout);
  }
  void TearDown() override {
    admin_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  static constexpr std::chrono::milliseconds kTimeout{10000};

  ApiResponse Send(ApiClient& client, const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& content_type = "application/json") {
    ++requests_;
    auto r = client.Request(method, path, body, content_type);
    if (!r) return ApiResponse{.status = 0, .body = r.error().ToString()};
    return *r;
  }

  // The admin creates `object` at `path`; its uid, or a test failure.
  std::string AdminCreates(const std::string& path, const json& object) {
    const ApiResponse r = Send(*admin_, "POST", path, object.dump());
    EXPECT_EQ(r.status, 201) << "the admin could not create " << path << ": " << r.body;
    return StringAt(Parse(r.body), {"metadata", "uid"});
  }

  // Namespaces, bindings, the agent's credential.
  void SetUpCallers() {
    const KindInfo& rb = *FindKindByStoreKey("rbac.authorization.k8s.io/RoleBinding");
    for (const auto& [user, role] : {std::pair{"erin", "edit"}, std::pair{"vic", "view"}, std::pair{"ted", "admin"}}) {
      json binding{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", "RoleBinding"},
                   {"metadata", {{"name", std::string(user) + "-" + role}, {"namespace", std::string(kOwnNs)}}},
                   {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                   {"subjects", {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user}}}}};
      AdminCreates(CollectionPath(rb, std::string(kOwnNs)), binding);
    }
    const ApiResponse minted =
        Send(*admin_, "POST", "/api/v1/nodes/" + std::string(kNode) + "/token", TokenRequest("").dump());
    ASSERT_EQ(minted.status, 201) << minted.body;
    const std::string node_token = StringAt(Parse(minted.body), {"status", "token"});
    ASSERT_FALSE(node_token.empty()) << minted.body;
    tokens_ = {{Role::kEditor, "erin-token"},
               {Role::kViewer, "vic-token"},
               {Role::kTeamAdmin, "ted-token"},
               {Role::kAgent, node_token},
               {Role::kAnonymous, ""}};
  }

  // The target `key` names, created (again) when it is not there.
  Target* EnsureTarget(const std::string& key) {
    auto it = targets_.find(key);
    if (it == targets_.end()) {
      ADD_FAILURE() << "no target " << key;
      return nullptr;
    }
    Target& t = it->second;
    if (t.present) return &t;
    const KindInfo& kind = *t.spec.kind;
    const KindExpectation& e = *FindExpectation(kind.store_key);
    t.name = t.spec.fixed_name.empty() ? Fresh("mx-t") : t.spec.fixed_name;
    json obj = MinimalObject(kind, e, t.spec.ns, t.name);
    if (kind.store_key == "/Pod") {
      if (!t.spec.node.empty()) obj["spec"]["nodeName"] = t.spec.node;
      if (!t.spec.service_account.empty()) obj["spec"]["serviceAccountName"] = t.spec.service_account;
    }
    if (kind.store_key == "tessera.dev/ApprovalRequest") {
      // The request of a Workload of its name, which it follows.
      const KindInfo& wk = *FindKindByStoreKey("kueue.x-k8s.io/Workload");
      const std::string uid = AdminCreates(CollectionPath(wk, t.spec.ns),
                                           MinimalObject(wk, *FindExpectation(wk.store_key), t.spec.ns, t.name));
      obj["spec"]["workload"] = t.name;
      obj["spec"]["workloadUID"] = uid;
    }
    t.uid = AdminCreates(CollectionPath(kind, t.spec.ns), obj);
    t.present = !t.uid.empty();
    return t.present ? &t : nullptr;
  }

  std::string AddTarget(TargetSpec spec) {
    const std::string key = std::string(spec.kind->store_key) + "|" + spec.ns + "|" + spec.fixed_name + "|" +
                            spec.node + "|" + spec.service_account;
    targets_.try_emplace(key, Target{.spec = std::move(spec)});
    return key;
  }

  std::string Fresh(const char* prefix) {
    char text[32];
    std::snprintf(text, sizeof(text), "%s%06d", prefix, ++serial_);
    return text;
  }

  // The cells of the main matrix, and those of the agent's own objects.
  std::vector<Cell> MainCells(std::vector<Cell>& last, std::vector<std::string>& missing);
  std::vector<Cell> AgentCells();

  // The caller `role`'s answer to `c`, and whether the admin finds that the
  // request changed nothing (checked only when it was refused); a line for the
  // report when either is not what the table expects.
  void Check(Role role, ApiClient& client, const Cell& c);

  bool Expected(Role role, const Cell& c, const std::string& rbac_ns) const {
    if (role == Role::kAnonymous) return false;
    // The what-if reads every team's history: cluster-admin only.
    if (c.kind->kind == "SimulationReview") return false;
    if (!c.kind->stored && !c.kind->namespaced) return true;  // the self reviews: every signed-in caller
    // A namespace's SchedulingReviews: whoever may submit work there (edit, and admin).
    if (!c.kind->stored) return rbac_ns == kOwnNs && (role == Role::kEditor || role == Role::kTeamAdmin);
    const Grants g = GrantsFor(*c.expectation, c.subresource);
    const bool own = rbac_ns == kOwnNs;
    if ((g.signed_in & c.verb) != 0) return true;
    switch (role) {
      case Role::kViewer: return own && (g.view & c.verb) != 0;
      case Role::kEditor: return own && ((g.view | g.edit) & c.verb) != 0;
      case Role::kTeamAdmin: return own && ((g.view | g.edit | g.admin) & c.verb) != 0;
      case Role::kAgent: return (g.agent_any & c.verb) != 0 || (c.agent_owns && (g.agent_own & c.verb) != 0);
      case Role::kAnonymous: return false;
    }
    return false;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> admin_;
  std::map<Role, std::string> tokens_;
  std::map<std::string, Target> targets_;
  int serial_ = 0;
  int requests_ = 0;
  int cells_ = 0;
  std::map<int, int> allowed_statuses_;  // what allowed cells answered, for the log
  std::vector<std::string> mismatches_;
};

std::vector<Cell> IsolationMatrixTest::MainCells(std::vector<Cell>& last, std::vector<std::string>& missing) {
  std::vector<Cell> cells;
  for (const KindInfo& kind : AllKinds()) {
    if (!kind.stored) {
      // Answered, never stored: only created; the self reviews by anyone signed in,
      // a namespace's (SchedulingReview) in each namespace.
      if (!kind.namespaced) {
        cells.push_back(Cell{.kind = &kind, .verb = kCreate, .scope = "cluster"});
      } else {
        for (std::string_view ns : {kOwnNs, kOtherNs}) {
          cells.push_back(Cell{.kind = &kind, .verb = kCreate, .scope = std::string(ns), .ns = std::string(ns)});
        }
      }
      continue;
    }
    const KindExpectation* e = FindExpectation(kind.store_key);
    if (e == nullptr) {
      missing.push_back(std::string(kind.store_key));
      continue;
    }
    std::vector<std::string> subresources = {"status"};
    for (const auto& [name, unused] : e->subresources) {
      if (name != "status") subresources.emplace_back(name);
    }
    // Every verb on the object `target` (and on its collection) in `ns`.
    auto every_verb = [&](const std::string& scope, const std::string& ns, const std::string& target, bool collection,
                          bool agent_owns, std::vector<Cell>& deletes) {
      const Cell base{.kind = &kind, .expectation = e, .scope = scope, .ns = ns, .agent_owns = agent_owns};
      auto add = [&](Verb verb, std::string subresource, bool names_target, std::vector<Cell>& into) {
        Cell c = base;
        c.verb = verb;
        c.subresource = std::move(subresource);
        c.target = names_target ? target : "";
        if (!names_target || verb == kDeleteCollection) c.agent_owns = false;  // no object of its own
        into.push_back(std::move(c));
      };
      add(kGet, "", true, cells);
      if (collection) {
        add(kList, "", false, cells);
        add(kWatch, "", false, cells);
        add(kCreate, "", false, cells);
      }
      add(kUpdate, "", true, cells);
      add(kPatch, "", true, cells);
      for (const std::string& sub : subresources) {
        for (Verb v : SubresourceVerbs(sub)) add(v, sub, true, cells);
      }
      add(kDelete, "", true, deletes);
      if (collection) {
        add(kDeleteCollection, "", true, cells);  // names the target only for the check that it survives
      }
    };
    if (kind.namespaced) {
      for (std::string_view ns : {kOwnNs, kOtherNs}) {
        // Pods in team-a are bound to the agent's node, in team-b to another.
        const std::string node = kind.store_key == "/Pod" ? std::string(ns == kOwnNs ? kNode : kOtherNode) : "";
        const std::string target = AddTarget({.kind = &kind, .ns = std::string(ns), .node = node});
        every_verb(std::string(ns), std::string(ns), target, /*collection=*/true,
                   /*agent_owns=*/ns == kOwnNs && !node.empty(), cells);
      }
      for (Verb v : {kList, kWatch}) {
        cells.push_back(Cell{.kind = &kind, .expectation = e, .verb = v, .scope = "all namespaces"});
      }
    } else if (kind.store_key == "/Namespace") {
      // A Namespace object is asked about in its own namespace; team-a and
      // team-b are never deleted before the very end.
      for (std::string_view ns : {kOwnNs, kOtherNs}) {
        const std::string target = AddTarget({.kind = &kind, .fixed_name = std::string(ns)});
        every_verb(std::string(ns), "", target, /*collection=*/false, /*agent_owns=*/false, last);
      }
      every_verb("cluster", "", AddTarget({.kind = &kind}), /*collection=*/true, /*agent_owns=*/false, cells);
    } else {
      every_verb("cluster", "", AddTarget({.kind = &kind}), /*collection=*/true, /*agent_owns=*/false, cells);
    }
  }
  return cells;
}

std::vector<Cell> IsolationMatrixTest::AgentCells() {
  std::vector<Cell> cells;
  const KindInfo& node = *FindKindByStoreKey("/Node");
  const KindInfo& lease = *FindKindByStoreKey("coordination.k8s.io/Lease");
  const KindInfo& pod = *FindKindByStoreKey("/Pod");
  const KindInfo& sa = *FindKindByStoreKey("/ServiceAccount");
  auto cell = [&](const KindInfo& k, Verb v, std::string sub, std::string scope, std::string ns, std::string target,
                  bool owns) {
    return Cell{.kind = &k,
                .expectation = FindExpectation(k.store_key),
                .subresource = std::move(sub),
                .verb = v,
                .scope = std::move(scope),
                .ns = std::move(ns),
                .target = std::move(target),
                .agent_owns = owns};
  };
  // Its own Node: read, written, its status, and created (it exists: 409);
  // never deleted, nor a token minted for it.
  const std::string n1 = AddTarget({.kind = &node, .fixed_name = std::string(kNode)});
  for (Verb v : {kGet, kUpdate, kPatch}) cells.push_back(cell(node, v, "", "node n1 itself", "", n1, true));
  for (Verb v : {kGet, kUpdate, kPatch}) cells.push_back(cell(node, v, "status", "node n1 itself", "", n1, true));
  cells.push_back(cell(node, kCreate, "token", "node n1 itself", "", n1, true));
  cells.push_back(cell(node, kCreate, "", "node n1 itself", "", "", true));
  cells.back().create_name = kNode;
  cells.push_back(cell(node, kDelete, "", "node n1 itself", "", n1, true));
  // Its Lease in tessera-node-lease, and another node's.
  const std::string own_lease =
      AddTarget({.kind = &lease, .ns = std::string(kLeaseNs), .fixed_name = std::string(kNode)});
  const std::string other_lease =
      AddTarget({.kind = &lease, .ns = std::string(kLeaseNs), .fixed_name = std::string(kOtherNode)});
  for (Verb v : {kGet, kUpdate, kPatch})
    cells.push_back(cell(lease, v, "", "node n1's lease", std::string(kLeaseNs), own_lease, true));
  cells.push_back(cell(lease, kGet, "status", "node n1's lease", std::string(kLeaseNs), own_lease, true));
  cells.push_back(cell(lease, kCreate, "", "node n1's lease", std::string(kLeaseNs), "", true));
  cells.back().create_name = kNode;
  cells.push_back(cell(lease, kDelete, "", "node n1's lease", std::string(kLeaseNs), own_lease, true));
  for (Verb v : {kGet, kUpdate, kPatch, kDelete}) {
    cells.push_back(cell(lease, v, "", "node n2's lease", std::string(kLeaseNs), other_lease, false));
  }
  cells.push_back(cell(lease, kCreate, "", "node n2's lease", std::string(kLeaseNs), "", false));
  cells.back().create_name = kOtherNode;
  cells.push_back(cell(lease, kList, "", "tessera-node-lease", std::string(kLeaseNs), "", false));
  // A lease named for it outside tessera-node-lease is not its lease.
  cells.push_back(cell(lease, kCreate, "", "team-a, a lease named n1", std::string(kOwnNs), "", false));
  cells.back().create_name = kNode;
  // Pods selected by node: its own pods wherever they are, nobody else's.
  for (Verb v : {kList, kWatch}) {
    cells.push_back(cell(pod, v, "", "all namespaces, pods on n1", "", "", true));
    cells.back().query = "fieldSelector=spec.nodeName%3Dn1";
    cells.push_back(cell(pod, v, "", "all namespaces, pods on n2", "", "", false));
    cells.back().query = "fieldSelector=spec.nodeName%3Dn2";
    for (std::string_view ns : {kOwnNs, kOtherNs}) {
      cells.push_back(cell(pod, v, "", std::string(ns) + ", pods on n1", std::string(ns), "", true));
      cells.back().query = "fieldSelector=spec.nodeName%3Dn1";
    }
  }
  // A token bound to a pod: for a pod of n1 (in team-a) and its service
  // account, and for a pod of n2 (in team-b).
  for (std::string_view ns : {kOwnNs, kOtherNs}) {
    const std::string account = AddTarget({.kind = &sa, .ns = std::string(ns), .fixed_name = "mx-runner"});
    const std::string bound = AddTarget({.kind = &pod,
                                         .ns = std::string(ns),
                                         .fixed_name = "mx-runner-pod",
                                         .node = std::string(ns == kOwnNs ? kNode : kOtherNode),
                                         .service_account = "mx-runner"});
    cells.push_back(cell(sa, kCreate, "token",
                         std::string(ns) + ", bound to a pod on " + std::string(ns == kOwnNs ? kNode : kOtherNode),
                         std::string(ns), account, ns == kOwnNs));
    cells.back().token_pod = bound;  // a target key, resolved when asked
  }
  return cells;
}

void IsolationMatrixTest::Check(Role role, ApiClient& client, const Cell& c) {
  ++cells_;
  const std::string marker = Fresh("mx-marker-");
  Target* target = nullptr;
  if (!c.target.empty() && (target = EnsureTarget(c.target)) == nullptr) return;  // a failure already
  std::string token_pod;
  if (!c.token_pod.empty()) {
    Target* bound = EnsureTarget(c.token_pod);
    if (bound == nullptr) return;
    token_pod = bound->name;
  }
  const KindInfo& kind = *c.kind;
  const std::string& name = target ? target->name : "";
  // The namespace authorization sees: a Namespace object is in itself.
  const std::string rbac_ns = kind.store_key == "/Namespace" && target ? name : c.ns;
  const bool allowed = Expected(role, c, rbac_ns);

  // The request.
  std::string method, path, body, content_type = "application/json";
  std::string created;  // a create's object name
  bool existed = false;
  std::string query = c.query.empty() ? "" : "?" + c.query;
  const std::string item = target ? ItemPath(kind, c.ns, name, c.subresource) : "";
  switch (c.verb) {
    case kGet:
      method = "GET";
      path = item;
      break;
    case kList:
      method = "GET";
      path = CollectionPath(kind, c.ns) + query;
      break;
    case kWatch:
      method = "GET";
      path = CollectionPath(kind, c.ns) + "?watch=true" + (c.query.empty() ? "" : "&" + c.query);
      break;
    case kCreate:
      method = "POST";
      if (c.subresource == "token") {
        path = item;
        body = TokenRequest(token_pod).dump();
      } else if (c.subresource == "render") {
        path = item;
        body = json{{"apiVersion", "tessera.dev/v1"},
                    {"kind", "TemplateRender"},
                    {"spec", {{"name", "mx-render"}, {"namespace", std::string(kOwnNs)}}}}
                   .dump();
      } else if (!kind.stored) {
        path = CollectionPath(kind, c.ns);
        json review{{"apiVersion", std::string(kind.api_version)}, {"kind", std::string(kind.kind)}};
        if (kind.kind == "SchedulingReview") {
          review["spec"] = json::parse(R"({"object": {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
              "metadata": {"name": "mx-forecast"},
              "spec": {"queueName": "default", "podSets": [{"name": "main", "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]}}})");
        } else if (kind.kind == "SimulationReview") {
          review["spec"] = {{"since", "1h"}};
        } else if (kind.kind == "SelfSubjectAccessReview") {
          review["spec"] = {{"resourceAttributes", {{"namespace", kOwnNs}, {"verb", "get"}, {"resource", "pods"}}}};
        } else if (kind.kind == "SelfSubjectRulesReview") {
          review["spec"] = {{"namespace", kOwnNs}};
        }
        body = review.dump();
      } else {
        created = c.create_name.empty() ? Fresh("mx-c") : c.create_name;
        path = CollectionPath(kind, c.ns);
        body = MinimalObject(kind, *c.expectation, c.ns, created, marker).dump();
        if (!c.create_name.empty()) existed = Send(*admin_, "GET", ItemPath(kind, c.ns, created)).status == 200;
      }
      break;
    case kUpdate: {
      method = "PUT";
      path = item;
      json obj = MinimalObject(kind, *c.expectation, c.ns, name, c.subresource.empty() ? marker : "");
      if (kind.store_key == "/Pod" && !target->spec.node.empty()) obj["spec"]["nodeName"] = target->spec.node;
      if (kind.store_key == "tessera.dev/ApprovalRequest") obj["spec"]["workload"] = name;
      if (c.subresource == "status") obj["status"] = {{"matrixMarker", marker}};
      if (c.subresource == "approval") {
        obj["status"] = {{"conditions", {{{"type", "Approved"}, {"status", "True"}, {"message", marker}}}}};
      }
      body = obj.dump();
      break;
    }
    case kPatch:
      method = "PATCH";
      path = item;
      content_type = "application/merge-patch+json";
      if (c.subresource.empty()) {
        body = json{{"metadata", {{"labels", {{"matrix-cell", marker}}}}}}.dump();
      } else if (c.subresource == "status") {
        body = json{{"status", {{"matrixMarker", marker}}}}.dump();
      } else {  // approval
        body = json{{"status", {{"conditions", {{{"type", "Approved"}, {"status", "True"}, {"message", marker}}}}}}}
                   .dump();
      }
      break;
    case kDelete:
      method = "DELETE";
      path = item;
      break;
    case kDeleteCollection:
      method = "DELETE";
      path = CollectionPath(kind, c.ns);
      break;
  }

  int status = 0;
  std::string answer;
  if (c.verb == kWatch) {
    ++requests_;
    const RawAnswer w = AskWatch(server_->port(), tokens_.at(role), path);
    status = w.status;
    answer = w.error.empty() ? w.body : w.error;
  } else {
    const ApiResponse r = Send(client, method, path, body, content_type);
    status = r.status;
    answer = r.body;
  }
  if (status >= 200 && status < 300 && target && (c.verb == kDelete) && c.subresource.empty()) target->present = false;

  const std::string verb_text = std::string(VerbName(c.verb));
  const std::string cell_text = std::string(RoleName(role)) + " | " + verb_text + " " + Resource(c) + " | " + c.scope +
                                (c.query.empty() ? "" : " (" + c.query + ")") + " | " + method + " " + path;
  const json status_body = Parse(answer);
  // Only a Status' reason: an object may have a field of that name (Events do).
  const bool is_status = status_body.is_object() && status_body.value("kind", "") == "Status";
  const std::string reason = is_status ? status_body.value("reason", "") : "";
  const std::string got = std::to_string(status) + (reason.empty() ? "" : " " + reason) +
                          (status >= 400 || status == 0 ? ": " + answer.substr(0, 240) : "");
  if (allowed) {
    allowed_statuses_[status]++;
    if (status == 401 || status == 403 || status == 0) {
      mismatches_.push_back(cell_text + " | expected allowed, got " + got);
    }
    return;
  }
  const int want = role == Role::kAnonymous ? 401 : 403;
  const std::string want_reason = role == Role::kAnonymous ? "Unauthorized" : "Forbidden";
  if (status != want || reason != want_reason || !is_status) {
    mismatches_.push_back(cell_text + " | expected " + std::to_string(want) + " " + want_reason + ", got " + got);
  }

  // Refused: nothing may have changed.
  auto state = [&](const std::string& what) { mismatches_.push_back(cell_text + " | refused, but " + what); };
  if (c.verb == kCreate && kind.stored && c.subresource.empty()) {
    const ApiResponse after = Send(*admin_, "GET", ItemPath(kind, c.ns, created));
    if (!existed && after.status != 404) state("the object was stored: GET answers " + std::to_string(after.status));
    if (existed && after.body.find(marker) != std::string::npos) state("the existing object was overwritten");
  } else if ((c.verb == kUpdate || c.verb == kPatch) && target) {
    const ApiResponse after = Send(*admin_, "GET", ItemPath(kind, c.ns, name));
    if (after.status != 200) {
      state("the object is gone: GET answers " + std::to_string(after.status));
      target->present = false;
    } else if (const size_t at = after.body.find(marker); at != std::string::npos) {
      state("the object was changed: ..." + after.body.substr(at < 100 ? 0 : at - 100, 200) + "...");
    }
  } else if ((c.verb == kDelete || c.verb == kDeleteCollection) && target) {
    const ApiResponse after = Send(*admin_, "GET", ItemPath(kind, c.ns, name));
    if (after.status != 200 || StringAt(Parse(after.body), {"metadata", "uid"}) != target->uid) {
      state("the object is gone: GET answers " + std::to_string(after.status));
      target->present = false;
    }
  }
}

TEST(IsolationMatrixTable, HasAnExpectationForEveryStoredKindAndNoOther) {
  // A kind added to the registry must be given its row here before the matrix
  // can cover it; a row for a kind no longer served is stale.
  std::vector<std::string> missing;
  for (const KindInfo& kind : AllKinds()) {
    if (kind.stored && FindExpectation(kind.store_key) == nullptr) missing.push_back(std::string(kind.store_key));
  }
  for (const std::string& m : missing) ADD_FAILURE() << "no expectation for kind " << m;
  for (const KindExpectation& e : ExpectationTable()) {
    const KindInfo* k = FindKindByStoreKey(e.store_key);
    EXPECT_TRUE(k != nullptr && k->stored) << "the table names " << e.store_key << ", which is not a stored kind";
  }
}

TEST_F(IsolationMatrixTest, EveryKindVerbAndScopeAnswersAsRbacSays) {
  // Five callers ask every cell; each answer is checked against the table, and
  // after each refused write the admin finds nothing changed.
  const auto started = std::chrono::steady_clock::now();
  std::vector<Cell> last;
  std::vector<std::string> missing;
  std::vector<Cell> cells = MainCells(last, missing);
  for (const std::string& m : missing) ADD_FAILURE() << "no expectation for kind " << m;
  const size_t main_cells = cells.size() + last.size();
  std::vector<Cell> agent = AgentCells();
  cells.insert(cells.end(), agent.begin(), agent.end());

  // The namespaces first (as targets: team-a and team-b are then never
  // recreated silently), the callers, then every other target.
  const KindInfo& ns_kind = *FindKindByStoreKey("/Namespace");
  for (std::string_view ns : {kOwnNs, kOtherNs}) {
    ASSERT_NE(EnsureTarget(AddTarget({.kind = &ns_kind, .fixed_name = std::string(ns)})), nullptr) << ns;
  }
  ASSERT_NO_FATAL_FAILURE(SetUpCallers());
  for (auto& [key, t] : targets_) {
    ASSERT_NE(EnsureTarget(key), nullptr) << "the admin could not create the target " << key;
  }

  // Each caller in turn, one connection each; the deletes of team-a and team-b
  // themselves come last of all, so that a wrong one spoils nothing else.
  const std::vector<Role> roles = {Role::kEditor, Role::kViewer, Role::kTeamAdmin, Role::kAgent, Role::kAnonymous};
  std::map<Role, std::unique_ptr<ApiClient>> clients;
  for (Role r : roles)
    clients[r] = std::make_unique<ApiClient>(server_->url(), tokens_.at(r), TlsClientOptions{}, kTimeout);
  int failed_cells = 0;
  auto check = [&](Role r, const Cell& c) {
    const size_t before = mismatches_.size();
    Check(r, *clients[r], c);
    if (mismatches_.size() > before) ++failed_cells;
  };
  for (Role r : roles) {
    for (const Cell& c : cells) check(r, c);
  }
  for (Role r : roles) {
    for (const Cell& c : last) check(r, c);
  }

  // cells checked = callers x cells each = 5 x (main matrix + the agent's own objects)
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string statuses;
  for (const auto& [code, count] : allowed_statuses_)
    statuses += " " + std::to_string(code) + "x" + std::to_string(count);
  std::printf(
      "isolation matrix: %zu kinds, %zu callers x %zu cells (%zu of the main matrix, %zu of the agent's "
      "own objects) = %d cells checked with %d requests in %.1f s; the allowed ones answered%s\n",
      AllKinds().size(), roles.size(), cells.size() + last.size(), main_cells, agent.size(), cells_, requests_, seconds,
      statuses.c_str());
  EXPECT_EQ(cells_, static_cast<int>(roles.size() * (cells.size() + last.size())));
  std::string report;
  for (const std::string& m : mismatches_) report += "\n  " + m;
  EXPECT_TRUE(mismatches_.empty()) << failed_cells << " of " << cells_
                                   << " cells differ from the table (caller | verb resource | scope | request | what):"
                                   << report;
}

}  // namespace
}  // namespace tessera
