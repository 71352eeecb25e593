#include "api/kinds.h"

#include <algorithm>
#include <cctype>

namespace tessera {
namespace {

KindInfo Make(std::string_view group, std::string_view version, std::string_view kind,
              std::string_view api_version, std::string_view plural, std::string_view singular,
              std::vector<std::string_view> short_names, bool namespaced, NameRule rule,
              std::string_view store_key, bool stored = true) {
  return KindInfo{group, version, kind, api_version, plural, singular, std::move(short_names),
                  namespaced, rule, store_key, stored};
}

constexpr bool kNotStored = false;

constexpr bool kNamespaced = true;
constexpr bool kCluster = false;

// Short names are kubectl's (core) and the CRDs' own (Kueue, Volcano). Order is
// lookup priority for CLI names that two kinds share: built-in groups first.
const std::vector<KindInfo>& Registry() {
  static const std::vector<KindInfo> kinds = {
      // core/v1
      Make("", "v1", "Namespace", "v1", "namespaces", "namespace", {"ns"}, kCluster,
           NameRule::kDns1123Label, "/Namespace"),
      Make("", "v1", "ResourceQuota", "v1", "resourcequotas", "resourcequota", {"quota"},
           kNamespaced, NameRule::kDns1123Subdomain, "/ResourceQuota"),
      Make("", "v1", "Pod", "v1", "pods", "pod", {"po"}, kNamespaced,
           NameRule::kDns1123Subdomain, "/Pod"),
      Make("", "v1", "Node", "v1", "nodes", "node", {"no"}, kCluster,
           NameRule::kDns1123Subdomain, "/Node"),
      Make("", "v1", "Event", "v1", "events", "event", {"ev"}, kNamespaced,
           NameRule::kDns1123Subdomain, "/Event"),
      Make("", "v1", "ServiceAccount", "v1", "serviceaccounts", "serviceaccount", {"sa"}, kNamespaced,
           NameRule::kDns1123Subdomain, "/ServiceAccount"),
      Make("", "v1", "Secret", "v1", "secrets", "secret", {}, kNamespaced, NameRule::kDns1123Subdomain,
           "/Secret"),
      // A Service's name becomes {NAME}_SERVICE_HOST in its pods' variables: a DNS-1035 label.
      Make("", "v1", "Service", "v1", "services", "service", {"svc"}, kNamespaced, NameRule::kDns1035Label,
           "/Service"),
      Make("", "v1", "ConfigMap", "v1", "configmaps", "configmap", {"cm"}, kNamespaced, NameRule::kDns1123Subdomain,
           "/ConfigMap"),
      Make("", "v1", "PersistentVolumeClaim", "v1", "persistentvolumeclaims", "persistentvolumeclaim", {"pvc"},
           kNamespaced, NameRule::kDns1123Subdomain, "/PersistentVolumeClaim"),
      // batch/v1 (before Volcano: "jobs" means batch/v1 Job, as in kubectl)
      Make("batch", "v1", "Job", "batch/v1", "jobs", "job", {}, kNamespaced,
           NameRule::kDns1123Subdomain, "batch/Job"),
      // scheduling.k8s.io/v1
      Make("scheduling.k8s.io", "v1", "PriorityClass", "scheduling.k8s.io/v1", "priorityclasses",
           "priorityclass", {"pc"}, kCluster, NameRule::kDns1123Subdomain,
           "scheduling.k8s.io/PriorityClass"),
      // rbac.authorization.k8s.io/v1: names are path segments ("system:node").
      Make("rbac.authorization.k8s.io", "v1", "Role", "rbac.authorization.k8s.io/v1", "roles",
           "role", {}, kNamespaced, NameRule::kPathSegment, "rbac.authorization.k8s.io/Role"),
      Make("rbac.authorization.k8s.io", "v1", "RoleBinding", "rbac.authorization.k8s.io/v1",
           "rolebindings", "rolebinding", {}, kNamespaced, NameRule::kPathSegment,
           "rbac.authorization.k8s.io/RoleBinding"),
      Make("rbac.authorization.k8s.io", "v1", "ClusterRole", "rbac.authorization.k8s.io/v1",
           "clusterroles", "clusterrole", {}, kCluster, NameRule::kPathSegment,
           "rbac.authorization.k8s.io/ClusterRole"),
      Make("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding",
           "rbac.authorization.k8s.io/v1", "clusterrolebindings", "clusterrolebinding", {},
           kCluster, NameRule::kPathSegment, "rbac.authorization.k8s.io/ClusterRoleBinding"),
      // authorization.k8s.io/v1 and authentication.k8s.io/v1: questions a caller
      // asks about itself (kubectl auth can-i, auth whoami); answered, never stored.
      Make("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "authorization.k8s.io/v1",
           "selfsubjectaccessreviews", "selfsubjectaccessreview", {}, kCluster, NameRule::kPathSegment,
           "authorization.k8s.io/SelfSubjectAccessReview", kNotStored),
      Make("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "authorization.k8s.io/v1",
           "selfsubjectrulesreviews", "selfsubjectrulesreview", {}, kCluster, NameRule::kPathSegment,
           "authorization.k8s.io/SelfSubjectRulesReview", kNotStored),
      Make("authentication.k8s.io", "v1", "SelfSubjectReview", "authentication.k8s.io/v1", "selfsubjectreviews",
           "selfsubjectreview", {}, kCluster, NameRule::kPathSegment, "authentication.k8s.io/SelfSubjectReview",
           kNotStored),
      // networking.k8s.io/v1
      Make("networking.k8s.io", "v1", "NetworkPolicy", "networking.k8s.io/v1", "networkpolicies",
           "networkpolicy", {"netpol"}, kNamespaced, NameRule::kDns1123Subdomain,
           "networking.k8s.io/NetworkPolicy"),
      // discovery.k8s.io/v1: the endpoints of Services, written by the server's controller
      Make("discovery.k8s.io", "v1", "EndpointSlice", "discovery.k8s.io/v1", "endpointslices", "endpointslice", {},
           kNamespaced, NameRule::kDns1123Subdomain, "discovery.k8s.io/EndpointSlice"),
      // coordination.k8s.io/v1: node heartbeats, as kubelets renew theirs
      Make("coordination.k8s.io", "v1", "Lease", "coordination.k8s.io/v1", "leases", "lease", {},
           kNamespaced, NameRule::kDns1123Subdomain, "coordination.k8s.io/Lease"),
      // kueue.x-k8s.io/v1beta1 (short names from Kueue's CRDs)
      Make("kueue.x-k8s.io", "v1beta1", "ResourceFlavor", "kueue.x-k8s.io/v1beta1",
           "resourceflavors", "resourceflavor", {"flavor", "flavors", "rf"}, kCluster,
           NameRule::kDns1123Subdomain, "kueue.x-k8s.io/ResourceFlavor"),
      Make("kueue.x-k8s.io", "v1beta1", "ClusterQueue", "kueue.x-k8s.io/v1beta1", "clusterqueues",
           "clusterqueue", {"cq"}, kCluster, NameRule::kDns1123Subdomain,
           "kueue.x-k8s.io/ClusterQueue"),
      Make("kueue.x-k8s.io", "v1beta1", "LocalQueue", "kueue.x-k8s.io/v1beta1", "localqueues",
           "localqueue", {"queue", "queues", "lq"}, kNamespaced, NameRule::kDns1123Subdomain,
           "kueue.x-k8s.io/LocalQueue"),
      Make("kueue.x-k8s.io", "v1beta1", "Workload", "kueue.x-k8s.io/v1beta1", "workloads",
           "workload", {"wl"}, kNamespaced, NameRule::kDns1123Subdomain,
           "kueue.x-k8s.io/Workload"),
      // batch.volcano.sh/v1alpha1: Volcano names pods "<job>-<task>-<index>", so
      // a job name is a DNS label (Volcano's admission webhook checks the same).
      Make("batch.volcano.sh", "v1alpha1", "Job", "batch.volcano.sh/v1alpha1", "jobs", "job",
           {"vcjob", "vj"}, kNamespaced, NameRule::kDns1123Label, "batch.volcano.sh/Job"),
      // tessera.dev/v1: what the platform records itself (usage intervals for reports)
      Make("tessera.dev", "v1", "UsageRecord", "tessera.dev/v1", "usagerecords", "usagerecord", {"usage"},
           kNamespaced, NameRule::kDns1123Subdomain, "tessera.dev/UsageRecord"),
      // Governance (DESIGN.md section 12): approval gates and budgets.
      Make("tessera.dev", "v1", "ApprovalPolicy", "tessera.dev/v1", "approvalpolicies", "approvalpolicy", {"ap"},
           kCluster, NameRule::kDns1123Subdomain, "tessera.dev/ApprovalPolicy"),
      Make("tessera.dev", "v1", "ApprovalRequest", "tessera.dev/v1", "approvalrequests", "approvalrequest", {"ar"},
           kNamespaced, NameRule::kDns1123Subdomain, "tessera.dev/ApprovalRequest"),
      Make("tessera.dev", "v1", "Budget", "tessera.dev/v1", "budgets", "budget", {}, kNamespaced,
           NameRule::kDns1123Subdomain, "tessera.dev/Budget"),
  };
  return kinds;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool AnswersTo(const KindInfo& k, std::string_view name) {
  if (EqualsIgnoreCase(name, k.plural) || EqualsIgnoreCase(name, k.singular) ||
      EqualsIgnoreCase(name, k.kind)) {
    return true;
  }
  return std::any_of(k.short_names.begin(), k.short_names.end(),
                     [&](std::string_view s) { return EqualsIgnoreCase(name, s); });
}

}  // namespace

std::span<const KindInfo> AllKinds() { return Registry(); }

const KindInfo* FindKindByApiVersion(std::string_view api_version, std::string_view kind) {
  for (const KindInfo& k : Registry()) {
    if (k.api_version == api_version && k.kind == kind) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByResource(std::string_view group, std::string_view version,
                                   std::string_view plural) {
  for (const KindInfo& k : Registry()) {
    if (k.group == group && k.version == version && k.plural == plural) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByGroupResource(std::string_view group, std::string_view plural) {
  for (const KindInfo& k : Registry()) {
    if (k.group == group && k.plural == plural) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByCliName(std::string_view name) {
  // Steps: 1. an unqualified name matches the first kind (priority order) that
  // answers to it; 2. "name.rest" matches a kind answering to `name` whose group
  // is `rest`, or whose "version.group" is `rest`. A dot never occurs in a
  // resource name itself, so the first dot separates name and group.
  if (name.empty()) return nullptr;
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) {
    for (const KindInfo& k : Registry()) {
      if (AnswersTo(k, name)) return &k;
    }
    return nullptr;
  }
  std::string_view resource = name.substr(0, dot);
  std::string_view rest = name.substr(dot + 1);
  for (const KindInfo& k : Registry()) {
    if (!AnswersTo(k, resource)) continue;
    if (EqualsIgnoreCase(rest, k.group)) return &k;
    size_t vdot = rest.find('.');
    if (vdot != std::string_view::npos && EqualsIgnoreCase(rest.substr(0, vdot), k.version) &&
        EqualsIgnoreCase(rest.substr(vdot + 1), k.group)) {
      return &k;
    }
  }
  return nullptr;
}

const KindInfo* FindKindByStoreKey(std::string_view store_key) {
  for (const KindInfo& k : Registry()) {
    if (k.store_key == store_key) return &k;
  }
  return nullptr;
}

std::vector<std::string_view> ApiVersionsServingKind(std::string_view kind) {
  std::vector<std::string_view> out;
  for (const KindInfo& k : Registry()) {
    if (k.kind == kind) out.push_back(k.api_version);
  }
  return out;
}

}  // namespace tessera
