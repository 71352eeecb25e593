// Invariants every plan must keep, checked independently of the code that made
// the plan (tests run them over thousands of generated fleets; the cycle runs
// them when SchedulerConfig::check_invariants is set):
//   - every workload that was not admitted is admitted or pending, exactly once;
//   - every admitted pod set has between minCount and count pods, none partial;
//   - no device holds more than 1000m, no node more CPU or memory than it has;
//   - no queue exceeds nominal + borrowingLimit, no cohort lends more than its
//     pool, no namespace exceeds a ResourceQuota ceiling (where this plan adds);
//   - no non-preemptible workload is a victim; victims are admitted, once each;
//   - every pending workload has an explanation.
#pragma once

#include "common/status.h"
#include "common/time.h"
#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

Status CheckPlanInvariants(const ClusterSnapshot& snapshot, const Plan& plan,
                           const SchedulerConfig& config = SchedulerConfig{});

}  // namespace tessera
