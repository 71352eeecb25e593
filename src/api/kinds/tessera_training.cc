// tessera.dev/v1 TrainingJob: distributed training as one gang, like Kubeflow's
// PyTorchJob (and Trainer's TrainJob): N workers from one pod template, the
// torchrun environment, gang admission, and a restart of the whole gang from
// its last checkpoint when a worker fails. Its controller is
// server/controllers/trainingjob_controller.h.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// Either a fixed `replicas`, or an elastic range minReplicas..maxReplicas; a
// worker's pods restart as a gang, so Always is not theirs to choose.
void CheckTrainingSpec(const json& spec, const std::string& path, Errors& errors) {
  const bool fixed = Get(spec, "replicas") != nullptr;
  const auto min = GetInt(spec, "minReplicas");
  const auto max = GetInt(spec, "maxReplicas");
  if (fixed && (min || max)) {
    errors.Add(FieldPath(path, "replicas"), "set replicas, or minReplicas and maxReplicas (elastic), not both");
  } else if (!fixed && !(min && max)) {
    errors.Add(FieldPath(path, "replicas"), "required: the number of workers (or minReplicas and maxReplicas)");
  } else if (min && max && *min > *max) {
    errors.Add(FieldPath(path, "minReplicas"), fmt::format("{} is more than maxReplicas ({})", *min, *max));
  }
  const json* tmpl = Get(spec, "template");
  const json* pod = tmpl ? Get(*tmpl, "spec") : nullptr;
  const std::string policy = pod ? GetString(*pod, "restartPolicy") : "";
  if (!policy.empty() && policy != "Never" && policy != "OnFailure") {
    errors.Add(FieldPath(path, "template.spec.restartPolicy"),
               fmt::format("unsupported value \"{}\"; a worker takes \"OnFailure\" or \"Never\" (the gang "
                           "restarts by spec.restartPolicy)",
                           policy));
  }
}

SchemaRef TrainingJobSchema() {
  return Root({Req("spec", Obj(
                               {
                                   Opt("queueName", Str()),
                                   Opt("replicas", Int(1, 100000)),
                                   Opt("minReplicas", Int(1, 100000)),
                                   Opt("maxReplicas", Int(1, 100000)),
                                   Opt("nprocPerNode", Int(1, 1024)),
                                   Opt("restartPolicy", Enum({"OnFailure", "Never"})),
                                   Opt("backoffLimit", Int(0, 1000)),
                                   Opt("activeDeadlineSeconds", Int64(1)),
                                   Req("template", PodTemplateSpec()),
                               },
                               {CheckTrainingSpec}))});
}

std::string Workers(const json& o, const ColumnOptions&) {
  const std::string size = TextAt(o, "status.worldSize");
  const std::string replicas = TextAt(o, "spec.replicas");
  const std::string wanted =
      replicas.empty() ? fmt::format("{}-{}", TextAt(o, "spec.minReplicas"), TextAt(o, "spec.maxReplicas")) : replicas;
  return fmt::format("{}/{}", size.empty() ? "0" : size, wanted);
}

}  // namespace

std::vector<KindDefinition> TesseraTrainingKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "TrainingJob", .api_version = "tessera.dev/v1",
                .plural = "trainingjobs", .singular = "trainingjob", .short_names = {"tj"}, .categories = {"all", "tessera"}, .namespaced = true,
                .store_key = "tessera.dev/TrainingJob"},
       .schema = TrainingJobSchema(),
       .columns = {NameColumn(),
                   {.name = "STATUS",
                    .description = "Pending, Starting, Running, Resizing, Restarting, Succeeded or Failed",
                    .cell = [](const json& o, const ColumnOptions&) { return TextAt(o, "status.phase", "Pending"); }},
                   {.name = "WORKERS", .description = "running world size / the workers asked for", .cell = Workers},
                   {.name = "RESTARTS",
                    .type = ColumnType::kInteger,
                    .description = "gang restarts",
                    .cell = [](const json& o, const ColumnOptions&) { return TextAt(o, "status.restarts", "0"); }},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "trainingjob-controller"},
  };
}

}  // namespace tessera
