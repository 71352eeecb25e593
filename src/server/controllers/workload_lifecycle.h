// The workload lifecycle controller: what the Pods of an admitted Workload did
// becomes the Workload's state and its Job's status.
//
//   - every Pod Succeeded            -> Workload Finished=True (Succeeded); its
//                                       quota is released; Job Complete
//   - a Pod Failed (the agent gave   -> Workload Finished=True (Failed) with the
//     up restarting it)                 pod's reason; Job Failed
//   - its run-time limit passed      -> Workload Finished=True (Failed,
//     (tessera.dev/max-run-seconds)     DeadlineExceeded); its Pods stopped
// batch/v1 Jobs' Workloads are the job lifecycle controller's instead
// (job_lifecycle_controller.h: completions, retries, the same deadline).
// Finished Workloads keep their Pods (for logs and exit codes) but hold no quota.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/event_recorder.h"
#include "server/controllers/job_controller.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

// Adds the controller's writes to `pass.writer`. It acts only on the
// unfinished Workloads with an admission (pass.workloads.admitted()).
void ReconcileWorkloadLifecycle(PassContext& pass);

// Evicts an admitted Workload: Evicted=True with `reason`, and its Pods marked
// for termination (the agents send SIGTERM, wait the grace period, SIGKILL,
// then delete them); once they are gone the Workload returns to its queue.
std::vector<WriteOp> EvictionOps(const StoredObject& workload, const PodIndex& pods, const std::string& reason,
                                 const std::string& message, const std::string& now_text);

// The deletes of `workload` and its Pods, as one unit (its owner is gone).
std::vector<WriteOp> DeleteWorkloadOps(const StoredObject& workload, const PodIndex& pods);

// What a deleted owner of kind `owner_kind` leaves, deleted: the Workloads
// (with their Pods) and the objects of the kinds `also` whose label
// `owner_label` names an owner no longer in their namespace. Scans only after
// a removal of that kind (`checked_at`: the cache's removals at the last scan).
// `what` names the owner in the writes' descriptions ("notebook").
void DeleteOrphansOf(PassContext& pass, const std::string& owner_kind, const char* owner_label,
                     const std::vector<std::string>& also, std::string_view what, std::optional<uint64_t>& checked_at);

// "pod NAME failed: exit code 3" (or the pod's own message, or the signal).
std::string PodFailureMessage(const StoredObject& pod);

// Whether the workload is a batch/v1 Job's (its lifecycle is the job lifecycle
// controller's: completions, retries, deadline).
bool IsBatchJobWorkload(const nlohmann::json& workload);
// Whether the workload's (first) owner is of that apiVersion and kind.
bool WorkloadOwnedBy(const nlohmann::json& workload, std::string_view api_version, std::string_view kind);

class WorkloadLifecycleController final : public Controller {
 public:
  std::string_view name() const override { return "workload-lifecycle-controller"; }
  void Reconcile(PassContext& pass) override { ReconcileWorkloadLifecycle(pass); }
};

}  // namespace tessera
