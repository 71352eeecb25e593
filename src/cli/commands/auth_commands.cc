#include "cli/commands/auth_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"
#include "cli/commands/yaml_output.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

// POSTs `body` to `path`; the answer's JSON, or the exit code with the error printed.
std::optional<json> Post(const CommandContext& ctx, const std::string& path, const json& body, int* rc) {
  auto client = ctx.Client();
  auto r = client->Request("POST", path, body.dump());
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    *rc = kExitFailure;
    return std::nullopt;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    *rc = kExitFailure;
    return std::nullopt;
  }
  json answer = json::parse(r->body, nullptr, false);
  if (!answer.is_object()) {
    *ctx.err << "error: the server's answer is not JSON\n";
    *rc = kExitFailure;
    return std::nullopt;
  }
  return answer;
}

std::string Brackets(const json& list) {
  std::vector<std::string> items;
  if (list.is_array()) {
    for (const json& i : list) items.push_back(i.is_string() ? i.get<std::string>() : i.dump());
  }
  return fmt::format("[{}]", fmt::join(items, " "));
}

int CanIList(const CommandContext& ctx, const CanIOptions& o) {
  const json review{{"apiVersion", "authorization.k8s.io/v1"},
                    {"kind", "SelfSubjectRulesReview"},
                    {"spec", {{"namespace", o.all_namespaces ? "" : ctx.ns}}}};
  int rc = kExitOk;
  auto answer = Post(ctx, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", review, &rc);
  if (!answer) return rc;
  // kubectl's table: one row per rule; resources qualified by their group.
  Table table({"Resources", "Non-Resource URLs", "Resource Names", "Verbs"});
  const json status = answer->value("status", json::object());
  for (const json& r : status.value("resourceRules", json::array())) {
    std::vector<std::string> resources;
    for (const json& g : r.value("apiGroups", json::array())) {
      for (const json& res : r.value("resources", json::array())) {
        const std::string group = g.get<std::string>(), name = res.get<std::string>();
        resources.push_back(group.empty() ? name : fmt::format("{}.{}", name, group));
      }
    }
    table.AddRow({fmt::format("{}", fmt::join(resources, ", ")), "[]", Brackets(r.value("resourceNames", json::array())),
                  Brackets(r.value("verbs", json::array()))});
  }
  for (const json& r : status.value("nonResourceRules", json::array())) {
    table.AddRow({"", Brackets(r.value("nonResourceURLs", json::array())), "[]", Brackets(r.value("verbs", json::array()))});
  }
  table.Print(*ctx.out);
  return kExitOk;
}

}  // namespace

int RunCanI(const CommandContext& ctx, const CanIOptions& o) {
  if (o.list) {
    if (!o.args.empty()) {
      *ctx.err << "error: --list takes no VERB or TYPE: it lists what you may do in the namespace\n";
      return kExitUsage;
    }
    return CanIList(ctx, o);
  }
  if (o.args.size() != 2) {
    *ctx.err << "error: you must specify two arguments: verb resource or verb resource/resourceName.\n"
                "See 'tessera auth can-i --help' for usage.\n";
    return kExitUsage;
  }
  const std::string& verb = o.args[0];
  const std::string& what = o.args[1];
  json spec;
  if (what.starts_with('/')) {
    spec["nonResourceAttributes"] = {{"path", what}, {"verb", verb}};
  } else {
    std::string type = what, name;
    if (const size_t slash = what.find('/'); slash != std::string::npos) {
      type = what.substr(0, slash);
      name = what.substr(slash + 1);
    }
    json attributes{{"verb", verb}, {"namespace", o.all_namespaces ? "" : ctx.ns}};
    if (type == "*") {
      attributes["group"] = "*";
      attributes["resource"] = "*";
    } else if (const KindInfo* kind = FindKindByCliName(type)) {
      attributes["group"] = kind->group;
      attributes["resource"] = kind->plural;
      if (!kind->namespaced && !o.all_namespaces) attributes["namespace"] = "";
    } else {
      // As kubectl: ask anyway (RBAC may name a resource this server does not serve).
      *ctx.err << fmt::format("Warning: the server doesn't have a resource type '{}'\n\n", type);
      const size_t dot = type.find('.');
      attributes["resource"] = type.substr(0, dot);
      attributes["group"] = dot == std::string::npos ? "" : type.substr(dot + 1);
    }
    if (!name.empty()) attributes["name"] = name;
    if (!o.subresource.empty()) attributes["subresource"] = o.subresource;
    spec["resourceAttributes"] = std::move(attributes);
  }
  const json review{{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SelfSubjectAccessReview"}, {"spec", spec}};
  int rc = kExitOk;
  auto answer = Post(ctx, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, &rc);
  if (!answer) return rc;
  const bool allowed = answer->value("status", json::object()).value("allowed", false);
  if (!o.quiet) *ctx.out << (allowed ? "yes" : "no") << "\n";
  return allowed ? kExitOk : kExitFailure;
}

int RunWhoAmI(const CommandContext& ctx, const std::string& output) {
  int rc = kExitOk;
  auto answer = Post(ctx, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                     json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}}, &rc);
  if (!answer) return rc;
  if (output == "json") {
    *ctx.out << answer->dump(4) << "\n";
    return kExitOk;
  }
  if (output == "yaml") {
    *ctx.out << ToYaml(*answer);
    return kExitOk;
  }
  const json info = answer->value("status", json::object()).value("userInfo", json::object());
  Table table({"ATTRIBUTE", "VALUE"});
  table.AddRow({"Username", info.value("username", "")});
  if (info.contains("uid")) table.AddRow({"UID", info.value("uid", "")});
  table.AddRow({"Groups", Brackets(info.value("groups", json::array()))});
  const json extra = info.value("extra", json::object());
  for (const auto& [key, values] : extra.items()) {
    table.AddRow({"Extra: " + key, Brackets(values)});
  }
  table.Print(*ctx.out);
  return kExitOk;
}

namespace {

// --duration as kubectl takes it; 0 or empty: the server's default.
Result<int64_t> ExpirationSeconds(const std::string& duration) {
  if (duration.empty() || duration == "0" || duration == "0s") return 0;
  ASSIGN_OR_RETURN(Duration d, ParseDuration(duration));
  if (d.ms % 1000 != 0) {
    return Err(Status::InvalidArgument(fmt::format("--duration {}: give whole seconds", duration)));
  }
  return d.seconds();
}

int PrintToken(const CommandContext& ctx, const std::string& path, json spec) {
  int rc = kExitOk;
  auto answer = Post(ctx, path, json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}},
                     &rc);
  if (!answer) return rc;
  *ctx.out << answer->value("status", json::object()).value("token", "") << "\n";
  return kExitOk;
}

}  // namespace

int RunCreateToken(const CommandContext& ctx, const CreateTokenOptions& o) {
  auto seconds = ExpirationSeconds(o.duration);
  if (!seconds) {
    *ctx.err << "error: " << seconds.error().message() << "\n";
    return kExitUsage;
  }
  json spec = json::object();
  if (*seconds > 0) spec["expirationSeconds"] = *seconds;
  if (!o.audiences.empty()) spec["audiences"] = o.audiences;
  if (!o.bound_object_kind.empty() || !o.bound_object_name.empty()) {
    if (o.bound_object_kind.empty() || o.bound_object_name.empty()) {
      *ctx.err << "error: --bound-object-kind and --bound-object-name go together\n";
      return kExitUsage;
    }
    spec["boundObjectRef"] = {{"kind", o.bound_object_kind}, {"apiVersion", "v1"}, {"name", o.bound_object_name}};
    if (!o.bound_object_uid.empty()) spec["boundObjectRef"]["uid"] = o.bound_object_uid;
  }
  return PrintToken(ctx, fmt::format("/api/v1/namespaces/{}/serviceaccounts/{}/token", ctx.ns, o.name), std::move(spec));
}

int RunCreateNodeToken(const CommandContext& ctx, const CreateTokenOptions& o) {
  auto seconds = ExpirationSeconds(o.duration);
  if (!seconds) {
    *ctx.err << "error: " << seconds.error().message() << "\n";
    return kExitUsage;
  }
  json spec = json::object();
  if (*seconds > 0) spec["expirationSeconds"] = *seconds;
  return PrintToken(ctx, fmt::format("/api/v1/nodes/{}/token", o.name), std::move(spec));
}

}  // namespace tessera
