// ClusterQueue, cohort membership and LocalQueue (kueue.x-k8s.io/v1beta1), as the
// scheduler sees them. Quotas are per (flavor, resource), in the units of
// resources.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/ids.h"
#include "domain/labels.h"
#include "domain/quota_limit.h"
#include "domain/resources.h"

namespace tessera {

struct ResourceQuotaSpec {
  ResourceKind resource = ResourceKind::kGpu;
  int64_t nominal = 0;
  Limit borrowing_limit;  // how far above nominal this queue may go (cohort permitting)
  Limit lending_limit;    // how much of its unused nominal the cohort may use
  friend bool operator==(const ResourceQuotaSpec&, const ResourceQuotaSpec&) = default;
};

struct FlavorQuotas {
  FlavorId flavor;
  std::vector<ResourceQuotaSpec> resources;

  const ResourceQuotaSpec* Find(ResourceKind kind) const {
    for (const auto& r : resources) {
      if (r.resource == kind) return &r;
    }
    return nullptr;
  }
};

struct ResourceGroup {
  std::vector<ResourceKind> covered_resources;
  std::vector<FlavorQuotas> flavors;  // tried in this order

  bool Covers(ResourceKind kind) const {
    for (ResourceKind k : covered_resources) {
      if (k == kind) return true;
    }
    return false;
  }
};

enum class WithinClusterQueuePolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimWithinCohortPolicy { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };
enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };

struct PreemptionConfig {
  WithinClusterQueuePolicy within_cluster_queue = WithinClusterQueuePolicy::kNever;
  ReclaimWithinCohortPolicy reclaim_within_cohort = ReclaimWithinCohortPolicy::kNever;
  BorrowWithinCohortPolicy borrow_within_cohort = BorrowWithinCohortPolicy::kNever;
  // With borrowWithinCohort: only workloads at or below this priority may be preempted.
  std::optional<int32_t> borrow_max_priority_threshold;
};

struct ClusterQueue {
  std::string name;
  CohortId cohort;  // invalid: not in a cohort
  std::vector<ResourceGroup> resource_groups;
  PreemptionConfig preemption;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  int64_t fair_weight_milli = 1000;          // fairSharing.weight, in thousandths
  std::optional<Labels> namespace_selector;  // nullopt: every namespace
  bool stopped = false;                      // stopPolicy: admits nothing
  // Non-empty when the queue cannot admit (a flavor it names does not exist, say):
  // its workloads wait with this reason.
  std::string inactive_reason;

  // The group covering `kind`, or nullptr.
  const ResourceGroup* GroupFor(ResourceKind kind) const {
    for (const auto& g : resource_groups) {
      if (g.Covers(kind)) return &g;
    }
    return nullptr;
  }
};

struct Cohort {
  std::string name;
};

struct LocalQueue {
  std::string namespace_name;
  std::string name;
  ClusterQueueId cluster_queue;  // invalid: names a ClusterQueue that does not exist
  std::string cluster_queue_name;
};

}  // namespace tessera
