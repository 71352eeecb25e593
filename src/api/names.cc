#include "api/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tessera {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 characters.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == s.npos ? s.npos : dot - start);
    if (!IsDns1123Label(part)) return false;
    if (dot == s.npos) return true;
    start = dot + 1;
  }
}

Status ValidateQualifiedName(std::string_view key) {
  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != key.npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!IsDns1123Subdomain(prefix)) {
      return Status::InvalidArgument(fmt::format(
          "\"{}\" is not a valid key: the prefix before '/' must be a DNS subdomain such as "
          "example.com ({})",
          key, kDns1123SubdomainMessage));
    }
  }
  if (!IsQualifiedNamePart(name)) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\" is not a valid key: the name part must be 1 to 63 characters, alphanumerics, "
        "'-', '_' or '.', starting and ending with an alphanumeric character (e.g. 'app' or "
        "'example.com/team')",
        key));
  }
  return Status::Ok();
}

Status ValidateName(NameRule rule, std::string_view name) {
  switch (rule) {
    case NameRule::kDns1123Label:
      if (IsDns1123Label(name)) return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kDns1123LabelMessage));
    case NameRule::kDns1035Label:
      if (IsDns1123Label(name) && name.front() >= 'a' && name.front() <= 'z') return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kDns1035LabelMessage));
    case NameRule::kDns1123Subdomain:
      if (IsDns1123Subdomain(name)) return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kDns1123SubdomainMessage));
    case NameRule::kPathSegment:
      if (name.empty()) return Status::InvalidArgument("must not be empty");
      if (name == "." || name == "..") {
        return Status::InvalidArgument(fmt::format("\"{}\" may not be a name", name));
      }
      if (name.find_first_of("/%") != name.npos) {
        return Status::InvalidArgument(fmt::format("\"{}\": a name may not contain '/' or '%'", name));
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status ValidateLabelKey(std::string_view key) { return ValidateQualifiedName(key); }

Status ValidateLabelValue(std::string_view value) {
  if (value.empty() || IsQualifiedNamePart(value)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "\"{}\" is not a valid label value: at most 63 characters, alphanumerics, '-', '_' or '.', "
      "starting and ending with an alphanumeric character (quote values such as \"true\" or "
      "\"8\")",
      value));
}

}  // namespace tessera
