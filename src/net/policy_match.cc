#include "net/policy_match.h"

namespace tessera::net {

NamespaceIndex::NamespaceIndex(const ClusterView& view) {
  for (const NamespaceInfo& ns : view.namespaces) {
    auto& labels = labels_[ns.name];
    labels = ns.labels;
    labels[std::string(kNamespaceNameLabel)] = ns.name;
  }
}

const std::map<std::string, std::string>& NamespaceIndex::LabelsOf(const std::string& ns) const {
  if (auto it = labels_.find(ns); it != labels_.end()) return it->second;
  auto [it, inserted] = others_.try_emplace(ns);
  if (inserted) it->second[std::string(kNamespaceNameLabel)] = ns;
  return it->second;
}

bool HasUnparsedPolicy(const ClusterView& view, std::string_view ns) {
  for (const UnparsedPolicy& u : view.unparsed_policies) {
    if (u.ns == ns) return true;
  }
  return false;
}

bool PeerMatches(const NamespaceIndex& namespaces, const std::string& policy_ns, const PolicyPeer& peer,
                 const Peer& other) {
  if (peer.ip_block) {
    auto address = ParseIpv4(other.ip());
    return address && peer.ip_block->Contains(*address);
  }
  if (other.kind() != Peer::Kind::kPod || other.pod()->host_network) return false;
  const PodInfo& pod = *other.pod();
  if (peer.namespace_selector) {
    if (!peer.namespace_selector->Matches(namespaces.LabelsOf(pod.ns))) return false;
  } else if (pod.ns != policy_ns) {
    return false;
  }
  return !peer.pod_selector || peer.pod_selector->Matches(pod.labels);
}

std::optional<uint16_t> NamedPort(const PodInfo& target, const std::string& name, Protocol protocol) {
  for (const ContainerPort& p : target.ports) {
    if (p.name == name && p.protocol == protocol) return p.port;
  }
  return std::nullopt;
}

bool RuleAllowsPort(const PolicyRule& rule, const PodInfo* target, uint16_t port, Protocol protocol) {
  if (rule.ports.empty()) return true;
  for (const PolicyPort& p : rule.ports) {
    if (p.protocol != protocol) continue;
    if (p.port) {
      if (port >= *p.port && port <= p.end_port.value_or(*p.port)) return true;
    } else if (!p.named.empty()) {
      if (target != nullptr && !target->host_network && NamedPort(*target, p.named, protocol) == port) return true;
    } else {
      return true;  // every port of the protocol
    }
  }
  return false;
}

}  // namespace tessera::net
