#include "cli/commands/run_command.h"

#include <fmt/format.h>

#include "api/kinds.h"
#include "api/names.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/yaml_output.h"
#include "client/api_client.h"

namespace tessera {

using nlohmann::json;

namespace {

// The TemplateRender the server answers, or the exit code after saying why not.
Result<json> ParametersOf(const RunTemplateOptions& o) {
  json params = json::object();
  for (const std::string& kv : o.set) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Err(Status::InvalidArgument(fmt::format("--set {}: write KEY=VALUE (--set gpu=0.5)", kv)));
    }
    params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"gpu", &o.gpu},
                                    {"image", &o.image}, {"cpu", &o.cpu}, {"memory", &o.memory}}) {
    if (value->empty()) continue;
    if (params.contains(flag)) {
      return Err(Status::InvalidArgument(fmt::format("--{} and --set {}=... both given: keep one", flag, flag)));
    }
    params[flag] = *value;
  }
  if (!o.command.empty()) params["command"] = o.command;
  return params;
}

}  // namespace

int RunTemplate(const CommandContext& ctx, const RunTemplateOptions& o) {
  if (Status v = ValidateName(NameRule::kDns1123Subdomain, o.name); !v.ok()) {
    *ctx.err << fmt::format("error: NAME {}: {}\n", o.name, v.message());
    return kExitUsage;
  }
  auto params = ParametersOf(o);
  if (!params) {
    *ctx.err << LocalError(params.error()) << "\n";
    return kExitUsage;
  }
  const KindInfo& tkind = *FindKindByStoreKey("tessera.dev/Template");
  json render{{"apiVersion", "tessera.dev/v1"},
              {"kind", "TemplateRender"},
              {"spec", {{"name", o.name}, {"namespace", ctx.ns}, {"parameters", *params}}}};
  auto client = ctx.Client();
  auto r = client->Request("POST", ObjectPath(tkind, "", o.template_name) + "/render", render.dump());
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status == 404) {
    *ctx.err << fmt::format("error: template \"{}\" not found: `tessera get templates` lists the catalogue\n",
                            o.template_name);
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return r->status == 422 ? kExitUsage : kExitFailure;
  }
  const json answer = json::parse(r->body, nullptr, false);
  const json object = answer.is_object() ? answer.value("status", json::object()).value("object", json()) : json();
  const KindInfo* kind = object.is_object() ? FindKindByApiVersion(object.value("apiVersion", ""), object.value("kind", ""))
                                            : nullptr;
  if (kind == nullptr) {
    *ctx.err << "error: the server's answer to the render holds no object of a known kind\n";
    return kExitFailure;
  }
  if (o.dry_run) {
    *ctx.out << ToYaml(object);
    return kExitOk;
  }
  auto created = client->Request("POST", CollectionPath(*kind, ctx.ns), object.dump());
  if (!created) {
    *ctx.err << LocalError(created.error()) << "\n";
    return kExitFailure;
  }
  if (created->status / 100 != 2) {
    *ctx.err << ServerError(*created, ctx.config) << "\n";
    return kExitFailure;
  }
  *ctx.out << fmt::format("{} created from template {}\n", ObjectRef(*kind, o.name), o.template_name);
  return kExitOk;
}

}  // namespace tessera
