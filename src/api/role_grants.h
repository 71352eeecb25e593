// What the default roles grant on a kind, as its definition declares it
// (api/kind_definition.h); auth/bootstrap_policy.h builds the default
// ClusterRoles from these declarations, so that a new kind reaches view, edit
// and admin by saying so in one place.
//
// The roles (Kubernetes' user-facing roles and their aggregation):
//   view        reads what a team may read in its namespace (never Secrets);
//   edit        view's, and writes the team's workloads and configuration;
//   admin       edit's, and a namespace's Roles, RoleBindings and approvals;
//   basic-user  every signed-in user (system:basic-user): the self-reviews.
// A grant names the role that adds it: edit holds what view grants and admin
// what edit grants, by aggregation, so a kind that view reads and edit writes
// declares ViewReads() and EditWrites(). Kueue's kinds also come with Kueue's own
// per-kind roles (KueueRoles), aggregated the way Kueue labels them.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class DefaultRole { kView, kEdit, kAdmin, kBasicUser };

// A set of RBAC verbs, a bit each.
using VerbSet = uint16_t;
namespace verbs {
inline constexpr VerbSet kGet = 1 << 0;
inline constexpr VerbSet kList = 1 << 1;
inline constexpr VerbSet kWatch = 1 << 2;
inline constexpr VerbSet kCreate = 1 << 3;
inline constexpr VerbSet kUpdate = 1 << 4;
inline constexpr VerbSet kPatch = 1 << 5;
inline constexpr VerbSet kDelete = 1 << 6;
inline constexpr VerbSet kDeleteCollection = 1 << 7;
inline constexpr VerbSet kRead = kGet | kList | kWatch;
inline constexpr VerbSet kWrite = kCreate | kUpdate | kPatch | kDelete | kDeleteCollection;
inline constexpr VerbSet kAll = kRead | kWrite;
}  // namespace verbs

// The verbs' names in alphabetical order, as Kubernetes' default roles list
// them: kRead -> get, list, watch.
std::vector<std::string> VerbNames(VerbSet verbs);

struct RoleGrant {
  DefaultRole role = DefaultRole::kView;
  std::string_view subresource;  // "" for the resource itself; "status", "log", "token", "approval", "proxy"
  VerbSet verbs = 0;
};

// Kueue's own ClusterRoles for one of its kinds, as Kueue ships them.
enum class KueueRoles {
  kNone,
  // kueue-<singular>-editor-role (every verb; get on status) and
  // kueue-<singular>-viewer-role (read; get on status), both aggregated into
  // kueue-batch-admin-role.
  kBatchAdmin,
  // The same, and the viewer also into kueue-batch-user-role and into view,
  // edit and admin: a team sees its queues and Workloads.
  kBatchAdminAndTeam,
  // kueue-job-editor-role (batch/v1 Jobs: every verb; get on status), into
  // kueue-batch-admin-role and kueue-batch-user-role: batch users run Jobs.
  kJobEditor,
};

struct RoleGrants {
  std::vector<RoleGrant> grants;
  KueueRoles kueue = KueueRoles::kNone;
};

// The usual grants.
RoleGrant ViewReads(std::string_view subresource = "");   // view: get, list, watch
RoleGrant EditWrites(std::string_view subresource = "");  // edit: create, delete, deletecollection, patch, update
// No default role grants the kind (cluster-admin only, or only the server and
// the nodes write it); a definition says so explicitly.
RoleGrants NoDefaultRoles();

}  // namespace tessera
