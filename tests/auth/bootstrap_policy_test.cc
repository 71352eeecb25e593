// The default ClusterRoles are built from what each kind's definition grants
// (api/role_grants.h); these tests hold them to the roles as they were written
// by hand before that, rule for rule (as sets of one group, one resource, one
// verb), label for label.
#include "auth/bootstrap_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "api/kind_definition.h"
#include "api/role_grants.h"

namespace tessera {
namespace {

using nlohmann::json;

// (apiGroup, resource, verb), or ("", "url:" + URL, verb) for a non-resource rule.
using Atom = std::tuple<std::string, std::string, std::string>;

std::set<Atom> AtomsOf(const json& rules) {
  std::set<Atom> atoms;
  for (const json& rule : rules) {
    for (const json& verb : rule.value("verbs", json::array())) {
      for (const json& url : rule.value("nonResourceURLs", json::array())) {
        atoms.emplace("", "url:" + url.get<std::string>(), verb.get<std::string>());
      }
      for (const json& group : rule.value("apiGroups", json::array())) {
        for (const json& resource : rule.value("resources", json::array())) {
          atoms.emplace(group.get<std::string>(), resource.get<std::string>(), verb.get<std::string>());
        }
      }
    }
  }
  return atoms;
}

std::map<std::string, json> ByName(const std::vector<json>& objects, std::string_view kind) {
  std::map<std::string, json> out;
  for (const json& o : objects) {
    if (o.value("kind", "") == kind) out[o["metadata"].value("name", "")] = o;
  }
  return out;
}

// The roles built from the kinds, as they were written by hand: name -> rules and the
// aggregation labels they carry (besides kubernetes.io/bootstrapping).
struct ExpectedRole {
  std::string name;
  json rules;
  std::vector<std::string> labels;
};

const char* kToView = "rbac.authorization.k8s.io/aggregate-to-view";
const char* kToEdit = "rbac.authorization.k8s.io/aggregate-to-edit";
const char* kToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin";
const char* kBatchAdmin = "rbac.kueue.x-k8s.io/batch-admin";
const char* kBatchUser = "rbac.kueue.x-k8s.io/batch-user";

std::vector<ExpectedRole> HandWrittenRoles() {
  const json read = {"get", "list", "watch"};
  const json write = {"create", "delete", "deletecollection", "patch", "update"};
  const json all = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
  auto rule = [](std::string group, json resources, json verbs) {
    return json{{"apiGroups", {std::move(group)}}, {"resources", std::move(resources)}, {"verbs", std::move(verbs)}};
  };
  std::vector<ExpectedRole> roles = {
      {"system:aggregate-to-view",
       {rule("",
             {"pods", "pods/log", "pods/status", "serviceaccounts", "configmaps", "persistentvolumeclaims",
              "persistentvolumeclaims/status", "resourcequotas", "resourcequotas/status", "events", "namespaces",
              "namespaces/status", "services", "services/status"},
             read),
        rule("discovery.k8s.io", {"endpointslices"}, read), rule("batch", {"jobs", "jobs/status", "jobs/scale"}, read),
        rule("batch.volcano.sh", {"jobs", "jobs/status"}, read), rule("networking.k8s.io", {"networkpolicies"}, read),
        rule("tessera.dev",
             {"usagerecords", "budgets", "budgets/status", "approvalrequests", "approvalrequests/status", "trainingjobs",
              "trainingjobs/status", "sweeps", "sweeps/status"},
             read),
        rule("tessera.dev", {"pipelines", "pipelines/status", "pipelineruns", "pipelineruns/status"}, read),
        rule("tessera.dev", {"notebooks", "notebooks/status"}, read),
        rule("tessera.dev", {"inferenceservices", "inferenceservices/status", "inferenceservices/scale"}, read)},
       {kToView}},
      {"system:aggregate-to-edit",
       {rule("", {"pods", "serviceaccounts", "secrets", "configmaps", "persistentvolumeclaims", "services"}, write),
        rule("", {"secrets"}, read), rule("", {"serviceaccounts/token"}, {"create"}),
        // As Kubernetes' edit role: reaching into pods, never in view.
        rule("", {"pods/exec", "pods/portforward", "pods/proxy", "services/proxy"}, all), rule("batch", {"jobs", "jobs/scale"}, write),
        rule("batch.volcano.sh", {"jobs"}, write), rule("kueue.x-k8s.io", {"workloads"}, write),
        rule("networking.k8s.io", {"networkpolicies"}, write),
        rule("tessera.dev", {"trainingjobs", "pipelines", "pipelineruns", "sweeps", "notebooks", "inferenceservices",
                             "inferenceservices/scale"},
             write),
        // Where would it run? Asked by whoever submits work.
        rule("tessera.dev", {"schedulingreviews"}, {"create"})},
       {kToEdit}},
      {"system:aggregate-to-admin",
       {rule("rbac.authorization.k8s.io", {"roles", "rolebindings"}, all),
        rule("tessera.dev", {"approvalrequests/approval"}, {"get", "update", "patch"})},
       {kToAdmin}},
      {"kueue-job-editor-role", {rule("batch", {"jobs"}, all), rule("batch", {"jobs/status"}, {"get"})},
       {kBatchAdmin, kBatchUser}},
      {"system:basic-user",
       {rule("authorization.k8s.io", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, {"create"}),
        rule("authentication.k8s.io", {"selfsubjectreviews"}, {"create"}),
        // Flavors (prices) and quotas: what one needs to choose where to run.
        rule("kueue.x-k8s.io", {"resourceflavors"}, read), rule("kueue.x-k8s.io", {"clusterqueues"}, read),
        // The catalogue: everyone's to read and render from.
        rule("tessera.dev", {"templates"}, read), rule("tessera.dev", {"templates/render"}, {"create"})},
       {}},
  };
  for (std::string plural : {"clusterqueues", "resourceflavors", "localqueues", "workloads"}) {
    const std::string singular = plural.substr(0, plural.size() - 1);
    const bool team_visible = plural == "localqueues" || plural == "workloads";
    roles.push_back({"kueue-" + singular + "-editor-role",
                     {rule("kueue.x-k8s.io", {plural}, all), rule("kueue.x-k8s.io", {plural + "/status"}, {"get"})},
                     {kBatchAdmin}});
    roles.push_back({"kueue-" + singular + "-viewer-role",
                     {rule("kueue.x-k8s.io", {plural}, read), rule("kueue.x-k8s.io", {plural + "/status"}, {"get"})},
                     team_visible ? std::vector<std::string>{kBatchAdmin, kBatchUser, kToView, kToEdit, kToAdmin}
                                  : std::vector<std::string>{kBatchAdmin}});
  }
  return roles;
}

// Each role built from the kinds grants exactly what its hand-written form granted,
// and carries the same aggregation labels.
TEST(BootstrapPolicyTest, DerivedRolesGrantWhatTheHandWrittenRolesGranted) {
  const std::map<std::string, json> roles = ByName(BootstrapRbacObjects(), "ClusterRole");
  for (const ExpectedRole& expected : HandWrittenRoles()) {
    SCOPED_TRACE(expected.name);
    auto it = roles.find(expected.name);
    ASSERT_NE(it, roles.end());
    EXPECT_EQ(AtomsOf(it->second["rules"]), AtomsOf(expected.rules));
    json labels = {{"kubernetes.io/bootstrapping", "rbac-defaults"}};
    for (const std::string& l : expected.labels) labels[l] = "true";
    EXPECT_EQ(it->second["metadata"]["labels"], labels);
    EXPECT_EQ(it->second["metadata"]["annotations"], json({{kAutoupdateAnnotation, "true"}}));
    EXPECT_FALSE(it->second.contains("aggregationRule"));
  }
}

// The installation starts with the same objects, by name, as before: the roles built
// from the kinds replace hand-written ones, nothing is added or lost.
TEST(BootstrapPolicyTest, TheSameRolesAndBindingsExist) {
  std::set<std::string> roles, bindings;
  for (const json& o : BootstrapRbacObjects()) {
    (o["kind"] == "ClusterRole" ? roles : bindings).insert(o["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(roles, (std::set<std::string>{"cluster-admin",
                                          "admin",
                                          "edit",
                                          "view",
                                          "system:aggregate-to-view",
                                          "system:aggregate-to-edit",
                                          "system:aggregate-to-admin",
                                          "kueue-batch-admin-role",
                                          "kueue-batch-user-role",
                                          "kueue-clusterqueue-editor-role",
                                          "kueue-clusterqueue-viewer-role",
                                          "kueue-resourceflavor-editor-role",
                                          "kueue-resourceflavor-viewer-role",
                                          "kueue-localqueue-editor-role",
                                          "kueue-localqueue-viewer-role",
                                          "kueue-workload-editor-role",
                                          "kueue-workload-viewer-role",
                                          "kueue-job-editor-role",
                                          "system:basic-user",
                                          "system:discovery",
                                          "system:public-info-viewer",
                                          "system:monitoring",
                                          "system:service-account-issuer-discovery"}));
  EXPECT_EQ(bindings, (std::set<std::string>{"cluster-admin", "system:basic-user", "system:discovery",
                                             "system:public-info-viewer", "system:monitoring",
                                             "system:service-account-issuer-discovery"}));
}

// A role's part holds one rule per API group and set of verbs: the core group's
// reads are one rule, whatever the number of kinds that view reads.
TEST(BootstrapPolicyTest, OneRulePerGroupAndVerbs) {
  const std::map<std::string, json> roles = ByName(BootstrapRbacObjects(), "ClusterRole");
  std::set<std::pair<json, json>> seen;
  for (const json& rule : roles.at("system:aggregate-to-view")["rules"]) {
    EXPECT_TRUE(seen.emplace(rule["apiGroups"], rule["verbs"]).second) << rule.dump();
  }
  EXPECT_EQ(seen.size(), 6u);  // "", discovery, batch, volcano, networking, tessera.dev
}

// Every kind's grants reach the roles: a kind that view reads is in
// system:aggregate-to-view with get, list and watch (here: each one, checked atom by atom).
TEST(BootstrapPolicyTest, EveryGrantOfEveryKindIsInItsRole) {
  const std::map<std::string, json> roles = ByName(BootstrapRbacObjects(), "ClusterRole");
  const std::map<DefaultRole, std::string> part = {{DefaultRole::kView, "system:aggregate-to-view"},
                                                   {DefaultRole::kEdit, "system:aggregate-to-edit"},
                                                   {DefaultRole::kAdmin, "system:aggregate-to-admin"},
                                                   {DefaultRole::kBasicUser, "system:basic-user"}};
  for (const KindDefinition& d : AllDefinitions()) {
    ASSERT_TRUE(d.roles.has_value()) << d.info.store_key;
    for (const RoleGrant& g : d.roles->grants) {
      const std::set<Atom> atoms = AtomsOf(roles.at(part.at(g.role))["rules"]);
      const std::string resource =
          std::string(d.info.plural) + (g.subresource.empty() ? "" : "/" + std::string(g.subresource));
      for (const std::string& verb : VerbNames(g.verbs)) {
        EXPECT_TRUE(atoms.contains(Atom(std::string(d.info.group), resource, verb)))
            << d.info.store_key << " " << resource << " " << verb;
      }
    }
  }
}

}  // namespace
}  // namespace tessera
