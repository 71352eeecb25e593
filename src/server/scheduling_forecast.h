// Forecasts: what the scheduler would do with a workload if it were submitted
// now, for a tessera.dev/v1 SchedulingReview (docs/scheduling.md "Forecasts"):
// the portal's "would run now on h100-ondemand" or "waits: position 3,
// estimated start 14:20" before anyone presses Submit.
//
// The object asked about (a batch/v1 Job, a Volcano Job, a Notebook, a
// TrainingJob, an InferenceService, or a Workload itself) becomes the Workload
// its controller would make (WorkloadForObject; an InferenceService: one
// replica). The scheduler loop answers at the end of a pass: that Workload is
// added to the pass's snapshot with the pass's own decisions carried out
// (ApplyPlan), the core runs once more, and its decision for the newcomer is
// read back; nothing is written. An approval policy it would cross is said
// first, with what follows once approved.
//
// Not thread-safe: runs on the scheduler loop's thread, which owns the cache.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/time.h"
#include "domain/priority_class.h"
#include "sched/config.h"
#include "sched/snapshot.h"
#include "server/controllers/approval_controller.h"
#include "server/object_cache.h"

namespace tessera {

using PriorityClasses = std::map<std::string, PriorityClass, std::less<>>;

// The kueue Workload that `object`'s controller would make for it, or
// Invalid (field "kind") naming the kinds that can be forecast. `object` has its
// metadata.namespace and metadata.name set.
Result<nlohmann::json> WorkloadForObject(const ObjectCache& cache, const nlohmann::json& object,
                                         const std::string& now_text);

struct ForecastPass {
  const ObjectCache& cache;
  const ApprovalController& approvals;
  ClusterSnapshot& snapshot;  // the pass's, its plan applied; returned as it was given
  const PriorityClasses& classes;
  const SchedulerConfig& config;
  Timestamp now;
};

// The SchedulingReview status for `object` (see docs/scheduling.md):
//   wouldAdmit, clusterQueue, flavors, nodes (when admitted), reason (Admitted,
//   WaitingForApproval, Inactive, or the core's pending reason), message (the
//   core's words, as the Workload's conditions would say them), queuePosition,
//   estimatedStart (only when the core computed one), gpus, costPerHour.
Result<nlohmann::json> Forecast(const ForecastPass& pass, const nlohmann::json& object);

}  // namespace tessera
