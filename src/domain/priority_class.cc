#include "domain/priority_class.h"

namespace tessera {

std::vector<PriorityClass> DefaultPriorityClasses() {
  return {
      {.name = "production", .value = 1000000, .non_preemptible = true},
      {.name = "training", .value = 100000},
      // No shipped class is the global default: an installation's own (the seed's
      // exploratory class, say) must be accepted, and Kubernetes allows only one.
      {.name = "development", .value = 1000},
      {.name = "batch", .value = 0, .preemption_policy = PreemptionPolicy::kNever},
  };
}

}  // namespace tessera
