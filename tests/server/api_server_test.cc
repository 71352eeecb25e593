// The API server over real HTTP on 127.0.0.1 and a real SQLite file: CRUD,
// conflicts, watches, authentication, bad input, and the seed's manifests.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "api/kinds.h"
#include "api/manifest.h"
#include "client/api_client.h"
#include "server/server.h"
#include "store/sqlite_store.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-api");
    StartServer();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void StartServer() {
    server_ = testing::StartLocalServer(dir_.string());
    ASSERT_NE(server_, nullptr);
  }
  ApiClient Client(const std::string& token) { return ApiClient(server_->url(), token); }
  ApiClient Admin() { return Client(server_->admin_token()); }

  // POSTs a manifest (YAML or JSON) to the path its kind lives at.
  ApiResponse CreateManifest(ApiClient& c, const json& obj) {
    const KindInfo* kind = FindKindByApiVersion(obj.value("apiVersion", ""), obj.value("kind", ""));
    EXPECT_NE(kind, nullptr) << obj.dump();
    const std::string ns = obj["metadata"].value("namespace", kind->namespaced ? "default" : "");
    auto r = c.Request("POST", CollectionPath(*kind, ns), obj.dump());
    EXPECT_TRUE(r.has_value());
    return *r;
  }
  static std::string CollectionPath(const KindInfo& k, const std::string& ns) {
    std::string base = k.group.empty() ? "/api/" + std::string(k.version)
                                       : "/apis/" + std::string(k.group) + "/" + std::string(k.version);
    if (k.namespaced) base += "/namespaces/" + ns;
    return base + "/" + std::string(k.plural);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
};

json Body(const ApiResponse& r) { return json::parse(r.body); }

TEST_F(ApiServerTest, RequestsWithoutAValidTokenAreUnauthorized) {
  // No token and a wrong token both get 401 with a Status saying how to authenticate.
  auto anonymous = Client("");
  auto r = anonymous.Request("GET", "/api/v1/namespaces");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Body(*r)["reason"], "Unauthorized");
  auto wrong = Client("not-the-token");
  EXPECT_EQ(wrong.Request("GET", "/api/v1/namespaces")->status, 401);
  // Health needs no token.
  EXPECT_EQ(anonymous.Request("GET", "/healthz")->status, 200);
}

TEST_F(ApiServerTest, AdminTokenFileIsPrivate) {
  const auto perms = std::filesystem::status(dir_ / "admin.token").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ApiServerTest, FirstStartHasDefaultsToSubmitTo) {
  auto c = Admin();
  auto pcs = Body(*c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses"));
  std::vector<std::string> names;
  for (const auto& item : pcs["items"]) names.push_back(item["metadata"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"batch", "development", "production", "training"}));
  EXPECT_EQ(c.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/default")->status, 200);
  EXPECT_EQ(c.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/default")->status, 200);
  EXPECT_EQ(c.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/default")->status, 200);
}

TEST_F(ApiServerTest, CreateGetListAndSelectByLabel) {
  auto c = Admin();
  for (const char* name : {"team-a", "team-b"}) {
    json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}, {"labels", {{"tier", name == std::string("team-a") ? "gold" : "silver"}}}}}};
    auto r = c.Request("POST", "/api/v1/namespaces", ns.dump());
    ASSERT_EQ(r->status, 201) << r->body;
    EXPECT_FALSE(Body(*r)["metadata"]["uid"].get<std::string>().empty());
    EXPECT_FALSE(Body(*r)["metadata"]["resourceVersion"].get<std::string>().empty());
  }
  auto got = c.Request("GET", "/api/v1/namespaces/team-a");
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(Body(*got)["metadata"]["labels"]["tier"], "gold");
  auto list = Body(*c.Request("GET", "/api/v1/namespaces?labelSelector=tier%3Dsilver"));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "team-b");
  EXPECT_EQ(list["kind"], "NamespaceList");
  // A list without selectors passes the stored documents on as text: the same
  // answer as one through the selectors' path that matches every object.
  const json whole = Body(*c.Request("GET", "/api/v1/namespaces"));
  const json selected = Body(*c.Request("GET", "/api/v1/namespaces?labelSelector=!no-such-label"));
  EXPECT_EQ(whole["items"], selected["items"]);  // (a controller may write between the two lists)
  EXPECT_GE(whole["items"].size(), 2u);
  EXPECT_EQ(whole["apiVersion"], "v1");
  EXPECT_EQ(whole["kind"], "NamespaceList");
  EXPECT_FALSE(whole["metadata"]["resourceVersion"].get<std::string>().empty());
  const json none = Body(*c.Request("GET", "/api/v1/namespaces/team-a/configmaps"));
  EXPECT_EQ(none["items"], json::array()) << none;
}

// Errors about one object are Kubernetes' own: the message kubectl prints and
// Status.details {name, group (not for the core API), kind: the resource}.
TEST_F(ApiServerTest, ADryRunCreateChecksAndAnswersButStoresNothing) {
  // kubectl's --dry-run=server, and the portal's check of pasted YAML.
  auto c = Admin();
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  const json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "settings"}}}, {"data", {{"a", "1"}}}};
  auto dry = c.Request("POST", cms + "?dryRun=All", cm.dump());
  ASSERT_TRUE(dry.has_value());
  EXPECT_EQ(dry->status, 201) << dry->body;
  EXPECT_EQ(Body(*dry)["metadata"]["namespace"], "default");
  EXPECT_TRUE(Body(*dry)["metadata"].contains("creationTimestamp"));
  EXPECT_EQ(c.Request("GET", cms + "/settings")->status, 404) << "a dry run stores nothing";
  // What a create refuses, a dry run refuses, with the same words.
  json bad = cm;
  bad["data"] = {{"a", 1}};
  auto invalid = c.Request("POST", cms + "?dryRun=All", bad.dump());
  EXPECT_EQ(invalid->status, 422) << invalid->body;
  EXPECT_NE(Body(*invalid)["message"].get<std::string>().find("data[a]"), std::string::npos) << invalid->body;
  ASSERT_EQ(c.Request("POST", cms, cm.dump())->status, 201);
  auto exists = c.Request("POST", cms + "?dryRun=All", cm.dump());
  EXPECT_EQ(exists->status, 409);
  EXPECT_EQ(Body(*exists)["reason"], "AlreadyExists");
  EXPECT_EQ(c.Request("POST", "/api/v1/namespaces/nowhere/configmaps?dryRun=All", cm.dump())->status, 404);
  // Only All is a dry run, and only creates take one: nothing is written by mistake.
  auto odd = c.Request("POST", cms + "?dryRun=true", cm.dump());
  EXPECT_EQ(odd->status, 400);
  EXPECT_NE(odd->body.find("supported values: \\\"All\\\""), std::string::npos) << odd->body;
  json changed = Body(*c.Request("GET", cms + "/settings"));
  changed["data"]["a"] = "2";
  auto put = c.Request("PUT", cms + "/settings?dryRun=All", changed.dump());
  EXPECT_EQ(put->status, 400) << put->body;
  EXPECT_EQ(Body(*c.Request("GET", cms + "/settings"))["data"]["a"], "1");
}

TEST_F(ApiServerTest, AlreadyExistsAndNotFoundAreStatusesInKubernetesWords) {
  auto c = Admin();
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "dup"}}}};
  EXPECT_EQ(c.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  auto again = c.Request("POST", "/api/v1/namespaces", ns.dump());
  EXPECT_EQ(again->status, 409);
  EXPECT_EQ(Body(*again)["reason"], "AlreadyExists");
  EXPECT_EQ(Body(*again)["message"], "namespaces \"dup\" already exists");
  EXPECT_EQ(Body(*again)["details"], (json{{"name", "dup"}, {"kind", "namespaces"}}));
  auto missing = c.Request("GET", "/api/v1/namespaces/nope");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Body(*missing)["kind"], "Status");
  EXPECT_EQ(Body(*missing)["reason"], "NotFound");
  EXPECT_EQ(Body(*missing)["message"], "namespaces \"nope\" not found");
  // Another group's resource is named with its group, as kubectl shows it.
  auto queue = c.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/nope");
  EXPECT_EQ(queue->status, 404);
  EXPECT_EQ(Body(*queue)["message"], "clusterqueues.kueue.x-k8s.io \"nope\" not found");
  EXPECT_EQ(Body(*queue)["details"], (json{{"name", "nope"}, {"group", "kueue.x-k8s.io"}, {"kind", "clusterqueues"}}));
  for (const char* method : {"PATCH", "DELETE"}) {
    auto r = c.Request(method, "/apis/batch/v1/namespaces/default/jobs/nope", "{}", "application/merge-patch+json");
    EXPECT_EQ(r->status, 404) << method;
    EXPECT_EQ(Body(*r)["message"], "jobs.batch \"nope\" not found") << method;
  }
}

// Creating in a namespace that does not exist: Kubernetes' NotFound for the namespace.
TEST_F(ApiServerTest, MissingNamespaceIsNotFoundInKubernetesWords) {
  auto c = Admin();
  json lq{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "LocalQueue"}, {"metadata", {{"name", "q"}}},
          {"spec", {{"clusterQueue", "default"}}}};
  auto r = c.Request("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/nowhere/localqueues", lq.dump());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(Body(*r)["message"], "namespaces \"nowhere\" not found");
  EXPECT_EQ(Body(*r)["details"], (json{{"name", "nowhere"}, {"kind", "namespaces"}}));
}

// Creates from several connections at once are answered asynchronously and
// committed together: each gets its own 201 with the stored object (uid,
// resourceVersion), the resourceVersions are all different, a GET returns
// exactly what the create answered, and a duplicate in the same burst is 409.
TEST_F(ApiServerTest, ConcurrentCreatesEachGetTheirOwnAnswer) {
  constexpr int kClients = 6;
  constexpr int kEach = 40;
  std::vector<std::vector<json>> answers(kClients);
  std::atomic<int> conflicts{0}, others{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      auto c = Admin();
      for (int i = 0; i < kEach; ++i) {
        // Every client also tries the same name once: exactly one wins.
        const std::string name = i == 0 ? "shared" : "c" + std::to_string(t) + "-" + std::to_string(i);
        // PriorityClasses: no controller writes them (a Namespace gets its uid range and ServiceAccount).
        json pc{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", name}}},
                {"value", 7}};
        auto r = c.Request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc.dump());
        if (r && r->status == 201) {
          answers[t].push_back(json::parse(r->body));
        } else if (r && r->status == 409) {
          ++conflicts;
        } else {
          ++others;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(conflicts.load(), kClients - 1);
  std::set<std::string> versions;
  auto c = Admin();
  size_t created = 0;
  for (const auto& per_client : answers) {
    for (const json& obj : per_client) {
      ++created;
      versions.insert(obj["metadata"]["resourceVersion"].get<std::string>());
      EXPECT_FALSE(obj["metadata"].value("uid", "").empty());
      auto got = c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/" + obj["metadata"]["name"].get<std::string>());
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(json::parse(got->body), obj);
    }
  }
  EXPECT_EQ(created, size_t{kClients * (kEach - 1) + 1});
  EXPECT_EQ(versions.size(), created);
}

// A write from a stale resourceVersion, by PUT, PATCH or a DELETE precondition,
// is Kubernetes' Conflict: "Operation cannot be fulfilled on ...".
TEST_F(ApiServerTest, StaleWritesConflictInKubernetesWords) {
  auto c = Admin();
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "stale"}}}};
  const json created = Body(*c.Request("POST", "/api/v1/namespaces", ns.dump()));
  const std::string old_rv = created["metadata"]["resourceVersion"];
  c.Request("PATCH", "/api/v1/namespaces/stale", R"({"metadata":{"labels":{"a":"1"}}})",
            "application/merge-patch+json");
  const std::string modified =
      "Operation cannot be fulfilled on namespaces \"stale\": the object has been modified; please apply your changes "
      "to the latest version and try again";
  auto put = c.Request("PUT", "/api/v1/namespaces/stale", created.dump());
  EXPECT_EQ(put->status, 409);
  EXPECT_EQ(Body(*put)["reason"], "Conflict");
  EXPECT_EQ(Body(*put)["message"], modified);
  EXPECT_EQ(Body(*put)["details"], (json{{"name", "stale"}, {"kind", "namespaces"}}));
  auto patch = c.Request("PATCH", "/api/v1/namespaces/stale",
                         json{{"metadata", {{"resourceVersion", old_rv}, {"labels", {{"b", "2"}}}}}}.dump(),
                         "application/merge-patch+json");
  EXPECT_EQ(patch->status, 409);
  EXPECT_EQ(Body(*patch)["message"], modified);
  auto del = c.Request("DELETE", "/api/v1/namespaces/stale",
                       json{{"preconditions", {{"resourceVersion", old_rv}}}}.dump());
  EXPECT_EQ(del->status, 409);
  const std::string current = Body(*c.Request("GET", "/api/v1/namespaces/stale"))["metadata"]["resourceVersion"];
  EXPECT_EQ(Body(*del)["message"],
            "Operation cannot be fulfilled on namespaces \"stale\": the ResourceVersion in the precondition (" +
                old_rv + ") does not match the ResourceVersion in record (" + current +
                "). The object might have been modified");
}

TEST_F(ApiServerTest, StaleUpdateConflictsAndExactlyOneConcurrentWriterWins) {
  auto c = Admin();
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "race"}}}};
  json created = Body(*c.Request("POST", "/api/v1/namespaces", ns.dump()));
  // The namespace controller writes the new namespace once (its uid block):
  // start from that revision, which nothing else changes.
  for (int i = 0; i < 500 && !created["metadata"]["annotations"].contains("tessera.dev/uid-range"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    created = Body(*c.Request("GET", "/api/v1/namespaces/race"));
  }
  ASSERT_TRUE(created["metadata"]["annotations"].contains("tessera.dev/uid-range")) << created.dump();
  // Writers all start from the same resourceVersion.
  std::vector<int> codes(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      ApiClient w = Admin();
      json next = created;
      next["metadata"]["labels"]["writer"] = std::to_string(i);
      codes[i] = w.Request("PUT", "/api/v1/namespaces/race", next.dump())->status;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 200), 1);
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 409), 7);
}

TEST_F(ApiServerTest, MergePatchChangesOnlyWhatItNames) {
  auto c = Admin();
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "patched"}, {"labels", {{"a", "1"}, {"b", "2"}}}}}};
  c.Request("POST", "/api/v1/namespaces", ns.dump());
  auto r = c.Request("PATCH", "/api/v1/namespaces/patched", R"({"metadata":{"labels":{"b":null,"c":"3"}}})",
                     "application/merge-patch+json");
  ASSERT_EQ(r->status, 200) << r->body;
  // kubernetes.io/metadata.name is the server's, on every Namespace.
  EXPECT_EQ(Body(*r)["metadata"]["labels"], (json{{"a", "1"}, {"c", "3"}, {"kubernetes.io/metadata.name", "patched"}}));
}

// The three patch types kubectl sends: JSON patch and merge patch for every
// kind, strategic merge patch for the built-in ones (lists merged by key).
TEST_F(ApiServerTest, JsonAndStrategicMergePatches) {
  auto c = Admin();
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  ASSERT_EQ(c.Request("POST", cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}})")
                ->status,
            201);
  auto jp = c.Request("PATCH", cms + "/cm", R"([{"op":"add","path":"/data/b","value":"2"},{"op":"remove","path":"/data/a"}])",
                      "application/json-patch+json");
  ASSERT_EQ(jp->status, 200) << jp->body;
  EXPECT_EQ(Body(*jp)["data"], (json{{"b", "2"}}));
  auto failing = c.Request("PATCH", cms + "/cm", R"([{"op":"test","path":"/data/b","value":"9"}])",
                           "application/json-patch+json");
  EXPECT_EQ(failing->status, 422) << failing->body;
  EXPECT_EQ(c.Request("PATCH", cms + "/cm", R"({"op":"add"})", "application/json-patch+json")->status, 400);
  // A Job's containers merge by name.
  const json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,
      "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox","command":["true"]},
      {"name":"side","image":"busybox","command":["true"]}]}}}})");
  ASSERT_EQ(c.Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump())->status, 201);
  auto smp = c.Request("PATCH", "/apis/batch/v1/namespaces/default/jobs/j",
                       R"({"metadata":{"labels":{"x":"y"}},"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}})",
                       "application/strategic-merge-patch+json");
  ASSERT_EQ(smp->status, 200) << smp->body;
  EXPECT_EQ(Body(*smp)["metadata"]["labels"]["x"], "y");
  ASSERT_EQ(Body(*smp)["spec"]["template"]["spec"]["containers"].size(), 1u) << smp->body;
  // Custom resources take no strategic merge patch, as on Kubernetes; an unknown type is 415 too.
  auto crd = c.Request("PATCH", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/default", R"({"spec":{}})",
                       "application/strategic-merge-patch+json");
  EXPECT_EQ(crd->status, 415) << crd->body;
  EXPECT_EQ(c.Request("PATCH", cms + "/cm", "{}", "text/plain")->status, 415);
}

TEST_F(ApiServerTest, DeleteRemovesTheObject) {
  auto c = Admin();
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "gone"}}}};
  c.Request("POST", "/api/v1/namespaces", ns.dump());
  EXPECT_EQ(c.Request("DELETE", "/api/v1/namespaces/gone")->status, 200);
  EXPECT_EQ(c.Request("GET", "/api/v1/namespaces/gone")->status, 404);
}

TEST_F(ApiServerTest, BadInputIsRefusedWithAStatusThatNamesTheProblem) {
  auto c = Admin();
  struct Case {
    std::string path, body;
    int code;
    std::string in_message;
  };
  const std::string cq = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues";
  const std::vector<Case> cases = {
      {"/api/v1/namespaces", "metadata: [unclosed", 400, "line"},
      {"/api/v1/namespaces", "{\"apiVersion\": \"v1\",", 400, ""},
      {cq, R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"x"},"spec":{"cohort":7}})", 422, "spec.cohort"},
      {cq, R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"x"},"spec":{"cohrt":"a"}})", 422, "spec.cohrt"},
      {cq, R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"x"},"spec":{"resourceGroups":[{"coveredResources":["nvidia.com/gpu"],"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":"-1"}]}]}]}})", 422, "nominalQuota"},
      {cq, R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"x"},"spec":{"resourceGroups":[{"coveredResources":["nvidia.com/gpu"],"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":"1.5"}]}]}]}})", 422, "1.5"},
      {"/apis/example.com/v1/widgets", R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}})", 404, "widgets"},
      // An unknown resource of a served group: the 404 lists what the group serves.
      {"/apis/kueue.x-k8s.io/v1beta1/widgets", R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Widget"})", 404,
       "it serves resourceflavors, clusterqueues, localqueues, workloads"},
      {"/apis/kueue.x-k8s.io/v1beta1/namespaces/no-such-ns/localqueues",
       R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"q"},"spec":{"clusterQueue":"default"}})", 404, "no-such-ns"},
  };
  for (const Case& k : cases) {
    auto r = c.Request("POST", k.path, k.body, "application/yaml");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, k.code) << k.body << "\n" << r->body;
    const json status = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(status.is_discarded()) << r->body;
    EXPECT_EQ(status["kind"], "Status");
    EXPECT_NE(status["message"].get<std::string>().find(k.in_message), std::string::npos) << r->body;
  }
  // Nothing was stored, and the server still serves.
  EXPECT_EQ(c.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/x")->status, 404);
  EXPECT_EQ(c.Request("GET", "/healthz")->status, 200);
}

TEST_F(ApiServerTest, OversizedBodyIsRefusedAndTheServerKeepsServing) {
  auto c = Admin();
  const std::string huge(20 * 1024 * 1024, 'x');
  auto r = c.Request("POST", "/api/v1/namespaces", huge);
  if (r.has_value()) {
    EXPECT_EQ(r->status, 413);
  }  // else the server closed the connection mid-upload, which is also a refusal
  auto again = Admin();
  EXPECT_EQ(again.Request("GET", "/healthz")->status, 200);
}

TEST_F(ApiServerTest, WatchStreamsChangesAndResumesFromAResourceVersion) {
  auto c = Admin();
  std::vector<json> events;
  std::thread watcher([&] {
    ApiClient w = Admin();
    w.Stream("/apis/scheduling.k8s.io/v1/priorityclasses?watch=true&labelSelector=watched", [&](const std::string& line) {
      events.push_back(json::parse(line));
      return events.size() < 3;
    });
  });
  // Give the watch time to register; then three changes of a labelled PriorityClass
  // (a kind no controller writes to).
  for (int i = 0; i < 100 && events.empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  json pc{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
          {"metadata", {{"name", "w1"}, {"labels", {{"watched", "yes"}}}}}, {"value", 7}};
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string path = "/apis/scheduling.k8s.io/v1/priorityclasses";
  const json created = Body(*c.Request("POST", path, pc.dump()));
  c.Request("PATCH", path + "/w1", R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json");
  c.Request("DELETE", path + "/w1");
  watcher.join();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[2]["type"], "DELETED");

  // Resuming after the creation replays the two later events, and nothing before.
  std::vector<json> resumed;
  ApiClient w = Admin();
  w.Stream("/apis/scheduling.k8s.io/v1/priorityclasses?watch=true&labelSelector=watched&resourceVersion=" +
               created["metadata"]["resourceVersion"].get<std::string>(),
           [&](const std::string& line) {
             resumed.push_back(json::parse(line));
             return resumed.size() < 2;
           });
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_EQ(resumed[0]["type"], "MODIFIED");
  EXPECT_EQ(resumed[1]["type"], "DELETED");
}

TEST_F(ApiServerTest, WatchersThatHangUpMidStreamDoNotHurtTheServer) {
  // Clients close their watch right after an event, while the server may still be
  // writing to them (once a double free): the server keeps serving.
  auto c = Admin();
  for (int round = 0; round < 5; ++round) {
    std::vector<std::thread> watchers;
    std::atomic<int> got{0};
    for (int i = 0; i < 20; ++i) {
      watchers.emplace_back([&] {
        ApiClient w = Admin();
        (void)w.Stream("/api/v1/namespaces?watch=true&labelSelector=hangup", [&](const std::string&) {
          ++got;
          return false;  // hang up at once
        });
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int k = 0; k < 3; ++k) {
      json ns{{"apiVersion", "v1"}, {"kind", "Namespace"},
              {"metadata", {{"name", "hangup-" + std::to_string(round) + "-" + std::to_string(k)}, {"labels", {{"hangup", "x"}}}}}};
      ASSERT_EQ(c.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
    }
    for (auto& t : watchers) t.join();
    EXPECT_EQ(got.load(), 20);
  }
  EXPECT_EQ(c.Request("GET", "/healthz")->status, 200);
}

TEST_F(ApiServerTest, SeedManifestsApplyUnchanged) {
  // Every manifest of the seed (../shared/examples/seed) is accepted as written.
  const std::filesystem::path seed = std::filesystem::path("..") / "shared" / "examples" / "seed";
  ASSERT_TRUE(std::filesystem::exists(seed)) << "the seed manifests are expected at " << std::filesystem::absolute(seed);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(seed)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 7u);
  auto c = Admin();
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    auto docs = ParseManifests(text.str());
    ASSERT_TRUE(docs.has_value()) << f << ": " << docs.error().ToString();
    for (const ManifestDocument& doc : *docs) {
      // The files are applied in order: 01-namespaces.yaml creates the namespaces the others use.
      const ApiResponse r = CreateManifest(c, doc.object);
      EXPECT_EQ(r.status, 201) << f << ": " << doc.object.dump() << "\n" << r.body;
    }
  }
}

// Seven labelled namespaces read three at a time: 3 + 3 + 1, each page with
// the first page's resourceVersion, the token and the count of what remains.
TEST_F(ApiServerTest, ListPagesWithLimitAndContinue) {
  auto c = Admin();
  for (int i = 0; i < 7; ++i) {
    json ns{{"apiVersion", "v1"}, {"kind", "Namespace"},
            {"metadata", {{"name", "paged-" + std::to_string(i)}, {"labels", {{"paged", "yes"}}}}}};
    ASSERT_EQ(c.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  }
  std::vector<std::string> names;
  std::vector<std::string> revisions;
  std::vector<json> remaining;
  std::string next;
  do {
    auto r = c.Request("GET",
                       "/api/v1/namespaces?labelSelector=paged&limit=3" + (next.empty() ? "" : "&continue=" + next));
    ASSERT_EQ(r->status, 200) << r->body;
    const json page = Body(*r);
    for (const json& item : page["items"]) names.push_back(item["metadata"]["name"]);
    revisions.push_back(page["metadata"]["resourceVersion"]);
    remaining.push_back(page["metadata"].value("remainingItemCount", json()));
    next = page["metadata"].value("continue", "");
    // A write between pages changes the store's revision, not the listing's.
    json extra{{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", "between-" + std::to_string(names.size())}}}};
    c.Request("POST", "/api/v1/namespaces", extra.dump());
  } while (!next.empty() && names.size() < 100);
  EXPECT_EQ(names, (std::vector<std::string>{"paged-0", "paged-1", "paged-2", "paged-3", "paged-4", "paged-5",
                                             "paged-6"}));
  EXPECT_EQ(remaining, (std::vector<json>{4, 1, json()}));  // 7 - 3, 7 - 6, none
  ASSERT_EQ(revisions.size(), 3u);
  EXPECT_EQ(revisions[1], revisions[0]);
  EXPECT_EQ(revisions[2], revisions[0]);
  // Without a limit, everything in one list and no token.
  const json all = Body(*c.Request("GET", "/api/v1/namespaces?labelSelector=paged"));
  EXPECT_EQ(all["items"].size(), 7u);
  EXPECT_FALSE(all["metadata"].contains("continue"));
}

TEST_F(ApiServerTest, MalformedLimitOrContinueIsABadRequest) {
  auto c = Admin();
  for (const char* query : {"limit=-1", "limit=many", "continue=not-a-token"}) {
    auto r = c.Request("GET", std::string("/api/v1/namespaces?") + query);
    EXPECT_EQ(r->status, 400) << query;
    EXPECT_EQ(Body(*r)["reason"], "BadRequest") << query;
  }
  auto r = c.Request("GET", "/api/v1/namespaces?continue=not-a-token");
  EXPECT_NE(Body(*r)["message"].get<std::string>().find("list again without the continue parameter"),
            std::string::npos)
      << r->body;
}

// A token is for the list it came from; sent with another path it is refused.
TEST_F(ApiServerTest, ContinueTokenFromAnotherListIsRefused) {
  auto c = Admin();
  const json page = Body(*c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=1"));
  const std::string token = page["metadata"]["continue"];
  auto r = c.Request("GET", "/api/v1/namespaces?limit=1&continue=" + token);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(Body(*r)["message"].get<std::string>().find("belongs to another list"), std::string::npos) << r->body;
}

// Once the event log no longer reaches back to the first page's revision (here
// compacted on purpose, through the store file), the token has expired: 410 in
// Kubernetes' words, and a new list from the start works.
TEST_F(ApiServerTest, ContinueTokenOlderThanTheEventLogExpires) {
  auto c = Admin();
  const json page = Body(*c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=1"));
  const std::string token = page["metadata"]["continue"];
  json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "later"}}}};
  ASSERT_EQ(c.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  {
    auto store = OpenSqliteStore((dir_ / "tessera.db").string());
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    ASSERT_TRUE((*store)->Compact(0).ok());
  }
  auto r = c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=1&continue=" + token);
  EXPECT_EQ(r->status, 410);
  EXPECT_EQ(Body(*r)["reason"], "Expired");
  EXPECT_NE(Body(*r)["message"].get<std::string>().find("The provided continue parameter is too old"),
            std::string::npos)
      << r->body;
  EXPECT_EQ(c.Request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=1")->status, 200);
}

TEST_F(ApiServerTest, AcknowledgedWritesSurviveARestart) {
  auto c = Admin();
  for (int i = 0; i < 20; ++i) {
    json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "keep-" + std::to_string(i)}}}};
    ASSERT_EQ(c.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  }
  const std::string token = server_->admin_token();
  server_.reset();
  StartServer();
  EXPECT_EQ(server_->admin_token(), token);  // the same token after a restart
  auto again = Admin();
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(again.Request("GET", "/api/v1/namespaces/keep-" + std::to_string(i))->status, 200);
  }
}

}  // namespace
}  // namespace tessera
