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

#include "server/batched_writer.h"
#include "server/object_cache.h"

namespace tessera {

inline constexpr const char* kJobKind = "batch/Job";
inline constexpr const char* kVolcanoJobKind = "batch.volcano.sh/Job";
inline constexpr const char* kWorkloadKind = "kueue.x-k8s.io/Workload";
inline constexpr const char* kPodKind = "/Pod";

// (namespace, workload name) -> the Pods labelled tessera.dev/workload=name.
using PodIndex = std::map<std::pair<std::string, std::string>, std::vector<const StoredObject*>>;
// Pointers into `cache`: valid until the cache next changes.
PodIndex IndexPodsByWorkload(const ObjectCache& cache);

// IndexPodsByWorkload, built again only when the cache's Pods have changed
// since the last call (a pass asks after each of its stages, and most stages
// and many passes change no Pod).
class PodsByWorkload {
 public:
  // Valid until the cache's Pods next change.
  const PodIndex& Of(const ObjectCache& cache);

 private:
  std::optional<uint64_t> built_at_;  // ObjectCache::changes(kPodKind) when built
  PodIndex index_;
};

// The job controller. Completed and failed Jobs are settled in the cache (the
// owner gives it the tests), so a pass walks only the Jobs in flight; the
// Workloads whose Job is gone are looked for only after a Job was removed.
class JobController {
 public:
  // Adds the controller's writes to `writer`.
  void Reconcile(const ObjectCache& cache, const PodIndex& pods, const std::string& now_text, BatchedWriter& writer);

 private:
  // The sum of the Job kinds' ObjectCache::removals at the last orphan scan.
  std::optional<uint64_t> orphans_checked_at_;
};

}  // namespace tessera
