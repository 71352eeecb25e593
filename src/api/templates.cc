#include "api/templates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

#include "api/schema.h"
#include "api/validation.h"
#include "common/suggest.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;

const json& At(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string TextOf(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// `value` as the parameter's type, or what is wrong with it.
Result<json> Convert(const json& param, const json& value) {
  const std::string type = At(param, "type").is_string() ? At(param, "type").get<std::string>() : "string";
  const std::string name = At(param, "name").is_string() ? At(param, "name").get<std::string>() : "";
  auto wrong = [&](std::string_view want) {
    return Err(Status::InvalidArgument(fmt::format("parameters.{}: {} is not {}", name, schema::Describe(value), want)));
  };
  json out;
  if (type == "string") {
    if (!value.is_string() && !value.is_number() && !value.is_boolean()) return wrong("a string");
    out = TextOf(value);
  } else if (type == "quantity") {
    auto text = QuantityText(value);
    if (!text || !ParseMilli(*text)) return wrong("a quantity (0.25, 2, 500m, 16Gi)");
    out = *text;
  } else if (type == "integer") {
    if (value.is_number_integer()) {
      out = value.get<int64_t>();
    } else if (value.is_string() && !value.get<std::string>().empty()) {
      const std::string text = value.get<std::string>();
      char* end = nullptr;
      const long long n = std::strtoll(text.c_str(), &end, 10);
      if (*end != '\0') return wrong("an integer");
      out = static_cast<int64_t>(n);
    } else {
      return wrong("an integer");
    }
  } else if (type == "boolean") {
    if (value.is_boolean()) {
      out = value;
    } else if (value == "true" || value == "false") {
      out = value == "true";
    } else {
      return wrong("true or false");
    }
  } else if (type == "command") {
    if (!value.is_array() || value.empty()) return wrong("a command: the program and its arguments, as a list");
    for (const json& arg : value) {
      if (!arg.is_string()) return wrong("a command: a list of strings");
    }
    out = value;
  } else {
    return Err(Status::InvalidArgument(fmt::format("parameters.{}: unknown type \"{}\"", name, type)));
  }
  // Its allowed values and its range.
  if (const json& allowed = At(param, "enum"); allowed.is_array() && !allowed.empty()) {
    bool found = false;
    std::vector<std::string> names;
    for (const json& a : allowed) {
      names.push_back(TextOf(a));
      found = found || TextOf(a) == TextOf(out);
    }
    if (!found) {
      return Err(Status::InvalidArgument(
          fmt::format("parameters.{}: \"{}\" is not one of {}", name, TextOf(out), fmt::join(names, ", "))));
    }
  }
  for (const char* bound : {"minimum", "maximum"}) {
    const json& limit = At(param, bound);
    if (limit.is_null()) continue;
    const bool min = std::string_view(bound) == "minimum";
    if (type == "integer") {
      const int64_t n = out.get<int64_t>(), l = limit.is_number_integer() ? limit.get<int64_t>() : 0;
      if (min ? n < l : n > l) {
        return Err(Status::InvalidArgument(fmt::format("parameters.{}: {} is {} the {} of {}", name, n,
                                                       min ? "below" : "above", bound, l)));
      }
    } else if (type == "quantity") {
      auto l = QuantityText(limit);
      auto lm = l ? ParseMilli(*l) : Result<int64_t>(Err(Status::InvalidArgument("")));
      auto nm = ParseMilli(out.get<std::string>());
      if (lm && nm && (min ? *nm < *lm : *nm > *lm)) {
        return Err(Status::InvalidArgument(fmt::format("parameters.{}: {} is {} the {} of {}", name,
                                                       out.get<std::string>(), min ? "below" : "above", bound, *l)));
      }
    }
  }
  return out;
}

}  // namespace

Status SetAtPath(json& object, const std::string& path, json value) {
  json* at = &object;
  size_t i = 0;
  if (path.empty()) return Status::InvalidArgument("an empty path");
  while (i < path.size()) {
    // The key, up to an unescaped "." or "[" ("requests.nvidia\\.com/gpu": a key with a dot).
    std::string key;
    size_t end = i;
    for (; end < path.size() && path[end] != '.' && path[end] != '['; ++end) {
      if (path[end] == '\\' && end + 1 < path.size() && path[end + 1] == '.') ++end;
      key += path[end];
    }
    if (key.empty()) return Status::InvalidArgument(fmt::format("\"{}\": an empty field name", path));
    if (!at->is_null() && !at->is_object()) {
      return Status::InvalidArgument(fmt::format("\"{}\": {} is not an object", path, path.substr(0, i ? i - 1 : 0)));
    }
    at = &(*at)[key];
    i = end;
    while (i < path.size() && path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos) return Status::InvalidArgument(fmt::format("\"{}\": a [ without its ]", path));
      const std::string digits = path.substr(i + 1, close - i - 1);
      char* stop = nullptr;
      const long index = std::strtol(digits.c_str(), &stop, 10);
      if (digits.empty() || *stop != '\0' || index < 0 || index > 64) {
        return Status::InvalidArgument(fmt::format("\"{}\": [{}] is not a list index (0 to 64)", path, digits));
      }
      if (!at->is_null() && !at->is_array()) {
        return Status::InvalidArgument(fmt::format("\"{}\": {} is not a list", path, path.substr(0, i)));
      }
      if (at->is_null()) *at = json::array();
      while (at->size() <= static_cast<size_t>(index)) at->push_back(json());
      at = &(*at)[static_cast<size_t>(index)];
      i = close + 1;
    }
    if (i < path.size()) {
      if (path[i] != '.') return Status::InvalidArgument(fmt::format("\"{}\": expected . after ]", path));
      ++i;
      if (i == path.size()) return Status::InvalidArgument(fmt::format("\"{}\": ends with a dot", path));
    }
  }
  *at = std::move(value);
  return Status::Ok();
}

Result<json> RenderTemplate(const json& tmpl, const TemplateRenderInput& input) {
  const std::string tname = TextOf(At(At(tmpl, "metadata"), "name"));
  const json& spec = At(tmpl, "spec");
  json object = At(spec, "object");
  if (!object.is_object()) return Err(Status::InvalidArgument(fmt::format("template {} has no spec.object", tname)));
  // Every given value names a parameter.
  std::vector<std::string_view> names;
  for (const json& p : At(spec, "parameters")) {
    if (At(p, "name").is_string()) names.push_back(At(p, "name").get_ref<const std::string&>());
  }
  for (const auto& [given, unused] : input.parameters) {
    if (std::find(names.begin(), names.end(), given) != names.end()) continue;
    const auto close = Suggest(given, names);
    return Err(Status::InvalidArgument(fmt::format(
        "parameters.{}: template {} has no parameter {}{}; its parameters are {}", given, tname, given,
        close ? fmt::format(" (did you mean {}?)", *close) : "", names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")))));
  }
  for (const json& p : At(spec, "parameters")) {
    const std::string name = TextOf(At(p, "name"));
    const std::string path = At(p, "path").is_string() ? At(p, "path").get<std::string>() : "";
    auto given = input.parameters.find(name);
    const json* value = given != input.parameters.end() ? &given->second : nullptr;
    if (value == nullptr && !At(p, "default").is_null()) value = &At(p, "default");
    if (value == nullptr) {
      if (At(p, "required") == true) {
        const std::string about = At(p, "description").is_string() ? ": " + At(p, "description").get<std::string>() : "";
        return Err(Status::InvalidArgument(
            fmt::format("parameters.{}: required by template {}{} (--set {}=VALUE)", name, tname, about, name)));
      }
      continue;
    }
    ASSIGN_OR_RETURN(json converted, Convert(p, *value));
    if (Status set = SetAtPath(object, path, std::move(converted)); !set.ok()) {
      return Err(Status::InvalidArgument(fmt::format("parameters.{}: its path {}", name, set.message())));
    }
  }
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta["name"] = input.name;
  meta["namespace"] = input.ns;
  meta["labels"][kTemplateLabel] = tname;
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKind(object));
  if (!kind->namespaced) {
    return Err(Status::InvalidArgument(fmt::format("template {} makes a {}, which is not namespaced", tname, kind->kind)));
  }
  if (Status valid = ValidateObject(*kind, object); !valid.ok()) {
    return Err(Status::InvalidArgument(
        fmt::format("template {} with these parameters makes an invalid {}: {}", tname, kind->kind, valid.message())));
  }
  return object;
}

}  // namespace tessera
