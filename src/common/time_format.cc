#include "common/time_format.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/check.h"

namespace tessera {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil: shift the year to start in March so that the leap day is last).
constexpr int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                 // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year;
  int64_t month;
  int64_t day;
};

// The inverse of DaysFromCivil.
constexpr Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

static_assert(DaysFromCivil(1970, 1, 1) == 0);
static_assert(DaysFromCivil(2000, 3, 1) == 11017);
static_assert(CivilFromDays(11017).year == 2000 && CivilFromDays(11017).month == 3);

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`, advancing it.
bool Digits(std::string_view s, size_t& pos, int n, int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

Status Invalid(std::string_view text, std::string_view why) {
  return Status::InvalidArgument(
      fmt::format("timestamp \"{}\": {} (expected RFC 3339, such as \"2026-11-29T16:15:31Z\")", text, why));
}

}  // namespace

Result<Timestamp> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, pos, 4, year) || !Expect(text, pos, '-') || !Digits(text, pos, 2, month) ||
      !Expect(text, pos, '-') || !Digits(text, pos, 2, day)) {
    return Err(Invalid(text, "the date must be YYYY-MM-DD"));
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't')) {
    return Err(Invalid(text, "the date must be followed by 'T' and a time"));
  }
  ++pos;
  if (!Digits(text, pos, 2, hour) || !Expect(text, pos, ':') || !Digits(text, pos, 2, minute) ||
      !Expect(text, pos, ':') || !Digits(text, pos, 2, second)) {
    return Err(Invalid(text, "the time must be hh:mm:ss"));
  }
  if (month < 1 || month > 12) return Err(Invalid(text, "month out of range"));
  if (day < 1 || day > DaysInMonth(year, month)) return Err(Invalid(text, "day out of range"));
  if (hour > 23 || minute > 59 || second > 59) return Err(Invalid(text, "time of day out of range"));

  // Fractional seconds: any number of digits, kept to the millisecond.
  int64_t millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 3) millis = millis * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return Err(Invalid(text, "a decimal point needs digits after it"));
    for (int i = digits; i < 3; ++i) millis *= 10;
  }

  // Zone: Z, or +hh:mm / -hh:mm east of UTC.
  int64_t offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh = 0, om = 0;
    if (!Digits(text, pos, 2, oh) || !Expect(text, pos, ':') || !Digits(text, pos, 2, om) || oh > 23 || om > 59) {
      return Err(Invalid(text, "the zone offset must be +hh:mm or -hh:mm"));
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return Err(Invalid(text, "missing time zone ('Z' for UTC)"));
  }
  if (pos != text.size()) return Err(Invalid(text, "unexpected characters after the time zone"));

  const int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
                          offset_minutes * 60;
  return Timestamp::FromMillis(seconds * 1000 + millis);
}

std::string FormatRfc3339(Timestamp t) {
  TESSERA_CHECK(!t.never(), "cannot format Timestamp::Never()");
  // Floor division, so that instants before 1970 format correctly.
  int64_t seconds = t.ms / 1000;
  int64_t millis = t.ms % 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  const Civil c = CivilFromDays(days);
  TESSERA_CHECK(c.year >= 0 && c.year <= 9999, "timestamp {} ms is outside years 0..9999", t.ms);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", c.year, c.month, c.day, rem / 3600,
                                rem / 60 % 60, rem % 60);
  if (millis != 0) out += fmt::format(".{:03}", millis);
  out += 'Z';
  return out;
}

}  // namespace tessera

namespace tessera {

Result<Timestamp> ParseDateOrRfc3339(std::string_view text) {
  if (text.size() == 10) return ParseRfc3339(std::string(text) + "T00:00:00Z");
  return ParseRfc3339(text);
}

Result<Duration> ParseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Err(Status::InvalidArgument(
        fmt::format("\"{}\" is not a duration ({}): use a number with a unit, like 90s, 30m, 1h30m or 2d", text, why)));
  };
  if (text.empty()) return bad("it is empty");
  const char* p = text.data();
  const char* end = p + text.size();
  double total_ms = 0;
  bool plain = true;
  while (p < end) {
    double value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p) return bad("expected a number");
    if (value < 0) return bad("it is negative");
    p = next;
    const char* unit_start = p;
    while (p < end && ((*p >= 'a' && *p <= 'z'))) ++p;
    const std::string_view unit(unit_start, static_cast<size_t>(p - unit_start));
    double scale = 0;
    if (unit.empty()) {
      if (p != end || !plain) return bad("a unit is missing");
      scale = 1000;  // a plain number: seconds
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else if (unit == "d") {
      scale = 86'400'000;
    } else {
      return bad(fmt::format("unknown unit \"{}\"", unit));
    }
    plain = false;
    total_ms += value * scale;
  }
  if (total_ms > 9.2e18) return bad("it is too long");
  return Duration::Millis(static_cast<int64_t>(total_ms + 0.5));
}

Timestamp SystemNow() {
  return Timestamp::FromMillis(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace tessera
