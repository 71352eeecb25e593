#include "api/age.h"

#include <fmt/format.h>

#include "common/time_format.h"

namespace tessera {

std::optional<int64_t> ParseTimeSeconds(std::string_view text) {
  auto t = ParseRfc3339(text);
  if (!t) return std::nullopt;
  // Floor division: a time before the epoch still rounds down.
  return t->ms >= 0 ? t->ms / 1000 : -((-t->ms + 999) / 1000);
}

std::string HumanDuration(int64_t seconds) {
  // Steps follow k8s.io/apimachinery/pkg/util/duration.HumanDuration.
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return fmt::format("{}s", seconds);
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, s);
  }
  if (minutes < 60 * 3) return fmt::format("{}m", minutes);
  const int64_t hours = seconds / 3600;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, m);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, h);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    return dy == 0 ? fmt::format("{}y", hours / 24 / 365) : fmt::format("{}y{}d", hours / 24 / 365, dy);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

std::string AgeSince(const nlohmann::json& timestamp, int64_t now) {
  if (!timestamp.is_string()) return "<unknown>";
  auto t = ParseTimeSeconds(timestamp.get<std::string>());
  if (!t) return "<unknown>";
  return HumanDuration(now - *t);
}

}  // namespace tessera
