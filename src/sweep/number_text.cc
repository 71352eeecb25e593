#include "sweep/number_text.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "common/check.h"

namespace tessera::sweep {

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // from_chars takes no leading '+' or whitespace already; it does take "inf",
  // "nan" and hex only with chars_format::hex, so checking finiteness suffices.
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string FormatDouble(double x) {
  TESSERA_CHECK(std::isfinite(x), "FormatDouble of a non-finite number");
  if (x == 0) return "0";  // and not "-0"
  // Python's repr, which ML users read every day: fixed from 1e-4 up to 1e16
  // ("0.0003", "12.5"), scientific outside ("1e-05"); both the shortest
  // digits that round-trip.
  const double magnitude = std::fabs(x);
  const auto format = magnitude >= 1e-4 && magnitude < 1e16 ? std::chars_format::fixed : std::chars_format::scientific;
  std::array<char, 64> buf{};
  auto [ptr, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x, format);
  TESSERA_CHECK(ec == std::errc(), "to_chars of a double in this range needs at most 40 characters");
  return std::string(buf.data(), ptr);
}

int DecimalPlaces(std::string_view text) {
  // mantissa digits after '.', minus the exponent: 1.25e-3 = 0.00125 -> 2 + 3 = 5.
  size_t e = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, e);
  int exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view exp_text = text.substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  }
  size_t dot = mantissa.find('.');
  int fraction = dot == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  return std::max(0, fraction - exponent);
}

double RoundToDecimalPlaces(double x, int places) {
  if (places > 17) return x;
  // Through decimal text: "%.{places}f" rounds correctly, and parsing it back
  // gives the double nearest to that decimal, which prints short.
  std::string text = fmt::format("{:.{}f}", x, places);
  std::optional<double> rounded = ParseDouble(text);
  return rounded.value_or(x);
}

}  // namespace tessera::sweep
