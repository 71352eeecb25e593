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

// That index, kept up to date as the cache's Pods change (an observer of the
// cache), so that a pass pays for the Pods that changed, not for every Pod ever
// run. Each workload's Pods are in name order; the pointers are into the cache.
class PodsByWorkload {
 public:
  // Observes `cache` for as long as the cache lives: the cache must not change
  // once this is gone (an owner declares the cache first, so it goes last).
  explicit PodsByWorkload(ObjectCache& cache);
  PodsByWorkload(const PodsByWorkload&) = delete;  // the cache calls back into this object
  PodsByWorkload& operator=(const PodsByWorkload&) = delete;

  const PodIndex& index() const { return index_; }

 private:
  using Key = std::pair<std::string, std::string>;
  void Changed(const Key& pod, const StoredObject* now);

  PodIndex index_;
  std::map<Key, Key> workload_of_;  // pod -> the index entry it is in
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
