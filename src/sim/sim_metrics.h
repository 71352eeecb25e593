// SimMetrics: what a simulation's outcome means for a platform team, per policy
// and per team. Definitions (docs/simulator.md):
//   - JCT = end - submit; queueing delay = first start - submit; over finished jobs;
//   - allocation = GPU allocated / cluster GPUs, time-weighted over [0, makespan];
//   - fragmentation = free GPU on partly used devices / free GPU, time-weighted;
//   - lost GPU-hours = work thrown away by preemptions (since the last checkpoint);
//   - fairness (SimResult): while some team waits, each team's fair share of the
//     allocated GPUs is its weighted max-min share (weights = nominal GPU quota,
//     capped by its demand); Jain's index of allocated / fair share, time-weighted;
//     per team, its share of all GPU time allocated against its share of the fair
//     shares.
// Statistics are doubles (means, percentages); capacity stays integral upstream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace tessera {

struct Distribution {
  int64_t count = 0;
  double mean = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;  // nearest-rank percentiles
};

// Of `values` (taken by value: sorted here).
Distribution Summarize(std::vector<int64_t> values);

struct TeamMetrics {
  std::string team;
  int64_t jobs = 0;
  int64_t finished = 0;
  Distribution jct_s;
  Distribution queue_s;
  int32_t preemptions = 0;
  double gpu_hours_demand = 0;    // what its jobs asked for: GPUs x run time
  double gpu_hours_received = 0;  // device time held, including lost work
  double gpu_hours_lost = 0;
  double nominal_gpus = 0;
  double share_received = 0;      // of all the GPU time allocated
  double share_deserved = 0;      // of all the fair shares (weighted max-min, demand-capped)
};

struct PolicyMetrics {
  std::string policy;
  int64_t jobs = 0, finished = 0, unfinished = 0, dropped = 0, left_out = 0;
  Distribution jct_s;
  Distribution queue_s;
  int64_t makespan_s = 0;
  double allocation_pct = 0;
  double fragmentation_pct = 0;
  int64_t preemptions = 0;
  double gpu_hours_lost = 0;
  double jain_index = 1;
  int64_t cycles = 0;
  std::vector<TeamMetrics> teams;
};

PolicyMetrics ComputeMetrics(const SimResult& result);

// Weighted max-min fair division of `total` among claimants with these weights
// and demands (water-filling); exposed for tests.
std::vector<double> WeightedMaxMinShares(double total, const std::vector<double>& weights,
                                         const std::vector<double>& demands);

// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); 1 for an empty input.
double JainIndex(const std::vector<double>& x);

}  // namespace tessera
