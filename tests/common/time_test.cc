#include "common/time.h"
#include "common/time_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace tessera {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Factories convert seconds to milliseconds and back.
TEST(TimeTest, SecondsConvertToMillis) {
  EXPECT_EQ(Duration::Seconds(3).ms, 3000);  // 3 * 1000
  EXPECT_EQ(Duration::Millis(2500).seconds(), 2);  // 2500 / 1000, truncated
  EXPECT_EQ(Timestamp::FromSeconds(60).ms, 60000);  // 60 * 1000
  EXPECT_EQ(Timestamp::FromMillis(1999).seconds(), 1);  // 1999 / 1000, truncated
}

// Infinite and Never are the int64 maximum and report themselves as such.
TEST(TimeTest, InfiniteAndNeverAreMarked) {
  EXPECT_TRUE(Duration::Infinite().infinite());
  EXPECT_TRUE(Timestamp::Never().never());
  EXPECT_EQ(Duration::Infinite().ms, kMax);
  EXPECT_EQ(Timestamp::Never().ms, kMax);
  EXPECT_FALSE(Duration::Seconds(1).infinite());
  EXPECT_FALSE(Timestamp::FromSeconds(1).never());
}

// A finite timestamp plus a finite duration is their sum.
TEST(TimeTest, AddFiniteDuration) {
  Timestamp t = Timestamp::FromSeconds(10) + Duration::Millis(250);
  EXPECT_EQ(t.ms, 10250);  // 10 * 1000 + 250
}

// A negative duration moves a timestamp back.
TEST(TimeTest, AddNegativeDuration) {
  EXPECT_EQ((Timestamp::FromMillis(1000) + Duration::Millis(-300)).ms, 700);  // 1000 - 300
}

// Adding an infinite duration gives Never (saturates instead of overflowing).
TEST(TimeTest, AddInfiniteGivesNever) {
  EXPECT_EQ(Timestamp::FromSeconds(5) + Duration::Infinite(), Timestamp::Never());
  EXPECT_EQ(Timestamp::FromMillis(0) + Duration::Infinite(), Timestamp::Never());
}

// Adding anything to Never stays Never, even a negative duration.
TEST(TimeTest, NeverPlusAnythingIsNever) {
  EXPECT_EQ(Timestamp::Never() + Duration::Seconds(1), Timestamp::Never());
  EXPECT_EQ(Timestamp::Never() + Duration::Millis(-1), Timestamp::Never());
  EXPECT_EQ(Timestamp::Never() + Duration::Infinite(), Timestamp::Never());
}

// A finite sum that would pass the int64 range saturates to Never, not wraps negative.
TEST(TimeTest, AddFiniteOverflowSaturatesToNever) {
  Timestamp t = Timestamp::FromMillis(kMax - 10) + Duration::Millis(100);  // exceeds kMax by 90
  EXPECT_TRUE(t.never());
}

// A finite sum landing exactly on the int64 maximum is Never (the same value).
TEST(TimeTest, AddReachingMaxIsNever) {
  EXPECT_TRUE((Timestamp::FromMillis(kMax - 10) + Duration::Millis(10)).never());  // kMax - 10 + 10
}

// A finite sum below the int64 range stops at the int64 minimum instead of wrapping positive.
TEST(TimeTest, AddNegativeOverflowSaturatesAtMinimum) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Timestamp t = Timestamp::FromMillis(kMin + 10) + Duration::Millis(-100);  // 90 below kMin
  EXPECT_EQ(t.ms, kMin);
}

// The difference of two finite timestamps is their distance in milliseconds.
TEST(TimeTest, SubtractTimestamps) {
  Duration d = Timestamp::FromSeconds(12) - Timestamp::FromMillis(1500);
  EXPECT_EQ(d.ms, 10500);  // 12000 - 1500
  EXPECT_EQ((Timestamp::FromMillis(1500) - Timestamp::FromSeconds(12)).ms, -10500);  // 1500 - 12000
}

// Never minus any timestamp is an infinite duration.
TEST(TimeTest, NeverMinusAnythingIsInfinite) {
  EXPECT_TRUE((Timestamp::Never() - Timestamp::FromSeconds(100)).infinite());
  EXPECT_TRUE((Timestamp::Never() - Timestamp::Never()).infinite());
}

// Timestamps and durations order by their millisecond value; Never and Infinite are largest.
TEST(TimeTest, Ordering) {
  EXPECT_LT(Timestamp::FromMillis(1), Timestamp::FromMillis(2));
  EXPECT_LT(Timestamp::FromSeconds(1'000'000'000), Timestamp::Never());
  EXPECT_LT(Duration::Millis(-1), Duration::Millis(0));
  EXPECT_LT(Duration::Seconds(86400), Duration::Infinite());
  EXPECT_EQ(Duration::Seconds(1), Duration::Millis(1000));
}

// The arithmetic is constexpr: usable in constant expressions.
TEST(TimeTest, ArithmeticIsConstexpr) {
  constexpr Timestamp t = Timestamp::FromSeconds(1) + Duration::Seconds(2);
  static_assert(t.ms == 3000);  // 1000 + 2000
  static_assert((Timestamp::FromSeconds(1) + Duration::Infinite()).never());
  EXPECT_EQ(t.ms, 3000);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Durations as kubectl and Go write them, and a plain number as seconds.
TEST(ParseDurationTest, UnitsAndSequences) {
  EXPECT_EQ(ParseDuration("90s").value(), Duration::Seconds(90));
  EXPECT_EQ(ParseDuration("30m").value(), Duration::Seconds(1800));
  EXPECT_EQ(ParseDuration("1h30m").value(), Duration::Seconds(5400));
  EXPECT_EQ(ParseDuration("1.5h").value(), Duration::Seconds(5400));
  EXPECT_EQ(ParseDuration("2d").value(), Duration::Seconds(172800));
  EXPECT_EQ(ParseDuration("250ms").value(), Duration::Millis(250));
  EXPECT_EQ(ParseDuration("600").value(), Duration::Seconds(600));
  EXPECT_EQ(ParseDuration("0").value(), Duration::Millis(0));
}

TEST(ParseDateOrRfc3339Test, ADateIsMidnightUtc) {
  EXPECT_EQ(ParseDateOrRfc3339("2017-10-01").value(), Timestamp::FromSeconds(1506816000));
  EXPECT_EQ(ParseDateOrRfc3339("2017-10-01T00:00:10Z").value(), Timestamp::FromSeconds(1506816010));
  EXPECT_FALSE(ParseDateOrRfc3339("yesterday").has_value());
}

TEST(ParseDurationTest, ErrorsSayWhatToWrite) {
  for (const char* bad : {"", "abc", "10x", "-5m", "5m3", "m"}) {
    auto d = ParseDuration(bad);
    ASSERT_FALSE(d.has_value()) << bad;
    EXPECT_NE(d.error().message().find("like 90s, 30m, 1h30m or 2d"), std::string::npos) << d.error().message();
  }
}

}  // namespace
}  // namespace tessera
