// API discovery (server/api/discovery.h) and Table output
// (server/api/table_output.h) as documents: what kubectl reads of them. The
// real kubectl reading them from a real server is kubectl_test.cc.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "api/kinds.h"
#include "api/openapi.h"
#include "server/api/discovery.h"
#include "server/api/protobuf_body.h"
#include "server/api/table_output.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kKubectlAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

json Get(const std::string& path, const std::string& accept = "application/json") {
  auto r = DiscoveryResponse("GET", path, accept);
  EXPECT_TRUE(r.has_value()) << path;
  if (!r) return json();
  EXPECT_EQ(r->status, 200) << path << " " << r->body;
  return json::parse(r->body);
}

const json* Named(const json& items, std::string_view key, std::string_view name) {
  for (const json& item : items) {
    if (item.value(std::string(key), "") == name) return &item;
  }
  return nullptr;
}

TEST(DiscoveryTest, OnlyDiscoveryPathsAreAnswered) {
  EXPECT_FALSE(DiscoveryResponse("GET", "/api/v1/pods", "").has_value());
  EXPECT_FALSE(DiscoveryResponse("GET", "/apis/batch/v1/jobs", "").has_value());
  EXPECT_FALSE(DiscoveryResponse("GET", "/healthz", "").has_value());
  auto post = DiscoveryResponse("POST", "/apis", "");
  ASSERT_TRUE(post.has_value());
  EXPECT_EQ(post->status, 405);
  auto unknown = DiscoveryResponse("GET", "/apis/no.such.group/v1", "");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["reason"], "NotFound");
}

TEST(DiscoveryTest, VersionSaysTheKubernetesApiLevel) {
  const json v = Get("/version");
  EXPECT_EQ(v["major"], "1");
  EXPECT_EQ(v["minor"], "32");
  EXPECT_TRUE(v["gitVersion"].get<std::string>().starts_with("v1.32.")) << v;
}

TEST(DiscoveryTest, LegacyDocumentsListEveryGroupAndKind) {
  const json api = Get("/api");
  EXPECT_EQ(api["kind"], "APIVersions");
  EXPECT_EQ(api["versions"], json::array({"v1"}));
  const json groups = Get("/apis");
  EXPECT_EQ(groups["kind"], "APIGroupList");
  const json* kueue = Named(groups["groups"], "name", "kueue.x-k8s.io");
  ASSERT_NE(kueue, nullptr) << groups;
  EXPECT_EQ((*kueue)["preferredVersion"]["groupVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(Named(groups["groups"], "name", ""), nullptr) << "the core group is /api's, not /apis'";
  // Every kind of the registry is in its group version's APIResourceList.
  for (const KindInfo& k : AllKinds()) {
    const std::string path = k.group.empty() ? "/api/v1" : "/apis/" + std::string(k.api_version);
    const json list = Get(path);
    EXPECT_EQ(list["groupVersion"], k.api_version);
    const json* r = Named(list["resources"], "name", k.plural);
    ASSERT_NE(r, nullptr) << k.kind;
    EXPECT_EQ((*r)["kind"], k.kind);
    EXPECT_EQ((*r)["namespaced"], k.namespaced);
    EXPECT_EQ((*r)["singularName"], k.singular);
  }
  const json group = Get("/apis/batch");
  EXPECT_EQ(group["kind"], "APIGroup");
  EXPECT_EQ(group["name"], "batch");
}

TEST(DiscoveryTest, ResourcesCarryVerbsShortNamesCategoriesAndSubresources) {
  const json kueue = Get("/apis/kueue.x-k8s.io/v1beta1");
  const json* cq = Named(kueue["resources"], "name", "clusterqueues");
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ((*cq)["shortNames"], json::array({"cq"}));
  EXPECT_EQ((*cq)["verbs"], json::array({"create", "delete", "get", "list", "patch", "update", "watch"}));
  EXPECT_NE(Named(kueue["resources"], "name", "workloads/status"), nullptr);
  const json core = Get("/api/v1");
  const json* pods = Named(core["resources"], "name", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ((*pods)["categories"], json::array({"all"}));
  for (const char* sub : {"pods/log", "pods/exec", "pods/portforward", "pods/proxy", "pods/status"}) {
    EXPECT_NE(Named(core["resources"], "name", sub), nullptr) << sub;
  }
  // A review is only created.
  const json authz = Get("/apis/authorization.k8s.io/v1");
  const json* ssar = Named(authz["resources"], "name", "selfsubjectaccessreviews");
  ASSERT_NE(ssar, nullptr);
  EXPECT_EQ((*ssar)["verbs"], json::array({"create"}));
}

TEST(DiscoveryTest, KubectlsAcceptGetsTheAggregatedForm) {
  auto r = DiscoveryResponse("GET", "/apis", kKubectlAccept);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->content_type, kAggregatedDiscoveryV2);
  const json list = json::parse(r->body);
  EXPECT_EQ(list["kind"], "APIGroupDiscoveryList");
  EXPECT_EQ(list["apiVersion"], "apidiscovery.k8s.io/v2");
  const json* tessera = nullptr;
  for (const json& g : list["items"]) {
    if (g["metadata"]["name"] == "tessera.dev") tessera = &g;
  }
  ASSERT_NE(tessera, nullptr);
  const json& version = (*tessera)["versions"][0];
  EXPECT_EQ(version["freshness"], "Current");
  const json* notebooks = Named(version["resources"], "resource", "notebooks");
  ASSERT_NE(notebooks, nullptr);
  EXPECT_EQ((*notebooks)["scope"], "Namespaced");
  EXPECT_EQ((*notebooks)["responseKind"]["kind"], "Notebook");
  EXPECT_EQ((*notebooks)["categories"], json::array({"all", "tessera"}));
  EXPECT_EQ((*notebooks)["subresources"][0]["subresource"], "status");
  // /api aggregated: the core group, named "".
  const json core = json::parse(DiscoveryResponse("GET", "/api", kKubectlAccept)->body);
  ASSERT_EQ(core["items"].size(), 1u);
  EXPECT_EQ(core["items"][0]["metadata"]["name"], "");
  EXPECT_NE(Named(core["items"][0]["versions"][0]["resources"], "resource", "pods"), nullptr);
  // Without it, the legacy form.
  EXPECT_EQ(DiscoveryResponse("GET", "/apis", "application/json")->content_type, "application/json");
}

TEST(OpenApiTest, EveryGroupVersionHasADocumentWithEachKindsSchema) {
  const json index = json::parse(OpenApiIndex());
  for (const KindInfo& k : AllKinds()) {
    const std::string path = k.group.empty() ? "api/v1" : "apis/" + std::string(k.api_version);
    ASSERT_TRUE(index["paths"].contains(path)) << path;
    EXPECT_EQ(index["paths"][path]["serverRelativeURL"], "/openapi/v3/" + path + "?hash=" + OpenApiHash(path));
    const std::string* text = OpenApiDocument(path);
    ASSERT_NE(text, nullptr) << path;
    const json doc = json::parse(*text);
    const std::string name = OpenApiSchemaName(k.group, k.version, k.kind);
    ASSERT_TRUE(doc["components"]["schemas"].contains(name)) << name;
    EXPECT_EQ(doc["components"]["schemas"][name]["x-kubernetes-group-version-kind"][0]["kind"], k.kind);
  }
  EXPECT_EQ(OpenApiSchemaName("", "v1", "Pod"), "io.k8s.api.core.v1.Pod");
  EXPECT_EQ(OpenApiSchemaName("batch", "v1", "Job"), "io.k8s.api.batch.v1.Job");
  EXPECT_EQ(OpenApiSchemaName("kueue.x-k8s.io", "v1beta1", "ClusterQueue"), "io.x-k8s.kueue.v1beta1.ClusterQueue");
  EXPECT_EQ(OpenApiDocument("apis/no.such/v1"), nullptr);
}

// The protobuf kubectl sends for `auth can-i`: the envelope, then the review.
TEST(ProtobufBodyTest, KubectlsAccessReviewIsReadAsJson) {
  auto field = [](int number, const std::string& bytes) {
    std::string out(1, static_cast<char>(number << 3 | 2));
    out += static_cast<char>(bytes.size());  // every part here is under 128 bytes
    return out + bytes;
  };
  const std::string attributes = field(1, "team-a") + field(2, "create") + field(3, "batch") + field(5, "jobs");
  const std::string review = field(1, "") + field(2, field(1, attributes));
  const std::string type_meta = field(1, "authorization.k8s.io/v1") + field(2, "SelfSubjectAccessReview");
  const std::string body = std::string("k8s\0", 4) + field(1, type_meta) + field(2, review);
  auto decoded = ProtobufBodyToJson(body);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ((*decoded)["kind"], "SelfSubjectAccessReview");
  EXPECT_EQ((*decoded)["spec"]["resourceAttributes"],
            json::parse(R"({"namespace": "team-a", "verb": "create", "group": "batch", "resource": "jobs"})"));
  EXPECT_FALSE(ProtobufBodyToJson("{\"kind\": \"x\"}").has_value());
  EXPECT_FALSE(ProtobufBodyToJson(std::string("k8s\0\x0a\x7f", 6)).has_value()) << "a length past the end";
  const std::string other = std::string("k8s\0", 4) + field(1, field(1, "v1") + field(2, "Pod"));
  EXPECT_FALSE(ProtobufBodyToJson(other).has_value()) << "only the reviews are read";
}

TEST(OpenApiTest, SchemasComeFromValidationWithTheFieldsDocs) {
  const json doc = json::parse(*OpenApiDocument("apis/kueue.x-k8s.io/v1beta1"));
  const json& cq = doc["components"]["schemas"]["io.x-k8s.kueue.v1beta1.ClusterQueue"];
  const json& groups = cq["properties"]["spec"]["properties"]["resourceGroups"];
  EXPECT_EQ(groups["type"], "array");
  EXPECT_NE(groups["description"].get<std::string>().find("groups of resources"), std::string::npos);
  const json& flavor = groups["items"]["properties"]["flavors"]["items"];
  EXPECT_EQ(flavor["required"], json::array({"name", "resources"}));
  EXPECT_EQ(cq["properties"]["spec"]["properties"]["queueingStrategy"]["enum"],
            json::array({"StrictFIFO", "BestEffortFIFO"}));
  // Writes take fieldValidation: kubectl leaves validation to the server.
  const json& patch = doc["paths"]["/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}"]["patch"];
  bool field_validation = false;
  for (const json& p : patch["parameters"]) field_validation = field_validation || p["name"] == "fieldValidation";
  EXPECT_TRUE(field_validation) << patch;
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "ClusterQueue");
}

TEST(TableOutputTest, KubectlsAcceptAsksForATable) {
  EXPECT_EQ(TableVersionAsked("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                              "g=meta.k8s.io,application/json"),
            "v1");
  EXPECT_EQ(TableVersionAsked("application/json; as=Table; v=v1beta1; g=meta.k8s.io"), "v1beta1");
  EXPECT_EQ(TableVersionAsked("application/json"), std::nullopt);
  EXPECT_EQ(TableVersionAsked(""), std::nullopt);
  EXPECT_TRUE(ParseIncludeObject("Object").has_value());
  auto bad = ParseIncludeObject("Everything");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("supported values"), std::string::npos);
}

TEST(TableOutputTest, WorkloadsShowWhereTheyWaitAndWhy) {
  const KindInfo* kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "Workload");
  ASSERT_NE(kind, nullptr);
  const json pending = json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "train", "namespace": "team-a", "resourceVersion": "7",
                 "creationTimestamp": "2026-12-01T10:00:00Z"},
    "spec": {"queueName": "team-a-queue", "podSets": []},
    "status": {"conditions": [
      {"type": "QuotaReserved", "status": "False", "reason": "ClusterQueueQuota",
       "message": "needs 8 nvidia.com/gpu in flavor h100, 4 left; position 3 in ClusterQueue gpu"},
      {"type": "Admitted", "status": "False", "reason": "ClusterQueueQuota", "message": "..."}]}})");
  const json table = ObjectsTable(*kind, {pending}, json{{"resourceVersion", "9"}}, TableOptions{.now = 1'764'583'200});
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(table["metadata"]["resourceVersion"], "9");
  std::vector<std::string> names;
  std::set<std::string> wide;
  for (const json& c : table["columnDefinitions"]) {
    names.push_back(c["name"]);
    if (c["priority"] == 1) wide.insert(c["name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "POSITION",
                                             "REASON", "AGE", "PRIORITY", "MESSAGE"}));
  EXPECT_EQ(wide, (std::set<std::string>{"PRIORITY", "MESSAGE"}));
  EXPECT_EQ(table["columnDefinitions"][0]["format"], "name");
  ASSERT_EQ(table["rows"].size(), 1u);
  const json& cells = table["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "train");
  EXPECT_EQ(cells[1], "team-a-queue");
  EXPECT_EQ(cells[3], "False");
  EXPECT_EQ(cells[5], 3) << "an integer column's cell is a number";
  EXPECT_EQ(cells[6], "ClusterQueueQuota");
  EXPECT_EQ(cells[9], "needs 8 nvidia.com/gpu in flavor h100, 4 left; position 3 in ClusterQueue gpu");
  // The row's object: its metadata (the default), the whole object, or none.
  const json& object = table["rows"][0]["object"];
  EXPECT_EQ(object["kind"], "PartialObjectMetadata");
  EXPECT_EQ(object["metadata"]["name"], "train");
  EXPECT_FALSE(object.contains("spec"));
  EXPECT_EQ(ObjectTable(*kind, pending, {.include_object = "Object"})["rows"][0]["object"], pending);
  EXPECT_FALSE(ObjectTable(*kind, pending, {.include_object = "None"})["rows"][0].contains("object"));
  EXPECT_EQ(ObjectTable(*kind, pending, {})["metadata"]["resourceVersion"], "7");
}

}  // namespace
}  // namespace tessera
