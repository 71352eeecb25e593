#include "sched/apply_plan.h"

namespace tessera {

void ApplyPlan(ClusterSnapshot& snapshot, const Plan& plan, Timestamp now) {
  for (const AdmitDecision& a : plan.admissions) {
    Workload& w = snapshot.workloads[a.workload.value()];
    w.admission = a.admission;
    w.start_time = now;
    w.last_checkpoint.reset();
    w.evicting = false;
  }
  for (const PreemptDecision& p : plan.preemptions) {
    Workload& w = snapshot.workloads[p.victim.value()];
    w.admission.reset();
    w.evicting = false;
  }
}

}  // namespace tessera
