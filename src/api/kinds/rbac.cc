// rbac.authorization.k8s.io/v1: roles and their bindings. Names are path
// segments ("system:node"), as Kubernetes allows them.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>

#include "api/common_schemas.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef PolicyRule() {
  return Obj({
      Req("verbs", Arr(Str(), /*non_empty=*/true)),
      Opt("apiGroups", Arr(Str())),
      Opt("resources", Arr(Str())),
      Opt("resourceNames", Arr(Str())),
      Opt("nonResourceURLs", Arr(Str())),
  });
}

SchemaRef RoleSchema() {
  return Root({Opt("rules", Arr(PolicyRule()))},
              {[](const json& v, const std::string&, Errors& errors) {
                const json* rules = Get(v, "rules");
                if (!rules) return;
                for (size_t i = 0; i < rules->size(); ++i) {
                  const json* urls = Get((*rules)[i], "nonResourceURLs");
                  if (urls && !urls->empty()) {
                    errors.Add(FieldPath(IndexPath("rules", i), "nonResourceURLs"),
                               "a namespaced Role cannot grant non-resource URLs (use a ClusterRole)");
                  }
                }
              }});
}

SchemaRef ClusterRoleSchema() {
  return Root({
      Opt("rules", Arr(PolicyRule())),
      Opt("aggregationRule", Obj({Opt("clusterRoleSelectors", Arr(LabelSelector()))})),
  });
}

SchemaRef BindingSchema(bool cluster) {
  SchemaRef subject = Obj({
      Req("kind", Enum({"User", "Group", "ServiceAccount"})),
      Opt("apiGroup", Str()),
      Req("name", Str()),
      Opt("namespace", Str()),
  });
  SchemaRef role_ref = Obj({
      Opt("apiGroup", Str()),
      Req("kind", cluster ? Enum({"ClusterRole"}) : Enum({"Role", "ClusterRole"})),
      Req("name", Str()),
  });
  return Root({Opt("subjects", Arr(subject)), Req("roleRef", role_ref)});
}

// A binding's roleRef is fixed, as in Kubernetes: delete the binding and create it again.
Status KeepRoleRef(const KindInfo& kind, const json& stored, const json& next) {
  const json before = stored.value("roleRef", json::object());
  const json after = next.value("roleRef", json::object());
  if (before != after) {
    return Status::InvalidArgument(fmt::format(
        "roleRef: Invalid value: {{APIGroup:\"{}\", Kind:\"{}\", Name:\"{}\"}}: cannot change roleRef (delete the "
        "{} and create it again to bind another role)",
        after.value("apiGroup", ""), after.value("kind", ""), after.value("name", ""), kind.kind));
  }
  return Status::Ok();
}

}  // namespace

std::vector<KindDefinition> RbacKinds() {
  return {
      {.info = {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "Role",
                .api_version = "rbac.authorization.k8s.io/v1", .plural = "roles", .singular = "role",
                .namespaced = true, .name_rule = NameRule::kPathSegment,
                .store_key = "rbac.authorization.k8s.io/Role"},
       .schema = RoleSchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kAdmin, .verbs = verbs::kAll}}}},
      {.info = {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "RoleBinding",
                .api_version = "rbac.authorization.k8s.io/v1", .plural = "rolebindings", .singular = "rolebinding",
                .namespaced = true, .name_rule = NameRule::kPathSegment,
                .store_key = "rbac.authorization.k8s.io/RoleBinding"},
       .schema = BindingSchema(/*cluster=*/false),
       .update_rules = {KeepRoleRef},
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kAdmin, .verbs = verbs::kAll}}}},
      {.info = {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "ClusterRole",
                .api_version = "rbac.authorization.k8s.io/v1", .plural = "clusterroles", .singular = "clusterrole",
                .namespaced = false, .name_rule = NameRule::kPathSegment,
                .store_key = "rbac.authorization.k8s.io/ClusterRole"},
       .schema = ClusterRoleSchema(),
       .columns = DefaultColumns(),
       // No default role grants it: cluster-scoped, for cluster-admin.
       .roles = NoDefaultRoles(),
       .controller = "clusterrole-aggregation"},
      {.info = {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "ClusterRoleBinding",
                .api_version = "rbac.authorization.k8s.io/v1", .plural = "clusterrolebindings",
                .singular = "clusterrolebinding", .namespaced = false, .name_rule = NameRule::kPathSegment,
                .store_key = "rbac.authorization.k8s.io/ClusterRoleBinding"},
       .schema = BindingSchema(/*cluster=*/true),
       .update_rules = {KeepRoleRef},
       .columns = DefaultColumns(),
       // No default role grants it: cluster-scoped, for cluster-admin.
       .roles = NoDefaultRoles()},
  };
}

}  // namespace tessera
