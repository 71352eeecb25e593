// Strategic merge patch as kube-apiserver applies it to built-in kinds: lists
// merged by their keys, the directives ($patch, $retainKeys,
// $setElementOrder, $deleteFromPrimitiveList), lists without a key replaced.
#include "api/strategic_merge_patch.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/kinds.h"

namespace tessera {
namespace {

using nlohmann::json;

json Patched(const char* original, const char* patch) {
  auto r = StrategicMergePatch(json::parse(original), json::parse(patch));
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.value_or(json());
}

constexpr const char* kPod = R"({
  "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
  "spec": {"containers": [
      {"name": "main", "image": "busybox:1", "args": ["a", "b"],
       "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
       "ports": [{"containerPort": 80, "name": "http"}]},
      {"name": "sidecar", "image": "envoy:1"}],
    "tolerations": [{"key": "gpu", "operator": "Exists"}]}})";

TEST(StrategicMergePatchTest, ContainersMergeByNameAndTheirEnvByName) {
  const json out = Patched(kPod, R"({"spec": {"containers": [
      {"name": "main", "image": "busybox:2", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]}]}})");
  const json& containers = out["spec"]["containers"];
  ASSERT_EQ(containers.size(), 2u) << out;
  EXPECT_EQ(containers[0]["image"], "busybox:2");
  EXPECT_EQ(containers[0]["args"], json::array({"a", "b"})) << "fields the patch leaves out stay";
  EXPECT_EQ(containers[0]["env"], json::parse(R"([{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                                                  {"name": "C", "value": "3"}])"));
  EXPECT_EQ(containers[0]["ports"][0]["containerPort"], 80);
  EXPECT_EQ(containers[1]["name"], "sidecar");
}

TEST(StrategicMergePatchTest, ListsWithoutAMergeKeyAreReplaced) {
  const json out = Patched(kPod, R"({"spec": {"tolerations": [{"key": "spot", "operator": "Exists"}],
                                      "containers": [{"name": "main", "args": ["c"]}]}})");
  EXPECT_EQ(out["spec"]["tolerations"], json::parse(R"([{"key": "spot", "operator": "Exists"}])"));
  EXPECT_EQ(out["spec"]["containers"][0]["args"], json::array({"c"}));
}

TEST(StrategicMergePatchTest, PatchDeleteRemovesAnElementAndNullAField) {
  const json out = Patched(kPod, R"({"metadata": {"labels": {"a": null}},
      "spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}})");
  EXPECT_EQ(out["metadata"]["labels"], json::parse(R"({"b": "2"})"));
  ASSERT_EQ(out["spec"]["containers"].size(), 1u);
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "main");
}

TEST(StrategicMergePatchTest, PatchReplaceReplacesAMapOrAList) {
  const json map = Patched(kPod, R"({"metadata": {"labels": {"$patch": "replace", "c": "3"}}})");
  EXPECT_EQ(map["metadata"]["labels"], json::parse(R"({"c": "3"})"));
  const json list = Patched(kPod, R"({"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}})");
  EXPECT_EQ(list["spec"]["containers"], json::parse(R"([{"name": "only", "image": "x"}])"));
}

TEST(StrategicMergePatchTest, RetainKeysClearsTheOthers) {
  const json out = Patched(R"({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}})",
                           R"({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})");
  EXPECT_EQ(out["spec"]["strategy"], json::parse(R"({"type": "Recreate"})"));
}

TEST(StrategicMergePatchTest, ElementOrderAndPrimitiveSets) {
  const json out = Patched(kPod, R"({"metadata": {"finalizers": ["y"], "$deleteFromPrimitiveList/finalizers": ["x"]},
      "spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "main"}],
               "containers": [{"name": "main", "image": "busybox:3"}]}})");
  EXPECT_EQ(out["metadata"]["finalizers"], json::array({"y"}));
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "sidecar");
  EXPECT_EQ(out["spec"]["containers"][1]["image"], "busybox:3");
  EXPECT_FALSE(out["spec"].contains("$setElementOrder/containers"));
}

TEST(StrategicMergePatchTest, ServicePortsMergeByPort) {
  const json out = Patched(R"({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}})",
                           R"({"spec": {"ports": [{"port": 443, "targetPort": 8443}]}})");
  EXPECT_EQ(out["spec"]["ports"][1], json::parse(R"({"port": 443, "name": "https", "targetPort": 8443})"));
}

TEST(StrategicMergePatchTest, BadPatchesAreRefusedWithTheirPath) {
  auto keyless = StrategicMergePatch(json::parse(kPod), json::parse(R"({"spec": {"containers": [{"image": "x"}]}})"));
  ASSERT_FALSE(keyless.has_value());
  EXPECT_NE(keyless.error().message().find("spec.containers"), std::string::npos) << keyless.error().message();
  EXPECT_NE(keyless.error().message().find("\"name\""), std::string::npos);
  EXPECT_FALSE(StrategicMergePatch(json::parse(kPod), json::array()).has_value());
}

TEST(StrategicMergePatchTest, CustomResourcesDoNotTakeIt) {
  EXPECT_TRUE(TakesStrategicMergePatch(*FindKindByApiVersion("batch/v1", "Job")));
  EXPECT_TRUE(TakesStrategicMergePatch(*FindKindByApiVersion("v1", "Pod")));
  EXPECT_FALSE(TakesStrategicMergePatch(*FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ClusterQueue")));
  EXPECT_FALSE(TakesStrategicMergePatch(*FindKindByApiVersion("tessera.dev/v1", "Notebook")));
}

}  // namespace
}  // namespace tessera
