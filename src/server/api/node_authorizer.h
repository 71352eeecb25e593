// What a node's agent may do, as Kubernetes' Node authorizer and NodeRestriction
// admission allow a kubelet (DESIGN.md section 12): an agent, authenticated as
// system:node:NAME in system:nodes, may
//   - read Nodes, and create, update and patch its own Node and its status;
//   - get, create, update, patch and delete its own Lease (tessera-node-lease/NAME);
//   - get Namespaces (the uid range its pods run with);
//   - list and watch its pods with fieldSelector spec.nodeName=NAME, and every
//     pod as its network view only (PodNetworkView below); get, delete,
//     update and patch (the status of) only the pods bound to it;
//   - get, list and watch Namespaces, NetworkPolicies, Services and
//     EndpointSlices (the pod network's rules, as kube-proxy reads them);
//   - request a ServiceAccount token only for a pod bound to it, bound to that
//     pod and for the pod's own ServiceAccount;
//   - get a Secret, ConfigMap or PersistentVolumeClaim only when a pod bound
//     to it names it (imagePullSecrets, env valueFrom, envFrom, volumes);
//   - create and update Events.
// Anything else is no opinion here: RBAC decides, where nothing but the
// defaults every signed-in user has (discovery, self reviews) is granted to it.
//
// Thread-safety: pure.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api/request_info.h"

namespace tessera {

inline constexpr std::string_view kNodeLeaseNamespace = "tessera-node-lease";

enum class NodeDecision {
  kAllow,
  kAllowIfBound,  // allowed only for a pod bound to the node (for a token: such a pod's ServiceAccount;
                  // for a Secret: one that such a pod names in imagePullSecrets)
  kNoOpinion,
};

struct NodeRequestFacts {
  std::string_view body_name;       // metadata.name of a create's body
  std::string_view field_selector;  // ?fieldSelector= as received
};

NodeDecision AuthorizeNode(std::string_view node, const RequestInfo& request, const NodeRequestFacts& facts);

}  // namespace tessera

namespace tessera {

// A node's agent lists and watches every pod for the pod network (the peers
// of its pods' NetworkPolicies, the ranks a gang's MASTER_ADDR names), but
// sees of the pods not bound to it only this view: identity, labels, node,
// hostNetwork, the containers' names and ports, phase, readiness and IPs.
// Their commands, variables, volumes and images stay hidden.
bool NodeSeesNetworkViewOnly(std::string_view node, const RequestInfo& request, std::string_view field_selector);
nlohmann::json PodNetworkView(const nlohmann::json& pod);

}  // namespace tessera
