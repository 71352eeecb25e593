#include "sched/invariants.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "sched/pending_reason.h"
#include "sched/workload_usage.h"

namespace tessera {
namespace {

Status Broken(std::string msg) { return Status::Internal("invariant broken: " + std::move(msg)); }

}  // namespace

Status CheckPlanInvariants(const ClusterSnapshot& s, const Plan& plan, const SchedulerConfig& config) {
  const size_t n = s.workloads.size();
  std::vector<int> seen(n, 0);
  std::vector<bool> victim(n, false);
  for (const PreemptDecision& p : plan.preemptions) {
    const Workload& v = s.workload(p.victim);
    if (!v.admitted()) return Broken(fmt::format("victim {} is not admitted", v.Key()));
    if (v.non_preemptible) return Broken(fmt::format("victim {} is non-preemptible", v.Key()));
    if (victim[p.victim.value()]) return Broken(fmt::format("victim {} chosen twice", v.Key()));
    victim[p.victim.value()] = true;
  }
  for (const AdmitDecision& a : plan.admissions) ++seen[a.workload.value()];
  for (const PendingDecision& p : plan.pending) {
    ++seen[p.workload.value()];
    if (DescribePending(s, p.workload, p.reason, Timestamp{}).empty()) {
      return Broken(fmt::format("pending workload {} has no explanation", s.workload(p.workload).Key()));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const int expected = s.workloads[i].admitted() ? 0 : 1;
    if (seen[i] != expected) {
      return Broken(fmt::format("workload {} appears {} times in the plan, expected {}", s.workloads[i].Key(), seen[i],
                                expected));
    }
  }

  // Usage after the plan: everything admitted, less victims, plus admissions.
  std::vector<std::vector<int64_t>> device_used(s.nodes.size());
  std::vector<std::pair<int64_t, int64_t>> node_used(s.nodes.size());
  for (size_t i = 0; i < s.nodes.size(); ++i) device_used[i].assign(s.nodes[i].gpus.size(), 0);
  using Cell = std::tuple<int32_t, int32_t, int>;  // cq, flavor, kind
  std::map<Cell, int64_t> usage;
  std::set<Cell> touched;
  // What work that is never preempted holds, and the cells a new such admission touched.
  std::map<Cell, int64_t> never_preempted_usage;
  std::set<Cell> never_preempted_touched;
  std::vector<Resources> ns_requests(s.namespaces.size()), ns_limits(s.namespaces.size());
  std::set<std::pair<int32_t, int>> ns_touched;  // (namespace, kind) this plan adds to
  std::set<std::pair<int32_t, int32_t>> devices_touched;
  std::set<int32_t> nodes_touched;

  auto account = [&](const Workload& w, const Admission& a, bool is_new) {
    for (size_t p = 0; p < a.pod_sets.size(); ++p) {
      const PodSet& ps = w.pod_sets[p];
      const PodSetAssignment& psa = a.pod_sets[p];
      for (const PodPlacement& pod : psa.pods) {
        const int32_t node = pod.node.value();
        node_used[node].first += ps.requests.cpu();
        node_used[node].second += ps.requests.memory();
        if (is_new) nodes_touched.insert(node);
        for (const DeviceShare& d : pod.gpus) {
          device_used[node][d.device] += d.milli;
          if (is_new) devices_touched.insert({node, d.device});
        }
        const Resources charge = PodCharge(ps, pod);
        for (ResourceKind k : kAllResourceKinds) {
          Cell c{a.cluster_queue.value(), psa.flavor.value(), static_cast<int>(k)};
          usage[c] += charge.get(k);
          if (is_new && charge.get(k) > 0) touched.insert(c);
          if (w.non_preemptible) {
            never_preempted_usage[c] += charge.get(k);
            if (is_new && charge.get(k) > 0) never_preempted_touched.insert(c);
          }
        }
        if (w.ns.valid()) {
          const Resources limit = PodLimitCharge(ps, pod);
          ns_requests[w.ns.value()] += charge;
          ns_limits[w.ns.value()] += limit;
          for (ResourceKind k : kAllResourceKinds) {
            if (is_new && (charge.get(k) > 0 || limit.get(k) > 0)) ns_touched.insert({w.ns.value(), static_cast<int>(k)});
          }
        }
      }
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (s.workloads[i].admitted() && !victim[i]) account(s.workloads[i], *s.workloads[i].admission, false);
  }

  for (const AdmitDecision& a : plan.admissions) {
    const Workload& w = s.workload(a.workload);
    if (a.admission.pod_sets.size() != w.pod_sets.size()) {
      return Broken(fmt::format("{} admitted with {} pod sets, has {}", w.Key(), a.admission.pod_sets.size(),
                                w.pod_sets.size()));
    }
    for (size_t p = 0; p < w.pod_sets.size(); ++p) {
      const PodSet& ps = w.pod_sets[p];
      const PodSetAssignment& psa = a.admission.pod_sets[p];
      if (psa.count < ps.MinCount() || psa.count > ps.count || static_cast<int32_t>(psa.pods.size()) != psa.count) {
        return Broken(fmt::format("{} pod set {}: {} pods placed ({} listed), gang needs {}..{}", w.Key(), ps.name,
                                  psa.count, psa.pods.size(), ps.MinCount(), ps.count));
      }
      for (const PodPlacement& pod : psa.pods) {
        if (!pod.node.valid() || pod.node.value() >= static_cast<int32_t>(s.nodes.size())) {
          return Broken(fmt::format("{} placed on a node that does not exist", w.Key()));
        }
        const Node& node = s.node(pod.node);
        if (!node.Schedulable()) return Broken(fmt::format("{} placed on unschedulable node {}", w.Key(), node.name));
        if (!node.labels.Matches(ps.node_selector)) {
          return Broken(fmt::format("{} placed on node {} that misses its node selector", w.Key(), node.name));
        }
        if (!node.labels.Matches(s.flavor(psa.flavor).node_labels)) {
          return Broken(fmt::format("{} placed on node {} outside flavor {}", w.Key(), node.name, s.flavor(psa.flavor).name));
        }
        std::set<int32_t> devs;
        for (const DeviceShare& d : pod.gpus) {
          if (d.device < 0 || d.device >= static_cast<int32_t>(node.gpus.size()) || !devs.insert(d.device).second) {
            return Broken(fmt::format("{} names device {} of node {} badly", w.Key(), d.device, node.name));
          }
          if (d.milli <= 0 || d.milli > 1000) return Broken(fmt::format("{} takes {}m of one device", w.Key(), d.milli));
        }
        const int64_t gpu = ps.requests.gpu();
        if (gpu >= 1000 && static_cast<int64_t>(pod.gpus.size()) * 1000 != gpu) {
          return Broken(fmt::format("{} asked {} GPUs and got {} devices", w.Key(), gpu / 1000, pod.gpus.size()));
        }
        for (const DeviceShare& d : pod.gpus) {
          if (gpu >= 1000 && d.milli != 1000) return Broken(fmt::format("{} whole-GPU pod got a fraction", w.Key()));
        }
        if (gpu > 0 && gpu < 1000 && config.enable_gpu_sharing && (pod.gpus.size() != 1 || pod.gpus[0].milli != gpu)) {
          return Broken(fmt::format("{} fraction {}m not on exactly one device", w.Key(), gpu));
        }
      }
    }
    account(w, a.admission, true);
  }

  for (const auto& [node, dev] : devices_touched) {
    if (device_used[node][dev] > 1000) {
      return Broken(fmt::format("device {} of node {} holds {}m", dev, s.nodes[node].name, device_used[node][dev]));
    }
  }
  for (int32_t node : nodes_touched) {
    if (node_used[node].first > s.nodes[node].cpu_milli || node_used[node].second > s.nodes[node].memory_bytes) {
      return Broken(fmt::format("node {} holds more CPU or memory than it has", s.nodes[node].name));
    }
  }

  // Quota: nominal + borrowing limit per queue, pool per cohort.
  std::map<std::tuple<int32_t, int32_t, int>, std::pair<int64_t, int64_t>> pools;  // cohort,flavor,kind -> pool, used
  struct Spec {
    int64_t nominal = 0;
    Limit borrowing;
    int64_t guaranteed = 0;
  };
  std::map<Cell, Spec> specs;
  for (int32_t q = 0; q < static_cast<int32_t>(s.cluster_queues.size()); ++q) {
    const ClusterQueue& cq = s.cluster_queues[q];
    const int32_t cohort = config.enable_borrowing ? cq.cohort.value() : -1;
    for (const ResourceGroup& g : cq.resource_groups) {
      for (const FlavorQuotas& fq : g.flavors) {
        for (ResourceKind k : g.covered_resources) {
          Spec sp;
          if (const ResourceQuotaSpec* r = fq.Find(k)) {
            sp.nominal = r->nominal;
            sp.borrowing = r->borrowing_limit;
            const int64_t lendable = r->lending_limit.unlimited() ? r->nominal : std::min(r->nominal, r->lending_limit.value());
            sp.guaranteed = r->nominal - lendable;
          }
          Cell c{q, fq.flavor.value(), static_cast<int>(k)};
          specs[c] = sp;
          if (cohort >= 0) {
            auto& pool = pools[{cohort, fq.flavor.value(), static_cast<int>(k)}];
            pool.first += sp.nominal - sp.guaranteed;
            pool.second += std::max<int64_t>(0, usage[c] - sp.guaranteed);
          }
        }
      }
    }
  }
  for (const Cell& c : touched) {
    auto it = specs.find(c);
    if (it == specs.end()) continue;  // resource not covered by the queue: not limited by it
    const auto [q, f, k] = c;
    const Spec& sp = it->second;
    const int32_t cohort = config.enable_borrowing ? s.cluster_queues[q].cohort.value() : -1;
    const int64_t used = usage[c];
    const bool ok = cohort < 0 ? used <= sp.nominal : sp.borrowing.Allows(used - sp.nominal);
    if (!ok) {
      return Broken(fmt::format("ClusterQueue {} uses {} of {} in flavor {}, nominal {}", s.cluster_queues[q].name, used,
                                ResourceName(static_cast<ResourceKind>(k)), s.flavors[f].name, sp.nominal));
    }
    if (cohort >= 0 && used > sp.guaranteed) {
      const auto& pool = pools[{cohort, f, k}];
      if (pool.second > pool.first) {
        return Broken(fmt::format("cohort {} lends {} of {} in flavor {} from a pool of {}", s.cohorts[cohort].name,
                                  pool.second, ResourceName(static_cast<ResourceKind>(k)), s.flavors[f].name, pool.first));
      }
    }
  }
  // Work that is never preempted never borrows: what it holds is within nominal quota.
  for (const Cell& c : never_preempted_touched) {
    auto it = specs.find(c);
    if (it == specs.end()) continue;
    const auto [q, f, k] = c;
    if (never_preempted_usage[c] > it->second.nominal) {
      return Broken(fmt::format("ClusterQueue {}'s never-preempted work holds {} of {} in flavor {}, above nominal {}",
                                s.cluster_queues[q].name, never_preempted_usage[c],
                                ResourceName(static_cast<ResourceKind>(k)), s.flavors[f].name, it->second.nominal));
    }
  }
  for (const auto& [ns, kind_index] : ns_touched) {
    const auto k = static_cast<ResourceKind>(kind_index);
    for (const ResourceQuota& rq : s.namespaces[ns].quotas) {
      const auto& hr = rq.hard_requests[kind_index];
      const auto& hl = rq.hard_limits[kind_index];
      if ((hr && ns_requests[ns].get(k) > *hr) || (hl && ns_limits[ns].get(k) > *hl)) {
        return Broken(fmt::format("namespace {} exceeds ResourceQuota {} on {}", s.namespaces[ns].name, rq.name,
                                  ResourceName(k)));
      }
    }
  }
  return Status::Ok();
}

}  // namespace tessera
