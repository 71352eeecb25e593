// The registry of API kinds the server serves (DESIGN.md section 4).
//
// Each kind is described once, in its definition (api/kind_definition.h; one
// file per API group under api/kinds/). KindInfo is the part every layer needs:
// its group, version, Kind, the resource names a URL or a CLI user writes
// (plural, singular, short names), whether it lives in a namespace, the rule its
// object names follow and the key the store files it under. Three lookups cover
// the three ways a kind reaches the server:
//   - a manifest names it by apiVersion + kind          FindKindByApiVersion
//   - a URL names it by group + version + plural        FindKindByResource
//     (/api/v1/namespaces/ns/pods -> "", "v1", "pods";
//      /apis/kueue.x-k8s.io/v1beta1/clusterqueues -> "kueue.x-k8s.io", "v1beta1", ...)
//   - a CLI user types a name                            FindKindByCliName
//     ("po", "pods", "Pod", "clusterqueue", "cq", "jobs.batch.volcano.sh")
//
// Where two kinds answer to one CLI name ("jobs": batch/v1 Job and Volcano's Job)
// the built-in Kubernetes group wins, as in kubectl; "vcjob" or
// "jobs.batch.volcano.sh" names the other.
//
// Thread-safety: the registry is immutable static data; every function is safe to
// call from any thread. KindInfo pointers stay valid for the life of the program.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Which names an object of a kind may take (Kubernetes' apimachinery rules).
enum class NameRule {
  kDns1123Subdomain,  // lower-case alphanumerics, '-', '.'; at most 253 characters
  kDns1123Label,      // lower-case alphanumerics and '-'; at most 63 characters
  kDns1035Label,      // a DNS-1123 label that starts with a letter (Services)
  kPathSegment,       // anything but "/", "%", "." and ".." (RBAC: "system:admin")
};

struct KindInfo {
  std::string_view group;        // "" for the core API
  std::string_view version;      // "v1", "v1beta1"
  std::string_view kind;         // "ClusterQueue"
  std::string_view api_version;  // "v1" for core, else "group/version"
  std::string_view plural;       // "clusterqueues"
  std::string_view singular;     // "clusterqueue"
  std::vector<std::string_view> short_names;  // "cq"
  // The groups of resources it belongs to in discovery, for `kubectl get all`
  // ("all": what a user runs) and `kubectl get kueue` / `tessera`.
  std::vector<std::string_view> categories;
  bool namespaced = false;
  NameRule name_rule = NameRule::kDns1123Subdomain;
  std::string_view store_key;    // "<group>/<Kind>": "/Pod", "kueue.x-k8s.io/ClusterQueue"
  // False for the kinds that are only ever created, never stored: a POST
  // computes an answer (SelfSubjectAccessReview, SelfSubjectReview).
  bool stored = true;
};

// Every registered kind (stored or not), in lookup-priority order (core, then built-in groups,
// then the ecosystem's CRD groups).
std::span<const KindInfo> AllKinds();

// By a manifest's `apiVersion` ("v1", "batch/v1") and `kind` (exact case, as
// Kubernetes compares it). nullptr when not served.
const KindInfo* FindKindByApiVersion(std::string_view api_version, std::string_view kind);

// By URL path parts; `group` is "" for /api/v1. Plural exact (lower case).
// nullptr when not served.
const KindInfo* FindKindByResource(std::string_view group, std::string_view version,
                                   std::string_view plural);
// By group + plural in any version served (an access review names no version).
const KindInfo* FindKindByGroupResource(std::string_view group, std::string_view plural);

// By what a CLI user types: plural, singular, short name or Kind, compared
// case-insensitively, optionally qualified as "name.group" or
// "name.version.group" ("jobs.batch", "jobs.v1alpha1.batch.volcano.sh").
// nullptr when nothing matches.
const KindInfo* FindKindByCliName(std::string_view name);

// By store key ("/Pod", "kueue.x-k8s.io/ClusterQueue"). nullptr when unknown.
const KindInfo* FindKindByStoreKey(std::string_view store_key);

// The apiVersions under which some kind named `kind` is served ("Job" ->
// {"batch/v1", "batch.volcano.sh/v1alpha1"}); empty when no kind has that name.
// For error messages that tell the user what to write instead.
std::vector<std::string_view> ApiVersionsServingKind(std::string_view kind);

}  // namespace tessera
