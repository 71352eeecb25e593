// tessera.dev/v1: what the platform records itself (usage intervals for reports)
// and governance (DESIGN.md section 12): approval gates and budgets.
#include "api/kinds/groups.h"

#include "api/common_schemas.h"
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

}  // namespace

std::vector<KindDefinition> TesseraKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "UsageRecord", .api_version = "tessera.dev/v1",
                .plural = "usagerecords", .singular = "usagerecord", .short_names = {"usage"}, .namespaced = true,
                .store_key = "tessera.dev/UsageRecord"},
       .schema = UsageRecordSchema(),
       .controller = "usage-recorder"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "ApprovalPolicy", .api_version = "tessera.dev/v1",
                .plural = "approvalpolicies", .singular = "approvalpolicy", .short_names = {"ap"},
                .namespaced = false, .store_key = "tessera.dev/ApprovalPolicy"},
       .schema = ApprovalPolicySchema(),
       .controller = "approval-controller"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "ApprovalRequest", .api_version = "tessera.dev/v1",
                .plural = "approvalrequests", .singular = "approvalrequest", .short_names = {"ar"},
                .namespaced = true, .store_key = "tessera.dev/ApprovalRequest"},
       .schema = ApprovalRequestSchema(),
       .controller = "approval-controller"},
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Budget", .api_version = "tessera.dev/v1",
                .plural = "budgets", .singular = "budget", .namespaced = true, .store_key = "tessera.dev/Budget"},
       .schema = BudgetSchema(),
       .controller = "budget-controller"},
  };
}

}  // namespace tessera
