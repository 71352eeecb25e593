#include "server/api/field_selector.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using nlohmann::json;

const json kPod{{"metadata", {{"name", "p"}, {"namespace", "team-a"}}},
                {"spec", {{"nodeName", "node-1"}}},
                {"status", {{"phase", "Running"}}}};

TEST(FieldSelectorTest, MatchesEqualityAndInequality) {
  EXPECT_TRUE(FieldSelector::Parse("spec.nodeName=node-1")->Matches(kPod));
  EXPECT_TRUE(FieldSelector::Parse("spec.nodeName==node-1,status.phase!=Succeeded")->Matches(kPod));
  EXPECT_FALSE(FieldSelector::Parse("spec.nodeName=node-2")->Matches(kPod));
  EXPECT_FALSE(FieldSelector::Parse("metadata.namespace!=team-a")->Matches(kPod));
  EXPECT_TRUE(FieldSelector::Parse("spec.nodeName=")->Matches(json{{"spec", json::object()}})) << "unbound pods";
  EXPECT_TRUE(FieldSelector::Parse("")->empty());
}

TEST(FieldSelectorTest, UnsupportedFieldsAndMalformedTermsSayWhatWorks) {
  auto bad = FieldSelector::Parse("spec.hostname=x");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("field label not supported: spec.hostname (supported: "), std::string::npos)
      << bad.error().message();
  for (const char* field : {"metadata.name", "spec.nodeName", "involvedObject.name", "reason"}) {
    EXPECT_NE(bad.error().message().find(field), std::string::npos) << field;
  }
  EXPECT_FALSE(FieldSelector::Parse("spec.nodeName").has_value());
}

// Events are selected by what they are about, as `kubectl get events
// --field-selector involvedObject.name=...` and `kubectl describe` do.
TEST(FieldSelectorTest, SelectsEventsByTheirInvolvedObject) {
  const json event{{"involvedObject", {{"kind", "Workload"}, {"name", "job-a"}, {"namespace", "team-a"}, {"uid", "u1"}}},
                   {"reason", "Pending"},
                   {"type", "Warning"},
                   {"source", {{"component", "tessera-scheduler"}}}};
  EXPECT_TRUE(FieldSelector::Parse("involvedObject.name=job-a,involvedObject.kind=Workload")->Matches(event));
  EXPECT_TRUE(FieldSelector::Parse("involvedObject.uid=u1,reason=Pending,type=Warning")->Matches(event));
  EXPECT_TRUE(FieldSelector::Parse("source=tessera-scheduler")->Matches(event));
  EXPECT_FALSE(FieldSelector::Parse("involvedObject.name=job-b")->Matches(event));
  EXPECT_FALSE(FieldSelector::Parse("involvedObject.uid!=u1")->Matches(event));
}

}  // namespace
}  // namespace tessera
