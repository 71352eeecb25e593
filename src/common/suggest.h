// Did-you-mean: the closest of some known names to one a user typed, for error
// messages (an unknown field, kind or command).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tessera {

// Optimal string alignment distance: insertions, deletions, substitutions and
// transpositions of adjacent characters ("spce" -> "spec" is one edit).
size_t EditDistance(std::string_view a, std::string_view b);

// The closest candidate within a small edit distance (ignoring case), or none.
// Allowed edits grow with the length: 0 up to 3 characters (only a case
// difference), 1 up to 6, 2 up to 11, then 3.
std::optional<std::string_view> Suggest(std::string_view got, const std::vector<std::string_view>& candidates);

}  // namespace tessera
