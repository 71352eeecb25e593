// The fragmentation protocol of the FGD paper (Weng et al., "Beware of
// Fragmentation", ATC'23): nodes from a node list; pods from a pod list until the
// GPU requests that arrived reach `tune` (1.3) of the cluster's GPUs, with no
// departures; a pod that cannot be placed when it arrives is not placed (no
// queueing). The metric: GPUs allocated / cluster GPUs (%) at each whole percent
// of arrived requests, 0..130.
//
// Two readings of "pods from a pod list" (ArrivalOrder):
//   kPublished  what the authors' runs did (kubernetes-scheduler-simulator,
//               experiments/run_scripts: --shuffle-pod=true, -tune 1.3): every pod
//               of the list once, in a seeded random order, then copies drawn
//               with replacement appended until the next one would pass tune x
//               capacity (their check compares the per-GPU share, kept here);
//   kCreation   ../shared/traces/README.md's wording: pods drawn with replacement
//               until tune x capacity, replayed in creation order.
//
// Placements compared:
//   tessera  the scheduler core's Placer (src/sched/placement.h), the code every
//            admission goes through, on one flavor and an unlimited queue;
//   bestfit  the feasible node with the least free GPU after placement (then the
//            least free CPU), the tightest device for a fraction;
//   random   a feasible node chosen uniformly, then a random feasible device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "domain/node.h"
#include "sched/config.h"
#include "sim/trace.h"

namespace tessera {

enum class PlacementMethod { kTessera, kBestFit, kRandom };
enum class ArrivalOrder { kPublished, kCreation };

Result<ArrivalOrder> ParseArrivalOrder(std::string_view name);
std::string_view ArrivalOrderName(ArrivalOrder order);

Result<PlacementMethod> ParsePlacementMethod(std::string_view name);
std::string_view PlacementMethodName(PlacementMethod method);

struct FragmentationRun {
  PlacementMethod method = PlacementMethod::kTessera;
  uint64_t seed = 0;
  // [k] = GPUs allocated / cluster GPUs (%) once k % of the cluster's GPUs were requested.
  std::vector<double> allocation_pct;
  int64_t pods_arrived = 0;
  int64_t pods_placed = 0;
  int64_t placement_ns = 0;  // time spent deciding placements, summed
};

// `pods` in trace order (creation order); `tune` > 0. `candidates`: the core's
// SchedulerConfig::fragmentation_candidates (tessera only; 0 is plain best fit).
FragmentationRun RunFragmentationProtocol(const std::vector<Node>& nodes, const std::vector<TraceJob>& pods,
                                          PlacementMethod method, uint64_t seed, double tune = 1.3,
                                          int32_t candidates = SchedulerConfig{}.fragmentation_candidates,
                                          ArrivalOrder order = ArrivalOrder::kPublished);

}  // namespace tessera
