// NetworkPolicy (networking.k8s.io/v1) as a value type, parsed from the stored
// JSON with the defaults and the checks the Kubernetes API applies.
//
// What a policy means (the Kubernetes spec; net/reachability.h applies it):
//   - spec.podSelector picks pods of the policy's namespace ({} or absent: all
//     of them). A pod picked by a policy of type Ingress (Egress) is isolated
//     for ingress (egress): only what the union of the rules of every such
//     policy allows gets through. A pod picked by none is open for that type.
//   - policyTypes: as written; when absent or empty, Ingress always and Egress
//     when spec.egress holds at least one rule (SetDefaults_NetworkPolicySpec:
//     `egress: []` is "no egress rules", as Go cannot tell it from absent).
//     A type listed without rules isolates and allows nothing: deny-all.
//   - A rule allows traffic that matches one of its peers AND one of its
//     ports. An empty or absent `from`/`to` matches every peer, an empty or
//     absent `ports` every port and protocol; `{}` allows everything.
//   - A peer: podSelector alone (pods of the policy's namespace),
//     namespaceSelector alone (every pod of the matching namespaces), both
//     (pods matching podSelector in namespaces matching namespaceSelector:
//     AND), or ipBlock alone (addresses in cidr and in no except entry; pod
//     addresses too, as upstream's e2e tests expect).
//   - A port: protocol (TCP when absent; UDP, SCTP) and port: a number (with
//     endPort: the range port..endPort), a name (a container port of the
//     *destination* pod with that name and protocol), or absent (every port of
//     that protocol).
//
// IPv6: Kubernetes allows IPv6 ipBlocks and so do we; they are parsed and kept
// (IpBlock::ipv6) but Tessera's pod network is IPv4 only, so they match no
// address (an IPv6 `except` under an IPv4 cidr is refused, as Kubernetes does).
//
// Errors: InvalidArgument naming the field by its path,
// "spec.ingress[0].from[1].ipBlock.cidr: ...", saying what to write instead.
// The checks are Kubernetes' ValidateNetworkPolicy ones, so that what the API
// server accepted always parses (net/cluster_view.h says how an object that
// does not parse is treated: it fails closed).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "domain/ipv4_cidr.h"
#include "domain/label_selector.h"

namespace tessera::net {

enum class Protocol { kTCP, kUDP, kSCTP };

std::string_view ProtocolName(Protocol p);  // "TCP", "UDP", "SCTP"
// "TCP", "UDP" or "SCTP" (Kubernetes spells them in capitals only).
std::optional<Protocol> ParseProtocol(std::string_view text);

// An ipBlock peer. For IPv4: the addresses in `cidr` and in none of `except`.
struct IpBlock {
  std::string text;          // cidr as written (messages, IPv6)
  bool ipv6 = false;         // an IPv6 block: matches no address here
  Ipv4Cidr cidr;             // IPv4 only; host bits cleared ("10.0.0.1/24" is 10.0.0.0/24, as Kubernetes reads it)
  std::vector<Ipv4Cidr> except;  // IPv4 only; each a strict subset of cidr
  bool Contains(uint32_t address) const;
  friend bool operator==(const IpBlock&, const IpBlock&) = default;
};

struct PolicyPeer {
  std::optional<LabelSelectorTerms> pod_selector;
  std::optional<LabelSelectorTerms> namespace_selector;
  std::optional<IpBlock> ip_block;  // set alone
  friend bool operator==(const PolicyPeer&, const PolicyPeer&) = default;
};

struct PolicyPort {
  Protocol protocol = Protocol::kTCP;
  // At most one of these; neither: every port of `protocol`.
  std::optional<uint16_t> port;  // 1..65535
  std::string named;             // an IANA service name: "http", "serve-80-tcp"
  std::optional<uint16_t> end_port;  // only with a numeric port; >= port
  friend bool operator==(const PolicyPort&, const PolicyPort&) = default;
};

// An ingress rule (peers = from) or an egress rule (peers = to).
struct PolicyRule {
  std::vector<PolicyPeer> peers;  // empty: every peer
  std::vector<PolicyPort> ports;  // empty: every port and protocol
  friend bool operator==(const PolicyRule&, const PolicyRule&) = default;
};

struct NetworkPolicy {
  std::string ns;
  std::string name;
  LabelSelectorTerms pod_selector;  // {} when absent: every pod of ns
  bool ingress_type = true;         // policyTypes holds Ingress (after defaulting)
  bool egress_type = false;         // policyTypes holds Egress (after defaulting)
  std::vector<PolicyRule> ingress;
  std::vector<PolicyRule> egress;
  friend bool operator==(const NetworkPolicy&, const NetworkPolicy&) = default;
};

// From a stored NetworkPolicy (kind, metadata.namespace, metadata.name, spec).
Result<NetworkPolicy> ParseNetworkPolicy(const nlohmann::json& object);

}  // namespace tessera::net
