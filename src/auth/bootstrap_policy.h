// The RBAC objects a new installation starts with, modelled on kube-apiserver's
// bootstrap policy and on Kueue's own ClusterRoles, covering every kind Tessera
// serves:
//
//   cluster-admin        everything; bound to the group system:masters
//   admin / edit / view  aggregated (aggregationRule) from the ClusterRoles
//                        labelled rbac.authorization.k8s.io/aggregate-to-{admin,edit,view},
//                        as Kubernetes' are: bind them in a namespace with a
//                        RoleBinding to make a team's admins, editors, viewers.
//                        Their parts (system:aggregate-to-{view,edit,admin}) are
//                        built from what each kind's definition grants
//                        (api/role_grants.h): one rule per API group and verbs.
//                        Today view reads the namespace's pods and logs, Jobs, Volcano
//                        Jobs, Workloads, LocalQueues, NetworkPolicies, quotas,
//                        events, ServiceAccounts, usage records, budgets and
//                        approval requests; edit also writes pods, Jobs, Workloads
//                        and ServiceAccounts and requests their tokens; admin also
//                        writes Roles and RoleBindings and approves or denies
//                        approval requests (approvalrequests/approval).
//                        None of them reaches a cluster-scoped kind.
//   kueue-batch-admin-role / kueue-batch-user-role
//                        Kueue's, aggregated the way Kueue labels its roles
//                        (rbac.kueue.x-k8s.io/batch-admin, .../batch-user) from
//                        the per-kind roles its kinds declare (KueueRoles): the
//                        admin manages ClusterQueues, LocalQueues, flavors and
//                        Workloads; the user runs Jobs and reads LocalQueues and
//                        Workloads.
//   system:basic-user    what the kinds grant every signed-in user: today
//                        SelfSubjectAccessReview, SelfSubjectRulesReview,
//                        SelfSubjectReview; bound to system:authenticated
//   system:discovery, system:public-info-viewer, system:monitoring,
//   system:service-account-issuer-discovery   as kube-apiserver's.
//
// Every object carries the label kubernetes.io/bootstrapping=rbac-defaults and
// the annotation rbac.authorization.kubernetes.io/autoupdate=true: the server
// brings such objects back to these contents at start (an upgrade adds the
// rules of new kinds), unless an admin set autoupdate to "false".
//
// Thread-safety: pure (reads the immutable kind definitions).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

inline constexpr const char* kAutoupdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate";
inline constexpr const char* kBootstrappingLabel = "kubernetes.io/bootstrapping";

// ClusterRoles first, then ClusterRoleBindings; complete objects (apiVersion,
// kind, metadata with labels and annotations).
std::vector<nlohmann::json> BootstrapRbacObjects();

}  // namespace tessera
