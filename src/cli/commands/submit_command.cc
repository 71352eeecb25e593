#include "cli/commands/submit_command.h"

#include <fmt/format.h>

#include "api/kinds.h"
#include "api/validation.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;

Status FlagError(std::string_view flag, std::string_view value, const Status& why) {
  return Status::InvalidArgument(fmt::format("{} \"{}\": {}", flag, value, why.message()));
}

}  // namespace

Result<json> PodResources(const SubmitOptions& o) {
  json resources = json::object();
  if (!o.cpu.empty()) {
    auto cpu = ParseMilli(o.cpu);
    if (!cpu) return Err(FlagError("--cpu", o.cpu, cpu.error()));
    resources["cpu"] = FormatMilli(*cpu);
  }
  if (!o.memory.empty()) {
    auto memory = ParseUnits(o.memory);
    if (!memory) return Err(FlagError("--memory", o.memory, memory.error()));
    resources["memory"] = FormatBytes(*memory);
  }
  if (!o.gpu.empty()) {
    auto gpu = ParseGpuMilli(o.gpu);
    if (!gpu) return Err(FlagError("--gpu", o.gpu, gpu.error()));
    if (*gpu > 0) resources["nvidia.com/gpu"] = FormatMilliDecimal(*gpu);
  }
  if (!o.gpu_memory.empty()) {
    auto bytes = ParseUnits(o.gpu_memory);
    if (!bytes) return Err(FlagError("--gpu-memory", o.gpu_memory, bytes.error()));
    resources["tessera.dev/gpu-memory"] = FormatBytes(*bytes);
  }

  return resources;
}

Result<json> BuildSubmitJob(const SubmitOptions& o, const std::string& ns) {
  // 1. Check every flag with the parsers the server uses, so mistakes cost no round trip.
  if (Status s = ValidateName(NameRule::kDns1123Label, o.name); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("NAME \"{}\": {} (it also names the container)", o.name,
                                                   s.message())));
  }
  if (o.command.empty()) {
    return Err(Status::InvalidArgument("no command: put it after --, as in `tessera submit NAME --queue Q -- python "
                                       "train.py`"));
  }
  if (o.workers < 1) return Err(Status::InvalidArgument(fmt::format("--workers {}: must be at least 1", o.workers)));
  if (o.max_run_seconds && *o.max_run_seconds < 1) {
    return Err(Status::InvalidArgument(fmt::format("--max-run {}: must be at least 1 second", *o.max_run_seconds)));
  }
  ASSIGN_OR_RETURN(json resources, PodResources(o));

  // 2. The Job, as a Kueue user would write it.
  json container{{"name", o.name}, {"command", o.command}, {"resources", {{"requests", resources}, {"limits", resources}}}};
  json pod_spec{{"containers", json::array({container})},
                {"restartPolicy", o.type == "training" ? "OnFailure" : "Never"}};
  if (!o.priority.empty()) pod_spec["priorityClassName"] = o.priority;
  json spec{{"parallelism", o.workers},
            {"completions", o.workers},
            {"template", {{"spec", pod_spec}}}};
  if (o.workers > 1) spec["completionMode"] = "Indexed";
  if (o.max_run_seconds) spec["activeDeadlineSeconds"] = *o.max_run_seconds;
  spec["backoffLimit"] = o.retries;
  json job{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"metadata",
            {{"name", o.name},
             {"namespace", ns},
             {"annotations", {{"tessera.dev/type", o.type}}}}},
           {"spec", spec}};
  if (!o.queue.empty()) job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = o.queue;
  if (Status s = ValidateObject(*FindKindByApiVersion("batch/v1", "Job"), job); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("the job would be refused: {}", s.message())));
  }
  return job;
}

Result<std::string> DefaultQueueIn(ApiClient& client, const std::string& ns) {
  const KindInfo* lq_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "LocalQueue");
  auto r = client.Request("GET", CollectionPath(*lq_kind, ns));
  if (!r) return Err(r.error());
  if (r->status != 200) return Err(Status::Unavailable(fmt::format("listing the LocalQueues of {}: HTTP {}", ns, r->status)));
  std::vector<std::string> names;
  const json list = json::parse(r->body, nullptr, false);
  if (list.is_object() && list.contains("items") && list["items"].is_array()) {
    for (const json& item : list["items"]) names.push_back(item.value("metadata", json::object()).value("name", ""));
  }
  // Kueue's default local queue, else the namespace's only one.
  if (std::find(names.begin(), names.end(), "default") != names.end()) return std::string("default");
  if (names.size() == 1) return names.front();
  if (names.empty()) {
    return Err(Status::InvalidArgument(fmt::format(
        "namespace {} has no LocalQueue to submit to: ask an admin to create one named \"default\" "
        "(`tessera apply -f` a kueue.x-k8s.io/v1beta1 LocalQueue with metadata.name: default and spec.clusterQueue: "
        "CQ; `tessera get clusterqueues` lists them), or pass --queue",
        ns)));
  }
  return Err(Status::InvalidArgument(fmt::format(
      "namespace {} has {} LocalQueues and none named \"default\": pass --queue with one of {}", ns, names.size(),
      fmt::join(names, ", "))));
}

int RunSubmit(const CommandContext& ctx, const SubmitOptions& given) {
  SubmitOptions options = given;
  if (options.queue.empty()) {
    auto queue = DefaultQueueIn(*ctx.Client(), ctx.ns);
    if (!queue) {
      *ctx.err << LocalError(queue.error()) << "\n";
      return queue.error().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    options.queue = *queue;
  }
  auto job = BuildSubmitJob(options, ctx.ns);
  if (!job) {
    *ctx.err << LocalError(job.error()) << "\n";
    return kExitUsage;
  }
  const KindInfo* job_kind = FindKindByApiVersion("batch/v1", "Job");
  const KindInfo* lq_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "LocalQueue");
  auto client = ctx.Client();
  // A queue that does not exist is legal (the job waits for it), but almost always a typo.
  auto queue = client->Request("GET", ObjectPath(*lq_kind, ctx.ns, options.queue));
  if (!queue) {
    *ctx.err << LocalError(queue.error()) << "\n";
    return kExitFailure;
  }
  if (queue->status == 404) {
    *ctx.err << fmt::format("warning: LocalQueue \"{}\" does not exist in namespace {}; the job will wait until it "
                            "does (`tessera get localqueues -n {}` lists the queues)\n",
                            options.queue, ctx.ns, ctx.ns);
  }
  auto r = client->Request("POST", CollectionPath(*job_kind, ctx.ns), job->dump());
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  *ctx.out << fmt::format("{} submitted to queue {}\n", ObjectRef(*job_kind, options.name), options.queue);
  *ctx.out << fmt::format("  why it waits, or where it runs:  tessera describe workload job-{} -n {}\n", options.name,
                          ctx.ns);
  return kExitOk;
}

}  // namespace tessera
