// The nftables ruleset of one node: NetworkPolicy for the node's pods and
// Services' cluster IPs, compiled from a ClusterView into one nft script that
// replaces Tessera's tables atomically. Pure: text in memory, no I/O
// (nftables.h applies it).
//
// Where the rules act (the node agent applies the script in the node's
// network namespace, the one holding the bridge; pods are on the bridge
// through veths, br_netfilter passes bridged IPv4 through the inet hooks):
//   table inet tessera
//     forward (filter): pod traffic through the node, bridged between two
//       local pods or routed to and from other nodes and the outside:
//         ct state established,related accept; ct state invalid drop;
//         from the bridge with a source outside cluster_cidr: drop (spoofing;
//           a pod's own address is held to its veth by the bridge table);
//         IPv6 from or to the bridge: drop (the pod network is IPv4 only, so
//           IPv6 would pass unpoliced);
//         a pod to itself (through its own Service): accept;
//         source a local pod isolated for egress: jump to its egress chain
//           (returns when a rule allows, else drop);
//         destination a local pod isolated for ingress: jump to its ingress
//           chain (accepts when a rule allows, else drop).
//       So egress is enforced at the source's node, ingress at the
//       destination's; two pods of one node get both checks in one pass.
//     input (filter): traffic from the bridge to the node itself (the agent's
//       and the server's ports) passes the source pod's egress chain as any
//       other destination would: a pod isolated for egress reaches its node
//       only where a rule allows the node's address (an ipBlock).
//     Node-originated traffic to pods (probes) is never filtered: it leaves
//       through output and the bridge, not forward; replies are established.
//     nat prerouting / output: a Service's (clusterIP, protocol, port) is
//       DNATed to one of its ready endpoints' (ip, targetPort), chosen with
//       `numgen random mod N` for each new connection; prerouting for pods,
//       output for the node's own processes (the node needs a route covering
//       the cluster IPs, a default route will do, for its connect() to get
//       that far).
//     filter at priority dstnat+10 in prerouting and output: traffic still
//       addressed to a cluster IP after DNAT (a Service without ready
//       endpoints, or a port it does not serve) is rejected with ICMP port
//       unreachable (ECONNREFUSED, as kube-proxy's REJECT).
//     nat postrouting: a pod reaching itself through its Service (hairpin) is
//       masqueraded to the bridge's address, else its reply would bypass the
//       un-DNAT. This needs hairpin mode on the pod's bridge port (`ip link set
//       dev VETH type bridge_slave hairpin on`, IFLA_BRPORT_MODE; the CNI
//       bridge plugin's hairpinMode): without it the bridge will not send the
//       DNATed frame back out of the port it came in by. Pod traffic to addresses outside cluster_cidr leaving by
//       another interface than the bridge is masqueraded to the node's
//       address when masquerade_outside is set.
//   table bridge tessera (only when veth names are given): a frame from a
//     pod's veth must carry that pod's IPv4 address (IP and ARP), and no
//     IPv6: a pod cannot take another pod's address to pass its rules.
//   Policy is applied after DNAT, so to the endpoint pod and target port, as
//   Kubernetes expects of Services.
//
// Sets, so that large clusters stay fast: every rule of a policy that picks a
// local pod gets one named interval set of its peers' addresses (selected
// pods' IPs and ipBlocks with their excepts cut out), shared by every local
// pod the policy picks; a pod's chain holds one rule per policy rule
// (`ip saddr @peers meta l4proto . th dport { tcp . 80, udp . 1000-2000 }`),
// never one per peer pair. Named ports resolve on the destination: in an
// ingress chain against the local pod itself, in egress through a set of
// (pod ip . protocol . port) of every peer pod that has the name.
//
// Fail closed:
//   - a pod of a namespace with an unparsed policy is isolated both ways
//     (cluster_view.h); so is a local pod (NodeNetwork::pods) whose address
//     no pod of the view has, or more than one has: its labels are unknown.
//   - a pod address held by more than one pod of the view is left out of the
//     selector-made peer sets (only an ipBlock can still allow it).
//   - RenderDenyAllRuleset, for when no ruleset can be made at all: every
//     pod's traffic but established connections and the node's probes drops.
//   - IPv6 ipBlocks match nothing (network_policy.h).
//
// Replacing: the script starts with `table inet tessera {}` then `delete
// table inet tessera` (likewise for bridge), then defines the tables afresh,
// all in one nft transaction: it applies the same whether or not the tables
// exist, and no packet sees a half-made ruleset. Existing connections are
// kept (their conntrack entries are established), new ones see the new rules.
//
// Deterministic: the same view and node give the same bytes (everything is
// sorted), so the agent can compare and skip an unchanged ruleset.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "domain/ipv4_cidr.h"
#include "net/cluster_view.h"

namespace tessera::net {

inline constexpr std::string_view kTableName = "tessera";

// A pod of this node.
struct LocalPod {
  uint32_t ip = 0;    // host order; the PodInfo of the view with this address gives its labels
  std::string veth;   // the bridge port on the node's side; "" when not known (no per-port anti-spoofing)
  friend bool operator==(const LocalPod&, const LocalPod&) = default;
};

struct NodeNetwork {
  // The tables' name (inet and bridge): one per node, so that agents sharing
  // one network namespace (several nodes on one host) keep a table each.
  std::string table = std::string(kTableName);
  std::string bridge = "tsr0";   // the pods' bridge in the node's namespace
  Ipv4Cidr pod_cidr;             // this node's spec.podCIDR (the bridge's subnet)
  Ipv4Cidr cluster_cidr;         // every node's pod ranges together (--cluster-cidr)
  std::vector<LocalPod> pods;    // the pods this node runs (not host-network ones)
  bool masquerade_outside = true;  // SNAT pods' traffic leaving the cluster range
  friend bool operator==(const NodeNetwork&, const NodeNetwork&) = default;
};

// InvalidArgument when `node` cannot be rendered: a table name that is not a
// letter then up to 63 of [A-Za-z0-9_.-], an interface name that is not 1..15 of [A-Za-z0-9_.-], a pod address outside pod_cidr or twice, a
// pod_cidr outside cluster_cidr.
Status ValidateNodeNetwork(const NodeNetwork& node);

// The node's whole ruleset (see above); InvalidArgument from ValidateNodeNetwork.
Result<std::string> RenderNodeRuleset(const ClusterView& view, const NodeNetwork& node);

// Fail closed, for when no ruleset can be computed: drops every new
// connection from or to node.pod_cidr through forward and from the bridge
// to the node (input), keeping established ones and the node's probes; no
// Services. InvalidArgument from ValidateNodeNetwork (pods are not used).
Result<std::string> RenderDenyAllRuleset(const NodeNetwork& node);

// The script that deletes the tables `table` (Tessera's by default), present or not.
std::string RenderDeleteTables(std::string_view table = kTableName);

}  // namespace tessera::net
