#include "api/workload_priority.h"

#include "api/object_fields.h"

namespace tessera {

int64_t UnnamedClassPriority(const nlohmann::json& workload, int64_t default_priority) {
  const nlohmann::json* priority = Find(workload, "spec.priority");
  return priority && priority->is_number_integer() ? priority->get<int64_t>() : default_priority;
}

}  // namespace tessera
