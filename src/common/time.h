// Time as plain values. The scheduler core never reads a clock: the caller passes
// `now`. Timestamps are milliseconds since the Unix epoch; durations milliseconds.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace tessera {

struct Duration {
  int64_t ms = 0;

  static constexpr Duration Millis(int64_t v) { return {v}; }
  static constexpr Duration Seconds(int64_t v) { return {v * 1000}; }
  static constexpr Duration Infinite() { return {std::numeric_limits<int64_t>::max()}; }

  constexpr bool infinite() const { return ms == std::numeric_limits<int64_t>::max(); }
  constexpr int64_t seconds() const { return ms / 1000; }
  friend constexpr auto operator<=>(Duration, Duration) = default;
};

struct Timestamp {
  int64_t ms = 0;

  static constexpr Timestamp FromMillis(int64_t v) { return {v}; }
  static constexpr Timestamp FromSeconds(int64_t v) { return {v * 1000}; }
  static constexpr Timestamp Never() { return {std::numeric_limits<int64_t>::max()}; }

  constexpr bool never() const { return ms == std::numeric_limits<int64_t>::max(); }
  constexpr int64_t seconds() const { return ms / 1000; }
  friend constexpr auto operator<=>(Timestamp, Timestamp) = default;
};

// Saturating: adding an infinite duration, or to Never, gives Never; so does a
// finite sum past the int64 range (a negative one stops at the int64 minimum).
constexpr Timestamp operator+(Timestamp t, Duration d) {
  if (t.never() || d.infinite()) return Timestamp::Never();
  int64_t sum = 0;
  if (__builtin_add_overflow(t.ms, d.ms, &sum)) {
    return d.ms > 0 ? Timestamp::Never() : Timestamp{std::numeric_limits<int64_t>::min()};
  }
  return {sum};
}
constexpr Duration operator-(Timestamp a, Timestamp b) {
  if (a.never()) return Duration::Infinite();
  return {a.ms - b.ms};
}

}  // namespace tessera
