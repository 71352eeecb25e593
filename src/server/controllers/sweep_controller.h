// The sweep controller: a tessera.dev/v1 Sweep (api/kinds/tessera_sweep.cc)
// runs as batch/v1 Jobs, one per trial, through the same queueing as any Job.
//
// Each pass, for each unfinished Sweep (ObjectCache::ActiveOf; finished ones
// are settled, scheduler_loop.cc):
// 1. The history is the Sweep's own status.trialList (trials in creation
//    order: name, state, assignment, observations), so trials that ended are
//    never read again and a pass costs the trials that run. For each Running
//    trial the controller reads its Job (same name, same namespace): Complete
//    -> Succeeded, Failed -> Failed, gone -> Failed (reason JobDeleted); and
//    the observations the agent put on the newest pod of the Job's Workload
//    (annotation tessera.dev/metrics, sweep/observations.h JSON).
// 2. Early stopping (sweep/early_stopping.h): a trial the rule names is
//    recorded EarlyStopped (with the rule's reason) and its Job is deleted
//    (its Workload and pods follow: the job controller's orphan scan). Its
//    observations stay in the Sweep's status, so the rules and the best trial
//    still see it. Deleting, not suspending: a stopped trial never resumes.
// 3. EvaluateSweep (sweep/sweep_status.h): Succeeded or Failed ends the sweep;
//    the trials still running are recorded "Stopped" (reason SweepEnded) and
//    their Jobs deleted.
// 4. Otherwise TrialsToCreate new trials: SuggestTrials with a seed from the
//    Sweep's uid, RenderTrial, a Job named <sweep>-<n> (n from 1, the trial's
//    position), owned by the Sweep (controller: true), labelled
//    tessera.dev/sweep=<sweep> and tessera.dev/trial=<trial> (its pods too), with the
//    kueue.x-k8s.io/queue-name label of spec.queueName (none: the namespace's
//    default), the pods' priorityClassName `batch` when that PriorityClass
//    exists and the template names none, and the assignment in the annotation
//    tessera.dev/trial-assignment (Katib's [{name, value}] JSON). A rendered
//    Job that does not validate fails the sweep (reason TrialTemplateInvalid).
// 5. The status (conditions Created/Running/Succeeded/Failed, counts, Katib's
//    currentOptimalTrial, the trial list) and the Jobs' creations and
//    deletions are one write unit with the Sweep's revision: a conflict redoes
//    the pass's decisions from the stored status next pass, so a Job exists
//    only for a trial the status records.
// After a Sweep is deleted (ObjectCache::removals), Jobs labelled
// tessera.dev/sweep whose Sweep (by name) is gone are deleted.
//
// Thread-safety: the loop's thread only (controller.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kSweepKind = "tessera.dev/Sweep";
inline constexpr const char* kSweepLabel = "tessera.dev/sweep";
inline constexpr const char* kTrialLabel = "tessera.dev/trial";
inline constexpr const char* kTrialAssignmentAnnotation = "tessera.dev/trial-assignment";
// On a trial's Pod, written by the agent: the trial's observations.
inline constexpr const char* kMetricsAnnotation = "tessera.dev/metrics";

class SweepController final : public Controller {
 public:
  std::string_view name() const override { return "sweep-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  // Deletes the Jobs of deleted Sweeps.
  void DeleteOrphanTrials(PassContext& pass);
  std::optional<uint64_t> orphans_checked_at_;
};

}  // namespace tessera
