// Kubernetes RBAC (rbac.authorization.k8s.io/v1), decided exactly as
// kube-apiserver's RBAC authorizer decides, from an index by subject.
//
// Semantics (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac and
// pkg/apis/rbac/v1 helpers), which users' manifests and habits rely on:
//   - A request is allowed when some rule of some role bound to the user allows
//     it; there is no deny. A ClusterRoleBinding grants its ClusterRole's rules
//     everywhere: in every namespace, at the cluster scope and for non-resource
//     URLs. A RoleBinding in namespace N grants its Role (of N) or ClusterRole's
//     rules only for requests in N (never cluster-scoped or non-resource ones).
//   - Subjects: User matches user.name; Group matches one of user.groups;
//     ServiceAccount matches the user "system:serviceaccount:NS:NAME", NS being
//     the subject's namespace or, when empty, the RoleBinding's.
//   - A resource rule matches when verbs holds the verb or "*"; apiGroups the
//     group ("" is the core group) or "*"; resources the resource, or "*", or
//     for a subresource request "resource/subresource" or "*/subresource" (a
//     plain "resource" does NOT cover its subresources, nor does "resource/*");
//     resourceNames is empty or holds the request's name (so a rule with
//     resourceNames never matches list, watch, create or deletecollection,
//     which name no object).
//   - A non-resource rule (nonResourceURLs) matches when the verb matches and a
//     URL equals the path, is "*", or ends in "*" and is a prefix of the path.
//   - A ClusterRole with an aggregationRule has the rules of every ClusterRole
//     whose labels match one of its selectors (transitively: an aggregated
//     role may itself be aggregated), as the clusterrole-aggregation
//     controller makes them; the rules written in it are not its own (that
//     controller overwrites them with the aggregation).
//   - A binding whose role does not exist grants nothing (and is not an error).
//
// Cost: Allowed looks up the user's name and each of its groups in a hash map
// and checks only the bindings of those subjects (each holding a pointer to
// its role's effective rules), never every binding. Role and binding changes
// rebuild only what they touch; a ClusterRole change recomputes aggregation.
//
// Thread-safety: every method may be called from any thread; reads share a
// lock, changes take it alone.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/user_info.h"
#include "common/result.h"
#include "domain/label_selector.h"  // LabelSelectorTerms: aggregationRule's selectors

namespace tessera {

struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;
  friend bool operator==(const PolicyRule&, const PolicyRule&) = default;
};

// What is asked (k8s.io/apiserver/pkg/authorization/authorizer.Attributes).
struct RbacAttributes {
  std::string_view verb;  // get list watch create update patch delete deletecollection, or escalate, bind, ...
  bool resource_request = true;
  std::string_view api_group;    // "" for the core API
  std::string_view resource;     // plural: "jobs"
  std::string_view subresource;  // "status", "log", "token"; "" for the object itself
  std::string_view ns;           // "" at the cluster scope
  std::string_view name;         // "" when the request names no object
  std::string_view path;         // for a non-resource request: "/metrics"
};

// A Role (ns set) or a ClusterRole (ns empty).
struct RbacRole {
  std::string ns;
  std::string name;
  std::vector<PolicyRule> rules;
  std::map<std::string, std::string> labels;
  // ClusterRoles only: aggregationRule.clusterRoleSelectors; nullopt: no aggregationRule.
  std::optional<std::vector<LabelSelectorTerms>> aggregation;
  friend bool operator==(const RbacRole&, const RbacRole&) = default;
};

struct RbacSubject {
  enum class Kind { kUser, kGroup, kServiceAccount };
  Kind kind = Kind::kUser;
  std::string name;
  std::string ns;  // kServiceAccount only; empty: the RoleBinding's namespace
  friend bool operator==(const RbacSubject&, const RbacSubject&) = default;
};

// A RoleBinding (ns set) or a ClusterRoleBinding (ns empty).
struct RbacBinding {
  std::string ns;
  std::string name;
  bool role_is_cluster_role = true;  // roleRef.kind: ClusterRole (else Role, of ns)
  std::string role_name;
  std::vector<RbacSubject> subjects;
  friend bool operator==(const RbacBinding&, const RbacBinding&) = default;
};

// From stored objects (they passed validation); InvalidArgument naming the
// field for anything else. The kind comes from the object's "kind".
Result<RbacRole> RbacRoleFromJson(const nlohmann::json& object);        // Role or ClusterRole
Result<RbacBinding> RbacBindingFromJson(const nlohmann::json& object);  // RoleBinding or ClusterRoleBinding
Result<std::vector<PolicyRule>> PolicyRulesFromJson(const nlohmann::json& rules);  // a "rules" list
nlohmann::json PolicyRulesToJson(std::span<const PolicyRule> rules);

// Whether one rule allows the request (the matching rules above).
bool RuleAllows(const PolicyRule& rule, const RbacAttributes& attributes);

// The part of `requested` that `owned` does not cover, as kube-apiserver's
// escalation check computes it (rbac/validation.Covers): each requested rule is
// broken into atomic rules (one verb, one group, one resource, one resource
// name or none; or one verb and one URL), and an atomic rule is covered when
// one owned rule allows it as a request would be allowed, where a "*" asked for
// is covered only by a "*" held. Returns the uncovered atomic rules, in order;
// empty when everything is covered.
std::vector<PolicyRule> UncoveredRules(std::span<const PolicyRule> owned, std::span<const PolicyRule> requested);

// A rule as kube-apiserver prints it in escalation errors:
//   {APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "delete"]}
//   {NonResourceURLs:["/metrics"], Verbs:["get"]}
// (ResourceNames:[...] after Resources when set).
std::string PolicyRuleString(const PolicyRule& rule);

class RbacIndex {
 public:
  RbacIndex();
  ~RbacIndex();
  RbacIndex(const RbacIndex&) = delete;
  RbacIndex& operator=(const RbacIndex&) = delete;

  // Adds or replaces (by ns and name) a Role or ClusterRole, a RoleBinding or
  // ClusterRoleBinding; Remove* of an unknown one does nothing.
  void PutRole(RbacRole role);
  void RemoveRole(std::string_view ns, std::string_view name);
  void PutBinding(RbacBinding binding);
  void RemoveBinding(std::string_view ns, std::string_view name);
  // Replaces everything at once (a relist).
  void Reset(std::vector<RbacRole> roles, std::vector<RbacBinding> bindings);

  // The decision for `user` asking `attributes` (semantics above).
  bool Allowed(const UserInfo& user, const RbacAttributes& attributes) const;

  // Every rule bound to `user` that applies in namespace `ns` (its
  // ClusterRoleBindings' rules, and when ns is not empty its RoleBindings' in
  // ns), duplicates removed: what the escalation check compares with, and what
  // SelfSubjectRulesReview lists.
  std::vector<PolicyRule> RulesFor(const UserInfo& user, std::string_view ns) const;

  // The effective rules (aggregation applied) of the Role ns/name, or of the
  // ClusterRole `name` when ns is empty; nullopt when it does not exist.
  std::optional<std::vector<PolicyRule>> RoleRules(std::string_view ns, std::string_view name) const;

  // The subjects of every binding that grants `attributes` (its ns decides
  // which RoleBindings count), each once, in a stable order (cluster bindings
  // first, then by binding name): "who may approve this" in messages.
  std::vector<RbacSubject> SubjectsAllowed(const RbacAttributes& attributes) const;

  size_t roles() const;
  size_t bindings() const;

  struct State;  // the index, defined in rbac.cc

 private:
  mutable std::shared_mutex mu_;
  std::unique_ptr<State> state_;
};

}  // namespace tessera
