#include "auth/bootstrap_policy.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "api/kind_definition.h"

namespace tessera {
namespace {

using nlohmann::json;

const std::vector<std::string> kRead = VerbNames(verbs::kRead);
const std::vector<std::string> kAll = VerbNames(verbs::kAll);

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

// The rules a default role's part holds, from every kind's grants (in registry
// order): one rule per API group and set of verbs, listing its resources
// ("pods", "pods/log") in the order the kinds declare them.
json RulesOf(DefaultRole role) {
  struct Entry {
    std::string_view group;
    VerbSet verbs;
    std::vector<std::string> resources;
  };
  std::vector<Entry> entries;
  for (const KindDefinition& d : AllDefinitions()) {
    if (!d.roles) continue;
    for (const RoleGrant& g : d.roles->grants) {
      if (g.role != role) continue;
      std::string resource(d.info.plural);
      if (!g.subresource.empty()) resource += "/" + std::string(g.subresource);
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const Entry& e) { return e.group == d.info.group && e.verbs == g.verbs; });
      if (it == entries.end()) it = entries.insert(entries.end(), Entry{d.info.group, g.verbs, {}});
      it->resources.push_back(std::move(resource));
    }
  }
  json rules = json::array();
  for (Entry& e : entries) rules.push_back(Rule(std::string(e.group), std::move(e.resources), VerbNames(e.verbs)));
  return rules;
}

// Kueue's own roles for one kind (api/role_grants.h, KueueRoles), named and
// labelled as Kueue ships them.
void AddKueueRoles(const KindInfo& kind, KueueRoles roles, std::vector<json>& out) {
  const std::string group(kind.group);
  const std::string plural(kind.plural);
  const std::string status = plural + "/status";
  switch (roles) {
    case KueueRoles::kNone: return;
    case KueueRoles::kJobEditor:
      out.push_back(ClusterRole("kueue-" + std::string(kind.singular) + "-editor-role",
                                json::array({Rule(group, {plural}, kAll), Rule(group, {status}, {"get"})}),
                                True({kBatchAdmin, kBatchUser})));
      return;
    case KueueRoles::kBatchAdmin:
    case KueueRoles::kBatchAdminAndTeam: {
      const std::string prefix = "kueue-" + std::string(kind.singular);
      out.push_back(ClusterRole(prefix + "-editor-role",
                                json::array({Rule(group, {plural}, kAll), Rule(group, {status}, {"get"})}),
                                True({kBatchAdmin})));
      out.push_back(ClusterRole(prefix + "-viewer-role",
                                json::array({Rule(group, {plural}, kRead), Rule(group, {status}, {"get"})}),
                                roles == KueueRoles::kBatchAdminAndTeam
                                    ? True({kBatchAdmin, kBatchUser, kToView, kToEdit, kToAdmin})
                                    : True({kBatchAdmin})));
      return;
    }
  }
}

}  // namespace

std::vector<json> BootstrapRbacObjects() {
  std::vector<json> out;
  out.push_back(ClusterRole("cluster-admin", json::array({Rule("*", {"*"}, {"*"}), UrlRule({"*"}, {"*"})})));

  // The user-facing roles, filled by aggregation as Kubernetes' are.
  out.push_back(AggregatedClusterRole("admin", {kToAdmin}));
  out.push_back(AggregatedClusterRole("edit", {kToEdit}, True({kToAdmin})));
  out.push_back(AggregatedClusterRole("view", {kToView}, True({kToEdit})));

  // What each adds, from the kinds' definitions (Kueue's kinds also come with
  // Kueue's roles below).
  out.push_back(ClusterRole("system:aggregate-to-view", RulesOf(DefaultRole::kView), True({kToView})));
  out.push_back(ClusterRole("system:aggregate-to-edit", RulesOf(DefaultRole::kEdit), True({kToEdit})));
  out.push_back(ClusterRole("system:aggregate-to-admin", RulesOf(DefaultRole::kAdmin), True({kToAdmin})));

  // Kueue's roles and their parts, with Kueue's labels: batch admins manage the
  // queues, batch users run Jobs and read their queues and Workloads.
  out.push_back(AggregatedClusterRole("kueue-batch-admin-role", {kBatchAdmin}));
  out.push_back(AggregatedClusterRole("kueue-batch-user-role", {kBatchUser}));
  for (const KindDefinition& d : AllDefinitions()) {
    if (d.roles) AddKueueRoles(d.info, d.roles->kueue, out);
  }

  // What every signed-in user may ask about itself, and the discovery paths.
  out.push_back(ClusterRole("system:basic-user", RulesOf(DefaultRole::kBasicUser)));
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
