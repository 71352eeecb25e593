// The job controller: batch/v1 Jobs and Volcano Jobs become Workloads.
//
// A Job without its Workload gets one (queue from the kueue.x-k8s.io/queue-name
// label or the Volcano queue, else the namespace's only LocalQueue; gang size
// from minAvailable). A job-owned Workload whose Job is gone is deleted, with
// its Pods.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "server/batched_writer.h"
#include "server/object_cache.h"
#include "server/pod_index.h"
#include "server/controllers/controller.h"

namespace tessera {

// On a Workload: "Indexed" when its Job's pods each take a completion index.
inline constexpr const char* kCompletionModeAnnotation = "tessera.dev/completion-mode";

// The LocalQueue a workload that names none goes to in namespace `ns`: the one
// named "default" (Kueue's default local queue), else the namespace's only
// one, else "default" (it waits for it, saying so).
std::string DefaultLocalQueue(const ObjectCache& cache, const std::string& ns);

// The Workload the controller makes for a batch/v1 or Volcano Job (WorkloadForJob,
// then: the namespace's default LocalQueue when the job names none, its
// dependencies, Indexed completion, suspension).
Result<nlohmann::json> JobWorkload(const ObjectCache& cache, const StoredObject& job, const std::string& now_text);

// The job controller. Completed and failed Jobs are settled in the cache (the
// owner gives it the tests), so a pass walks only the Jobs in flight; the
// Workloads whose Job is gone are looked for only after a Job was removed.
class JobController final : public Controller {
 public:
  std::string_view name() const override { return "job-controller"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.pods, pass.now_text, pass.writer); }
  // Adds the controller's writes to `writer`.
  void Reconcile(const ObjectCache& cache, const PodIndex& pods, const std::string& now_text, BatchedWriter& writer);

 private:
  // spec.suspend of a batch/v1 Job onto its Workload (spec.active, Suspended).
  void SyncSuspend(const StoredObject& job, const StoredObject& workload, const PodIndex& pods,
                   const std::string& now_text, BatchedWriter& writer);
  // The sum of the Job kinds' ObjectCache::removals at the last orphan scan.
  std::optional<uint64_t> orphans_checked_at_;
};

}  // namespace tessera
