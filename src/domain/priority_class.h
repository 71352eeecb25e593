// PriorityClass (scheduling.k8s.io/v1) and the defaults Tessera ships.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

enum class PreemptionPolicy { kPreemptLowerPriority, kNever };

struct PriorityClass {
  std::string name;
  int32_t value = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  bool global_default = false;
  // Work of this class is never chosen as a preemption victim (production
  // serving), and so is admitted only within its ClusterQueue's nominal quota:
  // borrowed quota must stay reclaimable. Set with the annotation
  // tessera.dev/preemptible: "false".
  bool non_preemptible = false;
};

// production (never a victim) > training > development > batch (runs only on
// otherwise idle resources: it never preempts). DESIGN.md section 5.4.
std::vector<PriorityClass> DefaultPriorityClasses();

}  // namespace tessera
