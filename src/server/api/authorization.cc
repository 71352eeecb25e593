#include "server/api/authorization.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "server/api/api_errors.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string GroupsText(const UserInfo& user) {
  std::string out = "[";
  for (size_t i = 0; i < user.groups.size(); ++i) {
    if (i > 0) out += ' ';
    out += fmt::format("\"{}\"", user.groups[i]);
  }
  return out + "]";
}

std::string StringOf(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string NamespaceOf(const json& object) {
  auto meta = object.find("metadata");
  return meta != object.end() ? StringOf(*meta, "namespace") : "";
}

std::string NameOf(const json& object) {
  auto meta = object.find("metadata");
  return meta != object.end() ? StringOf(*meta, "name") : "";
}

// Merges rules that name one API group and one resource, no names and no
// URLs, and differ only by their verbs (kube-apiserver's CompactRules).
std::vector<PolicyRule> CompactRules(const std::vector<PolicyRule>& rules) {
  std::vector<PolicyRule> out;
  std::map<std::pair<std::string, std::string>, size_t> simple;  // (group, resource) -> index in out
  for (const PolicyRule& r : rules) {
    const bool mergeable = r.api_groups.size() == 1 && r.resources.size() == 1 && r.resource_names.empty() &&
                           r.non_resource_urls.empty();
    if (!mergeable) {
      out.push_back(r);
      continue;
    }
    auto [it, added] = simple.try_emplace({r.api_groups[0], r.resources[0]}, out.size());
    if (added) {
      out.push_back(r);
      continue;
    }
    std::vector<std::string>& verbs = out[it->second].verbs;
    for (const std::string& v : r.verbs) {
      if (std::find(verbs.begin(), verbs.end(), v) == verbs.end()) verbs.push_back(v);
    }
  }
  return out;
}

// kube-apiserver's words for rules asked for and not held: compacted, one per
// line, sorted as text.
Status NotHeld(const UserInfo& user, const std::vector<PolicyRule>& missing) {
  std::set<std::string> lines;
  for (const PolicyRule& r : CompactRules(missing)) lines.insert(PolicyRuleString(r));
  std::string rules;
  for (const std::string& line : lines) rules += "\n" + line;
  return Status::PermissionDenied(
      fmt::format("user \"{}\" (groups={}) is attempting to grant RBAC permissions not currently held:{}", user.name,
                  GroupsText(user), rules));
}

}  // namespace

std::string ForbiddenReason(const UserInfo& user, const RequestInfo& r) {
  if (!r.resource_request) return fmt::format("User \"{}\" cannot {} path \"{}\"", user.name, r.verb, r.path);
  const std::string resource = r.subresource.empty() ? r.resource : fmt::format("{}/{}", r.resource, r.subresource);
  if (!r.ns.empty()) {
    return fmt::format("User \"{}\" cannot {} resource \"{}\" in API group \"{}\" in the namespace \"{}\"", user.name,
                       r.verb, resource, r.api_group, r.ns);
  }
  return fmt::format("User \"{}\" cannot {} resource \"{}\" in API group \"{}\" at the cluster scope", user.name, r.verb,
                     resource, r.api_group);
}

HttpResponse ForbiddenResponse(const UserInfo& user, const RequestInfo& r, std::string_view why) {
  std::string reason = ForbiddenReason(user, r);
  if (!why.empty()) reason += fmt::format(": {}", why);
  if (!r.resource_request) return StatusResponse(403, "Forbidden", fmt::format("forbidden: {}", reason));
  const std::string qualified = r.api_group.empty() ? r.resource : fmt::format("{}.{}", r.resource, r.api_group);
  json details{{"kind", r.resource}};
  if (!r.api_group.empty()) details["group"] = r.api_group;
  if (!r.name.empty()) {
    details["name"] = r.name;
    return StatusResponse(403, "Forbidden", fmt::format("{} \"{}\" is forbidden: {}", qualified, r.name, reason), details);
  }
  return StatusResponse(403, "Forbidden", fmt::format("{} is forbidden: {}", qualified, reason), details);
}

HttpResponse ForbiddenObjectResponse(const KindInfo& kind, std::string_view name, std::string_view message) {
  return StatusResponse(403, "Forbidden", fmt::format("{} \"{}\" is forbidden: {}", QualifiedResource(kind), name, message),
                        ObjectDetails(kind, name));
}

AuthorizationDecision RequestAuthorizer::Authorize(const UserInfo& user, const RequestInfo& request,
                                                   const NodeRequestFacts& facts) const {
  if (user.InGroup(kGroupMasters)) return {.allowed = true, .reason = std::string(kGroupMasters)};
  if (user.InGroup(kGroupNodes) && user.name.starts_with(kNodeUserPrefix)) {
    const std::string node = user.name.substr(kNodeUserPrefix.size());
    switch (AuthorizeNode(node, request, facts)) {
      case NodeDecision::kAllow: return {.allowed = true, .reason = "node"};
      case NodeDecision::kAllowIfBound:
        return {.allowed = true, .only_bound_to_node = true, .node = node, .reason = "node"};
      case NodeDecision::kNoOpinion: break;
    }
  }
  if (rbac_.Allowed(user, request.Attributes())) return {.allowed = true, .reason = "RBAC"};
  return {.allowed = false, .reason = "RBAC: no rule of the roles bound to the user allows it"};
}

bool RequestAuthorizer::Allowed(const UserInfo& user, const RbacAttributes& attributes) const {
  return user.InGroup(kGroupMasters) || rbac_.Allowed(user, attributes);
}

Status RequestAuthorizer::CheckNoEscalation(const UserInfo& user, const KindInfo& kind, const json& object) const {
  if (kind.group != "rbac.authorization.k8s.io" || user.InGroup(kGroupMasters)) return Status::Ok();
  const std::string ns = NamespaceOf(object);
  const bool cluster = !kind.namespaced;
  const std::string roles = cluster ? "clusterroles" : "roles";
  if (kind.kind == "Role" || kind.kind == "ClusterRole") {
    const RbacAttributes escalate{.verb = "escalate", .api_group = "rbac.authorization.k8s.io", .resource = roles,
                                  .ns = cluster ? std::string_view() : std::string_view(ns), .name = NameOf(object)};
    if (rbac_.Allowed(user, escalate)) return Status::Ok();
    if (object.contains("aggregationRule")) {
      return Status::PermissionDenied("must have cluster-admin privileges to use the aggregationRule");
    }
    ASSIGN_OR_RETURN(RbacRole role, RbacRoleFromJson(object));
    const std::vector<PolicyRule> missing = UncoveredRules(rbac_.RulesFor(user, cluster ? "" : ns), role.rules);
    return missing.empty() ? Status::Ok() : NotHeld(user, missing);
  }
  // A binding: `bind` on the role it names, or every permission of that role.
  ASSIGN_OR_RETURN(RbacBinding binding, RbacBindingFromJson(object));
  const std::string role_resource = binding.role_is_cluster_role ? "clusterroles" : "roles";
  const RbacAttributes bind{.verb = "bind", .api_group = "rbac.authorization.k8s.io", .resource = role_resource,
                            .ns = cluster ? std::string_view() : std::string_view(ns), .name = binding.role_name};
  if (rbac_.Allowed(user, bind)) return Status::Ok();
  const auto rules = rbac_.RoleRules(binding.role_is_cluster_role ? "" : ns, binding.role_name);
  if (!rules) {
    return Status::NotFound(fmt::format("{}.rbac.authorization.k8s.io \"{}\" not found", role_resource,
                                                binding.role_name));
  }
  const std::vector<PolicyRule> missing = UncoveredRules(rbac_.RulesFor(user, cluster ? "" : ns), *rules);
  return missing.empty() ? Status::Ok() : NotHeld(user, missing);
}

}  // namespace tessera
