#include "server/pass_pacer.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using std::chrono::milliseconds;
using Clock = PassPacer::Clock;

const Clock::time_point kT0 = Clock::time_point{} + std::chrono::hours(1);

TEST(PassPacerTest, TheFirstPassStartsAtOnce) {
  PassPacer pacer;
  EXPECT_LE(pacer.NextPass(), kT0);
}

TEST(PassPacerTest, AfterAPassTheNextWaitsThreeTimesAsLong) {
  PassPacer pacer;
  pacer.PassRan(kT0, kT0 + milliseconds(40), 0);
  pacer.PassRan(kT0 + milliseconds(200), kT0 + milliseconds(240), 100);  // 500 writes/s: no storm
  EXPECT_FALSE(pacer.storm());
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(240 + 120));
}

TEST(PassPacerTest, AShortPassStillWaitsABatchWindow) {
  PassPacer pacer;
  pacer.PassRan(kT0, kT0 + milliseconds(1), 1);
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(1) + PassPacer::kBatchWindow);
}

TEST(PassPacerTest, AStormOfApiWritesLeavesTheApiMoreOfTheMachine) {
  PassPacer pacer;
  pacer.PassRan(kT0, kT0 + milliseconds(40), 0);
  // 2,001 writes in the second between the two starts: a storm. The pass may
  // wait seven times its length while the storm lasts, three times at least.
  pacer.PassRan(kT0 + milliseconds(1000), kT0 + milliseconds(1100), 2001);
  EXPECT_TRUE(pacer.storm());
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(1100 + 300));
  EXPECT_EQ(pacer.NextPassInStorm(), kT0 + milliseconds(1100 + 700));
  // It ends: back to three times, and nothing longer.
  pacer.PassRan(kT0 + milliseconds(1800), kT0 + milliseconds(1900), 10);
  EXPECT_FALSE(pacer.storm());
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(1900 + 300));
  EXPECT_EQ(pacer.NextPassInStorm(), pacer.NextPass());
}

TEST(PassPacerTest, ExactlyTheStormRateIsNoStorm) {
  PassPacer pacer;
  pacer.PassRan(kT0, kT0 + milliseconds(10), 0);
  pacer.PassRan(kT0 + milliseconds(500), kT0 + milliseconds(510), PassPacer::kStormWritesPerSecond / 2);
  EXPECT_FALSE(pacer.storm());
  EXPECT_FALSE(PassPacer::Storm(PassPacer::kStormWritesPerSecond / 10, milliseconds(100)));
  EXPECT_TRUE(PassPacer::Storm(PassPacer::kStormWritesPerSecond / 10 + 1, milliseconds(100)));
  EXPECT_FALSE(PassPacer::Storm(5, milliseconds(0)));
}

// The pause after a long pass is capped, but in a storm only much later: a
// cap at kMaxPause would let passes grow with the backlog (each handles what
// came during the pause before it) until they took a third of a core.
TEST(PassPacerTest, ThePauseIsCapped) {
  PassPacer pacer;
  pacer.PassRan(kT0, kT0 + milliseconds(10), 0);
  pacer.PassRan(kT0 + milliseconds(20), kT0 + milliseconds(1020), 1);  // no storm, a 1 s pass
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(1020) + PassPacer::kMaxPause);
  pacer.PassRan(kT0 + milliseconds(3100), kT0 + milliseconds(3600), 10000);  // a storm, a 0.5 s pass
  EXPECT_EQ(pacer.NextPass(), kT0 + milliseconds(3600 + 1500));
  EXPECT_EQ(pacer.NextPassInStorm(), kT0 + milliseconds(3600 + 3500));
  pacer.PassRan(kT0 + milliseconds(8000), kT0 + milliseconds(10000), 100000);  // a 2 s pass
  EXPECT_EQ(pacer.NextPassInStorm(), kT0 + milliseconds(10000) + PassPacer::kMaxStormPause);
}

}  // namespace
}  // namespace tessera
