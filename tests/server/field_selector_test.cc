#include "server/field_selector.h"

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
  EXPECT_NE(bad.error().message().find("supported: metadata.name"), std::string::npos);
  EXPECT_FALSE(FieldSelector::Parse("spec.nodeName").has_value());
}

}  // namespace
}  // namespace tessera
