#include "common/token_bucket.h"

#include <algorithm>

namespace tessera {

int64_t TokenBucket::Available(Timestamp now) {
  if (refilled_) {
    milli_ = std::min(burst_ * 1000, milli_ + std::max<int64_t>(0, (now - *refilled_).ms) * per_second_);
  }
  refilled_ = now;
  return milli_ / 1000;
}

bool TokenBucket::TryTake(Timestamp now) {
  if (Available(now) < 1) return false;
  Take(1);
  return true;
}

}  // namespace tessera
