#include "server/api/protobuf_body.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace tessera {
namespace {

using nlohmann::json;

// The protobuf wire format: a field is a key (number << 3 | type), then a
// varint (type 0), 8 bytes (1), a length and that many bytes (2) or 4 bytes (5).
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  std::optional<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }
  // Calls `on_bytes` for each length-delimited field and skips the others;
  // false when the data is not protobuf.
  bool Fields(const std::function<void(uint32_t number, std::string_view bytes)>& on_bytes,
              const std::function<void(uint32_t number, uint64_t value)>& on_varint = {}) {
    while (!done()) {
      auto key = Varint();
      if (!key) return false;
      const auto number = static_cast<uint32_t>(*key >> 3);
      switch (*key & 7) {
        case 0: {
          auto v = Varint();
          if (!v) return false;
          if (on_varint) on_varint(number, *v);
          break;
        }
        case 1: pos_ += 8; break;
        case 5: pos_ += 4; break;
        case 2: {
          auto n = Varint();
          if (!n || *n > data_.size() - pos_) return false;
          on_bytes(number, data_.substr(pos_, *n));
          pos_ += *n;
          break;
        }
        default: return false;
      }
      if (pos_ > data_.size()) return false;
    }
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// A message of string fields, by number: {1: "namespace", 2: "verb", ...}.
bool Strings(std::string_view bytes, const std::map<uint32_t, std::string_view>& names, json& out) {
  return Reader(bytes).Fields([&](uint32_t n, std::string_view v) {
    if (auto it = names.find(n); it != names.end()) out[std::string(it->second)] = std::string(v);
  });
}

Status NotProtobuf() {
  return Status::InvalidArgument("the body is not a Kubernetes protobuf object; send it as JSON");
}

}  // namespace

Result<json> ProtobufBodyToJson(std::string_view body) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) return Err(NotProtobuf());
  std::string api_version, kind;
  std::string_view raw;
  const bool envelope = Reader(body.substr(kMagic.size())).Fields([&](uint32_t n, std::string_view v) {
    if (n == 1) {
      Reader(v).Fields([&](uint32_t m, std::string_view t) {
        if (m == 1) api_version = std::string(t);
        if (m == 2) kind = std::string(t);
      });
    }
    if (n == 2) raw = v;
  });
  if (!envelope) return Err(NotProtobuf());
  json object{{"apiVersion", api_version}, {"kind", kind}, {"metadata", json::object()}};
  bool ok = true;
  if (api_version == "authorization.k8s.io/v1" && kind == "SelfSubjectAccessReview") {
    json spec = json::object();
    ok = Reader(raw).Fields([&](uint32_t n, std::string_view v) {
      if (n != 2) return;  // 1: metadata, 3: status
      ok = Reader(v).Fields([&](uint32_t m, std::string_view attributes) {
        if (m == 1) {
          json resource = json::object();
          ok = ok && Strings(attributes, {{1, "namespace"}, {2, "verb"}, {3, "group"}, {4, "version"},
                                          {5, "resource"}, {6, "subresource"}, {7, "name"}},
                             resource);
          spec["resourceAttributes"] = std::move(resource);
        } else if (m == 2) {
          json non_resource = json::object();
          ok = ok && Strings(attributes, {{1, "path"}, {2, "verb"}}, non_resource);
          spec["nonResourceAttributes"] = std::move(non_resource);
        }
      }) && ok;
    }) && ok;
    object["spec"] = std::move(spec);
  } else if (api_version == "authorization.k8s.io/v1" && kind == "SelfSubjectRulesReview") {
    json spec = json::object();
    ok = Reader(raw).Fields([&](uint32_t n, std::string_view v) {
      if (n == 2) ok = Strings(v, {{1, "namespace"}}, spec) && ok;
    }) && ok;
    object["spec"] = std::move(spec);
  } else if (api_version == "authentication.k8s.io/v1" && kind == "SelfSubjectReview") {
    // Nothing in it is read: the answer is who sent it.
  } else {
    return Err(Status::InvalidArgument(fmt::format("{} {} is not taken as protobuf", api_version, kind)));
  }
  if (!ok) return Err(NotProtobuf());
  return object;
}

}  // namespace tessera
