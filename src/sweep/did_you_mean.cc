#include "sweep/did_you_mean.h"

#include <fmt/format.h>

#include <optional>

#include "common/suggest.h"

namespace tessera::sweep {

std::string DidYouMean(std::string_view got, const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best = tessera::Suggest(got, candidates);
  if (!best && got.size() >= 2 && got.size() <= 3) {
    int close = 0;
    for (std::string_view c : candidates) {
      if (c.size() >= 2 && EditDistance(got, c) == 1) {
        best = c;
        ++close;
      }
    }
    if (close != 1) best.reset();
  }
  return best ? fmt::format("; did you mean \"{}\"?", *best) : std::string();
}

std::string QuotedList(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += fmt::format("\"{}\"", n);
  }
  return out;
}

}  // namespace tessera::sweep
