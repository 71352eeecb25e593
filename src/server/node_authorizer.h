// What a node's agent may do, as Kubernetes' Node authorizer and NodeRestriction
// admission allow a kubelet (DESIGN.md section 12): an agent, authenticated as
// system:node:NAME in system:nodes, may
//   - read Nodes, and create, update and patch its own Node and its status;
//   - get, create, update, patch and delete its own Lease (tessera-node-lease/NAME);
//   - get Namespaces (the uid range its pods run with);
//   - list and watch pods only with fieldSelector spec.nodeName=NAME, and get,
//     delete, update and patch (the status of) only the pods bound to it;
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

#include "server/request_info.h"

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
