#include "common/suggest.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace tessera {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string_view> Suggest(std::string_view got,
                                        const std::vector<std::string_view>& candidates) {
  size_t allowed = got.size() <= 3 ? 0 : got.size() <= 6 ? 1 : got.size() <= 11 ? 2 : 3;
  std::string g = Lower(got);
  std::optional<std::string_view> best;
  size_t best_distance = allowed + 1;
  for (std::string_view c : candidates) {
    if (c == got) continue;
    size_t d = EditDistance(g, Lower(c));
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace tessera
