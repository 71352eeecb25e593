// Plain-words explanations of why a workload is pending, with the numbers
// (DESIGN.md section 5.7). Rendering is separate from the cycle so that the core
// stores compact data and only the workloads someone looks at pay for text.
#pragma once

#include <string>

#include "common/time.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

// One line, e.g. "ClusterQueue team-nlp: nvidia.com/gpu in flavor a100-ondemand
// 8/8 nominal used, the workload asks for 4, cohort can lend 0; flavor a100-spot: largest
// free block on one node is 2 GPUs, pod needs 4".
// It ends with DescribePendingProgress.
std::string DescribePending(const ClusterSnapshot& snapshot, WorkloadId workload, const PendingReason& reason,
                            Timestamp now);

// The part of DescribePending that moves while nothing else changes: "; estimated
// start in 40s (capacity reserved); position 3 in ClusterQueue team-a", or "".
// An estimate is given only when the cycle computed one from known end times;
// when the room is held by work without a run-time limit it says so instead:
// "; no start estimate: the running work it waits for has no time limit
// (activeDeadlineSeconds)".
// Writers refresh it at a slower pace than the cause, which it follows.
std::string DescribePendingProgress(const ClusterSnapshot& snapshot, WorkloadId workload, const PendingReason& reason,
                                    Timestamp now);

// A short CamelCase reason for conditions ("QuotaExceeded", "InsufficientCapacity").
std::string_view PendingReasonName(PendingCode code);

// "2h5m", "40s": for estimated starts.
std::string FormatDuration(Duration d);

}  // namespace tessera
