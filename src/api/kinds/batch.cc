// batch/v1: the Job (before Volcano's in lookup order: "jobs" means batch/v1 Job,
// as in kubectl).
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>

#include "api/age.h"
#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// A Job's pods must not restart in place forever: Kubernetes requires
// restartPolicy OnFailure or Never (the pod default, Always, is refused).
void CheckBatchJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* template_spec = Get(*Get(spec, "template"), "spec");
  std::string policy = template_spec ? GetString(*template_spec, "restartPolicy") : "";
  if (policy != "OnFailure" && policy != "Never") {
    errors.Add(FieldPath(path, "template.spec.restartPolicy"),
               fmt::format("{}; a Job's pods take \"OnFailure\" or \"Never\"",
                           policy.empty() ? std::string("required")
                                          : fmt::format("unsupported value \"{}\"", policy)));
  }
  if (GetString(spec, "completionMode") == "Indexed" && !GetInt(spec, "completions")) {
    errors.Add(FieldPath(path, "completions"), "required when completionMode is Indexed");
  }
}

SchemaRef BatchJobSchema() {
  return Root({Opt("spec", Obj(
                               {
                                   Opt("parallelism", Int()),
                                   Opt("completions", Int()),
                                   Opt("activeDeadlineSeconds", Int64(1)),
                                   Opt("podFailurePolicy", OpenObj()),
                                   Opt("successPolicy", OpenObj()),
                                   Opt("backoffLimit", Int()),
                                   Opt("backoffLimitPerIndex", Int()),
                                   Opt("maxFailedIndexes", Int()),
                                   Opt("selector", LabelSelector()),
                                   Opt("manualSelector", Bool()),
                                   Req("template", PodTemplateSpec()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("completionMode", Enum({"NonIndexed", "Indexed"})),
                                   Opt("suspend", Bool()),
                                   Opt("podReplacementPolicy",
                                       Enum({"TerminatingOrFailed", "Failed"})),
                                   Opt("managedBy", Str()),
                               },
                               {CheckBatchJobSpec}))});
}

// ---------------------------------------------------------------------------
// Printer columns, as kubectl prints a Job's, with its queue.

std::string JobStatus(const json& o, const ColumnOptions&) {
  if (ConditionStatus(o, "Complete") == "True") return "Complete";
  if (ConditionStatus(o, "Failed") == "True") return "Failed";
  if (const json* s = Find(o, "spec.suspend"); s && s->is_boolean() && s->get<bool>()) return "Suspended";
  const json* active = Find(o, "status.active");
  if (active && active->is_number_integer() && active->get<int64_t>() > 0) return "Running";
  return "Pending";
}

std::string JobCompletions(const json& o, const ColumnOptions&) {
  // kubectl's rule: succeeded/completions; without completions, "of parallelism" when above 1.
  const std::string succeeded = TextAt(o, "status.succeeded", "0");
  if (const json* c = Find(o, "spec.completions"); c && c->is_number_integer()) {
    return fmt::format("{}/{}", succeeded, c->get<int64_t>());
  }
  const json* p = Find(o, "spec.parallelism");
  const int64_t parallelism = p && p->is_number_integer() ? p->get<int64_t>() : 1;
  return parallelism > 1 ? fmt::format("{}/1 of {}", succeeded, parallelism) : fmt::format("{}/1", succeeded);
}

std::string JobDuration(const json& o, const ColumnOptions& options) {
  auto start = ParseTimeSeconds(TextAt(o, "status.startTime"));
  if (!start) return "";
  auto end = ParseTimeSeconds(TextAt(o, "status.completionTime"));
  return HumanDuration((end ? *end : options.now) - *start);
}

std::string TemplateContainers(const json& o, const std::function<std::string(const json&)>& field) {
  const json* containers = Find(o, "spec.template.spec.containers");
  if (!containers || !containers->is_array()) return "";
  std::string out;
  for (const json& c : *containers) {
    if (!out.empty()) out += ",";
    out += field(c);
  }
  return out;
}

std::string CommandLine(const json& container) {
  std::string out;
  for (const char* key : {"command", "args"}) {
    const json* parts = Child(&container, key);
    if (!parts || !parts->is_array()) continue;
    for (const json& p : *parts) {
      if (!out.empty()) out += ' ';
      out += Text(&p);
    }
  }
  return out.empty() ? "<none>" : out;
}

}  // namespace

std::vector<KindDefinition> BatchKinds() {
  return {
      {.info = {.group = "batch", .version = "v1", .kind = "Job", .api_version = "batch/v1", .plural = "jobs",
                .singular = "job", .categories = {"all"}, .namespaced = true, .store_key = "batch/Job"},
       .schema = BatchJobSchema(),
       .columns = {NameColumn(),
                   {.name = "QUEUE",
                    .description = "the kueue.x-k8s.io/queue-name label",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return Text(Child(Find(o, "metadata.labels"), "kueue.x-k8s.io/queue-name"));
                    }},
                   {.name = "STATUS",
                    .description = "Complete, Failed, Suspended, Running or Pending",
                    .cell = JobStatus},
                   {.name = "COMPLETIONS", .description = "succeeded/completions", .cell = JobCompletions},
                   {.name = "DURATION",
                    .description = "from its start to its completion, or to now",
                    .cell = JobDuration},
                   AgeColumn(),
                   {.name = "CONTAINERS",
                    .priority = 1,
                    .description = "its pods' container names",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return TemplateContainers(o, [](const json& c) { return TextAt(c, "name"); });
                    }},
                   {.name = "COMMAND",
                    .priority = 1,
                    .description = "its pods' commands and arguments",
                    .cell = [](const json& o, const ColumnOptions&) { return TemplateContainers(o, CommandLine); }}},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites(), ViewReads("scale"), EditWrites("scale")}, .kueue = KueueRoles::kJobEditor},
       .controller = "job-controller"},
  };
}

}  // namespace tessera
