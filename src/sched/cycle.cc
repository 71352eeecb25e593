#include "sched/cycle.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <tuple>

#include "common/check.h"
#include "sched/cluster_state.h"
#include "sched/invariants.h"
#include "sched/placement.h"
#include "sched/workload_usage.h"

namespace tessera {
namespace {

// A reservation as applied to the state: what was asked for, and how much of it
// was free to hold (the rest is still busy with work that ends before `start`).
struct HeldReservation {
  Reservation reservation;
  Admission admission;  // the placement at `start`, per pod set
  int32_t cq = -1;
  std::vector<std::pair<int32_t, int64_t>> held_devices;                // (device, milli)
  std::vector<std::tuple<int32_t, int64_t, int64_t>> held_nodes;        // (node, cpu, memory)
  bool lifted = false;
};

struct Candidate {
  int32_t workload;
  bool evicting;
  int32_t priority;
  bool other_queue_borrower;
  int64_t lost;  // GPU-milli x ms of work since the last checkpoint
  Timestamp start;
  Timestamp created;
  PreemptionReason reason;
};

class Cycle {
 public:
  Cycle(const ClusterSnapshot& snapshot, const SchedulerConfig& config, Timestamp now)
      : snap_(snapshot), config_(config), now_(now), state_(snapshot, config), placer_(state_, config) {}

  Plan Run();

 private:
  // What ordering and the first checks need of a pending workload, packed so that
  // serving 100,000 queue heads does not chase pointers into every Workload.
  struct Entry {
    int32_t priority;
    int64_t created_ms;
    int32_t workload;
    int32_t min_count;      // of the first pod set
    bool wants_gpu;
    bool single_pod_set;
    bool never_preempts;    // preemptionPolicy Never
    int64_t total_gpu;      // milli-GPU of the whole workload at full count
    Resources requests;     // per pod, of the first pod set
  };
  struct QueueWork {
    std::vector<Entry> pending;     // ordered
    size_t next = 0;
    std::vector<int32_t> admitted;  // in the snapshot
    WorkloadId strict_blocker;      // StrictFIFO: the head that could not be admitted
    // The last failed preemption search: (priority, GPU milli requested). Work of
    // no higher priority asking no less cannot succeed either this cycle.
    std::optional<std::pair<int32_t, int64_t>> preemption_failed;
    bool reserved = false;          // one reservation per queue per cycle
    int32_t position = 0;
  };

  void ClassifyWorkloads();
  bool MustBorrow(const Entry& e, int32_t cq) const;
  void Process(const Entry& e, int32_t cq);
  // Fast path for the common case of a full queue: true when no flavor's quota
  // can take even the gang minimum, with the reason filled in as TryAdmit would,
  // without touching the Workload itself (a cache miss per workload at scale).
  bool QuotaExhausted(const Entry& e, int32_t cq, PendingReason* why) const;
  void Pending(int32_t w, int32_t cq, PendingReason&& reason);
  // The resource group whose flavors a pod set is tried in: the one covering GPUs
  // for GPU work, the one covering CPU otherwise.
  const ResourceGroup* PrimaryGroup(const ClusterQueue& cq, bool wants_gpu) const;
  const ResourceGroup* PrimaryGroup(const ClusterQueue& cq, const PodSet& ps) const {
    return PrimaryGroup(cq, ps.requests.gpu() > 0 || ps.requests.get(ResourceKind::kGpuMemory) > 0);
  }
  Resources QuotaEstimate(const PodSet& ps, int32_t flavor, int32_t pods) const {
    return QuotaEstimate(ps.requests, flavor, pods);
  }
  Resources QuotaEstimate(const Resources& per_pod, int32_t flavor, int32_t pods) const;

  // Admission attempts. On success the admission's usage stays applied.
  std::optional<Admission> TryAdmit(int32_t w, int32_t cq, int32_t only_flavor, PendingReason* why);
  bool FitsNow(int32_t w, int32_t cq, int32_t flavor);  // tries and rolls back
  std::vector<ClusterState::BudgetCharge> BudgetCharges(const Workload& wl, const Admission& admission) const;

  bool TryPreempt(const Entry& e, int32_t cq, PendingReason* why);
  std::vector<Candidate> Candidates(int32_t w, int32_t cq, int32_t flavor) const;

  std::optional<Admission> TryBackfillShort(int32_t w, int32_t cq, PendingReason* why);
  bool FitsWithoutReservations(int32_t w, int32_t cq, WorkloadId* holder);
  void Reserve(int32_t w, int32_t cq, int32_t flavor, PendingReason* why);
  void HoldReservation(HeldReservation& r);
  void LiftReservation(HeldReservation& r);
  // Takes, where free, the part of a reservation's devices it could not hold when made.
  void ClaimUnheld(const HeldReservation& r);

  Timestamp EndOf(const Workload& w) const {
    if (w.evicting) return now_;
    return w.start_time + w.max_run;
  }

  const ClusterSnapshot& snap_;
  const SchedulerConfig& config_;
  const Timestamp now_;
  ClusterState state_;
  DemandProfile profile_;
  Placer placer_;
  Plan plan_;
  std::vector<QueueWork> queues_;
  std::vector<bool> released_;  // admitted workloads already chosen as victims this cycle
  std::vector<HeldReservation> reservations_;
  // Preemptors waiting for their victims: each holds, from now, the room it was
  // placed on (the victims' included), so no estimate counts that room as free.
  std::vector<HeldReservation> preemption_holds_;
  std::vector<std::pair<Timestamp, int32_t>> ends_;  // admitted work by end time, built lazily
  std::vector<int32_t> unbounded_;                   // admitted work without a run-time limit, with ends_
  bool ends_built_ = false;
  bool any_evicting_ = false;
};

Plan Cycle::Run() {
  if (config_.fragmentation_candidates > 0) {
    // The work in the snapshot, admitted and pending, is the shape of what will
    // need room: placement avoids stranding GPU it could use.
    for (const Workload& w : snap_.workloads) {
      for (const PodSet& ps : w.pod_sets) {
        profile_.Add(ps.requests.gpu(), ps.requests.cpu(), ps.requests.memory(), ps.count);
      }
    }
    profile_.Finish();
    placer_.SetDemandProfile(&profile_);
  }
  queues_.resize(snap_.cluster_queues.size());
  released_.assign(snap_.workloads.size(), false);
  plan_.pending.reserve(snap_.workloads.size());
  ClassifyWorkloads();

  // Queue heads, lowest key first: heads that fit within their queue's nominal
  // quota before heads that must borrow (so reclaimed quota goes to its owner,
  // not back to a borrower); borrowers by weighted share; then the head's
  // priority (higher first), creation time, snapshot position.
  using Key = std::tuple<bool, int64_t, int32_t, int64_t, int32_t, int32_t>;  // ..., cq
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heads;
  auto push = [&](int32_t cq) {
    QueueWork& q = queues_[cq];
    if (q.next >= q.pending.size()) return;
    const Entry& e = q.pending[q.next];
    const bool borrows = MustBorrow(e, cq);
    const int64_t share = borrows && config_.enable_fair_sharing ? state_.quota().WeightedShare(cq) : 0;
    heads.emplace(borrows, share, -e.priority, e.created_ms, e.workload, cq);
  };
  for (int32_t cq = 0; cq < static_cast<int32_t>(queues_.size()); ++cq) push(cq);

  while (!heads.empty()) {
    const int32_t cq = std::get<5>(heads.top());
    heads.pop();
    QueueWork& q = queues_[cq];
    Process(q.pending[q.next++], cq);
    state_.Commit();
    push(cq);
  }

  for (HeldReservation& r : reservations_) {
    if (!r.lifted) LiftReservation(r);
    plan_.reservations.push_back(r.reservation);
  }
  plan_.fragmentation = state_.capacity().Fragmentation();
  plan_.counters.placement_attempts = placer_.placement_attempts();
  if (config_.check_invariants) {
    Status s = CheckPlanInvariants(snap_, plan_, config_);
    TESSERA_CHECK(s.ok(), "{}", s.ToString());
  }
  return std::move(plan_);
}

bool Cycle::MustBorrow(const Entry& e, int32_t cq) const {
  const ResourceGroup* group = PrimaryGroup(snap_.cluster_queues[cq], e.wants_gpu);
  if (group == nullptr) return false;
  for (const FlavorQuotas& fq : group->flavors) {
    if (!fq.flavor.valid()) continue;
    if (state_.quota().WithinNominal(cq, fq.flavor.value(), QuotaEstimate(e.requests, fq.flavor.value(), e.min_count))) {
      return false;
    }
  }
  return true;
}

void Cycle::ClassifyWorkloads() {
  // An inactive queue's work waits in queue order; its positions are given in
  // that order once all are known (priority, then age, as the active queues').
  struct Waiting {
    int32_t cq, priority;
    int64_t created_ms;
    int32_t workload;
  };
  std::vector<Waiting> inactive;
  for (int32_t i = 0; i < static_cast<int32_t>(snap_.workloads.size()); ++i) {
    const Workload& w = snap_.workloads[i];
    if (w.admitted()) {
      any_evicting_ = any_evicting_ || w.evicting;
      if (w.admission->cluster_queue.valid()) queues_[w.admission->cluster_queue.value()].admitted.push_back(i);
      continue;
    }
    PendingReason reason;
    if (!w.local_queue.valid()) {
      reason.code = PendingCode::kNoLocalQueue;
      Pending(i, -1, std::move(reason));
      continue;
    }
    const LocalQueue& lq = snap_.local_queue(w.local_queue);
    if (!lq.cluster_queue.valid()) {
      reason.code = PendingCode::kNoClusterQueue;
      Pending(i, -1, std::move(reason));
      continue;
    }
    const int32_t cq = lq.cluster_queue.value();
    const ClusterQueue& q = snap_.cluster_queues[cq];
    if (q.stopped || !q.inactive_reason.empty()) {
      inactive.push_back(Waiting{.cq = cq, .priority = w.priority, .created_ms = w.creation_time.ms, .workload = i});
      continue;
    }
    if (q.namespace_selector && w.ns.valid() && !snap_.namespaces[w.ns.value()].labels.Matches(*q.namespace_selector)) {
      reason.code = PendingCode::kNamespaceNotSelected;
      Pending(i, -1, std::move(reason));  // not in the queue: no position in it
      continue;
    }
    const PodSet& first = w.pod_sets.front();
    const bool wants_gpu = std::any_of(w.pod_sets.begin(), w.pod_sets.end(), [](const PodSet& ps) {
      return ps.requests.gpu() > 0 || ps.requests.get(ResourceKind::kGpuMemory) > 0;
    });
    queues_[cq].pending.push_back(Entry{.priority = w.priority,
                                        .created_ms = w.creation_time.ms,
                                        .workload = i,
                                        .min_count = first.MinCount(),
                                        .wants_gpu = wants_gpu,
                                        .single_pod_set = w.pod_sets.size() == 1,
                                        .never_preempts = w.preemption_policy == PreemptionPolicy::kNever,
                                        .total_gpu = w.TotalRequests().gpu(),
                                        .requests = first.requests});
  }
  for (QueueWork& q : queues_) {
    std::sort(q.pending.begin(), q.pending.end(), [](const Entry& a, const Entry& b) {
      return std::tie(b.priority, a.created_ms, a.workload) < std::tie(a.priority, b.created_ms, b.workload);
    });
  }
  std::sort(inactive.begin(), inactive.end(), [](const Waiting& a, const Waiting& b) {
    return std::tie(a.cq, b.priority, a.created_ms, a.workload) < std::tie(b.cq, a.priority, b.created_ms, b.workload);
  });
  for (const Waiting& w : inactive) Pending(w.workload, w.cq, PendingReason{.code = PendingCode::kClusterQueueInactive});
}

void Cycle::Pending(int32_t w, int32_t cq, PendingReason&& reason) {
  if (cq >= 0) reason.queue_position = ++queues_[cq].position;
  plan_.pending.push_back(PendingDecision{.workload = WorkloadId(w), .reason = std::move(reason)});
}

const ResourceGroup* Cycle::PrimaryGroup(const ClusterQueue& cq, bool wants_gpu) const {
  const ResourceGroup* g = cq.GroupFor(wants_gpu ? ResourceKind::kGpu : ResourceKind::kCpu);
  if (g == nullptr && !wants_gpu && !cq.resource_groups.empty()) g = &cq.resource_groups.front();
  return g;
}

Resources Cycle::QuotaEstimate(const Resources& per_pod, int32_t flavor, int32_t pods) const {
  Resources r = per_pod;
  int64_t gpu = r.gpu();
  const int64_t gpu_memory = r.get(ResourceKind::kGpuMemory);
  if (gpu == 0 && gpu_memory > 0) {
    // With sharing, a lower bound: the fraction on the flavor's largest device.
    gpu = config_.enable_gpu_sharing
              ? GpuMemoryToMilli(gpu_memory, state_.capacity().flavor(flavor).max_device_memory)
              : 1000;
  } else if (gpu > 0 && gpu < 1000 && !config_.enable_gpu_sharing) {
    gpu = 1000;
  }
  r.set(ResourceKind::kGpu, gpu);
  return r * pods;
}

std::optional<Admission> Cycle::TryAdmit(int32_t w, int32_t cq, int32_t only_flavor, PendingReason* why) {
  const Workload& wl = snap_.workloads[w];
  const ClusterQueue& q = snap_.cluster_queues[cq];
  const size_t cp = state_.Checkpoint();
  Admission admission{.cluster_queue = ClusterQueueId(cq)};
  if (why != nullptr) {
    why->flavors.clear();
    if (const ResourceGroup* g = PrimaryGroup(q, wl.pod_sets.front())) why->flavors.reserve(g->flavors.size());
  }

  for (int p = 0; p < static_cast<int>(wl.pod_sets.size()); ++p) {
    const PodSet& ps = wl.pod_sets[p];
    const ResourceGroup* group = PrimaryGroup(q, ps);
    if (group == nullptr) {
      state_.Rollback(cp);
      if (why != nullptr) {
        why->code = PendingCode::kResourceNotCovered;
        FlavorAttempt a{.code = PendingCode::kResourceNotCovered, .resource = ResourceKind::kGpu};
        why->flavors.push_back(a);
      }
      return std::nullopt;
    }
    bool placed = false;
    for (const FlavorQuotas& fq : group->flavors) {
      if (!fq.flavor.valid()) continue;
      const int32_t f = fq.flavor.value();
      if (only_flavor >= 0 && f != only_flavor) continue;
      FlavorAttempt attempt{.flavor = fq.flavor};
      if (!state_.quota().Fits(cq, f, QuotaEstimate(ps, f, ps.MinCount()), &attempt, wl.non_preemptible)) {
        if (why != nullptr) why->flavors.push_back(attempt);
        continue;
      }
      const size_t sub = state_.Checkpoint();
      PodSetAssignment assignment;
      if (placer_.PlacePodSet(wl, p, cq, f, &assignment, &attempt)) {
        admission.pod_sets.push_back(std::move(assignment));
        placed = true;
        break;
      }
      state_.Rollback(sub);
      if (why != nullptr) why->flavors.push_back(attempt);
    }
    if (!placed) {
      state_.Rollback(cp);
      if (why != nullptr) {
        // The overall reason is the most actionable one: capacity (preemption or
        // backfill may help), then quota (preemption or reclaim may), then the first.
        why->code = why->flavors.empty() ? PendingCode::kNoMatchingNodes : why->flavors.front().code;
        for (PendingCode preferred : {PendingCode::kClusterQueueQuota, PendingCode::kNoCapacity}) {
          for (const FlavorAttempt& a : why->flavors) {
            if (a.code == preferred) why->code = preferred;
          }
        }
      }
      return std::nullopt;
    }
  }

  if (wl.ns.valid()) {
    Resources requests, limits;
    for (size_t p = 0; p < admission.pod_sets.size(); ++p) {
      for (const PodPlacement& pod : admission.pod_sets[p].pods) {
        requests += PodCharge(wl.pod_sets[p], pod);
        limits += PodLimitCharge(wl.pod_sets[p], pod);
      }
    }
    if (!state_.NamespaceFits(wl.ns.value(), requests, limits, why)) {
      state_.Rollback(cp);
      return std::nullopt;
    }
    state_.AddNamespace(wl.ns.value(), requests, limits);
    if (!snap_.namespaces[wl.ns.value()].budgets.empty()) {
      const std::vector<ClusterState::BudgetCharge> charges = BudgetCharges(wl, admission);
      if (!state_.BudgetFits(wl.ns.value(), charges, why)) {
        state_.Rollback(cp);
        return std::nullopt;
      }
      state_.AddBudget(wl.ns.value(), charges);
    }
  }
  return admission;
}

// What the admission would cost each budget of the workload's namespace: its
// GPUs, in the flavor each pod set was placed in, from now until its run-time
// limit or the budget period's end, whichever comes first (work without a
// limit is counted to the period's end: it may run that long).
std::vector<ClusterState::BudgetCharge> Cycle::BudgetCharges(const Workload& wl, const Admission& admission) const {
  const Namespace& n = snap_.namespaces[wl.ns.value()];
  std::vector<ClusterState::BudgetCharge> charges(n.budgets.size());
  for (size_t b = 0; b < n.budgets.size(); ++b) {
    const NamespaceBudget& budget = n.budgets[b];
    const Duration to_end = budget.period_end - now_;
    const int64_t seconds = std::max<int64_t>(0, (wl.max_run.infinite() ? to_end : std::min(wl.max_run, to_end)).seconds());
    for (size_t p = 0; p < admission.pod_sets.size(); ++p) {
      const PodSetAssignment& psa = admission.pod_sets[p];
      int64_t gpu_milli = 0;
      for (const PodPlacement& pod : psa.pods) gpu_milli += PodCharge(wl.pod_sets[p], pod).gpu();
      const int64_t price = psa.flavor.valid() ? snap_.flavor(psa.flavor).price_micro_per_gpu_hour : 0;
      charges[b].gpu_milli_seconds += gpu_milli * seconds;
      charges[b].cost_micro += GpuCostMicro(gpu_milli, seconds, price);
    }
  }
  return charges;
}

bool Cycle::FitsNow(int32_t w, int32_t cq, int32_t flavor) {
  const size_t cp = state_.Checkpoint();
  const bool fits = TryAdmit(w, cq, flavor, nullptr).has_value();
  state_.Rollback(cp);
  return fits;
}

bool Cycle::QuotaExhausted(const Entry& e, int32_t cq, PendingReason* why) const {
  if (!e.single_pod_set) return false;
  const ResourceGroup* group = PrimaryGroup(snap_.cluster_queues[cq], e.wants_gpu);
  if (group == nullptr) return false;
  why->flavors.reserve(group->flavors.size());
  for (const FlavorQuotas& fq : group->flavors) {
    if (!fq.flavor.valid()) continue;
    FlavorAttempt attempt{.flavor = fq.flavor};
    if (state_.quota().Fits(cq, fq.flavor.value(), QuotaEstimate(e.requests, fq.flavor.value(), e.min_count), &attempt,
                            snap_.workloads[e.workload].non_preemptible)) {
      why->flavors.clear();
      return false;
    }
    why->flavors.push_back(attempt);
  }
  if (why->flavors.empty()) return false;
  why->code = why->flavors.front().code;
  return true;
}

void Cycle::Process(const Entry& e, int32_t cq) {
  ++plan_.counters.workloads_considered;
  const int32_t w = e.workload;
  QueueWork& q = queues_[cq];
  PendingReason reason;

  if (q.strict_blocker.valid()) {
    reason.code = PendingCode::kBlockedByStrictFIFO;
    reason.blocker = q.strict_blocker;
    Pending(w, cq, std::move(reason));
    return;
  }
  if (e.wants_gpu && !state_.quota().Covers(cq, ResourceKind::kGpu)) {
    reason.code = PendingCode::kResourceNotCovered;
    reason.flavors.push_back(FlavorAttempt{.code = PendingCode::kResourceNotCovered, .resource = ResourceKind::kGpu});
    Pending(w, cq, std::move(reason));
    return;
  }

  if (!QuotaExhausted(e, cq, &reason)) {
    if (auto admission = TryAdmit(w, cq, -1, &reason)) {
      plan_.admissions.push_back(AdmitDecision{.workload = WorkloadId(w), .admission = std::move(*admission)});
      return;
    }
  }
  // The later actions leave the reason's code and flavors alone unless they succeed.
  const PendingCode code = reason.code;
  if (code == PendingCode::kNoCapacity || code == PendingCode::kClusterQueueQuota) {
    if (e.never_preempts) {
      reason.preemption_never = true;
    } else if (config_.enable_preemption && TryPreempt(e, cq, &reason)) {
      Pending(w, cq, std::move(reason));
      return;
    }
  }
  if (config_.enable_backfill && code == PendingCode::kNoCapacity) {
    if (!reservations_.empty()) {
      if (auto admission = TryBackfillShort(w, cq, nullptr)) {
        plan_.admissions.push_back(AdmitDecision{.workload = WorkloadId(w), .admission = std::move(*admission)});
        return;
      }
    }
    WorkloadId holder;
    if (!reservations_.empty() && FitsWithoutReservations(w, cq, &holder)) {
      reason.code = PendingCode::kReservedForOther;
      reason.blocker = holder;
    } else if (!q.reserved && static_cast<int32_t>(reservations_.size()) < config_.max_reservations) {
      for (const FlavorAttempt& a : reason.flavors) {
        if (a.code != PendingCode::kNoCapacity) continue;
        q.reserved = true;
        Reserve(w, cq, a.flavor.value(), &reason);
        break;
      }
    }
  }
  if (snap_.cluster_queues[cq].queueing_strategy == QueueingStrategy::kStrictFIFO) q.strict_blocker = WorkloadId(w);
  Pending(w, cq, std::move(reason));
}

std::vector<Candidate> Cycle::Candidates(int32_t w, int32_t cq, int32_t flavor) const {
  const Workload& wl = snap_.workloads[w];
  const ClusterQueue& q = snap_.cluster_queues[cq];
  std::vector<Candidate> out;
  auto uses_flavor = [&](const Workload& v) {
    return std::any_of(v.admission->pod_sets.begin(), v.admission->pod_sets.end(),
                       [&](const PodSetAssignment& a) { return a.flavor.value() == flavor; });
  };
  auto lost = [&](const Workload& v) {
    int64_t gpu = 0;
    for (const PodSetAssignment& a : v.admission->pod_sets) {
      for (const PodPlacement& pod : a.pods) {
        for (const DeviceShare& s : pod.gpus) gpu += s.milli;
      }
    }
    Timestamp since = v.start_time;
    if (v.last_checkpoint && *v.last_checkpoint > since) since = *v.last_checkpoint;
    return gpu * std::max<int64_t>(0, (now_ - since).ms);
  };
  auto consider = [&](int32_t v, std::optional<PreemptionReason> reason, bool borrower) {
    const Workload& vw = snap_.workloads[v];
    if (released_[v] || !uses_flavor(vw)) return;
    if (vw.evicting) {
      out.push_back(Candidate{v, true, vw.priority, borrower, 0, vw.start_time, vw.creation_time,
                              PreemptionReason::kInClusterQueue});
      return;
    }
    if (!reason || vw.non_preemptible) return;
    out.push_back(Candidate{v, false, vw.priority, borrower, lost(vw), vw.start_time, vw.creation_time, *reason});
  };

  // Same queue: by priority, per withinClusterQueue.
  for (int32_t v : queues_[cq].admitted) {
    const Workload& vw = snap_.workloads[v];
    std::optional<PreemptionReason> reason;
    switch (q.preemption.within_cluster_queue) {
      case WithinClusterQueuePolicy::kNever: break;
      case WithinClusterQueuePolicy::kLowerPriority:
        if (vw.priority < wl.priority) reason = PreemptionReason::kInClusterQueue;
        break;
      case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
        if (vw.priority < wl.priority || (vw.priority == wl.priority && vw.creation_time > wl.creation_time)) {
          reason = PreemptionReason::kInClusterQueue;
        }
        break;
    }
    consider(v, reason, false);
  }

  // Other queues of the cohort: only those borrowing in this flavor.
  const int32_t cohort = state_.quota().cohort(cq);
  if (cohort < 0) return out;
  const bool within_nominal = state_.quota().WithinNominal(cq, flavor, QuotaEstimate(wl.pod_sets.front(), flavor, wl.pod_sets.front().MinCount()));
  for (int32_t other = 0; other < static_cast<int32_t>(queues_.size()); ++other) {
    if (other == cq || state_.quota().cohort(other) != cohort) continue;
    const bool borrowing = state_.quota().IsBorrowing(other, flavor);
    for (int32_t v : queues_[other].admitted) {
      const Workload& vw = snap_.workloads[v];
      std::optional<PreemptionReason> reason;
      if (borrowing && within_nominal) {
        if (q.preemption.reclaim_within_cohort == ReclaimWithinCohortPolicy::kAny ||
            (q.preemption.reclaim_within_cohort == ReclaimWithinCohortPolicy::kLowerPriority &&
             vw.priority < wl.priority)) {
          reason = PreemptionReason::kReclaimWithinCohort;
        }
      }
      if (!reason && borrowing && q.preemption.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority &&
          vw.priority < wl.priority &&
          (!q.preemption.borrow_max_priority_threshold || vw.priority <= *q.preemption.borrow_max_priority_threshold)) {
        reason = PreemptionReason::kBorrowWithinCohort;
      }
      consider(v, reason, borrowing);
    }
  }
  return out;
}

bool Cycle::TryPreempt(const Entry& e, int32_t cq, PendingReason* why) {
  const int32_t w = e.workload;
  QueueWork& q = queues_[cq];
  const PreemptionConfig& policy = snap_.cluster_queues[cq].preemption;
  if (policy.within_cluster_queue == WithinClusterQueuePolicy::kNever &&
      policy.reclaim_within_cohort == ReclaimWithinCohortPolicy::kNever &&
      policy.borrow_within_cohort == BorrowWithinCohortPolicy::kNever) {
    // Without a policy only terminating workloads can make room to wait for.
    if (!any_evicting_) return false;
  }
  const int64_t gpu_request = e.total_gpu;
  if (q.preemption_failed && e.priority <= q.preemption_failed->first && gpu_request >= q.preemption_failed->second) {
    why->no_victims = true;
    return false;
  }
  if (plan_.counters.preemption_searches >= config_.max_preemption_searches) return false;
  const Workload& wl = snap_.workloads[w];
  ++plan_.counters.preemption_searches;

  const ResourceGroup* group = PrimaryGroup(snap_.cluster_queues[cq], wl.pod_sets.front());
  if (group == nullptr) return false;
  for (const FlavorQuotas& fq : group->flavors) {
    if (!fq.flavor.valid()) continue;
    const int32_t f = fq.flavor.value();
    std::vector<Candidate> candidates = Candidates(w, cq, f);
    if (candidates.empty()) continue;
    // Cheapest first: already terminating, lowest priority, borrowers from other
    // queues, least work lost since the last checkpoint, started last, created
    // last, position.
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(b.evicting, a.priority, b.other_queue_borrower, a.lost, b.start, b.created, a.workload) <
             std::tie(a.evicting, b.priority, a.other_queue_borrower, b.lost, a.start, a.created, b.workload);
    });

    const size_t cp = state_.Checkpoint();
    size_t chosen = 0;
    bool fits = false;
    for (; chosen < candidates.size() && !fits;) {
      const Workload& v = snap_.workloads[candidates[chosen].workload];
      state_.Apply(v, *v.admission, -1);
      ++chosen;
      fits = FitsNow(w, cq, f);
    }
    if (!fits) {
      state_.Rollback(cp);
      continue;
    }
    // Minimise: give back each victim but the last if the preemptor still fits.
    std::vector<bool> keep(chosen, true);
    for (size_t i = chosen - 1; i-- > 0;) {
      if (candidates[i].evicting) continue;
      const Workload& v = snap_.workloads[candidates[i].workload];
      state_.Apply(v, *v.admission, +1);
      if (FitsNow(w, cq, f)) {
        keep[i] = false;
      } else {
        state_.Apply(v, *v.admission, -1);
      }
    }
    // Victims keep their room until they have terminated: nothing else may be
    // placed on it this cycle, and the preemptor is admitted in a later one. The
    // free room the preemptor also counted on is held for it for the rest of the
    // cycle: were lower-priority work to take it, the next cycle would preempt
    // that work too, and the victims could return in between (preemption
    // ping-pong).
    std::optional<Admission> placement = TryAdmit(w, cq, f, nullptr);
    state_.Rollback(cp);
    if (placement) {
      HeldReservation hold;
      hold.cq = cq;
      hold.reservation = Reservation{.workload = WorkloadId(w), .flavor = FlavorId(f), .start = now_};
      hold.admission = std::move(*placement);
      HoldReservation(hold);
      preemption_holds_.push_back(std::move(hold));
    }
    why->code = PendingCode::kWaitingForPreemption;
    why->victims = 0;
    for (size_t i = 0; i < chosen; ++i) {
      if (!keep[i]) continue;
      released_[candidates[i].workload] = true;
      ++why->victims;
      if (candidates[i].evicting) continue;
      plan_.preemptions.push_back(PreemptDecision{.victim = WorkloadId(candidates[i].workload),
                                                  .preemptor = WorkloadId(w),
                                                  .reason = candidates[i].reason});
    }
    return true;
  }
  q.preemption_failed = std::pair{wl.priority, gpu_request};
  why->no_victims = true;
  return false;
}

std::optional<Admission> Cycle::TryBackfillShort(int32_t w, int32_t cq, PendingReason* why) {
  const Workload& wl = snap_.workloads[w];
  const Timestamp end = now_ + wl.max_run;
  if (end.never()) return std::nullopt;
  const size_t cp = state_.Checkpoint();
  std::vector<HeldReservation*> lifted;
  for (HeldReservation& r : reservations_) {
    if (!r.lifted && r.reservation.start >= end) {
      LiftReservation(r);
      lifted.push_back(&r);
    }
  }
  if (lifted.empty()) return std::nullopt;
  auto admission = TryAdmit(w, cq, -1, why);
  if (!admission) {
    state_.Rollback(cp);
    for (HeldReservation* r : lifted) r->lifted = false;
    return std::nullopt;
  }
  // The short job ends before these reservations start: hold what is still free.
  for (HeldReservation* r : lifted) HoldReservation(*r);
  return admission;
}

bool Cycle::FitsWithoutReservations(int32_t w, int32_t cq, WorkloadId* holder) {
  const size_t cp = state_.Checkpoint();
  std::vector<HeldReservation*> lifted;
  for (HeldReservation& r : reservations_) {
    if (!r.lifted) {
      LiftReservation(r);
      lifted.push_back(&r);
    }
  }
  const bool fits = TryAdmit(w, cq, -1, nullptr).has_value();
  state_.Rollback(cp);
  for (HeldReservation* r : lifted) r->lifted = false;
  if (fits && !lifted.empty()) *holder = lifted.front()->reservation.workload;
  return fits;
}

void Cycle::Reserve(int32_t w, int32_t cq, int32_t flavor, PendingReason* why) {
  if (!ends_built_) {
    ends_built_ = true;
    for (int32_t i = 0; i < static_cast<int32_t>(snap_.workloads.size()); ++i) {
      const Workload& v = snap_.workloads[i];
      if (!v.admitted()) continue;
      const Timestamp end = EndOf(v);
      if (end.never()) {
        unbounded_.push_back(i);
      } else {
        ends_.emplace_back(std::max(end, now_), i);
      }
    }
    std::sort(ends_.begin(), ends_.end());
  }
  ++plan_.counters.reservations_computed;
  const Workload& wl = snap_.workloads[w];
  int64_t whole_needed = 0;
  for (const PodSet& ps : wl.pod_sets) whole_needed += (ps.requests.gpu() / 1000) * ps.MinCount();

  // Replay the ends of running work in time order until the workload fits.
  // Victims chosen this cycle end now, and their room goes first to the
  // preemptors waiting for them. Earlier reservations claim, from their start,
  // the part of their devices that was still busy when they were made.
  const size_t cp = state_.Checkpoint();
  std::optional<Admission> found;
  Timestamp start = Timestamp::Never();
  std::vector<bool> claimed(reservations_.size(), false);
  bool holds_claimed = false;
  auto claim_started = [&](Timestamp t) {
    if (!holds_claimed) {
      holds_claimed = true;
      for (const HeldReservation& hold : preemption_holds_) ClaimUnheld(hold);
    }
    for (size_t r = 0; r < reservations_.size(); ++r) {
      if (claimed[r] || reservations_[r].reservation.start > t) continue;
      claimed[r] = true;
      ClaimUnheld(reservations_[r]);
    }
  };
  auto try_at = [&](Timestamp t) {
    claim_started(t);
    if (state_.capacity().flavor(flavor).whole_free < whole_needed) return;
    const size_t sub = state_.Checkpoint();
    found = TryAdmit(w, cq, flavor, nullptr);
    state_.Rollback(sub);
    if (found) start = t;
  };
  bool any_released = false;
  for (size_t v = 0; v < released_.size(); ++v) {
    if (!released_[v]) continue;
    state_.Apply(snap_.workloads[v], *snap_.workloads[v].admission, -1);
    any_released = true;
  }
  if (any_released) try_at(now_);
  for (size_t i = 0; i < ends_.size() && !found; ++i) {
    const auto [end, v] = ends_[i];
    if (!released_[v]) state_.Apply(snap_.workloads[v], *snap_.workloads[v].admission, -1);
    if (i + 1 < ends_.size() && ends_[i + 1].first == end) continue;  // release all that end together
    try_at(end);
  }
  if (!found) {
    // No end that is known makes room. Would the end of the work without a
    // run-time limit? Then that is why no estimate exists; the user is told.
    for (int32_t v : unbounded_) {
      if (!released_[v]) state_.Apply(snap_.workloads[v], *snap_.workloads[v].admission, -1);
    }
    try_at(Timestamp::Never());
    why->waits_for_unbounded_work = found.has_value();
  }
  state_.Rollback(cp);
  if (!found || start.never()) return;

  HeldReservation r;
  r.cq = cq;
  r.reservation = Reservation{.workload = WorkloadId(w), .flavor = FlavorId(flavor), .start = start};
  for (const PodSetAssignment& a : found->pod_sets) {
    r.reservation.pods.insert(r.reservation.pods.end(), a.pods.begin(), a.pods.end());
  }
  r.admission = std::move(*found);
  HoldReservation(r);
  why->estimated_start = start;
  reservations_.push_back(std::move(r));
}

void Cycle::HoldReservation(HeldReservation& r) {
  // Hold only what is free now; the rest is busy with work due to end before start.
  r.held_devices.clear();
  r.held_nodes.clear();
  const Workload& wl = snap_.workloads[r.reservation.workload.value()];
  const CapacityState& cap = state_.capacity();
  for (size_t p = 0; p < r.admission.pod_sets.size(); ++p) {
    const PodSet& ps = wl.pod_sets[p];
    for (const PodPlacement& pod : r.admission.pod_sets[p].pods) {
      const int32_t node = pod.node.value();
      const int32_t first = cap.node(node).first_device;
      for (const DeviceShare& s : pod.gpus) {
        const int64_t take = std::min(s.milli, std::max<int64_t>(0, cap.device(first + s.device).free_milli));
        if (take <= 0) continue;
        state_.TakeDevice(first + s.device, take);
        r.held_devices.emplace_back(first + s.device, take);
      }
      const int64_t cpu = std::min(ps.requests.cpu(), std::max<int64_t>(0, cap.node(node).free_cpu));
      const int64_t mem = std::min(ps.requests.memory(), std::max<int64_t>(0, cap.node(node).free_memory));
      if (cpu > 0 || mem > 0) {
        state_.TakeNode(node, cpu, mem);
        r.held_nodes.emplace_back(node, cpu, mem);
      }
    }
  }
  r.lifted = false;
}

void Cycle::ClaimUnheld(const HeldReservation& r) {
  const CapacityState& cap = state_.capacity();
  for (const PodSetAssignment& a : r.admission.pod_sets) {
    for (const PodPlacement& pod : a.pods) {
      const int32_t first = cap.node(pod.node.value()).first_device;
      for (const DeviceShare& s : pod.gpus) {
        int64_t held = 0;
        for (const auto& [d, milli] : r.held_devices) {
          if (d == first + s.device) held += milli;
        }
        const int64_t take = std::min(s.milli - held, std::max<int64_t>(0, cap.device(first + s.device).free_milli));
        if (take > 0) state_.TakeDevice(first + s.device, take);
      }
    }
  }
}

void Cycle::LiftReservation(HeldReservation& r) {
  for (const auto& [d, milli] : r.held_devices) state_.TakeDevice(d, -milli);
  for (const auto& [node, cpu, mem] : r.held_nodes) state_.TakeNode(node, -cpu, -mem);
  r.lifted = true;
}

}  // namespace

Plan RunCycle(const ClusterSnapshot& snapshot, const SchedulerConfig& config, Timestamp now) {
  Cycle cycle(snapshot, config, now);
  return cycle.Run();
}

}  // namespace tessera
