#include "cli/commands/train_command.h"

#include <fmt/format.h>

#include "api/kinds.h"
#include "api/validation.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "client/api_client.h"
#include "domain/quantity.h"

namespace tessera {

using nlohmann::json;

Result<json> BuildTrainingJob(const TrainOptions& o, const std::string& ns) {
  if (Status s = ValidateName(NameRule::kDns1123Label, o.pod.name); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("NAME \"{}\": {}", o.pod.name, s.message())));
  }
  if (o.pod.command.empty()) {
    return Err(Status::InvalidArgument("no command: put it after --, as in `tessera train NAME --workers 4 -- "
                                       "torchrun train.py`"));
  }
  const bool elastic = o.min_workers > 0 || o.max_workers > 0;
  if (elastic && o.workers > 0) {
    return Err(Status::InvalidArgument("--workers, or --min-workers and --max-workers (elastic), not both"));
  }
  if (elastic && (o.min_workers < 1 || o.max_workers < o.min_workers)) {
    return Err(Status::InvalidArgument(fmt::format(
        "--min-workers {} --max-workers {}: give both, at least 1, the minimum not above the maximum", o.min_workers,
        o.max_workers)));
  }
  ASSIGN_OR_RETURN(json resources, PodResources(o.pod));
  int64_t nproc = o.nproc_per_node;
  if (nproc <= 0) {
    nproc = 1;
    if (!o.pod.gpu.empty()) {
      if (auto milli = ParseGpuMilli(o.pod.gpu); milli && *milli >= 1000) nproc = *milli / 1000;
    }
  }
  json container{{"name", o.pod.name}, {"command", o.pod.command},
                 {"resources", {{"requests", resources}, {"limits", resources}}}};
  json pod_spec{{"containers", json::array({container})}};
  if (!o.pod.priority.empty()) pod_spec["priorityClassName"] = o.pod.priority;
  json spec{{"nprocPerNode", nproc}, {"backoffLimit", o.retries}, {"template", {{"spec", pod_spec}}}};
  if (elastic) {
    spec["minReplicas"] = o.min_workers;
    spec["maxReplicas"] = o.max_workers;
  } else {
    spec["replicas"] = o.workers > 0 ? o.workers : 1;
  }
  if (!o.pod.queue.empty()) spec["queueName"] = o.pod.queue;
  if (o.pod.max_run_seconds) spec["activeDeadlineSeconds"] = *o.pod.max_run_seconds;
  json tj{{"apiVersion", "tessera.dev/v1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", o.pod.name}, {"namespace", ns}}},
          {"spec", spec}};
  if (Status s = ValidateObject(*FindKindByApiVersion("tessera.dev/v1", "TrainingJob"), tj); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("the training job would be refused: {}", s.message())));
  }
  return tj;
}

int RunTrain(const CommandContext& ctx, const TrainOptions& given) {
  TrainOptions options = given;
  auto client = ctx.Client();
  if (options.pod.queue.empty()) {
    auto queue = DefaultQueueIn(*client, ctx.ns);
    if (!queue) {
      *ctx.err << LocalError(queue.error()) << "\n";
      return queue.error().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    options.pod.queue = *queue;
  }
  auto tj = BuildTrainingJob(options, ctx.ns);
  if (!tj) {
    *ctx.err << LocalError(tj.error()) << "\n";
    return kExitUsage;
  }
  const KindInfo* kind = FindKindByApiVersion("tessera.dev/v1", "TrainingJob");
  auto r = client->Request("POST", CollectionPath(*kind, ctx.ns), tj->dump());
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  *ctx.out << fmt::format("{} created in queue {}\n", ObjectRef(*kind, options.pod.name), options.pod.queue);
  *ctx.out << fmt::format("  its workers, restarts and why it waits:  tessera describe trainingjob {} -n {}\n",
                          options.pod.name, ctx.ns);
  return kExitOk;
}

}  // namespace tessera
