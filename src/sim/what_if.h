// What if: a recorded period of the platform's own history replayed by the
// scheduler core on the cluster and policy in force now, and on changed ones,
// for comparison (tessera.dev/v1 SimulationReview, the portal's What-if view;
// docs/simulator.md "What if: the platform's own history").
//
//   spec:
//     since: 7d | 2026-12-01T00:00:00Z    jobs submitted from then (an offset counts back from now)
//     until: 2026-12-02T00:00:00Z         ... until then (default: now)
//     checkpointInterval: 30m             a preempted job resumes from its last checkpoint
//     scenarios:                          1 to 4, each the current cluster and policy changed by:
//     - name: more-h100
//       cluster: 4x8xH100-80GB            the fleet replaced (NODESxGPUSxMODEL groups)
//       addNodes: 2x8xH100-80GB           nodes added
//       removeNodes: [gpu-3]              nodes taken out
//       policy: [{kind: ClusterQueue, ...}]  objects that replace the current ones of
//                                         that kind and name, or are added
//
// The answer (status) has the window, the jobs replayed and those left out,
// what really happened to those jobs ("observed"), and one result per run: the
// current cluster and policy ("current"), then each scenario, each with the
// simulator's metrics (sim_metrics.h), per team, and its series over time.
// Everything runs the production core through Simulate (simulator.h) under the
// `configured` policy: the manifests as written, every action on.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/time.h"

namespace tessera {

struct WhatIfInputs {
  std::vector<nlohmann::json> nodes;   // Node objects, as stored
  // ResourceFlavor, ClusterQueue, LocalQueue, PriorityClass, Namespace and
  // ResourceQuota objects, as stored (status and server metadata are dropped).
  std::vector<nlohmann::json> policy;
  std::vector<nlohmann::json> usage_records;  // tessera.dev/v1 UsageRecords, all namespaces
  std::vector<nlohmann::json> workloads;      // kueue.x-k8s.io/v1beta1 Workloads, all namespaces
  Timestamp now;
};

// At most this many jobs in a window: a longer period is refused with what to narrow.
inline constexpr size_t kWhatIfMaxJobs = 200000;
// Points per series in the answer (the largest value in each step of the period).
inline constexpr size_t kWhatIfSeriesPoints = 720;

// `spec` as the SimulationReview's schema checked it. Errors are Status::Invalid
// with the field under spec (spec.since, spec.scenarios[1].policy[0], ...).
Result<nlohmann::json> RunWhatIf(const nlohmann::json& spec, const WhatIfInputs& inputs);

}  // namespace tessera
