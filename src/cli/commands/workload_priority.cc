#include "cli/commands/workload_priority.h"

#include "api/kinds.h"
#include "api/object_fields.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/resource_paths.h"

namespace tessera {

DefaultPriorityClass FetchDefaultPriorityClass(ApiClient& client) {
  DefaultPriorityClass found;
  const KindInfo* kind = FindKindByApiVersion("scheduling.k8s.io/v1", "PriorityClass");
  auto classes = ListObjects(client, ClientConfig{}, CollectionPath(*kind, ""), "");
  if (!classes) return found;
  for (const nlohmann::json& pc : classes->items) {  // in name order
    const nlohmann::json* global_default = Child(&pc, "globalDefault");
    const nlohmann::json* value = Child(&pc, "value");
    if (global_default && global_default->is_boolean() && global_default->get<bool>() && value &&
        value->is_number_integer()) {
      found = DefaultPriorityClass{.name = NameOf(pc), .value = value->get<int64_t>()};
    }
  }
  return found;
}

}  // namespace tessera
