// Namespace (v1) with its ResourceQuotas: hard ceilings checked at admission only.
// Lowering a ceiling evicts nothing; new work beyond it waits with a reason.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "domain/budget.h"
#include "domain/labels.h"
#include "domain/resources.h"

namespace tessera {

struct ResourceQuota {
  std::string name;
  // requests.<resource> (and the bare "cpu"/"memory" forms, which mean requests)
  // and "pods" (kPods); nullopt where the quota sets no ceiling.
  std::array<std::optional<int64_t>, kResourceKinds> hard_requests{};
  // limits.<resource>.
  std::array<std::optional<int64_t>, kResourceKinds> hard_limits{};

  void SetRequest(ResourceKind k, int64_t v) { hard_requests[static_cast<int>(k)] = v; }
  void SetLimit(ResourceKind k, int64_t v) { hard_limits[static_cast<int>(k)] = v; }
};

struct Namespace {
  std::string name;
  Labels labels;
  std::vector<ResourceQuota> quotas;
  std::vector<NamespaceBudget> budgets;  // tessera.dev/v1 Budgets, checked at admission (domain/budget.h)
};

}  // namespace tessera
