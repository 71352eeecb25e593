// List paging on its own: the continue token round-trips and refuses what it
// did not make; pages are cut in key order, after the token's key, counting
// only objects the selector matches.
#include "server/api/list_paging.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using nlohmann::json;

StoredObject Pod(const std::string& ns, const std::string& name, const std::string& tier = "web") {
  return StoredObject{ObjectKey{"/Pod", ns, name}, 1,
                      json{{"metadata", {{"namespace", ns}, {"name", name}, {"labels", {{"tier", tier}}}}}}};
}

std::vector<std::string> Names(const ListPage& page) {
  std::vector<std::string> names;
  for (const json& o : page.items) names.push_back(o["metadata"]["namespace"].get<std::string>() + "/" +
                                                   o["metadata"]["name"].get<std::string>());
  return names;
}

LabelSelector Everything() { return *LabelSelector::Parse(""); }

TEST(ContinueTokenTest, RoundTripsAndIsUrlSafe) {
  const ContinueToken token{.revision = 42, .kind = "kueue.x-k8s.io/Workload", .ns = "", .last_ns = "team-a",
                            .last_name = "job-x"};
  const std::string text = EncodeContinueToken(token);
  EXPECT_EQ(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos)
      << text;
  auto decoded = DecodeContinueToken(text);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, token);
}

TEST(ContinueTokenTest, RefusesWhatItDidNotMake) {
  for (const std::string text : {"not a token!", "e30" /* {} */, "bm90IGpzb24" /* not json */}) {
    auto decoded = DecodeContinueToken(text);
    ASSERT_FALSE(decoded.has_value()) << text;
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(decoded.error().message().find("list again without the continue parameter"), std::string::npos);
  }
}

TEST(ListLimitTest, ParsesNonNegativeIntegers) {
  EXPECT_EQ(*ParseListLimit(""), 0u);
  EXPECT_EQ(*ParseListLimit("0"), 0u);
  EXPECT_EQ(*ParseListLimit("500"), 500u);
  EXPECT_FALSE(ParseListLimit("-1").has_value());
  EXPECT_FALSE(ParseListLimit("ten").has_value());
  EXPECT_FALSE(ParseListLimit("5x").has_value());
}

// Five pods across two namespaces, two per page: 2 + 2 + 1, each page after the
// key the previous one ended on, the last without a token.
TEST(CutListPageTest, PagesFollowEachOtherInKeyOrder) {
  const std::vector<StoredObject> all = {Pod("a", "p1"), Pod("a", "p2"), Pod("a", "p3"), Pod("b", "p1"),
                                         Pod("b", "p2")};
  ListPage first = CutListPage(all, Everything(), std::nullopt, 2, 7, "/Pod", "");
  EXPECT_EQ(Names(first), (std::vector<std::string>{"a/p1", "a/p2"}));
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(first.remaining, 3u);  // 5 - 2
  EXPECT_EQ(*first.next, (ContinueToken{.revision = 7, .kind = "/Pod", .ns = "", .last_ns = "a", .last_name = "p2"}));

  ListPage second = CutListPage(all, Everything(), first.next, 2, 7, "/Pod", "");
  EXPECT_EQ(Names(second), (std::vector<std::string>{"a/p3", "b/p1"}));
  EXPECT_EQ(second.remaining, 1u);

  ListPage last = CutListPage(all, Everything(), second.next, 2, 7, "/Pod", "");
  EXPECT_EQ(Names(last), (std::vector<std::string>{"b/p2"}));
  EXPECT_FALSE(last.next.has_value());
  EXPECT_EQ(last.remaining, 0u);
}

// The limit counts matching objects only; remaining counts those left.
TEST(CutListPageTest, LimitCountsOnlyMatchingObjects) {
  const std::vector<StoredObject> all = {Pod("a", "p1", "db"), Pod("a", "p2"), Pod("a", "p3", "db"),
                                         Pod("a", "p4"), Pod("a", "p5")};
  ListPage page = CutListPage(all, *LabelSelector::Parse("tier=web"), std::nullopt, 2, 1, "/Pod", "a");
  EXPECT_EQ(Names(page), (std::vector<std::string>{"a/p2", "a/p4"}));
  EXPECT_EQ(page.remaining, 1u);  // p5
}

// An object deleted after the page that returned it does not move the cursor:
// the next page starts after its key all the same.
TEST(CutListPageTest, DeletedCursorObjectDoesNotRepeatOrSkip) {
  const ContinueToken after{.revision = 3, .kind = "/Pod", .ns = "a", .last_ns = "a", .last_name = "p2"};
  ListPage page = CutListPage({Pod("a", "p1"), Pod("a", "p3")}, Everything(), after, 10, 3, "/Pod", "a");
  EXPECT_EQ(Names(page), (std::vector<std::string>{"a/p3"}));
}

TEST(CutListPageTest, NoLimitIsEverything) {
  ListPage page = CutListPage({Pod("a", "p1"), Pod("a", "p2")}, Everything(), std::nullopt, 0, 1, "/Pod", "a");
  EXPECT_EQ(page.items.size(), 2u);
  EXPECT_FALSE(page.next.has_value());
}

}  // namespace
}  // namespace tessera
