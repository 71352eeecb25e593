#include "agent/image_ref.h"

#include <fmt/format.h>

#include <cctype>

namespace tessera {
namespace {

bool Lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A path component: [a-z0-9]+ joined by ".", "_", "__" or runs of "-".
bool PathComponent(std::string_view s) {
  if (s.empty() || !Lower(s.front()) || !Lower(s.back())) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (Lower(c)) continue;
    if (c == '-') continue;
    if (c == '.' || c == '_') {
      const bool double_underscore = c == '_' && i + 1 < s.size() && s[i + 1] == '_';
      if (double_underscore) ++i;
      if (!Lower(s[i + 1])) return false;  // one separator at a time
      continue;
    }
    return false;
  }
  return true;
}

// A registry: host names (letters, digits, '-', '.'), an IPv4 address or
// [IPv6], then an optional :port.
bool Domain(std::string_view s) {
  if (s.empty()) return false;
  std::string_view host = s;
  if (s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos) return false;
    host = s.substr(1, close - 1);
    s = s.substr(close + 1);
    if (!s.empty() && s.front() != ':') return false;
  } else if (const auto colon = s.rfind(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    s = s.substr(colon);
  } else {
    s = {};
  }
  if (host.empty()) return false;
  for (char c : host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == ':')) return false;
  }
  if (!s.empty()) {  // ":port"
    const std::string_view port = s.substr(1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
  }
  return true;
}

Status Invalid(std::string_view text, std::string_view why = "invalid reference format") {
  return Status::InvalidArgument(fmt::format("couldn't parse image reference \"{}\": {}", text, why));
}

}  // namespace

std::string ImageRef::Canonical() const {
  std::string out = registry + "/" + repository;
  if (!digest.empty()) return out + "@" + digest;
  return out + ":" + tag;
}

bool ImageRef::Loopback() const {
  std::string_view host = registry;
  if (host.starts_with("[")) return host.starts_with("[::1]");
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.starts_with("127.");
}

Result<ImageRef> ParseImageRef(std::string_view text) {
  if (text.empty()) return Err(Invalid(text));
  ImageRef ref;
  std::string_view rest = text;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view digest = rest.substr(at + 1);
    const auto colon = digest.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= digest.size()) return Err(Invalid(text));
    for (char c : digest.substr(0, colon)) {
      if (!(Lower(c) || c == '+' || c == '.' || c == '_' || c == '-')) return Err(Invalid(text));
    }
    for (char c : digest.substr(colon + 1)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) {
        return Err(Invalid(text));
      }
    }
    if (digest.substr(0, colon) == "sha256" && digest.size() - colon - 1 != 64) return Err(Invalid(text));
    ref.digest = std::string(digest);
    rest = rest.substr(0, at);
  }
  // The tag follows the last ':' that comes after the last '/'.
  const auto slash = rest.rfind('/');
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    const std::string_view tag = rest.substr(colon + 1);
    if (tag.empty() || tag.size() > 128 || !Word(tag.front())) return Err(Invalid(text));
    for (char c : tag) {
      if (!(Word(c) || c == '.' || c == '-')) return Err(Invalid(text));
    }
    ref.tag = std::string(tag);
    rest = rest.substr(0, colon);
  }
  // The first component is a registry when it looks like one.
  std::string_view name = rest;
  if (const auto first = rest.find('/'); first != std::string_view::npos) {
    const std::string_view head = rest.substr(0, first);
    if (head.find_first_of(".:") != std::string_view::npos || head == "localhost" ||
        head.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string_view::npos) {
      if (!Domain(head)) return Err(Invalid(text));
      ref.registry = std::string(head);
      name = rest.substr(first + 1);
    }
  }
  if (name.empty()) return Err(Invalid(text));
  size_t start = 0;
  while (true) {
    const auto end = name.find('/', start);
    const std::string_view part = name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!PathComponent(part)) {
      for (char c : part) {
        if (std::isupper(static_cast<unsigned char>(c))) return Err(Invalid(text, "repository name must be lowercase"));
      }
      return Err(Invalid(text));
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (name.size() + ref.registry.size() > 255) return Err(Invalid(text, "repository name must not be more than 255 characters"));
  ref.repository = std::string(name);
  if (ref.registry.empty() || ref.registry == "index.docker.io") ref.registry = "docker.io";
  if (ref.registry == "docker.io" && ref.repository.find('/') == std::string::npos) ref.repository = "library/" + ref.repository;
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

Result<PullPolicy> ImagePullPolicy(std::string_view policy, const ImageRef& image) {
  if (policy == "Always") return PullPolicy::kAlways;
  if (policy == "IfNotPresent") return PullPolicy::kIfNotPresent;
  if (policy == "Never") return PullPolicy::kNever;
  if (!policy.empty()) {
    return Err(Status::InvalidArgument(fmt::format(
        "imagePullPolicy: Unsupported value: \"{}\": supported values: \"Always\", \"IfNotPresent\", \"Never\"",
        policy)));
  }
  return image.digest.empty() && image.tag == "latest" ? PullPolicy::kAlways : PullPolicy::kIfNotPresent;
}

}  // namespace tessera
