#include "auth/bootstrap_policy.h"

#include <string>
#include <utility>

namespace tessera {
namespace {

using nlohmann::json;

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kWrite = {"create", "delete", "deletecollection", "patch", "update"};
const std::vector<std::string> kAll = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

json Rule(std::string group, std::vector<std::string> resources, std::vector<std::string> verbs) {
  return json{{"apiGroups", {std::move(group)}}, {"resources", std::move(resources)}, {"verbs", std::move(verbs)}};
}

json UrlRule(std::vector<std::string> urls, std::vector<std::string> verbs) {
  return json{{"nonResourceURLs", std::move(urls)}, {"verbs", std::move(verbs)}};
}

json Metadata(std::string name, json labels = json::object()) {
  labels[kBootstrappingLabel] = "rbac-defaults";
  return json{{"name", std::move(name)}, {"labels", std::move(labels)}, {"annotations", {{kAutoupdateAnnotation, "true"}}}};
}

json ClusterRole(std::string name, json rules, json labels = json::object()) {
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRole"},
              {"metadata", Metadata(std::move(name), std::move(labels))},
              {"rules", std::move(rules)}};
}

// A ClusterRole whose rules are those of the ClusterRoles labelled label=true
// (its own rules are left to the aggregation, as Kubernetes leaves them).
json AggregatedClusterRole(std::string name, std::vector<std::string> selector_labels, json labels = json::object()) {
  json selectors = json::array();
  for (std::string& l : selector_labels) selectors.push_back({{"matchLabels", {{std::move(l), "true"}}}});
  json role = ClusterRole(std::move(name), json::array(), std::move(labels));
  role["aggregationRule"] = {{"clusterRoleSelectors", std::move(selectors)}};
  return role;
}

json ClusterRoleBinding(std::string name, std::string role, json subjects) {
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRoleBinding"},
              {"metadata", Metadata(std::move(name))},
              {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", std::move(role)}}},
              {"subjects", std::move(subjects)}};
}

json Group(std::string name) {
  return json{{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", std::move(name)}};
}

constexpr const char* kToView = "rbac.authorization.k8s.io/aggregate-to-view";
constexpr const char* kToEdit = "rbac.authorization.k8s.io/aggregate-to-edit";
constexpr const char* kToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin";
constexpr const char* kBatchAdmin = "rbac.kueue.x-k8s.io/batch-admin";
constexpr const char* kBatchUser = "rbac.kueue.x-k8s.io/batch-user";

json True(std::initializer_list<const char*> keys) {
  json labels = json::object();
  for (const char* k : keys) labels[k] = "true";
  return labels;
}

}  // namespace

std::vector<json> BootstrapRbacObjects() {
  std::vector<json> out;
  out.push_back(ClusterRole("cluster-admin", json::array({Rule("*", {"*"}, {"*"}), UrlRule({"*"}, {"*"})})));

  // The user-facing roles, filled by aggregation as Kubernetes' are.
  out.push_back(AggregatedClusterRole("admin", {kToAdmin}));
  out.push_back(AggregatedClusterRole("edit", {kToEdit}, True({kToAdmin})));
  out.push_back(AggregatedClusterRole("view", {kToView}, True({kToEdit})));

  // What each adds, by kind Tessera serves (Kueue's kinds come from Kueue's roles below).
  out.push_back(ClusterRole(
      "system:aggregate-to-view",
      json::array({Rule("", {"pods", "pods/log", "pods/status", "serviceaccounts", "configmaps", "persistentvolumeclaims",
                             "persistentvolumeclaims/status", "resourcequotas", "resourcequotas/status", "events",
                             "namespaces", "namespaces/status", "services", "services/status"},
                        kRead),
                   // Read by everyone of the team; written only by the server's controller.
                   Rule("discovery.k8s.io", {"endpointslices"}, kRead),
                   Rule("batch", {"jobs", "jobs/status"}, kRead),
                   Rule("batch.volcano.sh", {"jobs", "jobs/status"}, kRead),
                   Rule("networking.k8s.io", {"networkpolicies"}, kRead),
                   Rule("tessera.dev", {"usagerecords", "budgets", "budgets/status", "approvalrequests",
                                        "approvalrequests/status"},
                        kRead)}),
      True({kToView})));
  out.push_back(ClusterRole(
      "system:aggregate-to-edit",
      // Secrets as Kubernetes' edit has them (and view does not: it cannot read them).
      json::array({Rule("", {"pods", "serviceaccounts", "secrets", "configmaps", "persistentvolumeclaims", "services"},
                        kWrite),
                   Rule("", {"secrets"}, kRead),
                   Rule("", {"serviceaccounts/token"}, {"create"}),
                   Rule("batch", {"jobs"}, kWrite), Rule("batch.volcano.sh", {"jobs"}, kWrite),
                   Rule("kueue.x-k8s.io", {"workloads"}, kWrite), Rule("networking.k8s.io", {"networkpolicies"}, kWrite)}),
      True({kToEdit})));
  out.push_back(ClusterRole(
      "system:aggregate-to-admin",
      json::array({Rule("rbac.authorization.k8s.io", {"roles", "rolebindings"}, kAll),
                   Rule("tessera.dev", {"approvalrequests/approval"}, {"get", "update", "patch"})}),
      True({kToAdmin})));

  // Kueue's roles and their parts, with Kueue's labels: batch admins manage the
  // queues, batch users run Jobs and read their queues and Workloads.
  out.push_back(AggregatedClusterRole("kueue-batch-admin-role", {kBatchAdmin}));
  out.push_back(AggregatedClusterRole("kueue-batch-user-role", {kBatchUser}));
  for (const char* plural : {"clusterqueues", "resourceflavors", "localqueues", "workloads"}) {
    const std::string singular = std::string(plural).substr(0, std::string(plural).size() - 1);
    out.push_back(ClusterRole("kueue-" + singular + "-editor-role",
                              json::array({Rule("kueue.x-k8s.io", {plural}, kAll),
                                           Rule("kueue.x-k8s.io", {std::string(plural) + "/status"}, {"get"})}),
                              True({kBatchAdmin})));
    const bool team_visible = std::string(plural) == "localqueues" || std::string(plural) == "workloads";
    out.push_back(ClusterRole("kueue-" + singular + "-viewer-role",
                              json::array({Rule("kueue.x-k8s.io", {plural}, kRead),
                                           Rule("kueue.x-k8s.io", {std::string(plural) + "/status"}, {"get"})}),
                              team_visible ? True({kBatchAdmin, kBatchUser, kToView, kToEdit, kToAdmin})
                                           : True({kBatchAdmin})));
  }
  out.push_back(ClusterRole("kueue-job-editor-role",
                            json::array({Rule("batch", {"jobs"}, kAll), Rule("batch", {"jobs/status"}, {"get"})}),
                            True({kBatchAdmin, kBatchUser})));

  // What every signed-in user may ask about itself, and the discovery paths.
  out.push_back(ClusterRole(
      "system:basic-user",
      json::array({Rule("authorization.k8s.io", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, {"create"}),
                   Rule("authentication.k8s.io", {"selfsubjectreviews"}, {"create"})})));
  out.push_back(ClusterRole("system:discovery",
                            json::array({UrlRule({"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                                  "/openapi/*", "/readyz", "/version", "/version/"},
                                                 {"get"})})));
  out.push_back(ClusterRole(
      "system:public-info-viewer",
      json::array({UrlRule({"/healthz", "/livez", "/readyz", "/version", "/version/"}, {"get"})})));
  out.push_back(ClusterRole("system:monitoring",
                            json::array({UrlRule({"/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/readyz",
                                                  "/readyz/*"},
                                                 {"get"})})));
  out.push_back(ClusterRole("system:service-account-issuer-discovery",
                            json::array({UrlRule({"/.well-known/openid-configuration", "/openid/v1/jwks"}, {"get"})})));

  out.push_back(ClusterRoleBinding("cluster-admin", "cluster-admin", json::array({Group("system:masters")})));
  out.push_back(ClusterRoleBinding("system:basic-user", "system:basic-user", json::array({Group("system:authenticated")})));
  out.push_back(ClusterRoleBinding("system:discovery", "system:discovery", json::array({Group("system:authenticated")})));
  out.push_back(ClusterRoleBinding("system:public-info-viewer", "system:public-info-viewer",
                                   json::array({Group("system:authenticated"), Group("system:unauthenticated")})));
  out.push_back(ClusterRoleBinding("system:monitoring", "system:monitoring", json::array({Group("system:monitoring")})));
  out.push_back(ClusterRoleBinding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery",
                                   json::array({Group("system:serviceaccounts"), Group("system:nodes")})));
  return out;
}

}  // namespace tessera
