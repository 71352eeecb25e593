// tessera.dev/v1 Sweep: a hyperparameter search (issue 20, modelled on Katib's
// Experiment). The spec's meaning is sweep/sweep_spec.h's (ParseSweepSpec,
// run as the schema's check so that each semantic error names its field); the
// controller is server/controllers/sweep_controller.h.
//
// trialTemplate holds exactly one of
//   trialSpec  a batch/v1 Job manifest (Katib's form: apiVersion, kind, spec),
//   jobSpec    a batch/v1 Job's spec,
//   template   a pod template (the Job around it is the controller's),
// with `${params.NAME}` references, plus Katib's trialParameters and
// primaryContainerName. The rendered Job is validated when a trial is created.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "sweep/sweep_spec.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// ParseSweepSpec's error ("spec.parameters[0].feasibleSpace.min: ...") as one
// of the walk's errors, at its own path.
void CheckSweepSpec(const json& spec, const std::string& path, Errors& errors) {
  auto parsed = sweep::ParseSweepSpec(spec, path);
  if (parsed) return;
  const std::string& message = parsed.error().message();
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) {
    errors.Add(path, message);
  } else {
    errors.Add(message.substr(0, colon), message.substr(colon + 2));
  }
}

void CheckTrialTemplate(const json& t, const std::string& path, Errors& errors) {
  int forms = 0;
  for (const char* key : {"trialSpec", "jobSpec", "template"}) forms += Get(t, key) != nullptr ? 1 : 0;
  if (forms != 1) {
    errors.Add(path, forms == 0 ? "set one of trialSpec (a batch/v1 Job manifest), jobSpec (a Job's spec) or "
                                  "template (a pod template)"
                                : "set only one of trialSpec, jobSpec and template");
  }
  if (const json* manifest = Get(t, "trialSpec")) {
    const std::string kind = GetString(*manifest, "kind");
    if (!kind.empty() && kind != "Job") {
      errors.Add(FieldPath(path, "trialSpec.kind"),
                 fmt::format("unsupported kind \"{}\"; trials are batch/v1 Jobs", kind));
    }
  }
}

SchemaRef SweepSchema() {
  return Root({Req("spec", Obj(
                               {
                                   Req("objective", OpenObj()),
                                   Req("algorithm", OpenObj()),
                                   Opt("earlyStopping", OpenObj()),
                                   Opt("parallelTrialCount", Int(1)),
                                   Opt("maxTrialCount", Int(1)),
                                   Opt("maxFailedTrialCount", Int(0)),
                                   Opt("parallelTrials", Int(1)),
                                   Opt("maxTrials", Int(1)),
                                   Opt("maxFailedTrials", Int(0)),
                                   Req("parameters", Arr(Any(), /*non_empty=*/true)),
                                   Req("trialTemplate", Obj(
                                                            {
                                                                Opt("trialParameters", Arr(Any())),
                                                                Opt("primaryContainerName", Str()),
                                                                Opt("trialSpec", OpenObj()),
                                                                Opt("jobSpec", OpenObj()),
                                                                Opt("template", OpenObj()),
                                                            },
                                                            {CheckTrialTemplate})),
                                   Opt("queueName", Str(StringRule::kDns1123Label)),
                               },
                               {CheckSweepSpec}))});
}

std::string SweepStatus(const json& o, const ColumnOptions&) {
  if (ConditionStatus(o, "Succeeded") == "True") return "Succeeded";
  if (ConditionStatus(o, "Failed") == "True") return "Failed";
  if (ConditionStatus(o, "Running") == "True") return "Running";
  return "Created";
}

}  // namespace

std::vector<KindDefinition> TesseraSweepKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Sweep", .api_version = "tessera.dev/v1",
                .plural = "sweeps", .singular = "sweep", .short_names = {"sw"}, .categories = {"all", "tessera"}, .namespaced = true,
                .store_key = "tessera.dev/Sweep"},
       .schema = SweepSchema(),
       .columns = {NameColumn(),
                   {.name = "STATUS", .description = "Succeeded, Failed, Running or Created", .cell = SweepStatus},
                   {.name = "TRIALS",
                    .description = "succeeded/total trials",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return fmt::format("{}/{}", TextAt(o, "status.trialsSucceeded", "0"),
                                         TextAt(o, "status.trials", "0"));
                    }},
                   {.name = "BEST",
                    .description = "the best trial's objective value",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return TextAt(o, "status.currentOptimalTrial.objectiveValue", "-");
                    }},
                   AgeColumn(),
                   FieldColumn("OPTIMAL TRIAL", "status.currentOptimalTrial.bestTrialName", "", /*priority=*/1)},
       .roles = RoleGrants{.grants = {ViewReads(), EditWrites(), ViewReads("status")}},
       .controller = "sweep-controller"},
  };
}

}  // namespace tessera
