#include "server/pass_pacer.h"

#include <algorithm>

namespace tessera {

bool PassPacer::Storm(int64_t writes, Clock::duration interval) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(interval).count();
  return us > 0 && writes * 1'000'000 > kStormWritesPerSecond * us;
}

void PassPacer::PassRan(Clock::time_point start, Clock::time_point end, int64_t writes) {
  // The first pass has no interval since a previous one, and is no storm.
  storm_ = previous_start_ != Clock::time_point{} && Storm(writes, start - previous_start_);
  previous_start_ = start;
  const Clock::duration pass = end - start;
  next_ = end + std::clamp<Clock::duration>(kPauseFactor * pass, kBatchWindow, kMaxPause);
  storm_next_ = storm_ ? std::max(next_, end + std::min<Clock::duration>(kStormPauseFactor * pass, kMaxStormPause))
                       : next_;
}

}  // namespace tessera
