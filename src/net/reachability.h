// The reference semantics of NetworkPolicy: whether a connection from one
// peer to another is allowed, decided directly from the spec, one connection
// at a time. It is the truth table the dataplane (node_ruleset.h) is tested
// against, as Cyclonus and the upstream e2e tests do, and what a user-facing
// "can x reach y?" would answer.
//
// The decision for a new connection from `from` to `to` on (port, protocol):
//   1. A pod reaches itself (loopback is never blocked; upstream e2e ignores it).
//   2. The node reaches its own pods (Kubernetes lets the kubelet probe them,
//      and pods cannot block their resident node): Peer::Node() is allowed.
//   3. Egress: when `from` is a pod (not host-network) picked by an Egress
//      policy of its namespace, some egress rule of such a policy must match
//      `to` (its pod labels or its IP) and (port, protocol).
//   4. Ingress: when `to` is a pod (not host-network) picked by an Ingress
//      policy of its namespace, some ingress rule of such a policy must match
//      `from` and (port, protocol); named ports resolve on `to`.
//   5. Allowed when both 3 and 4 allow. Replies of an allowed connection are
//      allowed (policies are stateful); this decides new connections only.
// A pod of a namespace with an unparsed policy is isolated both ways (see
// cluster_view.h, fail closed). An IP peer that is a pod's address is *not*
// that pod here: pass the pod to have its labels count.
//
// Thread-safety: pure functions over a const view.
#pragma once

#include <cstdint>
#include <string>

#include "net/cluster_view.h"

namespace tessera::net {

// One end of a connection: a pod, a bare IP (another node, a host-network
// process, something outside the cluster), or the destination pod's own node.
class Peer {
 public:
  enum class Kind { kPod, kIp, kNode };

  static Peer Pod(const PodInfo& pod) { return Peer(Kind::kPod, &pod, pod.ip); }
  static Peer Ip(std::string ip) { return Peer(Kind::kIp, nullptr, std::move(ip)); }
  // The node the destination pod runs on (its probes); as a destination, use Ip.
  static Peer Node() { return Peer(Kind::kNode, nullptr, ""); }

  Kind kind() const { return kind_; }
  const PodInfo* pod() const { return pod_; }  // kPod only
  const std::string& ip() const { return ip_; }

 private:
  Peer(Kind kind, const PodInfo* pod, std::string ip) : kind_(kind), pod_(pod), ip_(std::move(ip)) {}
  Kind kind_;
  const PodInfo* pod_;  // not owned: the pod outlives the Peer
  std::string ip_;
};

// Whether a new connection from `from` to `to` on (port, protocol) is allowed.
bool Allowed(const ClusterView& view, const Peer& from, const Peer& to, uint16_t port, Protocol protocol);
inline bool Allowed(const ClusterView& view, const Peer& from, const PodInfo& to, uint16_t port, Protocol protocol) {
  return Allowed(view, from, Peer::Pod(to), port, protocol);
}

// Whether `pod` is isolated for ingress (egress): picked by a policy of that
// type, or in a namespace with an unparsed policy.
bool IsolatedForIngress(const ClusterView& view, const PodInfo& pod);
bool IsolatedForEgress(const ClusterView& view, const PodInfo& pod);

// Whether `policy` picks `pod` (same namespace, podSelector matches, not host-network).
bool Selects(const NetworkPolicy& policy, const PodInfo& pod);

}  // namespace tessera::net
