// tessera.dev/v1: what the platform records itself (usage intervals for reports)
// and governance (DESIGN.md section 12): approval gates and budgets.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// A usage interval the server records (server/usage_recorder.h).
SchemaRef UsageRecordSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("clusterQueue", Str()),
                               Opt("flavor", Str()),
                               Req("gpuMilli", Int(0)),
                               Opt("devices", Arr(Str())),
                               Opt("user", Str()),
                               Opt("submitted", Str()),
                               Opt("queue", Str()),
                               Opt("priorityClass", Str()),
                               Opt("pods", Int(0)),
                               Req("start", Str()),
                               Opt("end", Str()),
                               Opt("usedGpuMilliSeconds", Int(0)),
                               Opt("usedUpdatedAt", Str()),
                           }))});
}

SchemaRef ApprovalPolicySchema() {
  return Root({Req("spec", Obj({
                               Opt("namespaceSelector", LabelSelector()),
                               Req("thresholds", Obj({Opt("gpus", Decimal()), Opt("gpuHours", Decimal()),
                                                      Opt("estimatedCost", Decimal()),
                                                      Opt("priorityClasses", Arr(Str())),
                                                      Opt("overNominalQuota", Bool())},
                                                     {[](const json& v, const std::string& path, Errors& errors) {
                                                       if (v.empty()) {
                                                         errors.Add(path, "set at least one threshold: gpus, gpuHours, "
                                                                          "estimatedCost, priorityClasses or "
                                                                          "overNominalQuota");
                                                       }
                                                     }})),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("expireAfter", DurationText()),
                           }))});
}

SchemaRef ApprovalRequestSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("requester", Str()),
                               Opt("policies", Arr(Str())),
                               Opt("reasons", Arr(Str())),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("specHash", Str()),
                               Opt("expiresAt", Str()),
                               Opt("approvers", Arr(Str())),
                           }))});
}

SchemaRef BudgetSchema() {
  return Root({Req("spec", Obj({Opt("period", Enum({"Daily", "Weekly", "Monthly"})), Opt("gpuHours", Decimal()),
                                Opt("cost", Decimal())},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 if (!Get(v, "gpuHours") && !Get(v, "cost")) {
                                   errors.Add(path, "a budget needs gpuHours, cost or both");
                                 }
                               }}))});
}

// The items of a list of strings at `path`, comma-separated; "-" when none.
std::string ListOrDash(const json& o, std::string_view path) {
  const json* items = Find(o, path);
  if (!items || !items->is_array() || items->empty()) return std::string("-");
  std::string out;
  for (const json& c : *items) out += (out.empty() ? "" : ",") + Text(&c);
  return out;
}

}  // namespace

// A question, answered and never stored: spec.object, a workload kind's
// object, is checked as its kind (server/api/scheduling_review.h).
SchemaRef SchedulingReviewSchema() { return Root({Req("spec", Obj({Req("object", OpenObj())}))}); }

// A what-if over the platform's history, answered and never stored
// (server/api/simulation_review.h, sim/what_if.h).
SchemaRef SimulationReviewSchema() {
  const SchemaRef scenario = Obj({Req("name", Str(StringRule::kDns1123Label)),
                                  Opt("cluster", Str()),
                                  Opt("addNodes", Str()),
                                  Opt("removeNodes", Arr(Str())),
                                  Opt("policy", Arr(OpenObj()))});
  return Root({Req("spec", Obj({Req("since", Str()),
                                Opt("until", Str()),
                                Opt("checkpointInterval", DurationText()),
                                Opt("scenarios", Arr(scenario))},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 const json* scenarios = Get(v, "scenarios");
                                 if (scenarios && scenarios->is_array() && scenarios->size() > 4) {
                                   errors.Add(path + ".scenarios",
                                              fmt::format("Too many: {}: must have at most 4 items (compare a few "
                                                          "changes at a time)",
                                                          scenarios->size()));
                                 }
                               }}))});
}

std::vector<KindDefinition> TesseraKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "SimulationReview", .api_version = "tessera.dev/v1",
                .plural = "simulationreviews", .singular = "simulationreview", .namespaced = false,
                .name_rule = NameRule::kPathSegment, .store_key = "tessera.dev/SimulationReview", .stored = false},
       .schema = SimulationReviewSchema(),
       .columns = DefaultColumns(),
       // It reads every team's history: cluster-admin only, as no default role grants it.
       .roles = NoDefaultRoles()},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "SchedulingReview", .api_version = "tessera.dev/v1",
                .plural = "schedulingreviews", .singular = "schedulingreview", .namespaced = true,
                .name_rule = NameRule::kPathSegment, .store_key = "tessera.dev/SchedulingReview", .stored = false},
       .schema = SchedulingReviewSchema(),
       .columns = DefaultColumns(),
       // Who submits work asks where it would run.
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kEdit, .verbs = verbs::kCreate}}}},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "UsageRecord", .api_version = "tessera.dev/v1",
                .plural = "usagerecords", .singular = "usagerecord", .short_names = {"usage"}, .categories = {"tessera"}, .namespaced = true,
                .store_key = "tessera.dev/UsageRecord"},
       .schema = UsageRecordSchema(),
       .columns = DefaultColumns(),
       // Written by the server.
       .roles = RoleGrants{.grants = {ViewReads()}},
       .controller = "usage-recorder"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "ApprovalPolicy", .api_version = "tessera.dev/v1",
                .plural = "approvalpolicies", .singular = "approvalpolicy", .short_names = {"ap"},
                .categories = {"tessera"}, .namespaced = false, .store_key = "tessera.dev/ApprovalPolicy"},
       .schema = ApprovalPolicySchema(),
       .columns = {NameColumn(),
                   FieldColumn("GPUS", "spec.thresholds.gpus", "-"),
                   FieldColumn("GPU-HOURS", "spec.thresholds.gpuHours", "-"),
                   FieldColumn("COST", "spec.thresholds.estimatedCost", "-"),
                   {.name = "PRIORITY CLASSES",
                    .description = ".spec.thresholds.priorityClasses",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return ListOrDash(o, "spec.thresholds.priorityClasses");
                    }},
                   FieldColumn("APPROVALS", "spec.requiredApprovals", "1", 0, ColumnType::kInteger),
                   AgeColumn()},
       // No default role grants it: cluster-scoped, for cluster-admin.
       .roles = NoDefaultRoles(),
       .controller = "approval-controller"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "ApprovalRequest", .api_version = "tessera.dev/v1",
                .plural = "approvalrequests", .singular = "approvalrequest", .short_names = {"ar"},
                .categories = {"tessera"}, .namespaced = true, .store_key = "tessera.dev/ApprovalRequest"},
       .schema = ApprovalRequestSchema(),
       .columns = {NameColumn(),
                   FieldColumn("WORKLOAD", "spec.workload"),
                   FieldColumn("REQUESTER", "spec.requester"),
                   FieldColumn("PHASE", "status.phase", "Pending"),
                   {.name = "APPROVALS",
                    .description = "approvals given/required",
                    .cell = [](const json& o, const ColumnOptions&) {
                      const json* approvals = Find(o, "status.approvals");
                      const size_t got = approvals && approvals->is_array() ? approvals->size() : 0;
                      return fmt::format("{}/{}", got, TextAt(o, "spec.requiredApprovals", "1"));
                    }},
                   AgeColumn(),
                   FieldColumn("EXPIRES", "spec.expiresAt", "", /*priority=*/1),
                   {.name = "REASON",
                    .priority = 1,
                    .description = "the first of .spec.reasons",
                    .cell = [](const json& o, const ColumnOptions&) {
                      const json* reasons = Find(o, "spec.reasons");
                      return reasons && reasons->is_array() && !reasons->empty() ? Text(&(*reasons)[0]) : std::string();
                    }}},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"),
                                    {.role = DefaultRole::kAdmin,
                                     .subresource = "approval",
                                     .verbs = verbs::kGet | verbs::kUpdate | verbs::kPatch}}},
       .controller = "approval-controller"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Budget", .api_version = "tessera.dev/v1",
                .plural = "budgets", .singular = "budget", .categories = {"tessera"}, .namespaced = true, .store_key = "tessera.dev/Budget"},
       .schema = BudgetSchema(),
       .columns = {NameColumn(),
                   FieldColumn("PERIOD", "spec.period", "Monthly"),
                   FieldColumn("GPU-HOURS", "spec.gpuHours", "-"),
                   FieldColumn("USED GPU-HOURS", "status.usedGpuHours", "0"),
                   FieldColumn("COST", "spec.cost", "-"),
                   FieldColumn("USED COST", "status.usedCost", "0"),
                   AgeColumn(),
                   FieldColumn("PERIOD END", "status.periodEnd", "", /*priority=*/1)},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status")}},
       .controller = "budget-controller"},
  };
}

}  // namespace tessera
