// Authorization of API requests (DESIGN.md section 12), kube-apiserver's chain:
//   1. the group system:masters may do everything (the bootstrap admin);
//   2. a node's agent is decided by the node rules (node_authorizer.h) where
//      they have an opinion;
//   3. RBAC (auth/rbac.h) decides the rest.
// A refusal is answered as kube-apiserver answers it, 403 Forbidden with
// Status.details, in its words:
//   jobs.batch is forbidden: User "alice" cannot create resource "jobs" in API group "batch" in the namespace "team-nlp"
//   pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "team-a"
//   clusterqueues.kueue.x-k8s.io is forbidden: User "alice" cannot list resource "clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope
//   forbidden: User "alice" cannot get path "/metrics"
//
// Escalation prevention, as kube-apiserver's RBAC storage enforces it: a Role or
// ClusterRole may be created or updated only by someone who holds every
// permission it grants (in its namespace, or cluster-wide) or holds `escalate`
// on roles/clusterroles; a ClusterRole with an aggregationRule needs
// `escalate` (or system:masters). A RoleBinding or ClusterRoleBinding may be
// written only by someone who holds `bind` on the role it names, or every
// permission of that role where the binding applies.
//
// Thread-safety: const methods only; safe from any thread while the RbacIndex
// is (it is).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "auth/rbac.h"
#include "auth/user_info.h"
#include "common/status.h"
#include "http/http_server.h"
#include "server/api/node_authorizer.h"
#include "server/api/request_info.h"

namespace tessera {

struct AuthorizationDecision {
  bool allowed = false;
  // Allowed for a node's agent only if the pod concerned is bound to it: the
  // handler checks the object before acting.
  bool only_bound_to_node = false;
  std::string node;    // the agent's node, with only_bound_to_node
  std::string reason;  // for the audit log: "RBAC", "system:masters", "node"
};

class RequestAuthorizer {
 public:
  explicit RequestAuthorizer(const RbacIndex& rbac) : rbac_(rbac) {}

  AuthorizationDecision Authorize(const UserInfo& user, const RequestInfo& request,
                                  const NodeRequestFacts& facts = {}) const;
  // RBAC's answer alone for `attributes` (SelfSubjectAccessReview asks this, with masters allowed).
  bool Allowed(const UserInfo& user, const RbacAttributes& attributes) const;

  // PermissionDenied in kube-apiserver's words when `user` may not write
  // `object` (a Role, ClusterRole, RoleBinding or ClusterRoleBinding) because it
  // would grant what `user` does not hold (rules above); OK otherwise, and for
  // any other kind.
  Status CheckNoEscalation(const UserInfo& user, const KindInfo& kind, const nlohmann::json& object) const;

  const RbacIndex& rbac() const { return rbac_; }

 private:
  const RbacIndex& rbac_;
};

// "User \"alice\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"team-nlp\""
std::string ForbiddenReason(const UserInfo& user, const RequestInfo& request);
// The 403 for a refused request, with Status.details as Kubernetes fills them.
HttpResponse ForbiddenResponse(const UserInfo& user, const RequestInfo& request, std::string_view why = "");
// A 403 about one object for a Status whose message is already worded
// (escalation): "<resource> \"<name>\" is forbidden: <message>".
HttpResponse ForbiddenObjectResponse(const KindInfo& kind, std::string_view name, std::string_view message);

}  // namespace tessera
