// batch/v1: the Job (before Volcano's in lookup order: "jobs" means batch/v1 Job,
// as in kubectl).
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>

#include "api/common_schemas.h"
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

}  // namespace

std::vector<KindDefinition> BatchKinds() {
  return {
      {.info = {.group = "batch", .version = "v1", .kind = "Job", .api_version = "batch/v1", .plural = "jobs",
                .singular = "job", .namespaced = true, .store_key = "batch/Job"},
       .schema = BatchJobSchema(),
       .controller = "job-controller"},
  };
}

}  // namespace tessera
