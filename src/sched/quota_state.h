// QuotaState: per ClusterQueue usage against nominal quota, and per cohort the
// pool of lendable quota, during one cycle.
//
// Cohort arithmetic, per (flavor, resource):
//   lendable(q)   = min(lendingLimit, nominal)      (nominal when no lendingLimit)
//   guaranteed(q) = nominal - lendable(q)           (never lent to anyone)
//   pool          = sum of lendable(q) over the cohort's queues
//   pool_used     = sum of max(0, usage(q) - guaranteed(q))
// A queue may grow to usage' when usage' <= nominal + borrowingLimit and the pool
// stays within bounds: pool_used - max(0, usage-g) + max(0, usage'-g) <= pool.
// Without a cohort a queue is capped at its nominal quota.
//
// Only resources the ClusterQueue covers are accounted; others are not limited
// by it (nvidia.com/gpu excepted: a GPU request to a queue without GPU quota is
// refused by the cycle with kResourceNotCovered).
//
// Not thread-safe. Mutate only through Add (via ClusterState's op log).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

class QuotaState {
 public:
  QuotaState(const ClusterSnapshot& snapshot, const SchedulerConfig& config);

  // True when `delta` fits queue `cq` in `flavor`. On false, and when `why` is
  // given, fills its quota fields with the first resource that does not fit.
  // With `within_nominal`, the queue may not borrow for it (work of a class
  // that is never preempted: nothing it holds can be reclaimed, so it holds
  // only what its queue owns); the pool must still have the quota back from
  // whoever borrowed it.
  bool Fits(int32_t cq, int32_t flavor, const Resources& delta, FlavorAttempt* why, bool within_nominal = false) const;

  // True when usage + delta stays within nominal quota for every resource.
  bool WithinNominal(int32_t cq, int32_t flavor, const Resources& delta) const;

  // Adds `delta` (negative to release) to the queue's usage in `flavor`.
  void Add(int32_t cq, int32_t flavor, const Resources& delta);

  // True when the queue uses more than nominal of anything in `flavor` (any
  // flavor when flavor < 0).
  bool IsBorrowing(int32_t cq, int32_t flavor = -1) const;

  // Weighted dominant share of what the queue borrows, in millionths of the
  // cohort's lendable pool, divided by the fair-sharing weight: 0 when within
  // nominal. Lower shares are served first.
  int64_t WeightedShare(int32_t cq) const;

  bool Covers(int32_t cq, ResourceKind kind) const { return queues_[cq].covered[static_cast<int>(kind)]; }
  bool HasFlavor(int32_t cq, int32_t flavor) const { return FindFlavor(cq, flavor) != nullptr; }
  int64_t Usage(int32_t cq, int32_t flavor, ResourceKind kind) const;
  int64_t Nominal(int32_t cq, int32_t flavor, ResourceKind kind) const;
  int32_t cohort(int32_t cq) const { return queues_[cq].cohort; }

 private:
  struct Cell {
    bool defined = false;
    int64_t nominal = 0;
    Limit borrowing_limit;
    int64_t guaranteed = 0;
    int64_t usage = 0;
  };
  struct QueueFlavor {
    int32_t flavor = -1;
    std::array<Cell, kResourceKinds> cells{};
  };
  struct Queue {
    int32_t cohort = -1;
    int64_t weight_milli = 1000;
    std::array<bool, kResourceKinds> covered{};
    std::vector<QueueFlavor> flavors;
  };
  struct PoolCell {
    int64_t pool = 0;
    int64_t used = 0;
  };

  int64_t ComputeWeightedShare(int32_t cq) const;
  const QueueFlavor* FindFlavor(int32_t cq, int32_t flavor) const;
  QueueFlavor* FindFlavor(int32_t cq, int32_t flavor);
  PoolCell& Pool(int32_t cohort, int32_t flavor, int kind) {
    return pools_[(static_cast<size_t>(cohort) * num_flavors_ + flavor) * kResourceKinds + kind];
  }
  const PoolCell& Pool(int32_t cohort, int32_t flavor, int kind) const {
    return pools_[(static_cast<size_t>(cohort) * num_flavors_ + flavor) * kResourceKinds + kind];
  }

  std::vector<Queue> queues_;
  // WeightedShare per queue, recomputed only after the queue's usage changed.
  mutable std::vector<int64_t> share_cache_;
  mutable std::vector<bool> share_valid_;
  std::vector<PoolCell> pools_;  // [cohort][flavor][kind]
  int32_t num_flavors_ = 0;
  bool borrowing_ = true;
};

}  // namespace tessera
