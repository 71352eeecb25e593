#include "server/pass_pacer.h"

#include <algorithm>

namespace tessera {

void PassPacer::PassRan(Clock::time_point start, Clock::time_point end, int64_t writes) {
  // Writes per second since the previous pass started; the first pass has no
  // such interval and is no storm.
  const auto interval = std::chrono::duration_cast<std::chrono::microseconds>(start - previous_start_);
  storm_ = previous_start_ != Clock::time_point{} && interval.count() > 0 &&
           writes * 1'000'000 > kStormWritesPerSecond * interval.count();
  previous_start_ = start;
  const Clock::duration pass = end - start;
  next_ = end + std::clamp<Clock::duration>((storm_ ? kStormPauseFactor : kPauseFactor) * pass, kBatchWindow, kMaxPause);
}

}  // namespace tessera
