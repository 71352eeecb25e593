#include "api/object_fields.h"

#include "api/validation.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

enum class Unit { kMilliGpu, kMilli, kBytes, kOther };

Unit UnitOf(std::string_view resource) {
  // "requests.nvidia.com/gpu" and "limits.cpu" (ResourceQuota keys) measure the same.
  for (std::string_view prefix : {"requests.", "limits."}) {
    if (resource.starts_with(prefix)) resource.remove_prefix(prefix.size());
  }
  if (resource == "nvidia.com/gpu") return Unit::kMilliGpu;
  if (resource == "cpu") return Unit::kMilli;
  if (resource == "memory" || resource == "ephemeral-storage" || resource == "tessera.dev/gpu-memory" ||
      resource == "storage") {
    return Unit::kBytes;
  }
  return Unit::kOther;
}

}  // namespace

const nlohmann::json* Child(const nlohmann::json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

const nlohmann::json* Find(const nlohmann::json& obj, std::string_view path) {
  const nlohmann::json* cur = &obj;
  while (cur != nullptr && !path.empty()) {
    const auto dot = path.find('.');
    cur = Child(cur, path.substr(0, dot));
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return cur;
}

std::string Text(const nlohmann::json* value, std::string_view fallback) {
  if (value == nullptr) return std::string(fallback);
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number() || value->is_boolean()) return value->dump();
  return std::string(fallback);
}

std::string TextAt(const nlohmann::json& obj, std::string_view path, std::string_view fallback) {
  return Text(Find(obj, path), fallback);
}

std::string NameOf(const nlohmann::json& obj) { return TextAt(obj, "metadata.name"); }
std::string NamespaceOf(const nlohmann::json& obj) { return TextAt(obj, "metadata.namespace"); }

const nlohmann::json* FindCondition(const nlohmann::json& obj, std::string_view type) {
  const nlohmann::json* conditions = Find(obj, "status.conditions");
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const nlohmann::json& c : *conditions) {
    if (c.is_object() && Text(Child(&c, "type")) == type) return &c;
  }
  return nullptr;
}

int64_t QuantityValue(std::string_view resource, const nlohmann::json& amount) {
  auto text = QuantityText(amount);
  if (!text) return 0;
  Result<int64_t> v = Err(Status::InvalidArgument(""));
  switch (UnitOf(resource)) {
    case Unit::kMilliGpu:
    case Unit::kMilli: v = ParseMilli(*text); break;
    default: v = ParseUnits(*text); break;
  }
  return v ? *v : 0;
}

std::string FormatQuantityValue(std::string_view resource, int64_t value) {
  switch (UnitOf(resource)) {
    case Unit::kMilliGpu: return FormatMilliDecimal(value);
    case Unit::kMilli: return FormatMilli(value);
    case Unit::kBytes: return FormatBytes(value);
    case Unit::kOther: return std::to_string(value);
  }
  return std::to_string(value);
}

std::string DisplayQuantity(std::string_view resource, const nlohmann::json& amount) {
  auto text = QuantityText(amount);
  if (!text) return Text(&amount);
  Result<int64_t> v = Err(Status::InvalidArgument(""));
  switch (UnitOf(resource)) {
    case Unit::kMilliGpu:
    case Unit::kMilli: v = ParseMilli(*text); break;
    case Unit::kBytes: v = ParseUnits(*text); break;
    case Unit::kOther: return *text;
  }
  return v ? FormatQuantityValue(resource, *v) : *text;
}

std::string JoinMap(const nlohmann::json* map, std::string_view none) {
  if (map == nullptr || !map->is_object() || map->empty()) return std::string(none);
  std::string out;
  for (const auto& [k, v] : map->items()) {
    if (!out.empty()) out += ',';
    out += k + "=" + Text(&v);
  }
  return out;
}

}  // namespace tessera
