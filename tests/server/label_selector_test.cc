// Label selectors in Kubernetes syntax.
#include "server/api/label_selector.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

bool Match(const std::string& selector, const std::map<std::string, std::string>& labels) {
  auto s = LabelSelector::Parse(selector);
  EXPECT_TRUE(s.has_value()) << s.error().ToString();
  return s->Matches(labels);
}

TEST(LabelSelectorTest, EqualityAndInequality) {
  EXPECT_TRUE(Match("env=prod", {{"env", "prod"}}));
  EXPECT_TRUE(Match("env==prod", {{"env", "prod"}}));
  EXPECT_FALSE(Match("env=prod", {{"env", "dev"}}));
  EXPECT_TRUE(Match("env!=prod", {{"env", "dev"}}));
  EXPECT_TRUE(Match("env!=prod", {}));  // a missing label is not equal to prod
}

TEST(LabelSelectorTest, SetsAndExistence) {
  EXPECT_TRUE(Match("zone in (a, b)", {{"zone", "b"}}));
  EXPECT_FALSE(Match("zone in (a,b)", {{"zone", "c"}}));
  EXPECT_TRUE(Match("zone notin (a,b)", {{"zone", "c"}}));
  EXPECT_TRUE(Match("gpu", {{"gpu", ""}}));
  EXPECT_FALSE(Match("gpu", {}));
  EXPECT_TRUE(Match("!legacy", {}));
  EXPECT_TRUE(Match("env=prod,zone in (a,b),!legacy", {{"env", "prod"}, {"zone", "a"}}));
}

TEST(LabelSelectorTest, EmptySelectorMatchesEverything) { EXPECT_TRUE(Match("", {{"a", "b"}})); }

TEST(LabelSelectorTest, MalformedSelectorsAreErrorsNamingTheTerm) {
  for (const char* bad : {"env=prod,,x", "zone in (a,b", "zone within (a)", "bad key=1"}) {
    auto s = LabelSelector::Parse(bad);
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_NE(s.error().message().find("label selector"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera
