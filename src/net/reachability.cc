#include "net/reachability.h"

#include "net/policy_match.h"

namespace tessera::net {
namespace {

// Whether some rule of some policy of `ns` of the given type that picks `pod`
// allows the connection; `other` is the remote end, `target` the pod whose
// container ports name ports (the destination).
bool AnyRuleAllows(const ClusterView& view, const NamespaceIndex& namespaces, const PodInfo& pod, bool ingress,
                   const Peer& other, const PodInfo* target, uint16_t port, Protocol protocol) {
  for (const NetworkPolicy& policy : view.policies) {
    if (!(ingress ? policy.ingress_type : policy.egress_type) || !Selects(policy, pod)) continue;
    for (const PolicyRule& rule : ingress ? policy.ingress : policy.egress) {
      if (!RuleAllowsPort(rule, target, port, protocol)) continue;
      if (rule.peers.empty()) return true;
      for (const PolicyPeer& peer : rule.peers) {
        if (PeerMatches(namespaces, policy.ns, peer, other)) return true;
      }
    }
  }
  return false;
}

bool IsPolicedPod(const Peer& p) { return p.kind() == Peer::Kind::kPod && !p.pod()->host_network; }

}  // namespace

bool Selects(const NetworkPolicy& policy, const PodInfo& pod) {
  return !pod.host_network && pod.ns == policy.ns && policy.pod_selector.Matches(pod.labels);
}

bool IsolatedForIngress(const ClusterView& view, const PodInfo& pod) {
  if (pod.host_network) return false;
  if (HasUnparsedPolicy(view, pod.ns)) return true;
  for (const NetworkPolicy& policy : view.policies) {
    if (policy.ingress_type && Selects(policy, pod)) return true;
  }
  return false;
}

bool IsolatedForEgress(const ClusterView& view, const PodInfo& pod) {
  if (pod.host_network) return false;
  if (HasUnparsedPolicy(view, pod.ns)) return true;
  for (const NetworkPolicy& policy : view.policies) {
    if (policy.egress_type && Selects(policy, pod)) return true;
  }
  return false;
}

bool Allowed(const ClusterView& view, const Peer& from, const Peer& to, uint16_t port, Protocol protocol) {
  // 1. Loopback.
  if (from.kind() == Peer::Kind::kPod && to.kind() == Peer::Kind::kPod &&
      (from.pod() == to.pod() || (from.pod()->ns == to.pod()->ns && from.pod()->name == to.pod()->name))) {
    return true;
  }
  // 2. The destination's own node.
  if (from.kind() == Peer::Kind::kNode) return true;
  const PodInfo* target = IsPolicedPod(to) ? to.pod() : nullptr;
  const NamespaceIndex namespaces(view);
  // 3. Egress of the source.
  if (IsPolicedPod(from) && IsolatedForEgress(view, *from.pod()) &&
      !AnyRuleAllows(view, namespaces, *from.pod(), /*ingress=*/false, to, target, port, protocol)) {
    return false;
  }
  // 4. Ingress of the destination.
  if (target != nullptr && IsolatedForIngress(view, *target) &&
      !AnyRuleAllows(view, namespaces, *target, /*ingress=*/true, from, target, port, protocol)) {
    return false;
  }
  return true;
}

}  // namespace tessera::net
