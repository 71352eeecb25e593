// tessera.dev/v1 Template: a catalogue entry, cluster-scoped, that makes one
// object of a namespaced kind from spec.object and the knobs a user may set,
// spec.parameters (api/templates.h). Every signed-in user reads the catalogue
// and renders from it (templates/render, answered, never stored); admins add
// to it. The server installs a few (server/bootstrap_templates.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include <set>
#include <string>

#include "api/common_schemas.h"
#include "api/kinds/groups.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "api/templates.h"
#include "api/validation.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

bool ParameterName(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

// Parameters named once, as flags are (lower case, digits, dashes); paths into
// the object's spec, labels or annotations; bounds only where they mean
// something; and, with every default, the object it makes is valid.
void CheckTemplateSpec(const json& spec, const std::string& path, Errors& errors) {
  std::set<std::string> seen;
  const json* params = Get(spec, "parameters");
  for (size_t i = 0; params != nullptr && params->is_array() && i < params->size(); ++i) {
    const json& p = (*params)[i];
    const std::string at = fmt::format("{}.parameters[{}]", path, i);
    const std::string name = GetString(p, "name");
    if (!ParameterName(name)) {
      errors.Add(at + ".name", fmt::format("\"{}\" is not a parameter name: lower-case letters, digits and dashes, "
                                           "starting with a letter (gpu, image, max-replicas)", name));
    } else if (!seen.insert(name).second) {
      errors.Add(at + ".name", fmt::format("\"{}\" is named twice", name));
    }
    const std::string target = GetString(p, "path");
    if (!target.starts_with("spec.") && !target.starts_with("metadata.labels.") &&
        !target.starts_with("metadata.annotations.")) {
      errors.Add(at + ".path", fmt::format("\"{}\" is not in the object's spec, labels or annotations "
                                           "(spec.gpu, spec.template.spec.containers[0].image, metadata.labels.team)",
                                           target));
    } else if (json probe = json::object(); !SetAtPath(probe, target, json()).ok()) {
      errors.Add(at + ".path", SetAtPath(probe, target, json()).message());
    }
    const std::string type = Get(p, "type") ? GetString(p, "type") : "string";
    if ((Get(p, "minimum") || Get(p, "maximum")) && type != "integer" && type != "quantity") {
      errors.Add(at, "minimum and maximum are for integer and quantity parameters");
    }
    if (Get(p, "enum") && type != "string" && type != "quantity") {
      errors.Add(at + ".enum", "allowed values are for string and quantity parameters");
    }
    if (Get(p, "required") && *Get(p, "required") == true && Get(p, "default")) {
      errors.Add(at + ".default", "a required parameter has no default: drop one of them");
    }
  }
  if (errors.count() > 0) return;
  // The object it makes with every default (a required parameter's left unset).
  json tmpl{{"metadata", {{"name", "this-template"}}}, {"spec", spec}};
  json& parameters = tmpl["spec"]["parameters"];
  if (parameters.is_array()) {
    json kept = json::array();
    for (const json& p : parameters) {
      if (!(Get(p, "required") && *Get(p, "required") == true)) kept.push_back(p);
    }
    parameters = std::move(kept);
  }
  const json* object = Get(spec, "object");
  if (object == nullptr) return;
  auto kind = ResolveKind(*object);
  if (!kind) {
    errors.Add(FieldPath(path, "object"), kind.error().message());
    return;
  }
  if ((*kind)->store_key == "tessera.dev/Template") {
    errors.Add(FieldPath(path, "object.kind"), "a template makes a workload, not another template");
    return;
  }
  // Required parameters may be what makes it valid: check the rest only when there are none.
  if (params != nullptr && params->size() != parameters.size()) return;
  auto rendered = RenderTemplate(tmpl, TemplateRenderInput{.name = "template-check", .ns = "default"});
  if (!rendered) errors.Add(FieldPath(path, "object"), rendered.error().message());
}

SchemaRef TemplateSchema() {
  static const SchemaRef parameter = Obj({
      Req("name", Str()),
      Req("path", Str()),
      Opt("description", Str()),
      Opt("type", Enum({"string", "quantity", "integer", "boolean", "command"})),
      Opt("default", Any()),
      Opt("enum", Arr(Any(), true)),
      Opt("minimum", IntOrStr()),
      Opt("maximum", IntOrStr()),
      Opt("required", Bool()),
  });
  return Root({Req("spec", Obj(
                               {
                                   Req("displayName", Str()),
                                   Opt("description", Str()),
                                   Opt("category", Enum({"notebook", "training", "inference", "sweep", "pipeline",
                                                         "batch"})),
                                   Req("object", OpenObj({Req("apiVersion", Str()), Req("kind", Str())})),
                                   Opt("parameters", Arr(parameter)),
                               },
                               {CheckTemplateSpec}))});
}

std::string Parameters(const json& o, const ColumnOptions&) {
  std::vector<std::string> names;
  const json* params = Find(o, "spec.parameters");
  if (params != nullptr && params->is_array()) {
    for (const json& p : *params) names.push_back(GetString(p, "name"));
  }
  return names.empty() ? "-" : fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

std::vector<KindDefinition> TesseraTemplateKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Template", .api_version = "tessera.dev/v1",
                .plural = "templates", .singular = "template", .short_names = {"tpl"}, .categories = {"tessera"}, .namespaced = false,
                .store_key = "tessera.dev/Template"},
       .schema = TemplateSchema(),
       .columns = {NameColumn(),
                   FieldColumn("CATEGORY", "spec.category", "-"),
                   FieldColumn("KIND", "spec.object.kind"),
                   FieldColumn("DISPLAY NAME", "spec.displayName"),
                   {.name = "PARAMETERS", .description = "the knobs a user may set (--set NAME=VALUE)", .cell = Parameters},
                   AgeColumn()},
       // The catalogue is everyone's to read and render from; cluster-admin writes it.
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kRead},
                                      {.role = DefaultRole::kBasicUser, .subresource = "render", .verbs = verbs::kCreate}}},
       .controller = ""},
  };
}

SchemaRef TemplateRenderSchema() {
  static const SchemaRef s = Root({Req("spec", Obj({
                                                       Req("name", Str()),
                                                       Req("namespace", Str()),
                                                       Opt("parameters", MapOf(Any())),
                                                   }))});
  return s;
}

}  // namespace tessera
