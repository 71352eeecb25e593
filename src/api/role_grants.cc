#include "api/role_grants.h"

#include <utility>

namespace tessera {

std::vector<std::string> VerbNames(VerbSet set) {
  // Alphabetical: the order the bits are listed in here, not their values.
  static const std::pair<VerbSet, const char*> kNames[] = {
      {verbs::kCreate, "create"}, {verbs::kDelete, "delete"}, {verbs::kDeleteCollection, "deletecollection"},
      {verbs::kGet, "get"},       {verbs::kList, "list"},     {verbs::kPatch, "patch"},
      {verbs::kUpdate, "update"}, {verbs::kWatch, "watch"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames) {
    if ((set & bit) != 0) out.emplace_back(name);
  }
  return out;
}

RoleGrant ViewReads(std::string_view subresource) {
  return {.role = DefaultRole::kView, .subresource = subresource, .verbs = verbs::kRead};
}

RoleGrant EditWrites(std::string_view subresource) {
  return {.role = DefaultRole::kEdit, .subresource = subresource, .verbs = verbs::kWrite};
}

RoleGrants NoDefaultRoles() { return {}; }

}  // namespace tessera
