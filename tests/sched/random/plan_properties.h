// Properties of a cycle's plan that CheckPlanInvariants (src/sched/invariants.h)
// does not check, each stated from the design (DESIGN.md section 5) and the
// preemption rules of Cycle::Candidates (src/sched/cycle.cc):
//
//   never-preempts         a workload whose priority class has preemptionPolicy
//                          Never is never a preemptor nor waits for victims (5.4);
//   victim-policy          each victim is admitted in the snapshot, the preemptor
//                          pending, and the pair allowed by the preemptor's
//                          ClusterQueue policy for the stated reason:
//                            InClusterQueue: same queue; LowerPriority: victim
//                              lower; LowerOrNewerEqualPriority: lower, or equal
//                              and created later;
//                            ReclaimWithinCohort: another queue of the cohort;
//                              Any: any priority; LowerPriority: lower;
//                            BorrowWithinCohort: another queue of the cohort,
//                              lower priority, at most the threshold when set;
//                          and nothing is preempted with preemption disabled;
//   waiting-for-preemption every preemptor is pending with WaitingForPreemption,
//                          and every such workload counts victims > 0, at least
//                          as many as the decisions that name it;
//   admission-target       new admissions go to the workload's own, active
//                          ClusterQueue, whose namespaceSelector admits it, in a
//                          flavor that queue lists;
//   taints                 each new pod's node taints (NoSchedule, NoExecute) are
//                          tolerated by the pod's or the flavor's tolerations;
//   required-topology      SameNode: one node per pod set; SameRack: one rack per
//                          pod set (when nodes have racks); SameNvlink: each
//                          pod's devices in one NVLink domain;
//   gpu-memory             a pod asking for tessera.dev/gpu-memory gets one device
//                          with at least that much memory;
//   strict-fifo            in a StrictFIFO queue nothing is admitted behind (in
//                          queue order) the head that blocks it, and only
//                          workloads behind it are BlockedByStrictFIFO;
//   reservations           only with backfill on, at most max_reservations, each
//                          for a workload left pending, starting no earlier than
//                          now;
//   reservation-honoured   at a reservation's start, what still runs then by its
//                          maxRun (admitted work less victims and terminating
//                          work, plus this plan's admissions) leaves every device
//                          of the reservation room for it: backfill never
//                          delays a reservation (5.9);
//   reservations-disjoint  two reservations whose run times overlap never claim
//                          more than a device holds.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera::testing {

struct PlanProperty {
  std::string name;
  Status (*check)(const ClusterSnapshot& snapshot, const Plan& plan, const SchedulerConfig& config, Timestamp now);
};

// Every property above, in that order.
const std::vector<PlanProperty>& PlanProperties();

// The first difference between two plans, field by field; empty when equal.
std::string PlanDifference(const Plan& a, const Plan& b);

}  // namespace tessera::testing
