// A generated fleet and queue load for benchmarks, demos and randomized tests:
// racks of GPU nodes in two flavors (spot, on-demand), ClusterQueues in cohorts
// with equal nominal shares, and a realistic mix of pending work (DESIGN.md
// section 10): 60 % one GPU, 20 % fractional, 15 % 2-8 GPUs, 5 % gangs of 2-32 pods.
// Deterministic for a seed.
#pragma once

#include <cstdint>

#include "sched/snapshot.h"

namespace tessera {

struct SyntheticFleetSpec {
  int32_t nodes = 10'000;
  int32_t gpus_per_node = 8;
  int32_t nvlink_domains_per_node = 2;
  int32_t nodes_per_rack = 32;
  int32_t cluster_queues = 200;
  int32_t cohorts = 10;
  int32_t workloads = 100'000;
  uint64_t seed = 42;
};

ClusterSnapshot MakeSyntheticFleet(const SyntheticFleetSpec& spec);

}  // namespace tessera
