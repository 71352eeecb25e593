// Field ownership and server-side apply: fieldsV1, conflicts worded as
// kube-apiserver words them, force, fields an applier drops, and updates
// taking fields from their managers.
#include "api/managed_fields.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tessera {
namespace {

using nlohmann::json;

const ApplyRequest kMine{.manager = "mine", .api_version = "v1", .now = "2026-12-04T10:00:00Z"};

json ConfigMap(const json& data) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm"}, {"namespace", "default"}}},
          {"data", data}};
}

json Applied(const json& current, const json& intent, ApplyRequest request = kMine) {
  auto out = ServerSideApply(current, intent, request);
  EXPECT_TRUE(out.has_value()) << out.error().ToString();
  EXPECT_TRUE(out->conflicts.empty()) << ConflictMessage(out->conflicts);
  return out->object;
}

TEST(ManagedFieldsTest, FieldsAreLeavesWithListsByMergeKey) {
  const json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "uid": "u", "labels": {"app": "x"}},
    "spec": {"containers": [{"name": "main", "image": "busybox", "args": ["a", "b"]}]},
    "status": {"phase": "Running"}})");
  const FieldSet fields = FieldsOf(pod);
  const FieldSet expected = {
      {"f:metadata", "f:labels", "f:app"},
      {"f:spec", "f:containers", "k:{\"name\":\"main\"}"},
      {"f:spec", "f:containers", "k:{\"name\":\"main\"}", "f:args"},
      {"f:spec", "f:containers", "k:{\"name\":\"main\"}", "f:image"},
      {"f:spec", "f:containers", "k:{\"name\":\"main\"}", "f:name"},
  };
  EXPECT_EQ(fields, expected);
  const json v1 = ToFieldsV1(fields);
  EXPECT_TRUE(v1["f:spec"]["f:containers"]["k:{\"name\":\"main\"}"].contains("."));
  EXPECT_EQ(FromFieldsV1(v1), fields);
  EXPECT_EQ(FieldPathText({"f:spec", "f:containers", "k:{\"name\":\"main\"}", "f:image"}),
            ".spec.containers[name=\"main\"].image");
}

TEST(ManagedFieldsTest, AnApplyCreatesAndRecordsItsManager) {
  const json object = Applied(json(), ConfigMap({{"a", "1"}}));
  EXPECT_EQ(object["data"]["a"], "1");
  const json& entry = object["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "mine");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["fieldsType"], "FieldsV1");
  EXPECT_EQ(entry["fieldsV1"], json::parse(R"({"f:data": {"f:a": {}}})"));
  auto nameless = ServerSideApply(json(), ConfigMap({}), ApplyRequest{});
  ASSERT_FALSE(nameless.has_value());
  EXPECT_NE(nameless.error().message().find("fieldManager"), std::string::npos);
}

TEST(ManagedFieldsTest, AnotherManagersValueIsAConflictUnlessForced) {
  const json created = RecordUpdate(json(), ConfigMap({{"a", "1"}, {"b", "2"}}), "kubectl-client-side-apply", "v1",
                                    "2026-12-04T09:00:00Z");
  auto refused = ServerSideApply(created, ConfigMap({{"a", "9"}, {"b", "2"}}), kMine);
  ASSERT_TRUE(refused.has_value());
  ASSERT_EQ(refused->conflicts.size(), 1u) << "the same value is shared, not a conflict";
  EXPECT_EQ(ConflictMessage(refused->conflicts),
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a");
  EXPECT_EQ(ConflictCauses(refused->conflicts)[0]["reason"], "FieldManagerConflict");
  EXPECT_EQ(ConflictCauses(refused->conflicts)[0]["field"], ".data.a");
  ApplyRequest force = kMine;
  force.force = true;
  const json taken = Applied(created, ConfigMap({{"a", "9"}, {"b", "2"}}), force);
  EXPECT_EQ(taken["data"]["a"], "9");
  for (const json& e : taken["metadata"]["managedFields"]) {
    if (e["manager"] == "kubectl-client-side-apply") {
      EXPECT_EQ(e["fieldsV1"], json::parse(R"({"f:data": {"f:b": {}}})")) << "the forced field changed hands";
    }
  }
}

TEST(ManagedFieldsTest, AFieldTheApplierDropsIsRemovedUnlessSomeoneElseOwnsIt) {
  const json first = Applied(json(), ConfigMap({{"a", "1"}, {"b", "2"}}));
  const json second = Applied(first, ConfigMap({{"a", "1"}}));
  EXPECT_EQ(second["data"], json({{"a", "1"}}));
  // b also set by another manager: it stays when the applier drops it.
  json shared = RecordUpdate(first, first, "other", "v1", "t");
  shared = RecordUpdate(shared, ConfigMap({{"a", "1"}, {"b", "3"}}), "other", "v1", "t");
  auto conflict = ServerSideApply(shared, ConfigMap({{"a", "1"}}), kMine);
  ASSERT_TRUE(conflict.has_value());
  EXPECT_TRUE(conflict->conflicts.empty());
  EXPECT_EQ(conflict->object["data"]["b"], "3");
}

// managedFields a client sent are read as far as they are well formed; the
// rest is dropped, never thrown on.
TEST(ManagedFieldsTest, MalformedEntriesAreDropped) {
  json sent = ConfigMap({{"a", "1"}});
  sent["metadata"]["managedFields"] = json::parse(R"([{"manager": 5}, "x", {"manager": "m", "fieldsV1": 7},
      {"manager": "ok", "operation": "Update", "fieldsV1": {"f:data": {"f:a": {}}}}])");
  json next = sent;
  next["data"]["a"] = "2";
  json after;
  ASSERT_NO_THROW(after = RecordUpdate(sent, next, "editor", "v1", "t"));
  std::vector<std::string> managers;
  for (const json& e : after["metadata"]["managedFields"]) managers.push_back(e["manager"]);
  EXPECT_EQ(managers, (std::vector<std::string>{"editor"})) << after.dump();
  ASSERT_NO_THROW((void)ServerSideApply(sent, ConfigMap({{"a", "3"}}), kMine));
}

TEST(ManagedFieldsTest, AnUpdateTakesTheFieldsItChanges) {
  const json applied = Applied(json(), ConfigMap({{"a", "1"}, {"b", "2"}}));
  json edited = applied;
  edited["data"]["a"] = "5";
  const json after = RecordUpdate(applied, edited, "kubectl-edit", "v1", "t");
  ASSERT_EQ(after["metadata"]["managedFields"].size(), 2u) << after.dump();
  for (const json& e : after["metadata"]["managedFields"]) {
    if (e["manager"] == "mine") {
      EXPECT_EQ(e["fieldsV1"], json::parse(R"({"f:data": {"f:b": {}}})"));
    }
    if (e["manager"] == "kubectl-edit") {
      EXPECT_EQ(e["operation"], "Update");
      EXPECT_EQ(e["fieldsV1"], json::parse(R"({"f:data": {"f:a": {}}})"));
    }
  }
  EXPECT_EQ(ManagerOf("", "kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abc"), "kubectl-edit");
  EXPECT_EQ(ManagerOf("tessera", "curl/8"), "tessera");
  EXPECT_EQ(ManagerOf("", ""), "unknown");
}

}  // namespace
}  // namespace tessera
