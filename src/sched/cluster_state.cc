#include "sched/cluster_state.h"

#include "sched/workload_usage.h"

namespace tessera {

ClusterState::ClusterState(const ClusterSnapshot& snapshot, const SchedulerConfig& config)
    : snapshot_(snapshot), capacity_(snapshot), quota_(snapshot, config) {
  namespaces_.resize(snapshot.namespaces.size());
  for (size_t ns = 0; ns < snapshot.namespaces.size(); ++ns) {
    namespaces_[ns].budgets.resize(snapshot.namespaces[ns].budgets.size());
  }
  for (const Workload& w : snapshot.workloads) {
    if (!w.admission || !w.ns.valid()) continue;
    NamespaceUsage& u = namespaces_[w.ns.value()];
    for (size_t p = 0; p < w.admission->pod_sets.size(); ++p) {
      for (const PodPlacement& pod : w.admission->pod_sets[p].pods) {
        u.requests += PodCharge(w.pod_sets[p], pod);
        u.limits += PodLimitCharge(w.pod_sets[p], pod);
      }
    }
  }
  log_.reserve(1024);
}

void ClusterState::TakeDevice(int32_t device, int64_t milli) {
  capacity_.TakeDevice(device, milli);
  log_.push_back(Op{.kind = OpKind::kDevice, .a = device, .x = milli});
}

void ClusterState::TakeNode(int32_t node, int64_t cpu_milli, int64_t memory_bytes) {
  capacity_.TakeNodeResources(node, cpu_milli, memory_bytes);
  log_.push_back(Op{.kind = OpKind::kNode, .a = node, .x = cpu_milli, .y = memory_bytes});
}

void ClusterState::AddQuota(int32_t cq, int32_t flavor, const Resources& delta) {
  quota_.Add(cq, flavor, delta);
  log_.push_back(Op{.kind = OpKind::kQuota, .a = cq, .b = flavor, .r1 = delta});
}

void ClusterState::AddNamespace(int32_t ns, const Resources& requests, const Resources& limits) {
  namespaces_[ns].requests += requests;
  namespaces_[ns].limits += limits;
  log_.push_back(Op{.kind = OpKind::kNamespace, .a = ns, .r1 = requests, .r2 = limits});
}

void ClusterState::AddBudget(int32_t ns, const std::vector<BudgetCharge>& charges) {
  for (size_t b = 0; b < charges.size(); ++b) {
    if (charges[b].gpu_milli_seconds == 0 && charges[b].cost_micro == 0) continue;
    namespaces_[ns].budgets[b].gpu_milli_seconds += charges[b].gpu_milli_seconds;
    namespaces_[ns].budgets[b].cost_micro += charges[b].cost_micro;
    log_.push_back(Op{.kind = OpKind::kBudget,
                      .a = ns,
                      .b = static_cast<int32_t>(b),
                      .x = charges[b].gpu_milli_seconds,
                      .y = charges[b].cost_micro});
  }
}

bool ClusterState::BudgetFits(int32_t ns, const std::vector<BudgetCharge>& charges, PendingReason* why) const {
  const Namespace& n = snapshot_.namespaces[ns];
  for (size_t b = 0; b < n.budgets.size() && b < charges.size(); ++b) {
    const NamespaceBudget& budget = n.budgets[b];
    const BudgetCharge& added = namespaces_[ns].budgets[b];
    const auto check = [&](const std::optional<int64_t>& limit, int64_t used, int64_t add, bool cost) {
      if (!limit || add <= 0 || used + add <= *limit) return true;
      if (why != nullptr) {
        why->code = PendingCode::kBudget;
        why->budget = static_cast<int32_t>(b);
        why->budget_cost = cost;
        why->used = used;
        why->hard = *limit;
        why->requested = add;
      }
      return false;
    };
    if (!check(budget.limit_cost_micro, budget.used_cost_micro + added.cost_micro, charges[b].cost_micro, true) ||
        !check(budget.limit_gpu_milli_seconds, budget.used_gpu_milli_seconds + added.gpu_milli_seconds,
               charges[b].gpu_milli_seconds, false)) {
      return false;
    }
  }
  return true;
}

void ClusterState::Undo(const Op& op) {
  switch (op.kind) {
    case OpKind::kDevice: capacity_.TakeDevice(op.a, -op.x); break;
    case OpKind::kNode: capacity_.TakeNodeResources(op.a, -op.x, -op.y); break;
    case OpKind::kQuota: quota_.Add(op.a, op.b, Resources() - op.r1); break;
    case OpKind::kNamespace:
      namespaces_[op.a].requests -= op.r1;
      namespaces_[op.a].limits -= op.r2;
      break;
    case OpKind::kBudget:
      namespaces_[op.a].budgets[op.b].gpu_milli_seconds -= op.x;
      namespaces_[op.a].budgets[op.b].cost_micro -= op.y;
      break;
  }
}

void ClusterState::Rollback(size_t checkpoint) {
  while (log_.size() > checkpoint) {
    Undo(log_.back());
    log_.pop_back();
  }
}

void ClusterState::Apply(const Workload& w, const Admission& admission, int sign) {
  Resources ns_requests, ns_limits;
  for (size_t p = 0; p < admission.pod_sets.size(); ++p) {
    const PodSetAssignment& a = admission.pod_sets[p];
    const PodSet& ps = w.pod_sets[p];
    Resources flavor_total;
    for (const PodPlacement& pod : a.pods) {
      const int32_t first = capacity_.node(pod.node.value()).first_device;
      for (const DeviceShare& s : pod.gpus) TakeDevice(first + s.device, sign * s.milli);
      TakeNode(pod.node.value(), sign * ps.requests.cpu(), sign * ps.requests.memory());
      const Resources charge = PodCharge(ps, pod);
      flavor_total += charge;
      ns_requests += charge;
      ns_limits += PodLimitCharge(ps, pod);
    }
    if (a.flavor.valid() && admission.cluster_queue.valid()) {
      AddQuota(admission.cluster_queue.value(), a.flavor.value(), flavor_total * sign);
    }
  }
  if (w.ns.valid()) AddNamespace(w.ns.value(), ns_requests * sign, ns_limits * sign);
}

bool ClusterState::NamespaceFits(int32_t ns, const Resources& requests, const Resources& limits,
                                 PendingReason* why) const {
  const Namespace& n = snapshot_.namespaces[ns];
  const NamespaceUsage& u = namespaces_[ns];
  for (size_t q = 0; q < n.quotas.size(); ++q) {
    const ResourceQuota& rq = n.quotas[q];
    for (ResourceKind kind : kAllResourceKinds) {
      const int k = static_cast<int>(kind);
      for (int use_limits = 0; use_limits < 2; ++use_limits) {
        const auto& hard = use_limits ? rq.hard_limits[k] : rq.hard_requests[k];
        const int64_t add = use_limits ? limits.get(kind) : requests.get(kind);
        const int64_t used = use_limits ? u.limits.get(kind) : u.requests.get(kind);
        if (!hard.has_value() || add <= 0 || used + add <= *hard) continue;
        if (why != nullptr) {
          why->code = PendingCode::kNamespaceQuota;
          why->resource_quota = static_cast<int32_t>(q);
          why->resource = kind;
          why->limits = use_limits != 0;
          why->used = used;
          why->hard = *hard;
          why->requested = add;
        }
        return false;
      }
    }
  }
  return true;
}

}  // namespace tessera
