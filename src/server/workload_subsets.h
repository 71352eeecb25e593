// WorkloadSubsets: the unfinished Workloads that some controllers act on, kept
// up to date as the cache's Workloads change (an observer of the cache), so
// that a pass walks those instead of every waiting workload: with 20,000
// waiting, walking them all in each controller cost a pass 100 ms.
//
//   admitted:  status.admission set (quota reserved; pods placed or leaving)
//   suspended: the Suspended condition True (resumed ones are told so)
//
// Each is in the cache's key order; the pointers are into the cache. Finished
// Workloads (settled in the cache) are in neither. They change when the cache
// does (Sync, Put, Remove, so a BatchedWriter's Flush): a walk must not span one.
#pragma once

#include <string>
#include <utility>

#include "server/object_cache.h"

namespace tessera {

class WorkloadSubsets {
 public:
  // Observes `cache` for as long as the cache lives: the cache must not change
  // once this is gone (an owner declares the cache first, so it goes last).
  explicit WorkloadSubsets(ObjectCache& cache);
  WorkloadSubsets(const WorkloadSubsets&) = delete;  // the cache calls back into this object
  WorkloadSubsets& operator=(const WorkloadSubsets&) = delete;

  const ObjectCache::Active& admitted() const { return admitted_; }
  const ObjectCache::Active& suspended() const { return suspended_; }

 private:
  void Changed(const std::pair<std::string, std::string>& key, const StoredObject* now);

  ObjectCache::Active admitted_;
  ObjectCache::Active suspended_;
};

}  // namespace tessera
