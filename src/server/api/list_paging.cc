#include "server/api/list_paging.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <tuple>

namespace tessera {
namespace {

// RFC 4648 base64url without padding, as Kubernetes encodes its tokens: safe in
// a query string as it is.
constexpr std::string_view kBase64UrlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  uint32_t bits = 0;
  int pending = 0;  // bits in `bits` not yet written
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    pending += 8;
    while (pending >= 6) {
      pending -= 6;
      out += kBase64UrlAlphabet[(bits >> pending) & 0x3f];
    }
  }
  if (pending > 0) out += kBase64UrlAlphabet[(bits << (6 - pending)) & 0x3f];
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (size_t i = 0; i < kBase64UrlAlphabet.size(); ++i) {
    value[static_cast<unsigned char>(kBase64UrlAlphabet[i])] = static_cast<int>(i);
  }
  std::string out;
  uint32_t bits = 0;
  int pending = 0;
  for (char c : text) {
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    pending += 6;
    if (pending >= 8) {
      pending -= 8;
      out += static_cast<char>((bits >> pending) & 0xff);
    }
  }
  return out;
}

Status InvalidToken(std::string_view why) {
  return Status::InvalidArgument(
      fmt::format("the continue token is not valid ({}); list again without the continue parameter", why));
}

// The store's key order for one kind: namespace, then name.
bool KeyAfter(const ObjectKey& key, const ContinueToken& token) {
  return std::tie(key.ns, key.name) > std::tie(token.last_ns, token.last_name);
}

}  // namespace

std::string EncodeContinueToken(const ContinueToken& token) {
  const nlohmann::json doc{{"rv", token.revision},
                           {"kind", token.kind},
                           {"ns", token.ns},
                           {"start", {{"ns", token.last_ns}, {"name", token.last_name}}}};
  return Base64UrlEncode(doc.dump());
}

Result<ContinueToken> DecodeContinueToken(std::string_view text) {
  const std::optional<std::string> bytes = Base64UrlDecode(text);
  if (!bytes) return Err(InvalidToken("not base64url"));
  const nlohmann::json doc = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  auto string_at = [&](const nlohmann::json& obj, const char* key) -> const nlohmann::json* {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? &*it : nullptr;
  };
  if (!doc.is_object() || !doc.contains("rv") || !doc["rv"].is_number_integer() || !doc.contains("start") ||
      !doc["start"].is_object()) {
    return Err(InvalidToken("not a token this server issued"));
  }
  const nlohmann::json& start = doc["start"];
  const nlohmann::json* kind = string_at(doc, "kind");
  const nlohmann::json* ns = string_at(doc, "ns");
  const nlohmann::json* last_ns = string_at(start, "ns");
  const nlohmann::json* last_name = string_at(start, "name");
  if (!kind || !ns || !last_ns || !last_name) return Err(InvalidToken("not a token this server issued"));
  return ContinueToken{.revision = doc["rv"].get<int64_t>(),
                       .kind = kind->get<std::string>(),
                       .ns = ns->get<std::string>(),
                       .last_ns = last_ns->get<std::string>(),
                       .last_name = last_name->get<std::string>()};
}

Result<size_t> ParseListLimit(std::string_view text) {
  if (text.empty()) return size_t{0};
  size_t limit = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Err(Status::InvalidArgument(fmt::format("limit \"{}\" is not a non-negative integer", text)));
  }
  return limit;
}

ListPage CutListPage(std::vector<StoredObject> all, const LabelSelector& selector,
                     const std::optional<ContinueToken>& after, size_t limit, int64_t revision, std::string_view kind,
                     std::string_view ns) {
  ListPage page;
  const StoredObject* last = nullptr;
  for (StoredObject& o : all) {
    if (after && !KeyAfter(o.key, *after)) continue;
    if (!selector.MatchesObject(o.object)) continue;
    if (limit != 0 && page.items.size() == limit) {
      ++page.remaining;
      continue;
    }
    page.items.push_back(std::move(o.object));
    last = &o;
  }
  if (page.remaining > 0) {
    page.next = ContinueToken{.revision = revision,
                              .kind = std::string(kind),
                              .ns = std::string(ns),
                              .last_ns = last->key.ns,
                              .last_name = last->key.name};
  }
  return page;
}

}  // namespace tessera
