#include "api/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "api/kind_definition.h"
#include "api/kinds/groups.h"
#include "api/schema.h"
#include "common/suggest.h"

namespace tessera {

using namespace schema;  // NOLINT(google-build-using-namespace): the schema vocabulary reads as a table

namespace {

using nlohmann::json;

// metadata.name: required, and of the kind's form.
void CheckName(const KindInfo& kind, const json& object, Errors& errors) {
  const json* metadata = Get(object, "metadata");
  const json* name = metadata ? Get(*metadata, "name") : nullptr;
  if (!name) {
    errors.Add("metadata.name", "required");
    return;
  }
  if (!name->is_string()) return;  // the schema reports the type
  if (Status s = ValidateName(kind.name_rule, name->get<std::string>()); !s.ok()) {
    errors.Add("metadata.name", s.message());
  }
}

Status ValidateObjectOrThrow(const KindInfo& kind, const json& object) {
  if (!object.is_object()) {
    return Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object)));
  }
  Errors errors;
  const json* api_version = Get(object, "apiVersion");
  const json* kind_field = Get(object, "kind");
  if (!api_version || *api_version != kind.api_version) {
    errors.Add("apiVersion", fmt::format("expected \"{}\" for kind {}, got {}", kind.api_version,
                                         kind.kind, api_version ? Describe(*api_version) : "none"));
  }
  if (!kind_field || *kind_field != kind.kind) {
    errors.Add("kind", fmt::format("expected \"{}\", got {}", kind.kind,
                                   kind_field ? Describe(*kind_field) : "none"));
  }
  if (kind.stored) CheckName(kind, object, errors);  // a review is answered, never named
  const KindDefinition* definition = FindDefinition(kind);
  if (definition == nullptr || definition->schema == nullptr) {
    return Status::Internal(fmt::format("no schema for kind {}", kind.store_key));
  }
  Validate(*definition->schema, object, "", errors);
  return errors.ToStatus();
}

}  // namespace

// ===========================================================================
// Public interface.

Result<std::string> QuantityText(const json& value) {
  if (auto text = QuantityTextOf(value)) return *text;
  return Err(Status::InvalidArgument(fmt::format(
      "expected a quantity such as \"2\", \"500m\" or \"64Gi\", got {}", Describe(value))));
}

Result<const KindInfo*> ResolveKind(const json& object) {
  if (!object.is_object()) {
    return Err(Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object))));
  }
  const json* api_version = Get(object, "apiVersion");
  const json* kind = Get(object, "kind");
  if (!api_version) {
    return Err(Status::InvalidArgument(
        "apiVersion: required (for example \"v1\" or \"kueue.x-k8s.io/v1beta1\")"));
  }
  if (!api_version->is_string()) {
    return Err(Status::InvalidArgument(
        fmt::format("apiVersion: expected a string, got {}", Describe(*api_version))));
  }
  if (!kind) return Err(Status::InvalidArgument("kind: required (for example \"Pod\")"));
  if (!kind->is_string()) {
    return Err(Status::InvalidArgument(fmt::format("kind: expected a string, got {}", Describe(*kind))));
  }
  const std::string& av = api_version->get_ref<const std::string&>();
  const std::string& k = kind->get_ref<const std::string&>();
  if (const KindInfo* info = FindKindByApiVersion(av, k)) return info;

  // Not served: say what is.
  std::vector<std::string_view> versions = ApiVersionsServingKind(k);
  if (!versions.empty()) {
    std::string alternatives;
    for (size_t i = 0; i < versions.size(); ++i) {
      if (i > 0) alternatives += i + 1 == versions.size() ? " or " : ", ";
      alternatives += versions[i];
    }
    return Err(Status::InvalidArgument(fmt::format(
        "apiVersion: kind {} is not served as \"{}\"; use {}", k, av, alternatives)));
  }
  std::vector<std::string_view> in_version, all;
  for (const KindInfo& info : AllKinds()) {
    all.push_back(info.kind);
    if (info.api_version == av) in_version.push_back(info.kind);
  }
  auto hint = Suggest(k, in_version.empty() ? all : in_version);
  std::string suggestion = hint ? fmt::format("; did you mean \"{}\"?", *hint) : "";
  if (!in_version.empty()) {
    return Err(Status::InvalidArgument(fmt::format("kind: unknown kind \"{}\" in {}{} (served: {})",
                                                   k, av, suggestion, JoinNames(in_version))));
  }
  return Err(Status::InvalidArgument(fmt::format(
      "kind: unknown kind \"{}\"{} (apiVersion \"{}\" is not served either)", k, suggestion, av)));
}

namespace {

// Removes from `v` the fields `s` does not know (closed objects, any depth);
// returns their paths.
std::vector<std::string> Prune(const Schema& s, json& v, const std::string& path) {
  std::vector<std::string> removed;
  auto add = [&](std::vector<std::string> more) { removed.insert(removed.end(), more.begin(), more.end()); };
  switch (s.type) {
    case Type::kObject:
      if (!v.is_object()) break;
      for (auto it = v.begin(); it != v.end();) {
        auto field = std::find_if(s.fields.begin(), s.fields.end(), [&](const FieldSpec& f) { return f.name == it.key(); });
        if (field == s.fields.end()) {
          if (!s.open) {
            removed.push_back(FieldPath(path, it.key()));
            it = v.erase(it);
            continue;
          }
        } else if (!it->is_null()) {
          add(Prune(*field->schema, *it, FieldPath(path, it.key())));
        }
        ++it;
      }
      break;
    case Type::kArray:
      if (!v.is_array()) break;
      for (size_t i = 0; i < v.size(); ++i) add(Prune(*s.element, v[i], IndexPath(path, i)));
      break;
    case Type::kMap:
      if (!v.is_object()) break;
      for (auto& [key, value] : v.items()) add(Prune(*s.element, value, KeyPath(path, key)));
      break;
    default: break;
  }
  return removed;
}

}  // namespace

std::vector<std::string> PruneUnknownFields(const KindInfo& kind, json& object) {
  const KindDefinition* definition = FindDefinition(kind);
  if (definition == nullptr || definition->schema == nullptr) return {};
  return Prune(*definition->schema, object, "");
}

Status ValidateObject(const KindInfo& kind, const json& object) {
  // Nothing below should throw (checks run on values whose types were checked);
  // the catch keeps a slip from crossing the API as an exception.
  try {
    return ValidateObjectOrThrow(kind, object);
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating {} failed: {}", kind.store_key, e.what()));
  }
}

namespace {

// The body of a POST that is answered, never stored (TokenRequest, TemplateRender):
// apiVersion and kind, when present, are its own; the rest follows `schema`.
Status ValidateAnsweredBody(const json& object, std::string_view api_version_want, std::string_view kind_want,
                            const SchemaRef& body_schema) {
  try {
    if (!object.is_object()) {
      return Status::InvalidArgument(fmt::format("expected a {} object, got {}", kind_want, Describe(object)));
    }
    Errors errors;
    const json* api_version = Get(object, "apiVersion");
    const json* kind = Get(object, "kind");
    if (api_version && *api_version != api_version_want) {
      errors.Add("apiVersion", fmt::format("expected \"{}\", got {}", api_version_want, Describe(*api_version)));
    }
    if (kind && *kind != kind_want) errors.Add("kind", fmt::format("expected \"{}\", got {}", kind_want, Describe(*kind)));
    Validate(*body_schema, object, "", errors);
    return errors.ToStatus();
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating a {} failed: {}", kind_want, e.what()));
  }
}

}  // namespace

Status ValidateTokenRequest(const json& object) {
  return ValidateAnsweredBody(object, "authentication.k8s.io/v1", "TokenRequest", TokenRequestSchema());
}

Status ValidateTemplateRender(const json& object) {
  return ValidateAnsweredBody(object, "tessera.dev/v1", "TemplateRender", TemplateRenderSchema());
}

Status ValidateUpdate(const KindInfo& kind, const nlohmann::json& stored, const nlohmann::json& next) {
  const KindDefinition* definition = FindDefinition(kind);
  if (definition == nullptr) return Status::Ok();
  for (const UpdateRule& rule : definition->update_rules) RETURN_IF_ERROR(rule(kind, stored, next));
  return Status::Ok();
}

Result<const KindInfo*> ValidateManifest(const json& object) {
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKind(object));
  RETURN_IF_ERROR(ValidateObject(*kind, object));
  return kind;
}

}  // namespace tessera

