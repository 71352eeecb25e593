// ApplyPlan: carries a plan out on a snapshot, as a driver without side effects
// would (the simulator, scenario tests, demos): admitted workloads start at `now`,
// preemption victims go back to their queue (admission cleared, as after a
// termination), pending ones stay as they are. The server does the same through
// its store and agents instead.
#pragma once

#include "common/time.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

void ApplyPlan(ClusterSnapshot& snapshot, const Plan& plan, Timestamp now);

}  // namespace tessera
