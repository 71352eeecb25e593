#include "tests/sched/random/plan_properties.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "sched/pending_reason.h"

namespace tessera::testing {
namespace {

Status Violated(std::string msg) { return Status::Internal(std::move(msg)); }

// The ClusterQueue a workload's LocalQueue names, or -1.
int32_t QueueOf(const ClusterSnapshot& s, const Workload& w) {
  if (!w.local_queue.valid()) return -1;
  const LocalQueue& lq = s.local_queue(w.local_queue);
  return lq.cluster_queue.valid() ? lq.cluster_queue.value() : -1;
}

// Queue order (cycle.h step 2): priority, then creation time, then position.
bool Before(const ClusterSnapshot& s, int32_t a, int32_t b) {
  const Workload& wa = s.workloads[a];
  const Workload& wb = s.workloads[b];
  if (wa.priority != wb.priority) return wa.priority > wb.priority;
  if (wa.creation_time != wb.creation_time) return wa.creation_time < wb.creation_time;
  return a < b;
}

const PendingDecision* FindPending(const Plan& plan, WorkloadId w) {
  for (const PendingDecision& p : plan.pending) {
    if (p.workload == w) return &p;
  }
  return nullptr;
}

std::string_view ReasonName(PreemptionReason r) {
  switch (r) {
    case PreemptionReason::kInClusterQueue: return "InClusterQueue";
    case PreemptionReason::kReclaimWithinCohort: return "ReclaimWithinCohort";
    case PreemptionReason::kBorrowWithinCohort: return "BorrowWithinCohort";
  }
  return "?";
}

Status NeverPreempts(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  for (const PreemptDecision& p : plan.preemptions) {
    const Workload& w = s.workload(p.preemptor);
    if (w.preemption_policy == PreemptionPolicy::kNever) {
      return Violated(fmt::format("{} (preemptionPolicy Never) preempts {}", w.Key(), s.workload(p.victim).Key()));
    }
  }
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = s.workload(p.workload);
    if (p.reason.code == PendingCode::kWaitingForPreemption && w.preemption_policy == PreemptionPolicy::kNever) {
      return Violated(fmt::format("{} (preemptionPolicy Never) waits for {} victims", w.Key(), p.reason.victims));
    }
  }
  return Status::Ok();
}

Status VictimPolicy(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig& config, Timestamp) {
  if (!config.enable_preemption && !plan.preemptions.empty()) {
    return Violated(fmt::format("{} preemptions with preemption disabled", plan.preemptions.size()));
  }
  for (const PreemptDecision& p : plan.preemptions) {
    const Workload& v = s.workload(p.victim);
    const Workload& w = s.workload(p.preemptor);
    const std::string pair = fmt::format("{} (priority {}) preempts {} (priority {}) for {}", w.Key(), w.priority,
                                         v.Key(), v.priority, ReasonName(p.reason));
    if (w.admitted()) return Violated(pair + ": the preemptor is already admitted");
    if (!v.admitted()) return Violated(pair + ": the victim is not admitted");
    const int32_t cq = QueueOf(s, w);
    const int32_t vcq = v.admission->cluster_queue.value();
    if (cq < 0) return Violated(pair + ": the preemptor has no ClusterQueue");
    const ClusterQueue& q = s.cluster_queues[cq];
    const PreemptionConfig& policy = q.preemption;
    const bool lower = v.priority < w.priority;
    switch (p.reason) {
      case PreemptionReason::kInClusterQueue: {
        if (vcq != cq) {
          return Violated(pair + fmt::format(": victim runs in {}, not {}", s.cluster_queues[vcq].name, q.name));
        }
        bool ok = false;
        switch (policy.within_cluster_queue) {
          case WithinClusterQueuePolicy::kNever: ok = false; break;
          case WithinClusterQueuePolicy::kLowerPriority: ok = lower; break;
          case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
            ok = lower || (v.priority == w.priority && v.creation_time > w.creation_time);
            break;
        }
        if (!ok) {
          return Violated(pair + fmt::format(": withinClusterQueue policy {} of {} does not allow it",
                                             static_cast<int>(policy.within_cluster_queue), q.name));
        }
        break;
      }
      case PreemptionReason::kReclaimWithinCohort:
      case PreemptionReason::kBorrowWithinCohort: {
        if (vcq == cq) return Violated(pair + ": victim is in the preemptor's own queue");
        if (!config.enable_borrowing) return Violated(pair + ": cohort preemption with borrowing disabled");
        if (!q.cohort.valid() || s.cluster_queues[vcq].cohort != q.cohort) {
          return Violated(pair + fmt::format(": {} and {} are not in one cohort", q.name, s.cluster_queues[vcq].name));
        }
        if (p.reason == PreemptionReason::kReclaimWithinCohort) {
          const bool ok = policy.reclaim_within_cohort == ReclaimWithinCohortPolicy::kAny ||
                          (policy.reclaim_within_cohort == ReclaimWithinCohortPolicy::kLowerPriority && lower);
          if (!ok) {
            return Violated(pair + fmt::format(": reclaimWithinCohort policy {} of {} does not allow it",
                                               static_cast<int>(policy.reclaim_within_cohort), q.name));
          }
        } else {
          const bool ok =
              policy.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority && lower &&
              (!policy.borrow_max_priority_threshold || v.priority <= *policy.borrow_max_priority_threshold);
          if (!ok) return Violated(pair + fmt::format(": borrowWithinCohort policy of {} does not allow it", q.name));
        }
        break;
      }
    }
  }
  return Status::Ok();
}

Status WaitingForPreemption(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig& config, Timestamp) {
  std::map<int32_t, int32_t> decisions;  // preemptor -> victims named
  for (const PreemptDecision& p : plan.preemptions) ++decisions[p.preemptor.value()];
  for (const auto& [w, n] : decisions) {
    const PendingDecision* pd = FindPending(plan, WorkloadId(w));
    if (pd == nullptr || pd->reason.code != PendingCode::kWaitingForPreemption) {
      return Violated(fmt::format("{} preempts {} workloads but is not pending with WaitingForPreemption",
                                  s.workloads[w].Key(), n));
    }
  }
  for (const PendingDecision& p : plan.pending) {
    if (p.reason.code != PendingCode::kWaitingForPreemption) continue;
    const Workload& w = s.workload(p.workload);
    if (!config.enable_preemption) {
      return Violated(fmt::format("{} waits for preemption with preemption disabled", w.Key()));
    }
    const auto it = decisions.find(p.workload.value());
    const int32_t named = it == decisions.end() ? 0 : it->second;
    if (p.reason.victims <= 0 || p.reason.victims < named) {
      return Violated(fmt::format("{} waits for preemption with victims = {} ({} preemption decisions name it)",
                                  w.Key(), p.reason.victims, named));
    }
  }
  return Status::Ok();
}

Status AdmissionTarget(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  for (const AdmitDecision& a : plan.admissions) {
    const Workload& w = s.workload(a.workload);
    const int32_t cq = QueueOf(s, w);
    if (cq < 0 || a.admission.cluster_queue.value() != cq) {
      return Violated(fmt::format("{} admitted to ClusterQueue #{}, its LocalQueue names #{}", w.Key(),
                                  a.admission.cluster_queue.value(), cq));
    }
    const ClusterQueue& q = s.cluster_queues[cq];
    if (q.stopped || !q.inactive_reason.empty()) {
      return Violated(fmt::format("{} admitted to inactive {}", w.Key(), q.name));
    }
    if (q.namespace_selector && w.ns.valid() && !s.namespaces[w.ns.value()].labels.Matches(*q.namespace_selector)) {
      return Violated(fmt::format("{} admitted to {}, whose namespaceSelector excludes it", w.Key(), q.name));
    }
    for (const PodSetAssignment& psa : a.admission.pod_sets) {
      bool listed = false;
      for (const ResourceGroup& g : q.resource_groups) {
        for (const FlavorQuotas& fq : g.flavors) listed = listed || fq.flavor == psa.flavor;
      }
      if (!listed) {
        return Violated(
            fmt::format("{} admitted in flavor #{}, which {} does not list", w.Key(), psa.flavor.value(), q.name));
      }
    }
  }
  return Status::Ok();
}

Status Taints(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  for (const AdmitDecision& a : plan.admissions) {
    const Workload& w = s.workload(a.workload);
    for (size_t p = 0; p < a.admission.pod_sets.size() && p < w.pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a.admission.pod_sets[p];
      std::vector<Toleration> tols = w.pod_sets[p].tolerations;
      const auto& ft = s.flavor(psa.flavor).tolerations;
      tols.insert(tols.end(), ft.begin(), ft.end());
      for (const PodPlacement& pod : psa.pods) {
        if (!ToleratesAll(s.node(pod.node).taints, tols)) {
          return Violated(
              fmt::format("{} placed on {}, whose taints it does not tolerate", w.Key(), s.node(pod.node).name));
        }
      }
    }
  }
  return Status::Ok();
}

Status RequiredTopology(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  bool any_rack = false;
  for (const Node& n : s.nodes) any_rack = any_rack || !n.rack.empty();
  for (const AdmitDecision& a : plan.admissions) {
    const Workload& w = s.workload(a.workload);
    for (size_t p = 0; p < a.admission.pod_sets.size() && p < w.pod_sets.size(); ++p) {
      const PodSet& ps = w.pod_sets[p];
      const PodSetAssignment& psa = a.admission.pod_sets[p];
      std::set<int32_t> nodes;
      std::set<std::string> racks;
      for (const PodPlacement& pod : psa.pods) {
        nodes.insert(pod.node.value());
        racks.insert(s.node(pod.node).rack);
        std::set<int32_t> domains;
        for (const DeviceShare& d : pod.gpus) domains.insert(s.node(pod.node).gpus[d.device].nvlink_domain);
        if (ps.topology == TopologyPreference::kSameNvlink && domains.size() > 1) {
          return Violated(fmt::format("{} pod set {} requires one NVLink domain per pod; a pod spans {} on {}", w.Key(),
                                      ps.name, domains.size(), s.node(pod.node).name));
        }
      }
      if (ps.topology == TopologyPreference::kSameNode && nodes.size() > 1) {
        return Violated(fmt::format("{} pod set {} requires one node; placed on {}", w.Key(), ps.name, nodes.size()));
      }
      if (ps.topology == TopologyPreference::kSameRack && any_rack && (racks.size() > 1 || racks.count("") > 0)) {
        return Violated(fmt::format("{} pod set {} requires one rack; placed across {} (unracked nodes count as \"\")",
                                    w.Key(), ps.name, racks.size()));
      }
    }
  }
  return Status::Ok();
}

Status GpuMemory(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  for (const AdmitDecision& a : plan.admissions) {
    const Workload& w = s.workload(a.workload);
    for (size_t p = 0; p < a.admission.pod_sets.size() && p < w.pod_sets.size(); ++p) {
      const PodSet& ps = w.pod_sets[p];
      const int64_t mem = ps.requests.get(ResourceKind::kGpuMemory);
      if (mem <= 0 || ps.requests.gpu() > 0) continue;
      for (const PodPlacement& pod : a.admission.pod_sets[p].pods) {
        if (pod.gpus.size() != 1) {
          return Violated(
              fmt::format("{} asks {} bytes of GPU memory and got {} devices", w.Key(), mem, pod.gpus.size()));
        }
        const GpuDevice& dev = s.node(pod.node).gpus[pod.gpus[0].device];
        if (dev.memory_bytes < mem) {
          return Violated(fmt::format("{} asks {}Gi of GPU memory and got device {} of {} with {}Gi ({}m)", w.Key(),
                                      mem >> 30, pod.gpus[0].device, s.node(pod.node).name, dev.memory_bytes >> 30,
                                      pod.gpus[0].milli));
        }
      }
    }
  }
  return Status::Ok();
}

Status StrictFifo(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp) {
  std::map<int32_t, int32_t> blocker_of;  // cq -> blocking head
  for (const PendingDecision& p : plan.pending) {
    if (p.reason.code != PendingCode::kBlockedByStrictFIFO) continue;
    const Workload& w = s.workload(p.workload);
    const int32_t cq = QueueOf(s, w);
    if (cq < 0 || s.cluster_queues[cq].queueing_strategy != QueueingStrategy::kStrictFIFO) {
      return Violated(fmt::format("{} is BlockedByStrictFIFO outside a StrictFIFO queue", w.Key()));
    }
    const WorkloadId b = p.reason.blocker;
    if (!b.valid() || QueueOf(s, s.workload(b)) != cq || s.workload(b).admitted() ||
        !Before(s, b.value(), p.workload.value())) {
      return Violated(fmt::format("{} is BlockedByStrictFIFO by #{}, which is not a pending workload ahead of it in {}",
                                  w.Key(), b.value(), s.cluster_queues[cq].name));
    }
    const PendingDecision* head = FindPending(plan, b);
    if (head == nullptr) {
      return Violated(fmt::format("{} is blocked by {}, which the plan admits", w.Key(), s.workload(b).Key()));
    }
    blocker_of[cq] = b.value();
  }
  for (const AdmitDecision& a : plan.admissions) {
    const int32_t cq = a.admission.cluster_queue.value();
    auto it = blocker_of.find(cq);
    if (it != blocker_of.end() && Before(s, it->second, a.workload.value())) {
      return Violated(fmt::format("{} admitted behind the blocked head {} of StrictFIFO {}",
                                  s.workload(a.workload).Key(), s.workloads[it->second].Key(),
                                  s.cluster_queues[cq].name));
    }
  }
  return Status::Ok();
}

Status Reservations(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig& config, Timestamp now) {
  if (!config.enable_backfill && !plan.reservations.empty()) {
    return Violated(fmt::format("{} reservations with backfill disabled", plan.reservations.size()));
  }
  if (static_cast<int32_t>(plan.reservations.size()) > config.max_reservations) {
    return Violated(
        fmt::format("{} reservations, at most {} allowed", plan.reservations.size(), config.max_reservations));
  }
  for (const Reservation& r : plan.reservations) {
    const Workload& w = s.workload(r.workload);
    if (FindPending(plan, r.workload) == nullptr) {
      return Violated(fmt::format("reservation for {}, which is not pending", w.Key()));
    }
    if (r.start < now) {
      return Violated(fmt::format("reservation for {} starts {}s before now", w.Key(), (now - r.start).seconds()));
    }
  }
  return Status::Ok();
}

// Milli-GPU per (node, device) of the pods given.
using DeviceUse = std::map<std::pair<int32_t, int32_t>, int64_t>;
void AddPods(const std::vector<PodPlacement>& pods, DeviceUse& use) {
  for (const PodPlacement& pod : pods) {
    for (const DeviceShare& d : pod.gpus) use[{pod.node.value(), d.device}] += d.milli;
  }
}

// Device use at time `t` by work that still runs then (by its maxRun): admitted
// work that is neither a victim nor terminating, plus this plan's admissions.
DeviceUse RunningAt(const ClusterSnapshot& s, const Plan& plan, Timestamp now, Timestamp t) {
  std::vector<bool> victim(s.workloads.size(), false);
  for (const PreemptDecision& p : plan.preemptions) victim[p.victim.value()] = true;
  DeviceUse use;
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const Workload& w = s.workloads[i];
    if (!w.admitted() || victim[i] || w.evicting || w.start_time + w.max_run <= t) continue;
    for (const PodSetAssignment& psa : w.admission->pod_sets) AddPods(psa.pods, use);
  }
  for (const AdmitDecision& a : plan.admissions) {
    if (now + s.workload(a.workload).max_run <= t) continue;
    for (const PodSetAssignment& psa : a.admission.pod_sets) AddPods(psa.pods, use);
  }
  return use;
}

Status ReservationHonoured(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp now) {
  for (const Reservation& r : plan.reservations) {
    if (r.start.never()) continue;
    DeviceUse use = RunningAt(s, plan, now, r.start);
    DeviceUse mine;
    AddPods(r.pods, mine);
    for (const auto& [dev, milli] : mine) {
      if (use[dev] + milli > 1000) {
        return Violated(
            fmt::format("reservation of {} at +{}s wants {}m of device {} of {}, where work still running "
                        "then (by maxRun) holds {}m",
                        s.workload(r.workload).Key(), (r.start - now).seconds(), milli, dev.second,
                        s.nodes[dev.first].name, use[dev]));
      }
    }
  }
  return Status::Ok();
}

Status ReservationsDisjoint(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig&, Timestamp now) {
  for (const Reservation& r : plan.reservations) {
    for (const Reservation& o : plan.reservations) {
      if (&o == &r || o.start > r.start || o.start + s.workload(o.workload).max_run <= r.start) continue;
      DeviceUse a, b;
      AddPods(r.pods, a);
      AddPods(o.pods, b);
      for (const auto& [dev, milli] : a) {
        auto it = b.find(dev);
        if (it != b.end() && it->second + milli > 1000) {
          return Violated(
              fmt::format("reservations of {} (from +{}s) and {} (from +{}s) both want device {} of {} "
                          "({}m + {}m)",
                          s.workload(o.workload).Key(), (o.start - now).seconds(), s.workload(r.workload).Key(),
                          (r.start - now).seconds(), dev.second, s.nodes[dev.first].name, it->second, milli));
        }
      }
    }
  }
  return Status::Ok();
}

// Field-by-field comparison helpers for PlanDifference.
std::string AttemptText(const FlavorAttempt& a) {
  return fmt::format(
      "flavor={} code={} resource={} used={} nominal={} requested={} lend={} borrowing={} in_cohort={} bottleneck={} "
      "pod_set={} needed={} placed={} pod_gpu={} largest={} free={} nodes={}",
      a.flavor.value(), static_cast<int>(a.code), static_cast<int>(a.resource), a.used, a.nominal, a.requested,
      a.cohort_can_lend, a.borrowing_limit.unlimited() ? -1 : a.borrowing_limit.value(), a.in_cohort,
      static_cast<int>(a.bottleneck), a.pod_set, a.pods_needed, a.pods_placed, a.pod_gpu_milli, a.largest_free_milli,
      a.free_gpu_milli, a.nodes);
}

std::string ReasonText(const PendingReason& r) {
  std::string out = fmt::format(
      "code={} rq={} resource={} limits={} used={} hard={} requested={} blocker={} victims={} never={} no_victims={} "
      "start={} position={} flavors:",
      static_cast<int>(r.code), r.resource_quota, static_cast<int>(r.resource), r.limits, r.used, r.hard, r.requested,
      r.blocker.value(), r.victims, r.preemption_never, r.no_victims, r.estimated_start.ms, r.queue_position);
  for (const FlavorAttempt& a : r.flavors) out += " {" + AttemptText(a) + "}";
  return out;
}

std::string AdmissionKey(const Admission& a) {
  std::string out = fmt::format("cq={}", a.cluster_queue.value());
  for (const PodSetAssignment& psa : a.pod_sets) {
    out += fmt::format(" [f{} x{}:", psa.flavor.value(), psa.count);
    for (const PodPlacement& pod : psa.pods) {
      out += fmt::format(" n{}", pod.node.value());
      for (const DeviceShare& d : pod.gpus) out += fmt::format("/{}@{}", d.device, d.milli);
    }
    out += "]";
  }
  return out;
}

}  // namespace

const std::vector<PlanProperty>& PlanProperties() {
  static const std::vector<PlanProperty> kProperties = {
      {"never-preempts", &NeverPreempts},
      {"victim-policy", &VictimPolicy},
      {"waiting-for-preemption", &WaitingForPreemption},
      {"admission-target", &AdmissionTarget},
      {"taints", &Taints},
      {"required-topology", &RequiredTopology},
      {"gpu-memory", &GpuMemory},
      {"strict-fifo", &StrictFifo},
      {"reservations", &Reservations},
      {"reservation-honoured", &ReservationHonoured},
      {"reservations-disjoint", &ReservationsDisjoint},
  };
  return kProperties;
}

std::string PlanDifference(const Plan& a, const Plan& b) {
  if (a.admissions.size() != b.admissions.size()) {
    return fmt::format("admissions: {} vs {}", a.admissions.size(), b.admissions.size());
  }
  for (size_t i = 0; i < a.admissions.size(); ++i) {
    const AdmitDecision& x = a.admissions[i];
    const AdmitDecision& y = b.admissions[i];
    if (x.workload != y.workload || !(x.admission == y.admission)) {
      return fmt::format("admission {}: #{} {} vs #{} {}", i, x.workload.value(), AdmissionKey(x.admission),
                         y.workload.value(), AdmissionKey(y.admission));
    }
  }
  if (a.preemptions.size() != b.preemptions.size()) {
    return fmt::format("preemptions: {} vs {}", a.preemptions.size(), b.preemptions.size());
  }
  for (size_t i = 0; i < a.preemptions.size(); ++i) {
    const PreemptDecision& x = a.preemptions[i];
    const PreemptDecision& y = b.preemptions[i];
    if (x.victim != y.victim || x.preemptor != y.preemptor || x.reason != y.reason) {
      return fmt::format("preemption {}: #{} by #{} ({}) vs #{} by #{} ({})", i, x.victim.value(), x.preemptor.value(),
                         static_cast<int>(x.reason), y.victim.value(), y.preemptor.value(), static_cast<int>(y.reason));
    }
  }
  if (a.pending.size() != b.pending.size()) return fmt::format("pending: {} vs {}", a.pending.size(), b.pending.size());
  for (size_t i = 0; i < a.pending.size(); ++i) {
    const PendingDecision& x = a.pending[i];
    const PendingDecision& y = b.pending[i];
    const std::string rx = ReasonText(x.reason);
    const std::string ry = ReasonText(y.reason);
    if (x.workload != y.workload || rx != ry) {
      return fmt::format("pending {}: #{} {} vs #{} {}", i, x.workload.value(), rx, y.workload.value(), ry);
    }
  }
  if (a.reservations.size() != b.reservations.size()) {
    return fmt::format("reservations: {} vs {}", a.reservations.size(), b.reservations.size());
  }
  for (size_t i = 0; i < a.reservations.size(); ++i) {
    const Reservation& x = a.reservations[i];
    const Reservation& y = b.reservations[i];
    if (x.workload != y.workload || x.flavor != y.flavor || x.start != y.start || x.pods != y.pods) {
      return fmt::format("reservation {}: #{} flavor {} start {} ({} pods) vs #{} flavor {} start {} ({} pods)", i,
                         x.workload.value(), x.flavor.value(), x.start.ms, x.pods.size(), y.workload.value(),
                         y.flavor.value(), y.start.ms, y.pods.size());
    }
  }
  const FragmentationReport& fa = a.fragmentation;
  const FragmentationReport& fb = b.fragmentation;
  if (std::tie(fa.total_gpu_milli, fa.free_gpu_milli, fa.whole_free_gpus, fa.stranded_gpu_milli,
               fa.partly_used_devices) != std::tie(fb.total_gpu_milli, fb.free_gpu_milli, fb.whole_free_gpus,
                                                   fb.stranded_gpu_milli, fb.partly_used_devices)) {
    return "fragmentation reports differ";
  }
  const CycleCounters& ca = a.counters;
  const CycleCounters& cb = b.counters;
  if (std::tie(ca.workloads_considered, ca.placement_attempts, ca.preemption_searches, ca.reservations_computed) !=
      std::tie(cb.workloads_considered, cb.placement_attempts, cb.preemption_searches, cb.reservations_computed)) {
    return "counters differ";
  }
  return "";
}

}  // namespace tessera::testing
