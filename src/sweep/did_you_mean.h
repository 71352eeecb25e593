// The tail of an error message about a name the user mistyped: `; did you mean
// "lr"?` or `` (nothing close). Short names matter here (parameters are
// called "lr", "bs"): common/suggest.h allows no edit up to 3 characters, so a
// name of 2 or 3 characters also gets the single candidate one edit away
// ("lrr" -> "lr"), when exactly one is.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::sweep {

std::string DidYouMean(std::string_view got, const std::vector<std::string_view>& candidates);

// `"a", "b", "c"`, for "must be one of ..." messages.
std::string QuotedList(const std::vector<std::string_view>& names);

}  // namespace tessera::sweep
