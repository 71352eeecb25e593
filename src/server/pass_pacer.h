// PassPacer: when the scheduler loop may start its next pass.
//
// A pass costs in proportion to the workloads held, not to what changed, so
// passes run back to back would take a whole core from the API under a storm
// of submissions, or under a steady trickle beside a long queue. So after a
// pass the next waits a multiple of its length: three times as long (the loop
// takes at most a quarter of a core), or seven times while the API is taking a
// storm of writes (an eighth of a core: on a small machine accepting work comes
// first; the backlog is scheduled in the same few long passes once it ends).
// Never less than a batch window, so that a burst of writes lands and is
// scheduled together; never more than kMaxPause.
//
// Pure: the loop hands it the clock's readings and the count of API writes.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera {

class PassPacer {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr auto kBatchWindow = std::chrono::milliseconds(5);
  static constexpr auto kMaxPause = std::chrono::milliseconds(2000);
  static constexpr int kPauseFactor = 3;
  static constexpr int kStormPauseFactor = 7;
  // API writes a second, between the starts of two passes, that make a storm.
  static constexpr int64_t kStormWritesPerSecond = 2000;

  // A pass ran from `start` to `end`; `writes` API writes arrived since the
  // previous pass started.
  void PassRan(Clock::time_point start, Clock::time_point end, int64_t writes);
  // The earliest the next pass may start.
  Clock::time_point NextPass() const { return next_; }
  bool storm() const { return storm_; }

 private:
  Clock::time_point previous_start_{};
  Clock::time_point next_{};
  bool storm_ = false;
};

}  // namespace tessera
