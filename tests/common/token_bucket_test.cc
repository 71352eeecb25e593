#include "common/token_bucket.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

const Timestamp kT0 = Timestamp::FromMillis(1'700'000'000'000);

TEST(TokenBucketTest, StartsFullThenRefillsAtItsRateUpToTheBurst) {
  TokenBucket bucket(/*per_second=*/50, /*burst=*/100);
  EXPECT_EQ(bucket.Available(kT0), 100);
  bucket.Take(100);
  EXPECT_EQ(bucket.Available(kT0), 0);
  EXPECT_FALSE(bucket.TryTake(kT0));
  // 10 ms at 50 a second is half a token: kept, not rounded away.
  EXPECT_EQ(bucket.Available(kT0 + Duration::Millis(10)), 0);
  EXPECT_EQ(bucket.Available(kT0 + Duration::Millis(20)), 1);
  EXPECT_TRUE(bucket.TryTake(kT0 + Duration::Millis(20)));
  EXPECT_EQ(bucket.Available(kT0 + Duration::Seconds(1)), 49);
  EXPECT_EQ(bucket.Available(kT0 + Duration::Seconds(60)), 100);  // never more than the burst
}

TEST(TokenBucketTest, AClockGoingBackAddsNothing) {
  TokenBucket bucket(10, 5);
  bucket.Take(bucket.Available(kT0));
  EXPECT_EQ(bucket.Available(Timestamp::FromMillis(kT0.ms - 10'000)), 0);
}

}  // namespace
}  // namespace tessera
