// ClusterState: the mutable view of a snapshot during one cycle: capacity,
// queue quotas and namespace usage, changed only through an operation log so
// that any tentative change (a gang, a preemption, a reservation search) can be
// rolled back exactly to a checkpoint.
//
// Not thread-safe; one per cycle.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/capacity_state.h"
#include "sched/quota_state.h"

namespace tessera {

class ClusterState {
 public:
  ClusterState(const ClusterSnapshot& snapshot, const SchedulerConfig& config);

  const ClusterSnapshot& snapshot() const { return snapshot_; }
  const CapacityState& capacity() const { return capacity_; }
  const QuotaState& quota() const { return quota_; }

  // A position in the log; Rollback(cp) undoes everything done after it.
  size_t Checkpoint() const { return log_.size(); }
  void Rollback(size_t checkpoint);
  // Forgets the log: what is applied stays. REQUIRES: no checkpoint still to roll back to.
  void Commit() { log_.clear(); }

  void TakeDevice(int32_t device, int64_t milli);
  void TakeNode(int32_t node, int64_t cpu_milli, int64_t memory_bytes);
  void AddQuota(int32_t cq, int32_t flavor, const Resources& delta);
  void AddNamespace(int32_t ns, const Resources& requests, const Resources& limits);

  // Gives back (sign -1) or takes again (sign +1) everything an admission holds.
  void Apply(const Workload& w, const Admission& admission, int sign);

  // True when `requests`/`limits` more fit every ResourceQuota of the namespace.
  // On false fills the namespace fields of `why`.
  bool NamespaceFits(int32_t ns, const Resources& requests, const Resources& limits, PendingReason* why) const;

  // A workload's charge against one of its namespace's budgets (the same
  // order as Namespace::budgets): GPU time and money within that budget's period.
  struct BudgetCharge {
    int64_t gpu_milli_seconds = 0;
    int64_t cost_micro = 0;
  };
  // True when the charges fit every budget of the namespace (what its snapshot
  // says was used, plus this cycle's admissions). A charge of zero always fits,
  // even over a budget already spent. On false fills the budget fields of `why`.
  bool BudgetFits(int32_t ns, const std::vector<BudgetCharge>& charges, PendingReason* why) const;
  void AddBudget(int32_t ns, const std::vector<BudgetCharge>& charges);

 private:
  enum class OpKind : uint8_t { kDevice, kNode, kQuota, kNamespace, kBudget };
  struct Op {
    OpKind kind;
    int32_t a = 0;
    int32_t b = 0;
    int64_t x = 0;
    int64_t y = 0;
    Resources r1;
    Resources r2;
  };
  void Undo(const Op& op);

  struct NamespaceUsage {
    Resources requests;
    Resources limits;
    std::vector<BudgetCharge> budgets;  // added this cycle, per Namespace::budgets
  };

  const ClusterSnapshot& snapshot_;
  CapacityState capacity_;
  QuotaState quota_;
  std::vector<NamespaceUsage> namespaces_;
  std::vector<Op> log_;
};

}  // namespace tessera
