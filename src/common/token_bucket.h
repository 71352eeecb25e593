// TokenBucket: at most `per_second` of something a second, `burst` at once
// after a quiet spell; refilled by the clock readings handed to it (pure: no
// clock of its own). Counted in thousandths, so that a refill of a few
// milliseconds is not lost to rounding.
#pragma once

#include <cstdint>
#include <optional>

#include "common/time.h"

namespace tessera {

class TokenBucket {
 public:
  TokenBucket(int64_t per_second, int64_t burst) : per_second_(per_second), burst_(burst), milli_(burst * 1000) {}

  // Whole tokens there are at `now`, after the refill since the last reading
  // (the first reading finds the bucket full).
  int64_t Available(Timestamp now);
  // Takes `n` of those.
  void Take(int64_t n) { milli_ -= n * 1000; }
  // Takes one if there is one at `now`.
  bool TryTake(Timestamp now);

 private:
  int64_t per_second_;
  int64_t burst_;
  int64_t milli_;
  std::optional<Timestamp> refilled_;
};

}  // namespace tessera
