// PodIndex: each Workload's Pods, kept current as the loop's cache changes.
//
// The scheduler loop creates a workload's Pods labelled
// tessera.dev/workload=<workload name>; the controllers find a workload's Pods
// through this index instead of walking every Pod ever run.
//
// Thread-safety: owned by the thread that runs the loop's passes, as the cache.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "server/object_cache.h"

namespace tessera {

// The store keys of the kinds the loop itself writes and reads most.
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

}  // namespace tessera
