// A ClusterQueue's quota and usage per flavor and resource, from its spec
// (resourceGroups[].flavors[].resources[].nominalQuota, borrowingLimit,
// lendingLimit) and
// Kueue's status (status.flavorsUsage: [{name, resources: [{name, total,
// borrowed}]}], else status.flavorsReservation). Shared by `tessera queues` and
// `describe clusterqueue`.
//
// Order: flavors as the spec lists them (the order the scheduler tries them);
// within a flavor nvidia.com/gpu first, then cpu, memory, then the rest in spec
// order. Amounts print as users write them (quantity.h): GPUs "0.25" or "8",
// CPU "500m" or "64", memory "512Gi". Without status, used and borrowed are 0.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

struct QueueUsageRow {
  std::string flavor;
  std::string resource;
  std::string nominal;
  std::string borrowing_limit;  // "" when unlimited (no borrowingLimit)
  // The part of nominal the queue never lends (nominal - lendingLimit): a
  // capacity reservation ("0" without a lendingLimit; all of nominal with 0).
  std::string reserved;
  std::string used;
  std::string borrowed;
};

std::vector<QueueUsageRow> QueueUsage(const nlohmann::json& cluster_queue);

}  // namespace tessera
