#include "store/rendered_create.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tessera {
namespace {

using nlohmann::json;

const ObjectKey kKey{"/Pod", "team-a", "nb1"};

std::string FixedUid() { return "0b3c2f9e-5d1a-4c7e-9f2b-8a6d4e3c1b2a"; }

json Pod() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"nb1","namespace":"team-a",
      "labels":{"team":"a"}},"spec":{"containers":[{"name":"c","image":"x"}]}})");
}

// What the store's Create would write: the object with uid and revision set, dumped.
std::string Dumped(json object, const std::string& uid, int64_t revision) {
  object["metadata"]["uid"] = uid;
  object["metadata"]["resourceVersion"] = std::to_string(revision);
  return object.dump();
}

TEST(RenderedCreateTest, TheTextIsTheObjectDumpedWithItsRevision) {
  auto rendered = RenderedCreate::Render(kKey, Pod(), FixedUid);
  ASSERT_TRUE(rendered.has_value()) << rendered.error().ToString();
  EXPECT_EQ(rendered->uid(), FixedUid());
  EXPECT_TRUE(rendered->spliced());
  for (int64_t revision : {int64_t{1}, int64_t{9}, int64_t{10}, int64_t{123456789}, INT64_MAX}) {
    EXPECT_EQ(rendered->WithRevision(revision), Dumped(Pod(), FixedUid(), revision));
  }
}

TEST(RenderedCreateTest, ADocumentsOwnUidIsKept) {
  json pod = Pod();
  pod["metadata"]["uid"] = "mine";
  auto rendered = RenderedCreate::Render(kKey, pod, FixedUid);
  ASSERT_TRUE(rendered.has_value());
  EXPECT_EQ(rendered->uid(), "mine");
  EXPECT_EQ(rendered->WithRevision(7), Dumped(pod, "mine", 7));
}

TEST(RenderedCreateTest, AResourceVersionSentIsReplaced) {
  json pod = Pod();
  pod["metadata"]["resourceVersion"] = "999";
  auto rendered = RenderedCreate::Render(kKey, pod, FixedUid);
  ASSERT_TRUE(rendered.has_value());
  EXPECT_EQ(rendered->WithRevision(3), Dumped(pod, FixedUid(), 3));
}

// A document that holds the placeholder elsewhere (no client can know the
// process's; here the test chooses it) still gets its revision in
// metadata.resourceVersion, and keeps its own value where it put it.
TEST(RenderedCreateTest, APlaceholderFoundElsewhereIsLeftAlone) {
  const std::string placeholder = "\x01rv-test";
  json pod = Pod();
  pod["metadata"]["labels"]["a"] = placeholder;  // sorts before resourceVersion
  pod["spec"]["z"] = placeholder;                 // and after
  auto rendered = RenderedCreate::Render(kKey, pod, FixedUid, placeholder);
  ASSERT_TRUE(rendered.has_value());
  EXPECT_FALSE(rendered->spliced());
  EXPECT_EQ(rendered->WithRevision(42), Dumped(pod, FixedUid(), 42));
  EXPECT_EQ(json::parse(rendered->WithRevision(42))["metadata"]["labels"]["a"], placeholder);
}

TEST(RenderedCreateTest, ThePlaceholderIsDrawnOncePerProcess) {
  const std::string& placeholder = RenderedCreate::ProcessPlaceholder();
  EXPECT_EQ(&placeholder, &RenderedCreate::ProcessPlaceholder());
  EXPECT_EQ(placeholder.front(), '\x01');
  EXPECT_GE(placeholder.size(), 32u);  // 128 random bits in hex, after a prefix
}

TEST(RenderedCreateTest, FailsWithTheStoresMessages) {
  auto not_object = RenderedCreate::Render(kKey, json::array(), FixedUid);
  ASSERT_FALSE(not_object.has_value());
  EXPECT_NE(not_object.error().message().find("Pod team-a/nb1: the document is a JSON array"), std::string::npos)
      << not_object.error().message();

  json bad_uid = Pod();
  bad_uid["metadata"]["uid"] = 5;
  auto uid = RenderedCreate::Render(kKey, bad_uid, FixedUid);
  ASSERT_FALSE(uid.has_value());
  EXPECT_NE(uid.error().message().find("metadata.uid is a JSON number"), std::string::npos) << uid.error().message();

  json not_utf8 = Pod();
  not_utf8["metadata"]["labels"]["team"] = std::string("\xff\xfe");
  auto utf8 = RenderedCreate::Render(kKey, not_utf8, FixedUid);
  ASSERT_FALSE(utf8.has_value());
  EXPECT_NE(utf8.error().message().find("valid UTF-8"), std::string::npos) << utf8.error().message();
}

}  // namespace
}  // namespace tessera
