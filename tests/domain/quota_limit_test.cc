#include "domain/quota_limit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace tessera {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A default Limit is unlimited.
TEST(LimitTest, DefaultIsUnlimited) {
  EXPECT_TRUE(Limit().unlimited());
  EXPECT_EQ(Limit(), Limit::Unlimited());
}

// Of(v) is a finite limit holding v.
TEST(LimitTest, OfIsFinite) {
  Limit l = Limit::Of(4000);
  EXPECT_FALSE(l.unlimited());
  EXPECT_EQ(l.value(), 4000);
}

// Of(0) is a finite zero limit, not unlimited.
TEST(LimitTest, ZeroIsFinite) {
  EXPECT_FALSE(Limit::Of(0).unlimited());
  EXPECT_NE(Limit::Of(0), Limit::Unlimited());
}

// Unlimited plus any amount stays unlimited (saturation).
TEST(LimitTest, UnlimitedPlusAnythingIsUnlimited) {
  EXPECT_EQ(Limit::Unlimited() + 5, Limit::Unlimited());
  EXPECT_EQ(Limit::Unlimited() + kMax, Limit::Unlimited());
  EXPECT_EQ(Limit::Unlimited() + (-5), Limit::Unlimited());
}

// A finite limit plus an amount is their sum (nominal + borrowing limit).
TEST(LimitTest, FinitePlusAmount) {
  EXPECT_EQ(Limit::Of(8000) + 4000, Limit::Of(12000));  // 8000 + 4000
  EXPECT_EQ(Limit::Of(8000) + 0, Limit::Of(8000));
}

// A finite sum past int64 saturates to Unlimited instead of wrapping negative.
TEST(LimitTest, FiniteOverflowSaturatesToUnlimited) {
  EXPECT_TRUE((Limit::Of(kMax - 10) + 100).unlimited());  // 90 past kMax
  EXPECT_TRUE((Limit::Of(1) + kMax).unlimited());         // 1 + kMax
}

// Adding a negative amount lowers a finite limit.
TEST(LimitTest, FinitePlusNegative) {
  EXPECT_EQ(Limit::Of(8000) + (-3000), Limit::Of(5000));  // 8000 - 3000
}

// A finite sum below the int64 range stops at the int64 minimum, never becomes Unlimited.
TEST(LimitTest, NegativeOverflowDoesNotBecomeUnlimited) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Limit l = Limit::Of(kMin + 10) + (-100);  // 90 below kMin
  EXPECT_FALSE(l.unlimited());
  EXPECT_EQ(l.value(), kMin);
}

// Allows is <= for a finite limit.
TEST(LimitTest, AllowsUpToLimit) {
  Limit l = Limit::Of(4000);
  EXPECT_TRUE(l.Allows(0));
  EXPECT_TRUE(l.Allows(3999));
  EXPECT_TRUE(l.Allows(4000));   // 4000 <= 4000
  EXPECT_FALSE(l.Allows(4001));  // 4001 > 4000
}

// A zero limit allows only zero.
TEST(LimitTest, ZeroAllowsOnlyZero) {
  EXPECT_TRUE(Limit::Of(0).Allows(0));
  EXPECT_FALSE(Limit::Of(0).Allows(1));
}

// Unlimited allows every amount, even the int64 maximum.
TEST(LimitTest, UnlimitedAllowsEverything) {
  EXPECT_TRUE(Limit::Unlimited().Allows(0));
  EXPECT_TRUE(Limit::Unlimited().Allows(kMax));
}

// Min of two finite limits is the smaller.
TEST(LimitTest, MinOfFinite) {
  EXPECT_EQ(Min(Limit::Of(3), Limit::Of(5)), Limit::Of(3));
  EXPECT_EQ(Min(Limit::Of(5), Limit::Of(3)), Limit::Of(3));
}

// Min with Unlimited is the other limit; Min of two Unlimiteds is Unlimited.
TEST(LimitTest, MinWithUnlimited) {
  EXPECT_EQ(Min(Limit::Unlimited(), Limit::Of(7)), Limit::Of(7));
  EXPECT_EQ(Min(Limit::Of(7), Limit::Unlimited()), Limit::Of(7));
  EXPECT_EQ(Min(Limit::Unlimited(), Limit::Unlimited()), Limit::Unlimited());
}

// Limits are constexpr values.
TEST(LimitTest, IsConstexpr) {
  static_assert((Limit::Of(2) + 3).value() == 5);  // 2 + 3
  static_assert((Limit::Unlimited() + 3).unlimited());
  static_assert(Min(Limit::Of(2), Limit::Unlimited()) == Limit::Of(2));
  SUCCEED();
}

}  // namespace
}  // namespace tessera
