// authorization.k8s.io/v1 and authentication.k8s.io/v1: questions a caller asks
// about itself (kubectl auth can-i, auth whoami), answered by the API handler and
// never stored; and the TokenRequest body of serviceaccounts/NAME/token.
#include "api/kinds/groups.h"

#include <string>

#include "api/common_schemas.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef SelfSubjectAccessReviewSchema() {
  SchemaRef resource = Obj({Opt("namespace", Str()), Opt("verb", Str()), Opt("group", Str()), Opt("version", Str()),
                            Opt("resource", Str()), Opt("subresource", Str()), Opt("name", Str()),
                            Opt("fieldSelector", OpenObj()), Opt("labelSelector", OpenObj())});
  SchemaRef non_resource = Obj({Opt("path", Str()), Opt("verb", Str())});
  return Root({Req("spec", Obj({Opt("resourceAttributes", resource), Opt("nonResourceAttributes", non_resource)},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 const bool resource = Get(v, "resourceAttributes") != nullptr;
                                 const bool non_resource = Get(v, "nonResourceAttributes") != nullptr;
                                 if (resource == non_resource) {
                                   errors.Add(path, "exactly one of resourceAttributes or nonResourceAttributes must "
                                                    "be specified");
                                 }
                               }}))});
}

SchemaRef SelfSubjectRulesReviewSchema() { return Root({Req("spec", Obj({Opt("namespace", Str())}))}); }

SchemaRef SelfSubjectReviewSchema() { return Root({}); }

}  // namespace

SchemaRef TokenRequestSchema() {
  static const SchemaRef s = Root({Opt("spec", Obj({
                                                   Opt("audiences", Arr(Str())),
                                                   Opt("expirationSeconds", Int64(0)),
                                                   Opt("boundObjectRef", Obj({Opt("kind", Enum({"Pod", "Secret", "Node"})),
                                                                             Opt("apiVersion", Str()),
                                                                             Opt("name", Str()),
                                                                             Opt("uid", Str())})),
                                               }))});
  return s;
}

std::vector<KindDefinition> AuthorizationKinds() {
  return {
      {.info = {.group = "authorization.k8s.io", .version = "v1", .kind = "SelfSubjectAccessReview",
                .api_version = "authorization.k8s.io/v1", .plural = "selfsubjectaccessreviews",
                .singular = "selfsubjectaccessreview", .namespaced = false, .name_rule = NameRule::kPathSegment,
                .store_key = "authorization.k8s.io/SelfSubjectAccessReview", .stored = false},
       .schema = SelfSubjectAccessReviewSchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kCreate}}}},
      {.info = {.group = "authorization.k8s.io", .version = "v1", .kind = "SelfSubjectRulesReview",
                .api_version = "authorization.k8s.io/v1", .plural = "selfsubjectrulesreviews",
                .singular = "selfsubjectrulesreview", .namespaced = false, .name_rule = NameRule::kPathSegment,
                .store_key = "authorization.k8s.io/SelfSubjectRulesReview", .stored = false},
       .schema = SelfSubjectRulesReviewSchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kCreate}}}},
      {.info = {.group = "authentication.k8s.io", .version = "v1", .kind = "SelfSubjectReview",
                .api_version = "authentication.k8s.io/v1", .plural = "selfsubjectreviews",
                .singular = "selfsubjectreview", .namespaced = false, .name_rule = NameRule::kPathSegment,
                .store_key = "authentication.k8s.io/SelfSubjectReview", .stored = false},
       .schema = SelfSubjectReviewSchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kCreate}}}},
  };
}

}  // namespace tessera
