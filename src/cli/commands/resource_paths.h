// REST paths and display names for API kinds (kinds.h), as Kubernetes writes them:
//   CollectionPath(ClusterQueue, "")        /apis/kueue.x-k8s.io/v1beta1/clusterqueues
//   CollectionPath(Pod, "team-nlp")         /api/v1/namespaces/team-nlp/pods
//   CollectionPath(Pod, "")                 /api/v1/pods  (every namespace)
//   ObjectPath(Job, "ns", "train")          /apis/batch/v1/namespaces/ns/jobs/train
//   QualifiedKind(ClusterQueue)             clusterqueue.kueue.x-k8s.io   (kubectl's -o name form)
//   QualifiedKind(Namespace)                namespace
//   ObjectRef(Job, "train")                 job.batch/train
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "common/result.h"

namespace tessera {

// `ns` is ignored for cluster-scoped kinds; empty for a namespaced kind means
// every namespace.
std::string CollectionPath(const KindInfo& kind, std::string_view ns);
std::string ObjectPath(const KindInfo& kind, std::string_view ns, std::string_view name);

// The collection path with ?labelSelector=... (and more query parameters) appended.
std::string WithQuery(std::string path, const std::vector<std::pair<std::string, std::string>>& query);

std::string QualifiedKind(const KindInfo& kind);
std::string ObjectRef(const KindInfo& kind, std::string_view name);

// Percent-encodes everything but RFC 3986's unreserved characters (and ':' '@',
// which path segments allow).
std::string PercentEncode(std::string_view text);

// The kind a user typed ("cq", "pods", "jobs.batch.volcano.sh"); InvalidArgument
// naming the known resource types when none matches.
Result<const KindInfo*> ResolveKindArg(std::string_view name);

// Command-line object arguments: either `KIND NAME...` or `KIND/NAME...`
// (kubectl accepts both). Each pair is a kind and a name; a bare KIND gives one
// pair with an empty name.
struct ObjectArg {
  const KindInfo* kind = nullptr;
  std::string name;
};
Result<std::vector<ObjectArg>> ParseObjectArgs(const std::vector<std::string>& args);

}  // namespace tessera
