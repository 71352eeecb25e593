// Three users for the tests of who may reach into a team's pods (proxy,
// port-forward, exec): erin edits the team's namespace, vic views it, bob edits
// another one, team-b. A fixture writes kTeamUsersTokenFile as the server's
// --token-auth-file and calls CreateTeamUsers once the server runs.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <tuple>

#include "client/api_client.h"

namespace tessera::testing {

inline constexpr const char* kTeamUsersTokenFile =
    "erin-token,erin,uid-erin\n"
    "vic-token,vic,uid-vic\n"
    "bob-token,bob,uid-bob\n";

// The namespaces `own` (but "default", which is always there) and
// team-b, and the RoleBindings of erin (edit) and vic (view) in `own`, bob
// (edit) in team-b. Fatal failures when one cannot be made.
inline void CreateTeamUsers(ApiClient& admin, const std::string& own = "team-a") {
  using nlohmann::json;
  for (const std::string& ns : {own, std::string("team-b")}) {
    if (ns == "default") continue;
    auto r = admin.Request("POST", "/api/v1/namespaces",
                           json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}.dump());
    ASSERT_TRUE(r && r->status == 201) << ns << ": " << (r ? r->body : r.error().ToString());
  }
  for (const auto& [ns, user, role] : {std::tuple{own, "erin", "edit"}, std::tuple{own, "vic", "view"},
                                       std::tuple{std::string("team-b"), "bob", "edit"}}) {
    const json binding{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                       {"kind", "RoleBinding"},
                       {"metadata", {{"name", std::string(user) + "-" + role}}},
                       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                       {"subjects", {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user}}}}};
    auto r = admin.Request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
                           binding.dump());
    ASSERT_TRUE(r && r->status == 201) << user << ": " << (r ? r->body : r.error().ToString());
  }
}

}  // namespace tessera::testing
