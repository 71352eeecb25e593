// PassPacer: when the scheduler loop may start its next pass.
//
// A pass costs in proportion to the workloads held and to those new since the
// last, so passes run back to back would take a whole core from the API under a
// storm of submissions, or under a steady trickle beside a long queue. So after
// a pass the next waits three times as long (the loop takes at most a quarter
// of a core), at least a batch window (a burst of writes lands and is
// scheduled together) and at most kMaxPause.
//
// While the API takes a storm of writes (more than kStormWritesPerSecond), the
// next pass waits seven times as long as the last (an eighth of a core: on a
// small machine accepting work comes first), up to kMaxStormPause, but only as
// long as the storm lasts: the loop looks every kStormCheck and starts as soon
// as the writes slow down. (Capping that pause at kMaxPause would let passes
// grow with the backlog until they took a third of a core.)
//
// Pure: the loop hands it the clock's readings and the counts of API writes.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera {

class PassPacer {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr auto kBatchWindow = std::chrono::milliseconds(5);
  static constexpr auto kMaxPause = std::chrono::milliseconds(2000);
  // The loop's time-driven duties (a node's lease expiring, an idle notebook)
  // wait no longer than its resync period.
  static constexpr auto kMaxStormPause = std::chrono::seconds(5);
  static constexpr auto kStormCheck = std::chrono::milliseconds(100);
  static constexpr int kPauseFactor = 3;
  static constexpr int kStormPauseFactor = 7;
  static constexpr int64_t kStormWritesPerSecond = 2000;

  // Whether `writes` API writes over `interval` make a storm.
  static bool Storm(int64_t writes, Clock::duration interval);

  // A pass ran from `start` to `end`; `writes` API writes arrived since the
  // previous pass started.
  void PassRan(Clock::time_point start, Clock::time_point end, int64_t writes);
  // The earliest the next pass may start.
  Clock::time_point NextPass() const { return next_; }
  // While the storm lasts (Storm over each kStormCheck), the next pass waits
  // until this; it is NextPass() when the last pass saw no storm.
  Clock::time_point NextPassInStorm() const { return storm_next_; }
  bool storm() const { return storm_; }

 private:
  Clock::time_point previous_start_{};
  Clock::time_point next_{};
  Clock::time_point storm_next_{};
  bool storm_ = false;
};

}  // namespace tessera
