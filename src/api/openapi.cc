#include "api/openapi.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <vector>

#include "api/kind_definition.h"
#include "api/kinds.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using schema::Schema;
using schema::Type;

constexpr std::string_view kIntOrString = "x-kubernetes-int-or-string";
constexpr std::string_view kPreserveUnknown = "x-kubernetes-preserve-unknown-fields";

std::string_view StringFormat(schema::StringRule rule) {
  switch (rule) {
    case schema::StringRule::kDns1123Label: return "dns1123-label";
    case schema::StringRule::kDns1123Subdomain: return "dns1123-subdomain";
    case schema::StringRule::kNamespace: return "dns1123-label";
    case schema::StringRule::kLabelValue: return "label-value";
    case schema::StringRule::kQualifiedName: return "qualified-name";
    case schema::StringRule::kNone: break;
  }
  return "";
}

json SchemaOf(const Schema& s) {
  switch (s.type) {
    case Type::kString: {
      json out{{"type", "string"}};
      if (!s.enum_values.empty()) out["enum"] = std::vector<std::string>(s.enum_values.begin(), s.enum_values.end());
      if (const std::string_view format = StringFormat(s.string_rule); !format.empty()) out["format"] = format;
      return out;
    }
    case Type::kInt: {
      json out{{"type", "integer"}, {"format", s.max > schema::kInt32Max ? "int64" : "int32"}};
      if (s.min > schema::kInt32Min) out["minimum"] = s.min;
      return out;
    }
    case Type::kBool: return {{"type", "boolean"}};
    case Type::kQuantity:
    case Type::kIntOrString:
      return {{kIntOrString, true}, {"anyOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})}};
    case Type::kObject: {
      json out{{"type", "object"}};
      json properties = json::object();
      std::vector<std::string> required;
      for (const schema::FieldSpec& f : s.fields) {
        json field = SchemaOf(*f.schema);
        if (!f.description.empty()) field["description"] = f.description;
        properties[std::string(f.name)] = std::move(field);
        if (f.required) required.emplace_back(f.name);
      }
      if (!properties.empty()) out["properties"] = std::move(properties);
      if (!required.empty()) out["required"] = std::move(required);
      if (s.open) out[kPreserveUnknown] = true;
      return out;
    }
    case Type::kArray: return {{"type", "array"}, {"items", SchemaOf(*s.element)}};
    case Type::kMap: return {{"type", "object"}, {"additionalProperties", SchemaOf(*s.element)}};
    case Type::kResourceList:
      return {{"type", "object"},
              {"additionalProperties",
               {{kIntOrString, true}, {"anyOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})}}}};
    case Type::kAny: break;
  }
  return {{kPreserveUnknown, true}};
}

// The path below /openapi/v3/ of a kind's group version.
std::string DocumentPath(const KindInfo& k) {
  return k.group.empty() ? "api/" + std::string(k.version) : "apis/" + std::string(k.api_version);
}

json Parameter(std::string_view name, std::string_view in, std::string_view description) {
  return {{"name", name},
          {"in", in},
          {"description", description},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

json Operation(const KindInfo& k, std::string_view action, const std::string& ref, bool writes) {
  json op{{"operationId", fmt::format("{}{}", action, k.kind)},
          {"x-kubernetes-action", action},
          {"x-kubernetes-group-version-kind", {{"group", k.group}, {"version", k.version}, {"kind", k.kind}}},
          {"responses", {{"200", {{"description", "OK"}, {"content", {{"application/json", {{"schema", {{"$ref", ref}}}}}}}}}}}};
  if (writes) {
    op["parameters"] = json::array(
        {Parameter("fieldValidation", "query",
                   "how the server treats unknown or duplicate fields: Strict (refused, the default here), Warn or "
                   "Ignore"),
         Parameter("fieldManager", "query", "the name of the actor making the change (managedFields)"),
         Parameter("dryRun", "query", "All: check the change, store nothing")});
    op["requestBody"] = {{"content", {{"*/*", {{"schema", {{"$ref", ref}}}}}}}};
  }
  return op;
}

json Paths(const KindInfo& k, const std::string& ref) {
  const std::string base = k.group.empty() ? "/api/" + std::string(k.version) : "/apis/" + std::string(k.api_version);
  const std::string collection =
      base + (k.namespaced ? "/namespaces/{namespace}/" : "/") + std::string(k.plural);
  json paths = json::object();
  json list{{"post", Operation(k, "post", ref, true)}};
  json item = json::object();
  if (k.stored) {
    list["get"] = Operation(k, "list", ref, false);
    item["get"] = Operation(k, "get", ref, false);
    item["put"] = Operation(k, "put", ref, true);
    item["patch"] = Operation(k, "patch", ref, true);
    item["delete"] = Operation(k, "delete", ref, false);
  }
  paths[collection] = std::move(list);
  if (!item.empty()) paths[collection + "/{name}"] = std::move(item);
  return paths;
}

struct Documents {
  std::string index;
  std::map<std::string, std::string, std::less<>> by_path;
  std::map<std::string, std::string, std::less<>> hashes;
};

const Documents& All() {
  static const Documents docs = [] {
    std::map<std::string, json> documents;
    for (const KindDefinition& d : AllDefinitions()) {
      const KindInfo& k = d.info;
      json& doc = documents[DocumentPath(k)];
      if (doc.is_null()) {
        doc = {{"openapi", "3.0.0"},
               {"info", {{"title", "Tessera"}, {"version", "v1.32.0-tessera"}}},
               {"paths", json::object()},
               {"components", {{"schemas", json::object()}}}};
      }
      const std::string name = OpenApiSchemaName(k.group, k.version, k.kind);
      json schema = d.schema ? SchemaOf(*d.schema) : json{{"type", "object"}, {kPreserveUnknown, true}};
      schema["description"] = fmt::format("{} ({}): {}", k.kind, k.api_version,
                                          d.controller.empty() ? "stored and served by Tessera"
                                                               : fmt::format("its behaviour is Tessera's {}", d.controller));
      schema["x-kubernetes-group-version-kind"] =
          json::array({{{"group", k.group}, {"version", k.version}, {"kind", k.kind}}});
      doc["components"]["schemas"][name] = std::move(schema);
      const json paths = Paths(k, "#/components/schemas/" + name);
      for (const auto& [path, item] : paths.items()) doc["paths"][path] = item;
    }
    Documents out;
    json index{{"paths", json::object()}};
    for (auto& [path, doc] : documents) {
      std::string text = doc.dump();
      const std::string hash = fmt::format("{:016X}", std::hash<std::string>{}(text));
      index["paths"][path] = {{"serverRelativeURL", fmt::format("/openapi/v3/{}?hash={}", path, hash)}};
      out.by_path.emplace(path, std::move(text));
      out.hashes.emplace(path, hash);
    }
    out.index = index.dump();
    return out;
  }();
  return docs;
}

}  // namespace

std::string OpenApiSchemaName(std::string_view group, std::string_view version, std::string_view kind) {
  // Kubernetes' own groups: io.k8s.api.<group's first label, or core>; others: the group reversed.
  static const std::map<std::string_view, std::string_view> builtin = {
      {"", "core"},
      {"batch", "batch"},
      {"rbac.authorization.k8s.io", "rbac"},
      {"scheduling.k8s.io", "scheduling"},
      {"networking.k8s.io", "networking"},
      {"coordination.k8s.io", "coordination"},
      {"discovery.k8s.io", "discovery"},
      {"authorization.k8s.io", "authorization"},
      {"authentication.k8s.io", "authentication"},
  };
  if (auto it = builtin.find(group); it != builtin.end()) {
    return fmt::format("io.k8s.api.{}.{}.{}", it->second, version, kind);
  }
  std::vector<std::string_view> labels;
  for (size_t start = 0; start <= group.size();) {
    const size_t dot = group.find('.', start);
    labels.push_back(group.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::string reversed;
  for (auto it = labels.rbegin(); it != labels.rend(); ++it) reversed += std::string(*it) + ".";
  return fmt::format("{}{}.{}", reversed, version, kind);
}

const std::string& OpenApiIndex() { return All().index; }

std::string OpenApiHash(std::string_view group_version_path) {
  const Documents& docs = All();
  auto it = docs.hashes.find(group_version_path);
  return it == docs.hashes.end() ? std::string() : it->second;
}

const std::string* OpenApiDocument(std::string_view group_version_path) {
  const Documents& docs = All();
  auto it = docs.by_path.find(group_version_path);
  return it == docs.by_path.end() ? nullptr : &it->second;
}

}  // namespace tessera
