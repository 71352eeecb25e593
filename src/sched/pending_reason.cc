#include "sched/pending_reason.h"

#include <algorithm>

#include <fmt/format.h>

#include "domain/quantity.h"

namespace tessera {
namespace {

// Milli-GPU-seconds as GPU-hours, to a tenth ("12.5").
std::string FormatGpuHours(int64_t milli_gpu_seconds) {
  const int64_t tenths = (milli_gpu_seconds + 359'999) / 360'000;
  return fmt::format("{}.{}", tenths / 10, tenths % 10);
}

std::string Gpus(int64_t milli) {
  const std::string n = FormatMilliDecimal(milli);
  return milli == 1000 ? n + " GPU" : n + " GPUs";
}

std::string DescribeAttempt(const ClusterSnapshot& s, const Workload& w, const std::string& cq_name,
                            const FlavorAttempt& a) {
  const std::string flavor = a.flavor.valid() ? s.flavor(a.flavor).name : std::string("?");
  switch (a.code) {
    case PendingCode::kResourceNotCovered:
      return fmt::format("ClusterQueue {} has no quota for {}; an admin adds it to a resourceGroup's coveredResources",
                         cq_name, ResourceName(a.resource));
    case PendingCode::kClusterQueueQuota: {
      std::string out = fmt::format("ClusterQueue {}: {} in flavor {} {}/{} nominal used, the workload asks for {}", cq_name,
                                    ResourceName(a.resource), flavor, FormatAmount(a.resource, a.used),
                                    FormatAmount(a.resource, a.nominal), FormatAmount(a.resource, a.requested));
      if (a.never_borrows && a.in_cohort && a.used + a.requested > a.nominal) {
        // Work that is never preempted never borrows: whatever it held could not be reclaimed.
        return out + fmt::format(
                         "; its priority class {} is never preempted, so it runs only within its queue's nominal quota "
                         "(it never borrows from the cohort); quota would admit it with a nominal quota of {}",
                         w.priority_class, FormatAmount(a.resource, a.used + a.requested));
      }
      if (!a.in_cohort) {
        // What would let it in: the quota it would take.
        return out + fmt::format(", not in a cohort (cannot borrow); quota would admit it with a nominal quota of {}",
                                 FormatAmount(a.resource, a.used + a.requested));
      }
      if (a.used + a.requested <= a.nominal) {
        return out + ": within nominal, but the cohort has lent the rest to other queues; it returns as their work ends "
                     "or is reclaimed by preemption (reclaimWithinCohort)";
      }
      out += fmt::format(", cohort can lend {}", FormatAmount(a.resource, a.cohort_can_lend));
      // What would let it in: how much more it must borrow, and what bounds it.
      const int64_t borrowed = std::max<int64_t>(a.used - a.nominal, 0);
      const int64_t needed = a.requested - std::max<int64_t>(a.nominal - a.used, 0);
      const int64_t limit_left =
          a.borrowing_limit.unlimited() ? needed : std::max<int64_t>(a.borrowing_limit.value() - borrowed, 0);
      if (!a.borrowing_limit.unlimited()) {
        out += fmt::format(", borrowing limit {}", FormatAmount(a.resource, a.borrowing_limit.value()));
      }
      if (limit_left < needed && limit_left <= a.cohort_can_lend) {
        out += fmt::format("; quota would admit it with a borrowing limit of {}",
                           FormatAmount(a.resource, borrowed + needed));
      } else if (a.cohort_can_lend < needed) {
        out += fmt::format("; quota would admit it if the cohort lent {} more",
                           FormatAmount(a.resource, needed - a.cohort_can_lend));
      }
      return out;
    }
    case PendingCode::kNoMatchingNodes:
      return fmt::format("flavor {}: no schedulable node matches the flavor's labels, the node selector and the tolerations",
                         flavor);
    case PendingCode::kNoCapacity: {
      const PodSet& ps = w.pod_sets[a.pod_set];
      switch (a.bottleneck) {
        case CapacityBottleneck::kWholeGpus:
          return fmt::format("flavor {}: largest free block on one node is {}, pod needs {}", flavor,
                             Gpus(a.largest_free_milli), FormatMilliDecimal(a.pod_gpu_milli));
        case CapacityBottleneck::kFraction:
          return fmt::format("flavor {}: no device has {} free (the best has {})", flavor, Gpus(a.pod_gpu_milli),
                             FormatMilliDecimal(a.largest_free_milli));
        case CapacityBottleneck::kGangSize:
          if (a.nodes_short_of_cpu_memory > 0) {
            // The GPUs are there; the cpu or memory beside them is not.
            return fmt::format(
                "flavor {}: only {} of the {} pods of pod set {} fit at once (each needs {}, cpu {} and memory {}; "
                "{} node{} the GPUs free for another pod but not its cpu or memory)",
                flavor, a.pods_placed, a.pods_needed, ps.name, Gpus(a.pod_gpu_milli), FormatMilli(ps.requests.cpu()),
                FormatBytes(ps.requests.memory()), a.nodes_short_of_cpu_memory,
                a.nodes_short_of_cpu_memory == 1 ? " has" : "s have");
          }
          return fmt::format("flavor {}: only {} of the {} pods of pod set {} fit at once (each needs {}; {} free on {} node{})",
                             flavor, a.pods_placed, a.pods_needed, ps.name, Gpus(a.pod_gpu_milli),
                             Gpus(a.free_gpu_milli), a.nodes, a.nodes == 1 ? "" : "s");
        case CapacityBottleneck::kTopology: {
          // What would let it run: the block it needs, and the best there is.
          if (ps.topology == TopologyPreference::kSameNvlink) {
            return fmt::format("flavor {}: needs a node with {} free in one NVLink domain; the best has {}", flavor,
                               Gpus(a.pod_gpu_milli), FormatMilliDecimal(a.largest_free_milli));
          }
          const bool rack = ps.topology == TopologyPreference::kSameRack;
          return fmt::format("flavor {}: needs a {} with {} free for pod set {} ({} pods of {}); the best has {}", flavor,
                             rack ? "rack" : "node", Gpus(a.pod_gpu_milli * a.pods_needed), ps.name, a.pods_needed,
                             Gpus(a.pod_gpu_milli), FormatMilliDecimal(a.largest_free_milli));
        }
        case CapacityBottleneck::kCpuMemory:
        case CapacityBottleneck::kNone:
          return fmt::format("flavor {}: no node with the GPUs free also has the pod's cpu {} and memory {} free", flavor,
                             FormatMilli(ps.requests.cpu()), FormatBytes(ps.requests.memory()));
      }
      return "";
    }
    default: return "";
  }
}

}  // namespace

std::string_view PendingReasonName(PendingCode code) {
  switch (code) {
    case PendingCode::kNoLocalQueue: return "LocalQueueNotFound";
    case PendingCode::kNoClusterQueue: return "ClusterQueueNotFound";
    case PendingCode::kClusterQueueInactive: return "ClusterQueueInactive";
    case PendingCode::kNamespaceNotSelected: return "NamespaceNotAllowed";
    case PendingCode::kResourceNotCovered: return "ResourceNotCovered";
    case PendingCode::kNamespaceQuota: return "ResourceQuotaExceeded";
    case PendingCode::kClusterQueueQuota: return "QuotaExceeded";
    case PendingCode::kNoCapacity: return "InsufficientCapacity";
    case PendingCode::kNoMatchingNodes: return "NoMatchingNodes";
    case PendingCode::kReservedForOther: return "CapacityReserved";
    case PendingCode::kBlockedByStrictFIFO: return "BlockedByQueueHead";
    case PendingCode::kWaitingForPreemption: return "Preempting";
    case PendingCode::kBudget: return "BudgetExceeded";
  }
  return "Pending";
}

std::string FormatDuration(Duration d) {
  int64_t s = d.ms / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d{}h", s / 86400, (s % 86400) / 3600);
}

std::string DescribePending(const ClusterSnapshot& s, WorkloadId id, const PendingReason& r, Timestamp now) {
  const Workload& w = s.workload(id);
  const LocalQueue* lq = w.local_queue.valid() ? &s.local_queue(w.local_queue) : nullptr;
  const ClusterQueue* cq = (lq && lq->cluster_queue.valid()) ? &s.cluster_queue(lq->cluster_queue) : nullptr;
  const std::string cq_name = cq ? cq->name : std::string();
  std::string out;
  switch (r.code) {
    case PendingCode::kNoLocalQueue:
      out = fmt::format("LocalQueue {} does not exist in namespace {}; create it or submit to an existing queue",
                        w.local_queue_name, w.namespace_name);
      break;
    case PendingCode::kNoClusterQueue:
      out = fmt::format("LocalQueue {}/{} points at ClusterQueue {}, which does not exist", w.namespace_name,
                        w.local_queue_name, lq ? lq->cluster_queue_name : "");
      break;
    case PendingCode::kClusterQueueInactive:
      out = cq && !cq->inactive_reason.empty() ? fmt::format("ClusterQueue {} is inactive: {}", cq_name, cq->inactive_reason)
                                               : fmt::format("ClusterQueue {} is stopped and admits nothing", cq_name);
      break;
    case PendingCode::kNamespaceNotSelected:
      out = fmt::format("ClusterQueue {} does not admit workloads from namespace {} (namespaceSelector)", cq_name,
                        w.namespace_name);
      break;
    case PendingCode::kNamespaceQuota: {
      const Namespace& ns = s.namespaces[w.ns.value()];
      const std::string quota = r.resource_quota >= 0 ? ns.quotas[r.resource_quota].name : "?";
      const std::string res = r.resource == ResourceKind::kPods
                                  ? std::string("pods")
                                  : fmt::format("{}.{}", r.limits ? "limits" : "requests", ResourceName(r.resource));
      out = fmt::format("ResourceQuota {}/{}: {} {}/{} used, this workload needs {} more; lower the request or ask an "
                        "admin to raise the ceiling",
                        w.namespace_name, quota, res, FormatAmount(r.resource, r.used), FormatAmount(r.resource, r.hard),
                        FormatAmount(r.resource, r.requested));
      break;
    }
    case PendingCode::kBudget: {
      const Namespace& ns = s.namespaces[w.ns.value()];
      const NamespaceBudget* b = r.budget >= 0 ? &ns.budgets[r.budget] : nullptr;
      auto amount = [&](int64_t v) {
        return r.budget_cost ? FormatMoney(v) : fmt::format("{} GPU-hours", FormatGpuHours(v));
      };
      out = fmt::format(
          "{} has used {} of {} {} (Budget {}, counting admitted work to its run-time limit); this workload could add "
          "{}{}; a larger budget, fewer GPUs or a shorter activeDeadlineSeconds would admit it",
          w.namespace_name, amount(r.used), amount(r.hard), b ? BudgetPeriodText(b->period) : "this period",
          b ? b->name : "?", amount(r.requested),
          w.max_run.infinite() ? " (it has no run-time limit, so it is counted to the period's end)" : "");
      break;
    }
    case PendingCode::kBlockedByStrictFIFO:
      out = fmt::format("ClusterQueue {} is StrictFIFO and its head {} cannot be admitted yet; this workload waits behind it",
                        cq_name, r.blocker.valid() ? s.workload(r.blocker).Key() : "?");
      break;
    case PendingCode::kWaitingForPreemption:
      out = fmt::format("preempting {} workload{} to make room; admitted once {} terminated", r.victims,
                        r.victims == 1 ? "" : "s", r.victims == 1 ? "it has" : "they have");
      break;
    case PendingCode::kReservedForOther:
      out = fmt::format("fits only on capacity reserved for {}, which waits for a larger block; a maxRunSeconds that "
                        "ends before that reservation starts would let it backfill",
                        r.blocker.valid() ? s.workload(r.blocker).Key() : "?");
      break;
    case PendingCode::kResourceNotCovered:
    case PendingCode::kClusterQueueQuota:
    case PendingCode::kNoCapacity:
    case PendingCode::kNoMatchingNodes:
      for (const FlavorAttempt& a : r.flavors) {
        if (!out.empty()) out += "; ";
        out += DescribeAttempt(s, w, cq_name, a);
      }
      if (out.empty()) out = fmt::format("ClusterQueue {} has no flavor that covers this workload's resources", cq_name);
      break;
  }
  if (r.preemption_never) out += "; preemptionPolicy Never: it waits and preempts nothing";
  if (r.no_victims) out += "; no workload its ClusterQueue's preemption policy lets it preempt would make room";
  return out + DescribePendingProgress(s, id, r, now);
}

std::string DescribePendingProgress(const ClusterSnapshot& s, WorkloadId workload, const PendingReason& r,
                                    Timestamp now) {
  std::string out;
  if (!r.estimated_start.never()) {
    out += fmt::format("; estimated start in {} (capacity reserved)", FormatDuration(r.estimated_start - now));
  } else if (r.waits_for_unbounded_work) {
    out += "; no start estimate: the running work it waits for has no time limit (activeDeadlineSeconds)";
  }
  if (r.queue_position > 0) {
    const Workload& w = s.workload(workload);
    const std::string cq_name = w.local_queue.valid() && s.local_queue(w.local_queue).cluster_queue.valid()
                                    ? s.cluster_queue(s.local_queue(w.local_queue).cluster_queue).name
                                    : "";
    out += fmt::format("; position {} in ClusterQueue {}", r.queue_position, cq_name);
  }
  return out;
}

}  // namespace tessera
