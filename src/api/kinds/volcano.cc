// batch.volcano.sh/v1alpha1: Volcano's Job. Volcano names pods
// "<job>-<task>-<index>", so a job name is a DNS label (Volcano's admission
// webhook checks the same).
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// minAvailable (the gang size) fits the tasks' replicas; task names are unique.
void CheckVolcanoJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* tasks = Get(spec, "tasks");
  if (!tasks) return;
  int64_t replicas = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const json& task = (*tasks)[i];
    replicas += GetInt(task, "replicas").value_or(0);
    std::string name = GetString(task, "name");
    if (!name.empty() && !names.insert(name).second) {
      errors.Add(FieldPath(IndexPath(FieldPath(path, "tasks"), i), "name"),
                 fmt::format("duplicate task name \"{}\"", name));
    }
  }
  if (auto min_available = GetInt(spec, "minAvailable"); min_available && *min_available > replicas) {
    errors.Add(FieldPath(path, "minAvailable"),
               fmt::format("{} is more than the {} replicas of all tasks together", *min_available,
                           replicas));
  }
}

SchemaRef VolcanoJobSchema() {
  SchemaRef policy = Obj({
      Opt("action", Str()),
      Opt("event", Str()),
      Opt("events", Arr(Str())),
      Opt("exitCode", Int(kInt32Min)),
      Opt("timeout", Str()),
  });
  SchemaRef task = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("replicas", Int()),
          Opt("minAvailable", Int()),
          Req("template", PodTemplateSpec()),
          Opt("policies", Arr(policy)),
          Opt("topologyPolicy", Enum({"none", "best-effort", "restricted", "single-numa-node"})),
          Opt("maxRetry", Int()),
          Opt("dependsOn", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto replicas = GetInt(v, "replicas");
        auto min_available = GetInt(v, "minAvailable");
        if (replicas && min_available && *min_available > *replicas) {
          errors.Add(FieldPath(path, "minAvailable"),
                     fmt::format("{} is more than replicas {}", *min_available, *replicas));
        }
      }});
  return Root({Opt("spec", Obj(
                               {
                                   Opt("schedulerName", Str()),
                                   Opt("minAvailable", Int()),
                                   Opt("volumes", Arr(OpenObj())),
                                   Req("tasks", Arr(task, /*non_empty=*/true)),
                                   Opt("policies", Arr(policy)),
                                   // plugin name -> arguments ("ssh: []", "svc: [...]")
                                   Opt("plugins", MapOf(Arr(Str()), KeyRule::kNone,
                                                        /*null_elements=*/true)),
                                   Opt("runningEstimate", Str()),
                                   Opt("queue", Str()),
                                   Opt("maxRetry", Int()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("priorityClassName", Str()),
                                   Opt("minSuccess", Int(1)),
                                   Opt("networkTopology", OpenObj()),
                               },
                               {CheckVolcanoJobSpec}))});
}

}  // namespace

std::vector<KindDefinition> VolcanoKinds() {
  return {
      {.info = {.group = "batch.volcano.sh", .version = "v1alpha1", .kind = "Job",
                .api_version = "batch.volcano.sh/v1alpha1", .plural = "jobs", .singular = "job",
                .short_names = {"vcjob", "vj"}, .namespaced = true, .name_rule = NameRule::kDns1123Label,
                .store_key = "batch.volcano.sh/Job"},
       .schema = VolcanoJobSchema(),
       .columns = {NameColumn(),
                   FieldColumn("STATUS", "status.state.phase", "Pending"),
                   FieldColumn("MINAVAILABLE", "spec.minAvailable", "", 0, ColumnType::kInteger),
                   FieldColumn("RUNNINGS", "status.running", "0", 0, ColumnType::kInteger),
                   {.name = "QUEUE",
                    .description = ".spec.queue, else the kueue.x-k8s.io/queue-name label",
                    .cell = [](const json& o, const ColumnOptions&) {
                      const std::string q = TextAt(o, "spec.queue");
                      return q.empty() ? Text(Child(Find(o, "metadata.labels"), "kueue.x-k8s.io/queue-name")) : q;
                    }},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "job-controller"},
  };
}

}  // namespace tessera
