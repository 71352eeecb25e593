#include "domain/priority_class.h"

namespace tessera {

std::vector<PriorityClass> DefaultPriorityClasses() {
  return {
      {.name = "production", .value = 1000000, .non_preemptible = true},
      {.name = "training", .value = 100000},
      {.name = "development", .value = 1000, .global_default = true},
      {.name = "batch", .value = 0, .preemption_policy = PreemptionPolicy::kNever},
  };
}

}  // namespace tessera
