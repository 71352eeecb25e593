// Internal to net/: the matching rules of NetworkPolicy's peers and ports,
// shared by the reference semantics (reachability.cc) and the nftables
// compiler (node_ruleset.cc) so that the two cannot drift apart.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "net/cluster_view.h"
#include "net/reachability.h"

namespace tessera::net {

// Every namespace's labels (kubernetes.io/metadata.name included), for the
// namespaces of the view and of its pods; built once per decision or render.
class NamespaceIndex {
 public:
  explicit NamespaceIndex(const ClusterView& view);
  // The labels of `ns`; those of a namespace the view does not hold are the
  // automatic label alone.
  const std::map<std::string, std::string>& LabelsOf(const std::string& ns) const;

 private:
  std::map<std::string, std::map<std::string, std::string>, std::less<>> labels_;
  mutable std::map<std::string, std::map<std::string, std::string>, std::less<>> others_;
};

// True when a policy of `ns` did not parse (its pods are isolated both ways).
bool HasUnparsedPolicy(const ClusterView& view, std::string_view ns);

// Whether `peer` of a policy of namespace `policy_ns` matches `other`:
// ipBlock by address (a pod's or a bare IP's; the node peer has none),
// selectors only pods that are not host-network.
bool PeerMatches(const NamespaceIndex& namespaces, const std::string& policy_ns, const PolicyPeer& peer,
                 const Peer& other);

// The number of `target`'s container port called `name` for `protocol`.
std::optional<uint16_t> NamedPort(const PodInfo& target, const std::string& name, Protocol protocol);

// Whether `rule`'s ports allow (port, protocol) to `target` (the destination
// pod; nullptr when it is no pod: named ports then match nothing).
bool RuleAllowsPort(const PolicyRule& rule, const PodInfo* target, uint16_t port, Protocol protocol);

}  // namespace tessera::net
