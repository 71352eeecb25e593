// The platform's own history as a trace, so that the simulator can replay a
// recorded period (SimulationReview, the portal's What-if view; docs/simulator.md
// "What if: the platform's own history").
//
// One TraceJob per Workload submitted in [since, until) that held an admission,
// from its UsageRecords (server/controllers/usage_recorder.h) and, while it is
// still stored, the Workload itself:
//   - submit: the records' `submitted` (the Workload's creationTimestamp,
//     copied at admission), else the stored Workload's, else the earliest
//     admission's start;
//   - run time: the sum of its admissions' lengths (end - start; an admission
//     not yet ended counts up to `now`, a lower bound), so a preempted job's
//     lost work counts as run time, as it held the devices;
//   - GPUs: the admission's gpuMilli over its pods (the Workload's pod sets,
//     else the record's `pods`, else one); a shape the simulator cannot take
//     (several pods with a fraction each) becomes whole GPUs, rounded up;
//   - CPU and memory per pod: the Workload's requests, as Kubernetes charges a
//     pod, when it is still stored; else none;
//   - team: the namespace; queue: spec.queueName (else the record's `queue`);
//     priority class and user likewise.
// Workloads submitted in the window that never held an admission are left out
// and counted: their run time is unknown.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/time.h"
#include "sim/trace.h"

namespace tessera {

struct HistoryJob {
  Timestamp submitted;
  Timestamp first_start;
  Timestamp last_end;  // Never() while it still runs
  int64_t gpu_milli = 0;  // the whole job
};

struct HistoryTrace {
  // submit_s counts from `origin`, the first submission (so the earliest is 0),
  // sorted by submission; `name` is "<namespace>/<workload>".
  std::vector<TraceJob> jobs;
  std::vector<HistoryJob> observed;  // jobs[i] as it really ran
  Timestamp origin;                  // `since` when there are no jobs
  int64_t still_running = 0;         // jobs whose run time is the part so far
  int64_t never_ran = 0;             // submitted in the window, never admitted: left out
  int64_t reshaped = 0;              // fractions over several pods rounded up to whole GPUs
};

// `usage_records` and `workloads` as stored (all namespaces); `until` <= `now`.
HistoryTrace TraceFromHistory(std::span<const nlohmann::json> usage_records, std::span<const nlohmann::json> workloads,
                              Timestamp since, Timestamp until, Timestamp now);

}  // namespace tessera
