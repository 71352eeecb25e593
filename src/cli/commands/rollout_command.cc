#include "cli/commands/rollout_command.h"

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "common/time_format.h"

namespace tessera {

int RunRolloutUndo(const CommandContext& ctx, const std::string& target) {
  const KindInfo* kind = FindKindByApiVersion("tessera.dev/v1", "InferenceService");
  std::string name = target;
  if (const auto slash = target.find('/'); slash != std::string::npos) {
    std::string type = target.substr(0, slash);
    if (const auto dot = type.find('.'); dot != std::string::npos && type.substr(dot + 1) == "tessera.dev") {
      type = type.substr(0, dot);
    }
    if (type != "isvc" && type != "inferenceservice" && type != "inferenceservices") {
      *ctx.err << "error: rollout undo works on InferenceServices: write isvc/NAME (not \"" << type << "\")\n";
      return kExitUsage;
    }
    name = target.substr(slash + 1);
  }
  if (name.empty()) {
    *ctx.err << "error: name the InferenceService: tessera rollout undo isvc/NAME\n";
    return kExitUsage;
  }
  auto client = ctx.Client();
  // As kubectl, say so when there is nothing to go back to (the controller would only warn).
  auto got = client->Request("GET", ObjectPath(*kind, ctx.ns, name));
  if (!got) {
    *ctx.err << LocalError(got.error()) << "\n";
    return kExitFailure;
  }
  if (got->status != 200) {
    *ctx.err << ServerError(*got, ctx.config) << "\n";
    return kExitFailure;
  }
  const nlohmann::json isvc = nlohmann::json::parse(got->body, nullptr, false);
  const nlohmann::json status = isvc.is_object() ? isvc.value("status", nlohmann::json::object()) : nlohmann::json::object();
  const std::string stable = status.value("stableRevision", "");
  const bool previous = status.contains("previousTemplate");
  if (stable.empty() || (stable == status.value("revision", "") && !previous)) {
    *ctx.err << "error: no earlier revision of inferenceservice " << name
             << " was ever fully ready: nothing to roll back to\n";
    return kExitFailure;
  }
  const std::string patch =
      nlohmann::json{{"metadata", {{"annotations", {{"tessera.dev/rollback", FormatRfc3339(SystemNow())}}}}}}.dump();
  auto r = client->Request("PATCH", ObjectPath(*kind, ctx.ns, name), patch, "application/merge-patch+json");
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  *ctx.out << "inferenceservice.tessera.dev/" << name << " rolled back\n";
  return kExitOk;
}

}  // namespace tessera
