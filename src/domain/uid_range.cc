#include "domain/uid_range.h"

#include <fmt/format.h>

#include <charconv>

namespace tessera {

std::string UidRange::ToString() const { return fmt::format("{}/{}", first, size); }

Result<UidRange> ParseUidRange(std::string_view text) {
  const size_t slash = text.find('/');
  auto number = [](std::string_view s) -> std::optional<uint64_t> {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
  };
  const auto first = slash == std::string_view::npos ? std::nullopt : number(text.substr(0, slash));
  const auto size = slash == std::string_view::npos ? std::nullopt : number(text.substr(slash + 1));
  if (!first || !size || *size == 0 || *first + *size > 0xFFFFFFFFull) {
    return Err(Status::InvalidArgument(fmt::format(
        "uid range \"{}\": expected FIRST/SIZE, such as 1000010000/10000, ending below 4294967295", text)));
  }
  return UidRange{static_cast<uint32_t>(*first), static_cast<uint32_t>(*size)};
}

}  // namespace tessera
