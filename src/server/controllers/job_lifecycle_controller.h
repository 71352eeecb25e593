// The job lifecycle controller: what a batch/v1 Job promises once its Workload
// is admitted, as the Kubernetes Job controller keeps it (with Kueue holding the
// quota for the whole run):
//   - completions: the Job succeeds when `completions` pods succeeded (Indexed:
//     one per index 0..completions-1), with at most `parallelism` running: each
//     admitted pod is a slot, and a slot whose pod succeeded runs the next index
//     (or the next completion) while work remains. Without completions, the
//     Job succeeds when a pod succeeded and none is running (a work queue).
//   - backoffLimit (default 6): a failed pod is replaced in its slot after
//     Kubernetes' back-off, 10 s doubled per failure and capped at 6 minutes,
//     from the pod's end; one failure more than the limit fails the Job
//     (BackoffLimitExceeded).
//   - podFailurePolicy: its first matching rule decides a failed pod's fate:
//     FailJob fails the Job at once (PodFailurePolicy), Ignore replaces the pod
//     without counting it against backoffLimit, Count counts it (the default).
//   - activeDeadlineSeconds (or the annotation tessera.dev/max-run-seconds):
//     the Job fails (DeadlineExceeded) once it has run that long since its
//     admission, and its pods are stopped.
//   - Indexed Jobs: each pod carries its index as the annotation
//     batch.kubernetes.io/job-completion-index and the environment variable
//     JOB_COMPLETION_INDEX (Slurm's SLURM_ARRAY_TASK_ID), and status shows
//     completedIndexes ("0-3,7").
//   - status: startTime, active, succeeded, failed, completedIndexes, and the
//     Complete or Failed condition, with Kubernetes' reasons and messages.
// Pods that ended stay (their logs with them) until the Job is deleted; a
// slot's pods are named <workload>-<podset>-<slot> and then -<slot>-<n> for the
// n-th replacement, so a pass that repeats a creation finds it done.
//
// Pods are written by this controller only while the Workload is admitted; a
// finished Workload's are the workload lifecycle's and the Job controller's.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/time.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kSlotAnnotation = "tessera.dev/rank";
inline constexpr const char* kAttemptAnnotation = "tessera.dev/attempt";
inline constexpr int64_t kDefaultBackoffLimit = 6;  // batch/v1's default

// Kubernetes' pod failure back-off: 10 s, doubled for each failure after the
// first, at most 6 minutes. `failures` >= 1.
Duration JobBackoff(int64_t failures);

// Gives `pod` its completion index: the annotation and JOB_COMPLETION_INDEX in
// every container's environment (replacing one already there).
void SetCompletionIndex(nlohmann::json& pod, int64_t index);

// When the workload's run-time limit ends: its admission (the Admitted
// condition's last transition to True) plus tessera.dev/max-run-seconds (which
// the Job controller derives from activeDeadlineSeconds); none without either.
std::optional<Timestamp> WorkloadDeadline(const nlohmann::json& workload);

class JobLifecycleController final : public Controller {
 public:
  std::string_view name() const override { return "job-lifecycle-controller"; }
  void Reconcile(PassContext& pass) override;
};

}  // namespace tessera
