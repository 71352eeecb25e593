#include "common/json_fields.h"

#include <fmt/format.h>

namespace tessera {

using nlohmann::json;

std::string JoinJsonPath(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

const json* JsonFind(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Status JsonTypeError(std::string_view path, std::string_view want, const json& got) {
  return Status::InvalidArgument(fmt::format("{}: must be {}, not {}", path, want, got.type_name()));
}

Result<std::string> ReadJsonString(const json& object, const char* key, std::string_view path, bool required) {
  const std::string field = JoinJsonPath(path, key);
  const json* v = JsonFind(object, key);
  if (v == nullptr) {
    if (required) return Err(Status::InvalidArgument(fmt::format("{}: is required", field)));
    return std::string();
  }
  if (!v->is_string()) return Err(JsonTypeError(field, "a string", *v));
  const std::string& s = v->get_ref<const std::string&>();
  if (required && s.empty()) return Err(Status::InvalidArgument(fmt::format("{}: must not be empty", field)));
  return s;
}

Result<std::vector<std::string>> ReadJsonStringList(const json& object, const char* key, std::string_view path) {
  const std::string field = JoinJsonPath(path, key);
  std::vector<std::string> out;
  const json* v = JsonFind(object, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return Err(JsonTypeError(field, "a list of strings", *v));
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];  // const operator[] with an index in range: defined
    if (!item.is_string()) return Err(JsonTypeError(fmt::format("{}[{}]", field, i), "a string", item));
    out.push_back(item.get_ref<const std::string&>());
  }
  return out;
}

Result<std::map<std::string, std::string>> ReadJsonStringMap(const json& object, const char* key,
                                                             std::string_view path) {
  const std::string field = JoinJsonPath(path, key);
  std::map<std::string, std::string> out;
  const json* v = JsonFind(object, key);
  if (v == nullptr) return out;
  if (!v->is_object()) return Err(JsonTypeError(field, "an object of strings", *v));
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) return Err(JsonTypeError(fmt::format("{}.{}", field, it.key()), "a string", *it));
    out.emplace(it.key(), it->get_ref<const std::string&>());
  }
  return out;
}

Result<const json*> ReadJsonObjectList(const json& object, const char* key, std::string_view path) {
  const json* v = JsonFind(object, key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) return Err(JsonTypeError(JoinJsonPath(path, key), "a list", *v));
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) {
      return Err(JsonTypeError(fmt::format("{}[{}]", JoinJsonPath(path, key), i), "an object", (*v)[i]));
    }
  }
  return v;
}

}  // namespace tessera
