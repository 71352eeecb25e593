// tessera.dev/v1 InferenceService: an HTTP model server that stays up
// (DESIGN.md section 4): replicas from one pod template, each its own
// Workload through the scheduler, a stable Service over the ready ones,
// rolling updates and canaries by revision, rollback, and autoscaling bounds.
// Short name isvc, as KServe's. Its controller is
// server/controllers/inferenceservice_controller.h.
#include <fmt/format.h>

#include <charconv>
#include <string>

#include "api/common_schemas.h"
#include "api/kinds/groups.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// An int >= 0 or a percentage "N%" (0-100), as a Deployment's maxSurge and
// maxUnavailable; adds an error at `path` otherwise. Returns whether it is zero.
bool CheckIntOrPercent(const json& v, const std::string& path, Errors& errors) {
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) errors.Add(path, "must be 0 or more (a count such as 1, or a percentage such as \"25%\")");
    return v.get<int64_t>() == 0;
  }
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  int n = -1;
  const bool percent = text.size() >= 2 && text.back() == '%';
  const auto [end, ec] =
      percent ? std::from_chars(text.data(), text.data() + text.size() - 1, n) : std::from_chars_result{nullptr, {}};
  if (!percent || ec != std::errc() || end != text.data() + text.size() - 1 || n < 0 || n > 100) {
    errors.Add(path, fmt::format("\"{}\" is neither a count nor a percentage: write 1 or \"25%\" (0% to 100%)", text));
    return false;
  }
  return n == 0;
}

// replicas, or minReplicas and maxReplicas (min <= max), not both; the
// rollout's surge and unavailability not both zero; the pod template's
// restartPolicy Always or Never (a failed replica is replaced by a new one
// either way); a scale-down delay that is a duration.
void CheckInferenceSpec(const json& spec, const std::string& path, Errors& errors) {
  const bool fixed = Get(spec, "replicas") != nullptr;
  const auto min = GetInt(spec, "minReplicas");
  const auto max = GetInt(spec, "maxReplicas");
  if (fixed && (min || max)) {
    errors.Add(FieldPath(path, "replicas"), "set replicas, or minReplicas and maxReplicas (autoscaled), not both");
  } else if (min && !max) {
    errors.Add(FieldPath(path, "maxReplicas"), "required with minReplicas: the most replicas the autoscaler may run");
  } else if (min && max && *min > *max) {
    errors.Add(FieldPath(path, "minReplicas"), fmt::format("{} is more than maxReplicas ({})", *min, *max));
  }
  if (const json* rollout = Get(spec, "rollout")) {
    const json* surge = Get(*rollout, "maxSurge");
    const json* unavailable = Get(*rollout, "maxUnavailable");
    const bool surge_zero = surge && CheckIntOrPercent(*surge, FieldPath(path, "rollout.maxSurge"), errors);
    const bool unavailable_zero =
        unavailable && CheckIntOrPercent(*unavailable, FieldPath(path, "rollout.maxUnavailable"), errors);
    if (surge_zero && unavailable_zero) {
      errors.Add(FieldPath(path, "rollout.maxUnavailable"), "may not be 0 when maxSurge is 0: no replica could be replaced");
    }
  }
  if (const json* autoscaling = Get(spec, "autoscaling")) {
    const std::string delay = GetString(*autoscaling, "scaleDownDelay");
    if (Get(*autoscaling, "scaleDownDelay") != nullptr && delay != "0" && !ParseDuration(delay)) {
      errors.Add(FieldPath(path, "autoscaling.scaleDownDelay"),
                 fmt::format("\"{}\" is not a duration: write 30s, 5m or 0", delay));
    }
  }
  const json* tmpl = Get(spec, "template");
  const json* pod = tmpl ? Get(*tmpl, "spec") : nullptr;
  const std::string policy = pod ? GetString(*pod, "restartPolicy") : "";
  if (!policy.empty() && policy != "Always" && policy != "Never") {
    errors.Add(FieldPath(path, "template.spec.restartPolicy"),
               fmt::format("unsupported value \"{}\": a replica takes \"Always\" or \"Never\" (a failed replica is "
                           "replaced by a new one)",
                           policy));
  }
  const json* containers = pod ? Get(*pod, "containers") : nullptr;
  if (containers != nullptr && containers->is_array() && containers->size() > 1) {
    errors.Add(FieldPath(path, "template.spec.containers"), "one container serves a replica: give exactly one");
  }
}

SchemaRef InferenceServiceSchema() {
  return Root({Req("spec", Obj(
                               {
                                   Req("template", PodTemplateSpec()),
                                   Opt("port", Int(1, 65535)),
                                   Opt("replicas", Int(0, 10000)),
                                   Opt("minReplicas", Int(0, 10000)),
                                   Opt("maxReplicas", Int(1, 10000)),
                                   Opt("queueName", Str()),
                                   Opt("priorityClassName", Str()),
                                   Opt("rollout", Obj({Opt("maxSurge", IntOrStr()), Opt("maxUnavailable", IntOrStr())})),
                                   Opt("canaryTrafficPercent", Int(0, 100)),
                                   Opt("autoscaling", Obj({Opt("targetConcurrency", Int(1, 100000)),
                                                           Opt("scaleDownDelay", Str())})),
                               },
                               {CheckInferenceSpec}))});
}

// ready/desired, as a Deployment's READY.
std::string Ready(const json& o, const ColumnOptions&) {
  return fmt::format("{}/{}", TextAt(o, "status.readyReplicas", "0"), TextAt(o, "status.replicas", "0"));
}

}  // namespace

std::vector<KindDefinition> TesseraInferenceKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "InferenceService", .api_version = "tessera.dev/v1",
                .plural = "inferenceservices", .singular = "inferenceservice", .short_names = {"isvc"},
                .categories = {"all", "tessera"}, .namespaced = true, .store_key = "tessera.dev/InferenceService"},
       .schema = InferenceServiceSchema(),
       .columns = {NameColumn(),
                   FieldColumn("URL", "status.url", "", 0, ColumnType::kString,
                               "the path the server's proxy serves it on"),
                   {.name = "READY", .description = "ready replicas / the replicas wanted", .cell = Ready},
                   FieldColumn("REVISION", "status.revision", "", 0, ColumnType::kString,
                               "the revision of spec.template (a hash, as a ReplicaSet's pod-template-hash)"),
                   FieldColumn("REQ/S", "status.requests.perSecond", "0", 1, ColumnType::kString,
                               "requests a second through the proxy, over the last minute"),
                   {.name = "P99",
                    .priority = 1,
                    .description = "the 99th percentile of their latency over the last minute",
                    .cell =
                        [](const json& o, const ColumnOptions&) {
                          const std::string ms = TextAt(o, "status.requests.latencyP99Ms");
                          return ms.empty() ? std::string("-") : ms + "ms";
                        }},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites(), ViewReads("scale"), EditWrites("scale")}},
       .controller = "inferenceservice-controller"},
  };
}

}  // namespace tessera
