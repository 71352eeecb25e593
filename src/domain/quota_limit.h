// Limit: an upper bound that is either a finite amount or explicitly unlimited.
// Arithmetic saturates at Unlimited, so "nominal + unlimited borrowing" stays
// unlimited instead of overflowing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tessera {

class Limit {
 public:
  static constexpr Limit Unlimited() { return Limit(kInf); }
  static constexpr Limit Of(int64_t v) { return Limit(v); }
  constexpr Limit() = default;  // unlimited

  constexpr bool unlimited() const { return v_ == kInf; }
  constexpr int64_t value() const { return v_; }  // REQUIRES: !unlimited()

  constexpr bool Allows(int64_t amount) const { return unlimited() || amount <= v_; }
  // Saturating: a finite sum past the int64 range is Unlimited, not a wrapped negative.
  friend constexpr Limit operator+(Limit a, int64_t b) {
    int64_t sum = 0;
    if (a.unlimited()) return a;
    if (__builtin_add_overflow(a.v_, b, &sum)) {
      return b > 0 ? Unlimited() : Limit(std::numeric_limits<int64_t>::min());
    }
    return Limit(sum);
  }
  friend constexpr Limit Min(Limit a, Limit b) { return Limit(std::min(a.v_, b.v_)); }
  friend constexpr bool operator==(Limit, Limit) = default;

 private:
  static constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  constexpr explicit Limit(int64_t v) : v_(v) {}
  int64_t v_ = kInf;
};

}  // namespace tessera
