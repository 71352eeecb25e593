// scheduling.k8s.io/v1: PriorityClass.
#include "api/kinds/groups.h"

#include <cstdint>

#include "api/common_schemas.h"
#include "api/printer_columns.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// The highest value a user's PriorityClass may take; above are the system's
// classes (Kubernetes' HighestUserDefinablePriority).
constexpr int64_t kHighestUserPriority = 1'000'000'000;

SchemaRef PriorityClassSchema() {
  return Root({
      Req("value", Int(kInt32Min, kHighestUserPriority)),
      Opt("globalDefault", Bool()),
      Opt("description", Str()),
      Opt("preemptionPolicy", Enum({"PreemptLowerPriority", "Never"})),
  });
}

}  // namespace

std::vector<KindDefinition> SchedulingKinds() {
  return {
      {.info = {.group = "scheduling.k8s.io", .version = "v1", .kind = "PriorityClass",
                .api_version = "scheduling.k8s.io/v1", .plural = "priorityclasses", .singular = "priorityclass",
                .short_names = {"pc"}, .namespaced = false, .store_key = "scheduling.k8s.io/PriorityClass"},
       .schema = PriorityClassSchema(),
       .columns = {NameColumn(),
                   FieldColumn("VALUE", "value", "0", 0, ColumnType::kInteger),
                   FieldColumn("GLOBAL-DEFAULT", "globalDefault", "false"),
                   AgeColumn(),
                   FieldColumn("PREEMPTIONPOLICY", "preemptionPolicy", "PreemptLowerPriority")},
       // No default role grants it: cluster-scoped, for cluster-admin.
       .roles = NoDefaultRoles()},
  };
}

}  // namespace tessera
