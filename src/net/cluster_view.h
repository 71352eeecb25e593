// ClusterView: what the pod network needs to know of the cluster, as plain
// value types the node agent fills from its watches (Pods, Namespaces,
// NetworkPolicies, Services and their endpoints). Everything in net/ reads
// it: the reference semantics (reachability.h) and the nftables compiler
// (node_ruleset.h).
//
// Contract
// - IPs are dotted IPv4 text ("10.244.1.5"); an empty or unparsable one means
//   "no address": such a pod is no peer of anything (nothing can match it).
// - Every namespace carries the label kubernetes.io/metadata.name=<name>, as
//   the API server sets it; NamespaceLabels adds it even when the namespace is
//   not (yet) in `namespaces`.
// - Host-network pods share their node's address: podSelectors never pick
//   them (as a peer or as the policy's target); they are plain IPs.
// - Fail closed: a NetworkPolicy object that does not parse goes into
//   `unparsed_policies` instead of being dropped. Every pod of its namespace
//   is then isolated for ingress and egress, and only the rules of the other
//   (parsed) policies allow traffic to or from it. As policies only ever add
//   allowances to isolated pods, this allows a subset of what the broken
//   policy meant, whatever it meant: never more.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "net/network_policy.h"

namespace tessera::net {

inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";

struct ContainerPort {
  std::string name;  // "" when unnamed
  uint16_t port = 0;
  Protocol protocol = Protocol::kTCP;
  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

struct PodInfo {
  std::string ns;
  std::string name;
  std::map<std::string, std::string> labels;
  std::string ip;  // dotted IPv4; empty: none yet
  std::vector<ContainerPort> ports;  // of every container, for named ports
  bool host_network = false;
  friend bool operator==(const PodInfo&, const PodInfo&) = default;
};

struct NamespaceInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  friend bool operator==(const NamespaceInfo&, const NamespaceInfo&) = default;
};

struct ServicePort {
  std::string name;
  Protocol protocol = Protocol::kTCP;
  uint16_t port = 0;         // on the cluster IP
  uint16_t target_port = 0;  // on each endpoint (resolved: a number)
  friend bool operator==(const ServicePort&, const ServicePort&) = default;
};

struct ServiceInfo {
  std::string ns;
  std::string name;
  std::string cluster_ip;  // dotted IPv4; empty or "None" (headless): no virtual IP
  std::vector<ServicePort> ports;
  std::vector<std::string> ready_endpoint_ips;
  friend bool operator==(const ServiceInfo&, const ServiceInfo&) = default;
};

// A NetworkPolicy object that failed ParseNetworkPolicy (see fail closed above).
struct UnparsedPolicy {
  std::string ns;
  std::string name;
  std::string error;
  friend bool operator==(const UnparsedPolicy&, const UnparsedPolicy&) = default;
};

struct ClusterView {
  std::vector<NamespaceInfo> namespaces;
  std::vector<PodInfo> pods;
  std::vector<NetworkPolicy> policies;
  std::vector<UnparsedPolicy> unparsed_policies;
  std::vector<ServiceInfo> services;

  // Parses `object` into policies, or records it in unparsed_policies (its
  // namespace and name read as far as they can be; an object without a
  // namespace cannot be placed and is returned as the error alone).
  Status AddPolicyJson(const nlohmann::json& object);
};

// The labels of namespace `ns`: those in the view plus kubernetes.io/metadata.name.
std::map<std::string, std::string> NamespaceLabels(const ClusterView& view, std::string_view ns);

// "A.B.C.D" as a host-order address; nullopt for anything else (IPv6, "").
std::optional<uint32_t> ParseIpv4(std::string_view text);

// From a v1 Pod: metadata.namespace, name, labels; status.podIP (or the IPv4
// one of status.podIPs); spec.containers[].ports[] and the ports of init
// containers that keep running (restartPolicy: Always, sidecars);
// spec.hostNetwork. InvalidArgument naming the field for a wrong type.
Result<PodInfo> PodInfoFromJson(const nlohmann::json& pod);

// From a v1 Namespace: its name and labels, kubernetes.io/metadata.name added.
Result<NamespaceInfo> NamespaceInfoFromJson(const nlohmann::json& ns);

// From a v1 Service and the discovery.k8s.io/v1 EndpointSlices of it (those
// labelled kubernetes.io/service-name=<name>; others are skipped). An
// endpoint is ready when conditions.ready is true or absent, as EndpointSlice
// consumers read it. A port's target is the slice port of the same name (and
// protocol); without slices, spec.ports[].targetPort when a number, else the
// port itself. Only IPv4 addresses are kept.
Result<ServiceInfo> ServiceInfoFromJson(const nlohmann::json& service, std::span<const nlohmann::json> endpoint_slices);

}  // namespace tessera::net
