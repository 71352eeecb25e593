// tessera.dev/v1 Pipeline and PipelineRun (issue 20): a DAG of steps, each a
// pod template, run as batch/v1 Jobs by the pipeline controller
// (server/controllers/pipeline_controller.h). The schema checks the shape; the
// spec's own rules (names, dependencies, cycles, references, conditions) are
// pipeline/pipeline_spec.h's ParsePipelineSpec, run as the schema's check so
// that its errors carry their field path.
#include <fmt/format.h>

#include <string>

#include "api/common_schemas.h"
#include "api/kinds/groups.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "pipeline/pipeline_spec.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef ParameterList() { return Arr(Obj({Req("name", Str()), Opt("value", Any())})); }

// The shape of a pipeline spec (Pipeline.spec, PipelineRun.spec.pipelineSpec).
SchemaRef PipelineSpecSchema() {
  return Obj({Opt("parameters", ParameterList()),
              Req("steps", Arr(Obj({Req("name", Str()),
                                    // Opaque but for {{...}}: a field may hold a reference until the run.
                                    Req("template", OpenObj()),
                                    Opt("dependsOn", Arr(Str())),
                                    Opt("withItems", Arr(Any(), /*non_empty=*/true)),
                                    Opt("when", Str()),
                                    Opt("retries", Obj({Opt("limit", Int(0, 100)), Opt("backoffSeconds", Int(0))})),
                                    Opt("cache", Bool())}),
                               /*non_empty=*/true))},
             {[](const json& v, const std::string& path, Errors& errors) {
               if (auto parsed = pipeline::ParsePipelineSpec(v, path); !parsed) {
                 // The message starts with its field path: "spec.steps[1].dependsOn[0]: ...".
                 const std::string& message = parsed.error().message();
                 const size_t colon = message.find(": ");
                 if (colon == std::string::npos) {
                   errors.Add(path, message);
                 } else {
                   errors.Add(message.substr(0, colon), message.substr(colon + 2));
                 }
               }
             }});
}

SchemaRef PipelineSchema() { return Root({Req("spec", PipelineSpecSchema())}); }

SchemaRef PipelineRunSchema() {
  return Root({Req("spec", Obj({Opt("pipelineRef", Obj({Req("name", Str(StringRule::kDns1123Subdomain))})),
                                Opt("pipelineSpec", PipelineSpecSchema()),
                                Opt("parameters", ParameterList()),
                                Opt("resumeFrom", Str(StringRule::kDns1123Subdomain)),
                                Opt("queueName", Str())},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 const bool ref = Get(v, "pipelineRef") != nullptr;
                                 const bool inline_spec = Get(v, "pipelineSpec") != nullptr;
                                 if (ref == inline_spec) {
                                   errors.Add(path, "set exactly one of pipelineRef (a Pipeline's name) and "
                                                    "pipelineSpec (the spec inline)");
                                 }
                               }}))});
}

// A Pipeline is a version: what a PipelineRun records must stay what its name says.
Status KeepPipelineSpec(const KindInfo&, const json& stored, const json& next) {
  if (stored.value("spec", json()) != next.value("spec", json())) {
    return Status::InvalidArgument("spec: a Pipeline is immutable; create a new version (a new name)");
  }
  return Status::Ok();
}

std::string StepCount(const json& o, const ColumnOptions&) {
  const json* steps = Find(o, "spec.steps");
  return std::to_string(steps && steps->is_array() ? steps->size() : 0);
}

std::string RunPipeline(const json& o, const ColumnOptions&) {
  const std::string ref = TextAt(o, "spec.pipelineRef.name");
  return ref.empty() ? std::string("<inline>") : ref;
}

// done/total nodes: done counts Succeeded, Cached and Skipped.
std::string RunSteps(const json& o, const ColumnOptions&) {
  const json* nodes = Find(o, "status.nodes");
  if (!nodes || !nodes->is_object()) return "-";
  size_t done = 0;
  for (const auto& [name, node] : nodes->items()) {
    const std::string phase = node.is_object() ? node.value("phase", "") : "";
    if (phase == "Succeeded" || phase == "Cached" || phase == "Skipped") ++done;
  }
  return fmt::format("{}/{}", done, nodes->size());
}

}  // namespace

std::vector<KindDefinition> TesseraPipelineKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Pipeline", .api_version = "tessera.dev/v1",
                .plural = "pipelines", .singular = "pipeline", .short_names = {"pl"}, .categories = {"tessera"}, .namespaced = true,
                .store_key = "tessera.dev/Pipeline"},
       .schema = PipelineSchema(),
       .update_rules = {KeepPipelineSpec},
       .columns = {NameColumn(), {.name = "STEPS", .description = "the number of steps", .cell = StepCount},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "pipeline-controller"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "PipelineRun", .api_version = "tessera.dev/v1",
                .plural = "pipelineruns", .singular = "pipelinerun", .short_names = {"plr"}, .categories = {"all", "tessera"}, .namespaced = true,
                .store_key = "tessera.dev/PipelineRun"},
       .schema = PipelineRunSchema(),
       .columns = {NameColumn(),
                   {.name = "PIPELINE", .description = ".spec.pipelineRef.name, or <inline>", .cell = RunPipeline},
                   FieldColumn("STATUS", "status.phase", "Pending"),
                   {.name = "STEPS", .description = "nodes done (Succeeded, Cached, Skipped)/all", .cell = RunSteps},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "pipeline-controller"},
  };
}

}  // namespace tessera
