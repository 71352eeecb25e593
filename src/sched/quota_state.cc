#include "sched/quota_state.h"

#include <algorithm>

#include "sched/workload_usage.h"

namespace tessera {

QuotaState::QuotaState(const ClusterSnapshot& snapshot, const SchedulerConfig& config)
    : num_flavors_(static_cast<int32_t>(snapshot.flavors.size())), borrowing_(config.enable_borrowing) {
  queues_.resize(snapshot.cluster_queues.size());
  share_cache_.assign(queues_.size(), 0);
  share_valid_.assign(queues_.size(), false);
  pools_.resize(snapshot.cohorts.size() * snapshot.flavors.size() * kResourceKinds);
  for (size_t q = 0; q < snapshot.cluster_queues.size(); ++q) {
    const ClusterQueue& cq = snapshot.cluster_queues[q];
    Queue& s = queues_[q];
    s.cohort = borrowing_ ? cq.cohort.value() : -1;
    s.weight_milli = std::max<int64_t>(cq.fair_weight_milli, 1);
    for (const ResourceGroup& g : cq.resource_groups) {
      for (ResourceKind k : g.covered_resources) s.covered[static_cast<int>(k)] = true;
      for (const FlavorQuotas& fq : g.flavors) {
        if (!fq.flavor.valid()) continue;
        QueueFlavor* qf = FindFlavor(static_cast<int32_t>(q), fq.flavor.value());
        if (qf == nullptr) {
          s.flavors.push_back(QueueFlavor{.flavor = fq.flavor.value()});
          qf = &s.flavors.back();
        }
        for (ResourceKind k : g.covered_resources) {
          Cell& c = qf->cells[static_cast<int>(k)];
          c.defined = true;
          if (const ResourceQuotaSpec* spec = fq.Find(k)) {
            c.nominal = spec->nominal;
            c.borrowing_limit = spec->borrowing_limit;
            int64_t lendable = spec->lending_limit.unlimited() ? spec->nominal
                                                               : std::min(spec->nominal, spec->lending_limit.value());
            c.guaranteed = spec->nominal - lendable;
          }
          if (s.cohort >= 0) Pool(s.cohort, fq.flavor.value(), static_cast<int>(k)).pool += c.nominal - c.guaranteed;
        }
      }
    }
  }
  for (const Workload& w : snapshot.workloads) {
    if (!w.admission || !w.admission->cluster_queue.valid()) continue;
    ForEachFlavorUsage(snapshot, w, [&](int32_t flavor, const Resources& r) {
      Add(w.admission->cluster_queue.value(), flavor, r);
    });
  }
}

const QuotaState::QueueFlavor* QuotaState::FindFlavor(int32_t cq, int32_t flavor) const {
  for (const QueueFlavor& qf : queues_[cq].flavors) {
    if (qf.flavor == flavor) return &qf;
  }
  return nullptr;
}

QuotaState::QueueFlavor* QuotaState::FindFlavor(int32_t cq, int32_t flavor) {
  return const_cast<QueueFlavor*>(static_cast<const QuotaState*>(this)->FindFlavor(cq, flavor));
}

bool QuotaState::Fits(int32_t cq, int32_t flavor, const Resources& delta, FlavorAttempt* why, bool within_nominal) const {
  const Queue& q = queues_[cq];
  const QueueFlavor* qf = FindFlavor(cq, flavor);
  for (ResourceKind kind : kAllResourceKinds) {
    const int k = static_cast<int>(kind);
    const int64_t add = delta.get(kind);
    if (add <= 0 || !q.covered[k]) continue;
    const Cell* c = (qf != nullptr && qf->cells[k].defined) ? &qf->cells[k] : nullptr;
    const int64_t usage = c ? c->usage : 0;
    const int64_t nominal = c ? c->nominal : 0;
    const int64_t after = usage + add;
    bool ok;
    int64_t can_lend = 0;
    if (q.cohort < 0 || c == nullptr) {
      ok = after <= nominal;
    } else {
      const PoolCell& p = Pool(q.cohort, flavor, k);
      const int64_t g = c->guaranteed;
      const int64_t pool_after = p.used - std::max<int64_t>(0, usage - g) + std::max<int64_t>(0, after - g);
      ok = within_nominal ? after <= nominal
                          : c->borrowing_limit.unlimited() || after <= nominal + c->borrowing_limit.value();
      ok = ok && pool_after <= p.pool;
      // What the others could lend: the pool's free part minus this queue's own unused lendable quota.
      const int64_t own_unused_lendable = std::max<int64_t>(0, (nominal - g) - std::max<int64_t>(0, usage - g));
      can_lend = std::max<int64_t>(0, (p.pool - p.used) - own_unused_lendable);
    }
    if (!ok) {
      if (why != nullptr) {
        why->code = PendingCode::kClusterQueueQuota;
        why->resource = kind;
        why->used = usage;
        why->nominal = nominal;
        why->requested = add;
        why->cohort_can_lend = can_lend;
        why->borrowing_limit = c ? c->borrowing_limit : Limit::Of(0);
        why->in_cohort = q.cohort >= 0;
        why->never_borrows = within_nominal;
      }
      return false;
    }
  }
  return true;
}

bool QuotaState::WithinNominal(int32_t cq, int32_t flavor, const Resources& delta) const {
  const Queue& q = queues_[cq];
  const QueueFlavor* qf = FindFlavor(cq, flavor);
  for (ResourceKind kind : kAllResourceKinds) {
    const int k = static_cast<int>(kind);
    if (delta.get(kind) <= 0 || !q.covered[k]) continue;
    if (qf == nullptr || !qf->cells[k].defined) return false;
    if (qf->cells[k].usage + delta.get(kind) > qf->cells[k].nominal) return false;
  }
  return true;
}

void QuotaState::Add(int32_t cq, int32_t flavor, const Resources& delta) {
  Queue& q = queues_[cq];
  share_valid_[cq] = false;
  QueueFlavor* qf = FindFlavor(cq, flavor);
  if (qf == nullptr) return;  // usage in a flavor the queue no longer lists: not accounted
  for (ResourceKind kind : kAllResourceKinds) {
    const int k = static_cast<int>(kind);
    Cell& c = qf->cells[k];
    if (!c.defined || delta.get(kind) == 0) continue;
    const int64_t before = c.usage;
    c.usage += delta.get(kind);
    if (q.cohort >= 0) {
      Pool(q.cohort, flavor, k).used +=
          std::max<int64_t>(0, c.usage - c.guaranteed) - std::max<int64_t>(0, before - c.guaranteed);
    }
  }
}

bool QuotaState::IsBorrowing(int32_t cq, int32_t flavor) const {
  for (const QueueFlavor& qf : queues_[cq].flavors) {
    if (flavor >= 0 && qf.flavor != flavor) continue;
    for (const Cell& c : qf.cells) {
      if (c.defined && c.usage > c.nominal) return true;
    }
  }
  return false;
}

int64_t QuotaState::WeightedShare(int32_t cq) const {
  if (share_valid_[cq]) return share_cache_[cq];
  share_valid_[cq] = true;
  share_cache_[cq] = ComputeWeightedShare(cq);
  return share_cache_[cq];
}

int64_t QuotaState::ComputeWeightedShare(int32_t cq) const {
  const Queue& q = queues_[cq];
  if (q.cohort < 0) return 0;
  int64_t share = 0;  // millionths of the pool
  for (const QueueFlavor& qf : q.flavors) {
    for (int k = 0; k < kResourceKinds; ++k) {
      const Cell& c = qf.cells[k];
      if (!c.defined || c.usage <= c.nominal) continue;
      const int64_t pool = Pool(q.cohort, qf.flavor, k).pool;
      if (pool <= 0) continue;
      share = std::max<int64_t>(share, static_cast<int64_t>(static_cast<__int128>(c.usage - c.nominal) * 1'000'000 / pool));
    }
  }
  return share * 1000 / q.weight_milli;
}

int64_t QuotaState::Usage(int32_t cq, int32_t flavor, ResourceKind kind) const {
  const QueueFlavor* qf = FindFlavor(cq, flavor);
  return qf ? qf->cells[static_cast<int>(kind)].usage : 0;
}

int64_t QuotaState::Nominal(int32_t cq, int32_t flavor, ResourceKind kind) const {
  const QueueFlavor* qf = FindFlavor(cq, flavor);
  return qf ? qf->cells[static_cast<int>(kind)].nominal : 0;
}

}  // namespace tessera
