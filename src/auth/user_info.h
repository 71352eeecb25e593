// UserInfo: who a request comes from, once authenticated (Kubernetes' user.Info).
//
// Names and groups follow kube-apiserver's conventions, since RBAC bindings and
// users' habits name them:
//   - a user of the token-auth file or of OIDC: the name and groups it gives
//     (OIDC with --oidc-username-prefix / --oidc-groups-prefix applied);
//   - a ServiceAccount: "system:serviceaccount:NS:NAME", groups
//     "system:serviceaccounts" and "system:serviceaccounts:NS";
//   - a node agent: "system:node:NAME", group "system:nodes";
//   - the bootstrap admin: group "system:masters".
// Every authenticated user also has the group "system:authenticated"; a request
// without credentials is "system:anonymous" in "system:unauthenticated" (it is
// refused with 401 before it is authorized, but audit and can-i name it so).
//
// Thread-safety: a value type.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

inline constexpr std::string_view kGroupAuthenticated = "system:authenticated";
inline constexpr std::string_view kGroupUnauthenticated = "system:unauthenticated";
inline constexpr std::string_view kGroupMasters = "system:masters";
inline constexpr std::string_view kGroupNodes = "system:nodes";
inline constexpr std::string_view kGroupServiceAccounts = "system:serviceaccounts";
inline constexpr std::string_view kUserAnonymous = "system:anonymous";
inline constexpr std::string_view kServiceAccountUserPrefix = "system:serviceaccount:";
inline constexpr std::string_view kNodeUserPrefix = "system:node:";

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  // Kubernetes' user.Info extra: for a pod's ServiceAccount token,
  // "authentication.kubernetes.io/pod-name" and ".../pod-uid"; for every
  // token-based identity "authentication.kubernetes.io/credential-id".
  std::map<std::string, std::vector<std::string>> extra;

  bool InGroup(std::string_view group) const {
    for (const std::string& g : groups) {
      if (g == group) return true;
    }
    return false;
  }
  friend bool operator==(const UserInfo&, const UserInfo&) = default;
};

// The user name of a ServiceAccount: "system:serviceaccount:NS:NAME".
inline std::string ServiceAccountUserName(std::string_view ns, std::string_view name) {
  std::string out(kServiceAccountUserPrefix);
  out.append(ns).append(":").append(name);
  return out;
}

// The user name of a node's agent: "system:node:NAME".
inline std::string NodeUserName(std::string_view node) {
  std::string out(kNodeUserPrefix);
  out.append(node);
  return out;
}

}  // namespace tessera
