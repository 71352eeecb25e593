#include "api/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/common_schemas.h"
#include "api/schema.h"
#include "common/suggest.h"
#include "domain/ipv4_cidr.h"
#include "domain/quantity.h"

namespace tessera {

using namespace schema;  // NOLINT(google-build-using-namespace): the schema vocabulary reads as a table

namespace {

using nlohmann::json;

constexpr int64_t kHighestUserPriority = 1'000'000'000;

// ===========================================================================
// The kinds.

SchemaRef NamespaceSchema() {
  return Root({Opt("spec", Obj({Opt("finalizers", Arr(Str()))}))});
}

SchemaRef ResourceQuotaSchema() {
  SchemaRef scope = Enum({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                          "PriorityClass", "CrossNamespacePodAffinity"});
  return Root({Opt("spec", Obj({
                               Opt("hard", ResourceList(/*quota_keys=*/true)),
                               Opt("scopes", Arr(scope)),
                               Opt("scopeSelector",
                                   Obj({Opt("matchExpressions",
                                            Arr(Obj({Req("scopeName", scope),
                                                     Req("operator", Enum({"In", "NotIn", "Exists",
                                                                           "DoesNotExist"})),
                                                     Opt("values", Arr(Str()))},
                                                    {[](const json& v, const std::string& path,
                                                        Errors& errors) {
                                                      CheckRequirementValues(v, path, errors,
                                                                             "operator");
                                                    }})))})),
                           }))});
}

SchemaRef PodSchema() { return Root({Req("spec", PodSpec())}); }

// A Node's pod ranges: each an IPv4 CIDR (domain/ipv4_cidr.h); one of them
// (single stack: IPv4 only); podCIDR, when both are given, the first of podCIDRs.
void CheckPodCidrs(const json& spec, const std::string& path, Errors& errors) {
  auto check = [&](const json& v, const std::string& at) {
    if (!v.is_string()) return;  // the schema says so
    auto cidr = ParseIpv4Cidr(v.get_ref<const std::string&>());
    if (!cidr) errors.Add(at, fmt::format("Invalid value: {}", cidr.error().message()));
  };
  const json* single = Get(spec, "podCIDR");
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty()) {
    check(*single, FieldPath(path, "podCIDR"));
  }
  const json* list = Get(spec, "podCIDRs");
  if (!list || !list->is_array()) return;
  for (size_t i = 0; i < list->size(); ++i) check((*list)[i], IndexPath(FieldPath(path, "podCIDRs"), i));
  if (list->size() > 1) {
    errors.Add(FieldPath(path, "podCIDRs"),
               fmt::format("Invalid value: {}: may specify no more than one CIDR (only IPv4 is supported)", Dump(*list)));
  }
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty() && !list->empty() &&
      (*list)[0] != *single) {
    errors.Add(FieldPath(path, "podCIDR"), fmt::format("Invalid value: {}: must be the first of {} ({})", Dump(*single),
                                                       FieldPath(path, "podCIDRs"), Dump((*list)[0])));
  }
}

SchemaRef NodeSchema() {
  return Root({Opt("spec", Obj({
                               Opt("podCIDR", Str()),
                               Opt("podCIDRs", Arr(Str())),
                               Opt("providerID", Str()),
                               Opt("unschedulable", Bool()),
                               Opt("taints", Arr(Taint())),
                               Opt("configSource", OpenObj()),
                               Opt("externalID", Str()),
                           },
                           {CheckPodCidrs}))});
}

SchemaRef EventSchema() {
  return Root({
      Req("involvedObject", ObjectReference()),
      Opt("reason", Str()),
      Opt("message", Str()),
      Opt("source", Obj({Opt("component", Str()), Opt("host", Str())})),
      Opt("firstTimestamp", Str()),
      Opt("lastTimestamp", Str()),
      Opt("count", Int()),
      Opt("type", Enum({"Normal", "Warning"})),
      Opt("eventTime", Str()),
      Opt("series", OpenObj()),
      Opt("action", Str()),
      Opt("related", ObjectReference()),
      Opt("reportingComponent", Str()),
      Opt("reportingInstance", Str()),
  });
}

SchemaRef LeaseSchema() {
  return Root({Opt("spec", Obj({
                               Opt("holderIdentity", Str()),
                               Opt("leaseDurationSeconds", Int(1)),
                               Opt("acquireTime", Str()),
                               Opt("renewTime", Str()),
                               Opt("leaseTransitions", Int(0)),
                               Opt("preferredHolder", Str()),
                               Opt("strategy", Str()),
                           }))});
}

// A usage interval the server records (server/usage_recorder.h).
SchemaRef UsageRecordSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("clusterQueue", Str()),
                               Opt("flavor", Str()),
                               Req("gpuMilli", Int(0)),
                               Opt("devices", Arr(Str())),
                               Opt("user", Str()),
                               Req("start", Str()),
                               Opt("end", Str()),
                               Opt("usedGpuMilliSeconds", Int(0)),
                               Opt("usedUpdatedAt", Str()),
                           }))});
}

// v1 Secret: data values are base64 (the API's JSON form), keys as Kubernetes
// allows them; a kubernetes.io/dockerconfigjson one holds a .dockerconfigjson.
// stringData (write-only in Kubernetes) is not taken yet: give data.
SchemaRef SecretSchema() {
  return Root({Opt("type", Str()), Opt("data", MapOf(Str())), Opt("immutable", Bool())},
              {[](const json& v, const std::string& path, Errors& errors) {
                 static const std::string kBase64 =
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
                 const json data = v.value("data", json::object());
                 for (const auto& [key, value] : data.items()) {
                   const bool key_ok = !key.empty() && key.size() <= 253 && key != "." && key != ".." &&
                                       key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-._") == std::string::npos;
                   if (!key_ok) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   const std::string text = value.is_string() ? value.get<std::string>() : "";
                   if (text.size() % 4 != 0 || text.find_first_not_of(kBase64) != std::string::npos) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: must be base64 (the API's form of a Secret's bytes)");
                   }
                 }
                 if (v.value("type", "") == "kubernetes.io/dockerconfigjson" && !data.contains(".dockerconfigjson")) {
                   errors.Add(FieldPath(FieldPath(path, "data"), ".dockerconfigjson"),
                              "Required value: a kubernetes.io/dockerconfigjson Secret holds the registry credentials "
                              "there (kubectl create secret docker-registry makes one)");
                 }
               }});
}

// A ConfigMap's or Secret's key, as Kubernetes allows it (IsConfigMapKey).
bool ConfigKeyOk(const std::string& key) {
  return !key.empty() && key.size() <= 253 && key != "." && key != ".." &&
         key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") == std::string::npos;
}

// v1 ConfigMap: data (text) and binaryData (base64), keys as Kubernetes allows
// them and no key in both; immutable (then data cannot change, ValidateUpdate).
SchemaRef ConfigMapSchema() {
  return Root({Opt("data", MapOf(Str())), Opt("binaryData", MapOf(Str())), Opt("immutable", Bool())},
              {[](const json& v, const std::string& path, Errors& errors) {
                 static const std::string kBase64 =
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
                 const json data = v.value("data", json::object());
                 const json binary = v.value("binaryData", json::object());
                 size_t bytes = 0;
                 for (const auto& [key, value] : data.items()) {
                   if (!ConfigKeyOk(key)) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   if (value.is_string()) bytes += value.get_ref<const std::string&>().size();
                 }
                 for (const auto& [key, value] : binary.items()) {
                   if (!ConfigKeyOk(key)) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   if (data.contains(key)) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: duplicate of key present in data");
                   }
                   const std::string text = value.is_string() ? value.get<std::string>() : "";
                   if (text.size() % 4 != 0 || text.find_first_not_of(kBase64) != std::string::npos) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: must be base64 (the API's form of a ConfigMap's bytes)");
                   }
                   bytes += text.size() / 4 * 3;
                 }
                 // Kubernetes' limit (MaxSecretSize, 1 MiB), over data and binaryData together.
                 if (bytes > 1024 * 1024) {
                   errors.Add(FieldPath(path, "data"),
                              "Too long: must have at most 1048576 bytes");
                 }
               }});
}

// v1 PersistentVolumeClaim: a directory on the nodes' shared volume root
// (docs/agent.md, "Persistent volumes"); Filesystem claims only, a size above 0.
SchemaRef PersistentVolumeClaimSchema() {
  SchemaRef mode = Enum({"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"});
  return Root({Req("spec", Obj({
                               Req("accessModes", Arr(mode, /*non_empty=*/true)),
                               Req("resources", Obj({Req("requests", Obj({Req("storage", Qty())})),
                                                     Opt("limits", Obj({Opt("storage", Qty())}))})),
                               Opt("storageClassName", Str()),
                               Opt("volumeMode", Enum({"Filesystem"})),
                               Opt("volumeName", Str()),
                               Opt("selector", LabelSelector()),
                           },
                           {[](const json& v, const std::string& path, Errors& errors) {
                             const json requests = v.value("resources", json::object()).value("requests", json::object());
                             Errors ignored;
                             auto bytes = requests.contains("storage")
                                              ? CheckAmount("storage", requests["storage"], "", ignored)
                                              : std::nullopt;
                             if (requests.contains("storage") && bytes && *bytes <= 0) {
                               errors.Add(FieldPath(path, "resources.requests.storage"),
                                          "Invalid value: must be greater than zero");
                             }
                           }}))});
}

SchemaRef ServiceAccountSchema() {
  return Root({
      Opt("secrets", Arr(ObjectReference())),
      Opt("imagePullSecrets", Arr(Obj({Opt("name", Str())}))),
      Opt("automountServiceAccountToken", Bool()),
  });
}

// authentication.k8s.io/v1 TokenRequest, the body of serviceaccounts/NAME/token.
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

SchemaRef BudgetSchema() {
  return Root({Req("spec", Obj({Opt("period", Enum({"Daily", "Weekly", "Monthly"})), Opt("gpuHours", Decimal()),
                                Opt("cost", Decimal())},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 if (!Get(v, "gpuHours") && !Get(v, "cost")) {
                                   errors.Add(path, "a budget needs gpuHours, cost or both");
                                 }
                               }}))});
}

SchemaRef ApprovalPolicySchema() {
  return Root({Req("spec", Obj({
                               Opt("namespaceSelector", LabelSelector()),
                               Req("thresholds", Obj({Opt("gpus", Decimal()), Opt("gpuHours", Decimal()),
                                                      Opt("estimatedCost", Decimal()),
                                                      Opt("priorityClasses", Arr(Str())),
                                                      Opt("overNominalQuota", Bool())},
                                                     {[](const json& v, const std::string& path, Errors& errors) {
                                                       if (v.empty()) {
                                                         errors.Add(path, "set at least one threshold: gpus, gpuHours, "
                                                                          "estimatedCost, priorityClasses or "
                                                                          "overNominalQuota");
                                                       }
                                                     }})),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("expireAfter", DurationText()),
                           }))});
}

SchemaRef ApprovalRequestSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("requester", Str()),
                               Opt("policies", Arr(Str())),
                               Opt("reasons", Arr(Str())),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("specHash", Str()),
                               Opt("expiresAt", Str()),
                               Opt("approvers", Arr(Str())),
                           }))});
}

SchemaRef PriorityClassSchema() {
  return Root({
      Req("value", Int(kInt32Min, kHighestUserPriority)),
      Opt("globalDefault", Bool()),
      Opt("description", Str()),
      Opt("preemptionPolicy", Enum({"PreemptLowerPriority", "Never"})),
  });
}

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

SchemaRef NetworkPolicySchema() {
  SchemaRef peer = Obj({
      Opt("podSelector", LabelSelector()),
      Opt("namespaceSelector", LabelSelector()),
      Opt("ipBlock", Obj({Req("cidr", Str()), Opt("except", Arr(Str()))})),
  });
  SchemaRef port = Obj({
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", IntOrStr()),
      Opt("endPort", Int(1, 65535)),
  });
  return Root({Opt("spec", Obj({
                               Opt("podSelector", LabelSelector()),
                               Opt("policyTypes", Arr(Enum({"Ingress", "Egress"}))),
                               Opt("ingress", Arr(Obj({Opt("from", Arr(peer)), Opt("ports", Arr(port))}))),
                               Opt("egress", Arr(Obj({Opt("to", Arr(peer)), Opt("ports", Arr(port))}))),
                           }))});
}

// ---------------------------------------------------------------------------
// v1 Service (ClusterIP only) and discovery.k8s.io/v1 EndpointSlice, with
// kube-apiserver's words for what it refuses (ValidateService).

// Kubernetes' IsValidPortName (IANA_SVC_NAME): each rule broken is one error.
void CheckPortName(const json& value, const std::string& path, Errors& errors) {
  const std::string& name = value.get_ref<const std::string&>();
  const std::string shown = Dump(value);
  if (name.size() > 15) errors.Add(path, fmt::format("Invalid value: {}: must be no more than 15 characters", shown));
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must contain only alpha-numeric characters (a-z, 0-9), and "
                                 "hyphens (-)",
                                 shown));
  }
  if (name.find_first_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must contain at least one letter (a-z)", shown));
  }
  if (name.find("--") != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must not contain consecutive hyphens", shown));
  }
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) {
    errors.Add(path, fmt::format("Invalid value: {}: must not begin or end with a hyphen", shown));
  }
}

void CheckPortNumber(const json& value, const std::string& path, Errors& errors) {
  const int64_t n = value.get<int64_t>();
  if (n < 1 || n > 65535) errors.Add(path, fmt::format("Invalid value: {}: must be between 1 and 65535, inclusive", n));
}

// A string field that takes one of `supported` ("" is the default, taken too);
// `why` is added after Kubernetes' list.
void CheckSupported(const json& spec, const char* field, const std::string& path,
                    std::initializer_list<std::string_view> supported, std::string_view why, Errors& errors) {
  const json* v = Get(spec, field);
  if (!v) return;
  const std::string& text = v->get_ref<const std::string&>();
  if (text.empty() || std::find(supported.begin(), supported.end(), text) != supported.end()) return;
  std::string list;
  for (std::string_view s : supported) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", s);
  errors.Add(FieldPath(path, field), fmt::format("Unsupported value: {}: supported values: {}{}", Dump(*v), list,
                                                 why.empty() ? "" : fmt::format(" ({})", why)));
}

// A cluster IP as written: "" (allocated at create), "None" (headless) or an
// IPv4 address (the range and whether it is free are the server's to check).
void CheckClusterIpText(const json& value, const std::string& path, Errors& errors) {
  const std::string& ip = value.get_ref<const std::string&>();
  if (ip.empty() || ip == "None" || ParseIpv4Address(ip)) return;
  if (ip.find(':') != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: only IPv4 is supported (this cluster is IPv4 single-stack)",
                                 Dump(value)));
    return;
  }
  errors.Add(path, fmt::format("Invalid value: {}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                               Dump(value)));
}

void CheckServiceSpec(const json& spec, const std::string& path, Errors& errors) {
  CheckSupported(spec, "type", path, {"ClusterIP"},
                 "Tessera serves only ClusterIP Services; NodePort, LoadBalancer and ExternalName are not supported",
                 errors);
  CheckSupported(spec, "sessionAffinity", path, {"None"}, "ClientIP affinity is not supported", errors);
  CheckSupported(spec, "internalTrafficPolicy", path, {"Cluster"},
                 "Local is not supported: traffic goes to every ready endpoint", errors);
  if (const json* policy = Get(spec, "ipFamilyPolicy"); policy && *policy == "RequireDualStack") {
    errors.Add(FieldPath(path, "ipFamilyPolicy"),
               "Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services");
  }
  if (const json* families = Get(spec, "ipFamilies")) {
    if (families->size() > 1) {
      errors.Add(FieldPath(path, "ipFamilies"),
                 fmt::format("Invalid value: {}: this cluster is not configured for dual-stack services", Dump(*families)));
    }
    for (size_t i = 0; i < families->size(); ++i) {
      if ((*families)[i] != "IPv4") {
        errors.Add(IndexPath(FieldPath(path, "ipFamilies"), i),
                   fmt::format("Unsupported value: {}: supported values: \"IPv4\"", Dump((*families)[i])));
      }
    }
  }

  // clusterIP and clusterIPs: one IPv4 address (or "None"), the same in both.
  const json* ip = Get(spec, "clusterIP");
  const json* ips = Get(spec, "clusterIPs");
  if (ip) CheckClusterIpText(*ip, FieldPath(path, "clusterIP"), errors);
  if (ips) {
    for (size_t i = 0; i < ips->size(); ++i) CheckClusterIpText((*ips)[i], IndexPath(FieldPath(path, "clusterIPs"), i), errors);
    if (ips->size() > 1) {
      errors.Add(FieldPath(path, "clusterIPs"),
                 fmt::format("Invalid value: {}: may hold no more than one IP (this cluster is IPv4 single-stack)",
                             Dump(*ips)));
    }
    if (ip && !ip->get_ref<const std::string&>().empty() && !ips->empty() && (*ips)[0] != *ip) {
      errors.Add(IndexPath(FieldPath(path, "clusterIPs"), 0),
                 fmt::format("Invalid value: {}: must match clusterIP {} when both are given", Dump((*ips)[0]), Dump(*ip)));
    }
  }
  const bool headless = (ip && *ip == "None") || (ips && !ips->empty() && (*ips)[0] == "None");

  // Ports: at least one (unless headless), named when more than one, unique.
  const json* ports = Get(spec, "ports");
  const std::string ports_path = FieldPath(path, "ports");
  if (!ports || ports->empty()) {
    if (!headless) errors.Add(ports_path, "Required value");
    return;
  }
  std::set<std::string> names;
  std::set<std::pair<int64_t, std::string>> numbers;
  for (size_t i = 0; i < ports->size(); ++i) {
    const json& p = (*ports)[i];
    const std::string at = IndexPath(ports_path, i);
    const std::string name = GetString(p, "name");
    if (name.empty()) {
      if (ports->size() > 1) errors.Add(FieldPath(at, "name"), "Required value");
    } else {
      if (!IsDns1123Label(name)) {
        errors.Add(FieldPath(at, "name"), fmt::format("Invalid value: \"{}\": {}", name, kDns1123LabelMessage));
      }
      if (!names.insert(name).second) errors.Add(FieldPath(at, "name"), fmt::format("Duplicate value: \"{}\"", name));
    }
    std::string protocol = GetString(p, "protocol");
    if (protocol.empty()) protocol = "TCP";
    if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errors.Add(FieldPath(at, "protocol"),
                 fmt::format("Unsupported value: \"{}\": supported values: \"SCTP\", \"TCP\", \"UDP\"", protocol));
    }
    const json* port = Get(p, "port");
    if (!port) {
      errors.Add(FieldPath(at, "port"), "Required value");
    } else {
      CheckPortNumber(*port, FieldPath(at, "port"), errors);
      if (!numbers.emplace(port->get<int64_t>(), protocol).second) {
        errors.Add(at, fmt::format("Duplicate value: \"{}/{}\": a port and protocol may be given once",
                                   port->get<int64_t>(), protocol));
      }
    }
    // targetPort: a number or a container port's name; 0 and "" mean the port.
    if (const json* target = Get(p, "targetPort")) {
      if (target->is_string() && !target->get_ref<const std::string&>().empty()) {
        CheckPortName(*target, FieldPath(at, "targetPort"), errors);
      } else if (!target->is_string() && target->get<int64_t>() != 0) {
        CheckPortNumber(*target, FieldPath(at, "targetPort"), errors);
      }
    }
    if (const json* node_port = Get(p, "nodePort"); node_port && node_port->get<int64_t>() != 0) {
      errors.Add(FieldPath(at, "nodePort"), "Forbidden: may not be used when `type` is 'ClusterIP'");
    }
  }
}

SchemaRef ServiceSchema() {
  SchemaRef port = Obj({
      Opt("name", Str()),
      Opt("protocol", Str()),
      Opt("appProtocol", Str()),
      Opt("port", Int(kInt32Min)),
      Opt("targetPort", IntOrStr()),
      Opt("nodePort", Int(kInt32Min)),
  });
  return Root({Opt("spec", Obj(
                               {
                                   Opt("type", Str()),
                                   Opt("selector", LabelMap()),
                                   Opt("ports", Arr(port)),
                                   Opt("clusterIP", Str()),
                                   Opt("clusterIPs", Arr(Str())),
                                   Opt("sessionAffinity", Str()),
                                   Opt("publishNotReadyAddresses", Bool()),
                                   Opt("ipFamilies", Arr(Str())),
                                   Opt("ipFamilyPolicy", Enum({"SingleStack", "PreferDualStack", "RequireDualStack"})),
                                   Opt("internalTrafficPolicy", Str()),
                               },
                               {CheckServiceSpec}))});
}

SchemaRef EndpointSliceSchema() {
  SchemaRef endpoint = Obj({
      Req("addresses", Arr(Str(), /*non_empty=*/true)),
      Opt("conditions", Obj({Opt("ready", Bool()), Opt("serving", Bool()), Opt("terminating", Bool())})),
      Opt("hostname", Str(StringRule::kDns1123Label)),
      Opt("targetRef", ObjectReference()),
      Opt("nodeName", Str()),
      Opt("zone", Str()),
      Opt("hints", OpenObj()),
      Opt("deprecatedTopology", MapOf(Str())),
  });
  SchemaRef port = Obj({
      Opt("name", Str()),
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", Int(0, 65535)),
      Opt("appProtocol", Str()),
  });
  return Root({Req("addressType", Enum({"IPv4", "IPv6", "FQDN"})), Opt("endpoints", Arr(endpoint)),
               Opt("ports", Arr(port))});
}

// ---------------------------------------------------------------------------
// Kueue v1beta1.

SchemaRef ResourceFlavorSchema() {
  return Root({Opt("spec", Obj({
                               Opt("nodeLabels", LabelMap()),
                               Opt("nodeTaints", Arr(Taint())),
                               Opt("tolerations", Arr(Toleration())),
                               Opt("topologyName", Str()),
                           }))},
              {[](const json& v, const std::string&, Errors& errors) {
                // Budgets and reports charge by the flavor's price: a typo must not make it free.
                const json* meta = Get(v, "metadata");
                const json* annotations = meta ? Get(*meta, "annotations") : nullptr;
                const json* price = annotations ? Get(*annotations, "tessera.dev/price-per-gpu-hour") : nullptr;
                if (price) CheckDecimal(*price, "metadata.annotations[tessera.dev/price-per-gpu-hour]", errors);
              }});
}

// A flavor's quota for one resource: amounts in the resource's unit, and
// lendingLimit <= nominalQuota (Kueue's rule).
void CheckResourceQuota(const json& v, const std::string& path, Errors& errors) {
  std::string name = GetString(v, "name");
  std::optional<int64_t> nominal;
  for (std::string_view field : {"nominalQuota", "borrowingLimit", "lendingLimit"}) {
    const json* amount = Get(v, field);
    if (!amount) continue;
    auto parsed = CheckAmount(name, *amount, FieldPath(path, field), errors);
    if (field == "nominalQuota") nominal = parsed;
    if (field == "lendingLimit" && parsed && nominal && *parsed > *nominal) {
      errors.Add(FieldPath(path, field),
                 fmt::format("{} is more than nominalQuota {}", *QuantityTextOf(*amount),
                             *QuantityTextOf(*Get(v, "nominalQuota"))));
    }
  }
}

// Every flavor lists the group's coveredResources (Kueue requires exactly them);
// borrowingLimit only makes sense in a cohort (Kueue refuses it without one).
void CheckClusterQueueSpec(const json& spec, const std::string& path, Errors& errors) {
  bool has_cohort = !GetString(spec, "cohort").empty();
  const json* groups = Get(spec, "resourceGroups");
  if (!groups) return;
  for (size_t g = 0; g < groups->size(); ++g) {
    const json& group = (*groups)[g];
    std::string gpath = IndexPath(FieldPath(path, "resourceGroups"), g);
    std::vector<std::string> covered;
    if (const json* c = Get(group, "coveredResources")) {
      for (const json& r : *c) covered.push_back(r.get<std::string>());
    }
    const json* flavors = Get(group, "flavors");
    if (!flavors) continue;
    for (size_t f = 0; f < flavors->size(); ++f) {
      const json& flavor = (*flavors)[f];
      std::string fpath = IndexPath(FieldPath(gpath, "flavors"), f);
      const json* resources = Get(flavor, "resources");
      std::set<std::string> listed;
      for (size_t r = 0; resources && r < resources->size(); ++r) {
        const json& res = (*resources)[r];
        std::string rpath = IndexPath(FieldPath(fpath, "resources"), r);
        std::string name = GetString(res, "name");
        listed.insert(name);
        if (std::find(covered.begin(), covered.end(), name) == covered.end()) {
          errors.Add(FieldPath(rpath, "name"),
                     fmt::format("\"{}\" is not in this group's coveredResources", name));
        }
        if (!has_cohort && Get(res, "borrowingLimit")) {
          errors.Add(FieldPath(rpath, "borrowingLimit"),
                     "must not be set when spec.cohort is empty (there is no one to borrow from)");
        }
      }
      for (const std::string& c : covered) {
        if (!listed.contains(c)) {
          errors.Add(FieldPath(fpath, "resources"),
                     fmt::format("missing \"{}\": every flavor lists each of coveredResources", c));
        }
      }
    }
  }
}

SchemaRef FairSharing() { return Obj({Opt("weight", Qty())}); }

SchemaRef ClusterQueueSchema() {
  SchemaRef resource = Obj({Req("name", Str()), Req("nominalQuota", Qty()),
                            Opt("borrowingLimit", Qty()), Opt("lendingLimit", Qty())},
                           {CheckResourceQuota});
  SchemaRef flavor = Obj({Req("name", Str(StringRule::kDns1123Subdomain)),
                          Req("resources", Arr(resource, /*non_empty=*/true))});
  SchemaRef group = Obj({Req("coveredResources", Arr(Str(), /*non_empty=*/true)),
                         Req("flavors", Arr(flavor, /*non_empty=*/true))});
  return Root({Opt("spec", Obj(
                               {
                                   Opt("cohort", Str(StringRule::kDns1123Subdomain)),
                                   Opt("namespaceSelector", LabelSelector()),
                                   Opt("resourceGroups", Arr(group)),
                                   Opt("queueingStrategy", Enum({"StrictFIFO", "BestEffortFIFO"})),
                                   Opt("preemption",
                                       Obj({
                                           Opt("reclaimWithinCohort",
                                               Enum({"Never", "LowerPriority", "Any"})),
                                           Opt("borrowWithinCohort",
                                               Obj({Opt("policy", Enum({"Never", "LowerPriority"})),
                                                    Opt("maxPriorityThreshold", Int(kInt32Min))})),
                                           Opt("withinClusterQueue",
                                               Enum({"Never", "LowerPriority",
                                                     "LowerOrNewerEqualPriority"})),
                                       })),
                                   Opt("flavorFungibility",
                                       Obj({Opt("whenCanBorrow", Enum({"Borrow", "TryNextFlavor"})),
                                            Opt("whenCanPreempt",
                                                Enum({"Preempt", "TryNextFlavor"}))})),
                                   Opt("fairSharing", FairSharing()),
                                   Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                                   Opt("admissionChecks", Arr(Str())),
                                   Opt("admissionChecksStrategy",
                                       Obj({Opt("admissionChecks",
                                                Arr(Obj({Req("name", Str()),
                                                         Opt("onFlavors", Arr(Str()))})))})),
                               },
                               {CheckClusterQueueSpec}))});
}

SchemaRef LocalQueueSchema() {
  return Root({Opt("spec", Obj({
                               Opt("clusterQueue", Str(StringRule::kDns1123Subdomain)),
                               Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                               Opt("fairSharing", FairSharing()),
                           }))});
}

SchemaRef WorkloadSchema() {
  SchemaRef pod_set = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("count", Int()),
          Opt("minCount", Int()),
          Req("template", PodTemplateSpec()),
          Opt("topologyRequest", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto count = GetInt(v, "count");
        auto min_count = GetInt(v, "minCount");
        if (count && min_count && *min_count > *count) {
          errors.Add(FieldPath(path, "minCount"),
                     fmt::format("{} is more than count {}", *min_count, *count));
        }
      }});
  return Root({Opt("spec", Obj({
                               Req("podSets", Arr(pod_set, /*non_empty=*/true)),
                               Opt("queueName", Str()),
                               Opt("priorityClassName", Str()),
                               Opt("priority", Int(kInt32Min)),
                               Opt("priorityClassSource", Str()),
                               Opt("active", Bool()),
                               Opt("maximumExecutionTimeSeconds", Int(1)),
                           }))});
}

// ---------------------------------------------------------------------------
// batch/v1 Job and Volcano's Job.

// A Job's pods must not restart in place forever: Kubernetes requires
// restartPolicy OnFailure or Never (the pod default, Always, is refused).
void CheckBatchJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* template_spec = Get(*Get(spec, "template"), "spec");
  std::string policy = template_spec ? GetString(*template_spec, "restartPolicy") : "";
  if (policy != "OnFailure" && policy != "Never") {
    errors.Add(FieldPath(path, "template.spec.restartPolicy"),
               fmt::format("{}; a Job's pods take \"OnFailure\" or \"Never\"",
                           policy.empty() ? std::string("required")
                                          : fmt::format("unsupported value \"{}\"", policy)));
  }
  if (GetString(spec, "completionMode") == "Indexed" && !GetInt(spec, "completions")) {
    errors.Add(FieldPath(path, "completions"), "required when completionMode is Indexed");
  }
}

SchemaRef BatchJobSchema() {
  return Root({Opt("spec", Obj(
                               {
                                   Opt("parallelism", Int()),
                                   Opt("completions", Int()),
                                   Opt("activeDeadlineSeconds", Int64(1)),
                                   Opt("podFailurePolicy", OpenObj()),
                                   Opt("successPolicy", OpenObj()),
                                   Opt("backoffLimit", Int()),
                                   Opt("backoffLimitPerIndex", Int()),
                                   Opt("maxFailedIndexes", Int()),
                                   Opt("selector", LabelSelector()),
                                   Opt("manualSelector", Bool()),
                                   Req("template", PodTemplateSpec()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("completionMode", Enum({"NonIndexed", "Indexed"})),
                                   Opt("suspend", Bool()),
                                   Opt("podReplacementPolicy",
                                       Enum({"TerminatingOrFailed", "Failed"})),
                                   Opt("managedBy", Str()),
                               },
                               {CheckBatchJobSpec}))});
}

// minAvailable (the gang size) fits the tasks' replicas; task names are unique.
void CheckVolcanoJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* tasks = Get(spec, "tasks");
  if (!tasks) return;
  int64_t replicas = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const json& task = (*tasks)[i];
    replicas += GetInt(task, "replicas").value_or(0);
    std::string name = GetString(task, "name");
    if (!name.empty() && !names.insert(name).second) {
      errors.Add(FieldPath(IndexPath(FieldPath(path, "tasks"), i), "name"),
                 fmt::format("duplicate task name \"{}\"", name));
    }
  }
  if (auto min_available = GetInt(spec, "minAvailable"); min_available && *min_available > replicas) {
    errors.Add(FieldPath(path, "minAvailable"),
               fmt::format("{} is more than the {} replicas of all tasks together", *min_available,
                           replicas));
  }
}

SchemaRef VolcanoJobSchema() {
  SchemaRef policy = Obj({
      Opt("action", Str()),
      Opt("event", Str()),
      Opt("events", Arr(Str())),
      Opt("exitCode", Int(kInt32Min)),
      Opt("timeout", Str()),
  });
  SchemaRef task = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("replicas", Int()),
          Opt("minAvailable", Int()),
          Req("template", PodTemplateSpec()),
          Opt("policies", Arr(policy)),
          Opt("topologyPolicy", Enum({"none", "best-effort", "restricted", "single-numa-node"})),
          Opt("maxRetry", Int()),
          Opt("dependsOn", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto replicas = GetInt(v, "replicas");
        auto min_available = GetInt(v, "minAvailable");
        if (replicas && min_available && *min_available > *replicas) {
          errors.Add(FieldPath(path, "minAvailable"),
                     fmt::format("{} is more than replicas {}", *min_available, *replicas));
        }
      }});
  return Root({Opt("spec", Obj(
                               {
                                   Opt("schedulerName", Str()),
                                   Opt("minAvailable", Int()),
                                   Opt("volumes", Arr(OpenObj())),
                                   Req("tasks", Arr(task, /*non_empty=*/true)),
                                   Opt("policies", Arr(policy)),
                                   // plugin name -> arguments ("ssh: []", "svc: [...]")
                                   Opt("plugins", MapOf(Arr(Str()), KeyRule::kNone,
                                                        /*null_elements=*/true)),
                                   Opt("runningEstimate", Str()),
                                   Opt("queue", Str()),
                                   Opt("maxRetry", Int()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("priorityClassName", Str()),
                                   Opt("minSuccess", Int(1)),
                                   Opt("networkTopology", OpenObj()),
                               },
                               {CheckVolcanoJobSpec}))});
}
const std::map<std::string_view, SchemaRef>& Schemas() {
  static const std::map<std::string_view, SchemaRef> schemas = {
      {"/Namespace", NamespaceSchema()},
      {"/ResourceQuota", ResourceQuotaSchema()},
      {"/Pod", PodSchema()},
      {"/Node", NodeSchema()},
      {"/Event", EventSchema()},
      {"/ServiceAccount", ServiceAccountSchema()},
      {"/Secret", SecretSchema()},
      {"/Service", ServiceSchema()},
      {"discovery.k8s.io/EndpointSlice", EndpointSliceSchema()},
      {"/ConfigMap", ConfigMapSchema()},
      {"/PersistentVolumeClaim", PersistentVolumeClaimSchema()},
      {"authorization.k8s.io/SelfSubjectAccessReview", SelfSubjectAccessReviewSchema()},
      {"authorization.k8s.io/SelfSubjectRulesReview", SelfSubjectRulesReviewSchema()},
      {"authentication.k8s.io/SelfSubjectReview", SelfSubjectReviewSchema()},
      {"batch/Job", BatchJobSchema()},
      {"scheduling.k8s.io/PriorityClass", PriorityClassSchema()},
      {"coordination.k8s.io/Lease", LeaseSchema()},
      {"rbac.authorization.k8s.io/Role", RoleSchema()},
      {"rbac.authorization.k8s.io/RoleBinding", BindingSchema(/*cluster=*/false)},
      {"rbac.authorization.k8s.io/ClusterRole", ClusterRoleSchema()},
      {"rbac.authorization.k8s.io/ClusterRoleBinding", BindingSchema(/*cluster=*/true)},
      {"networking.k8s.io/NetworkPolicy", NetworkPolicySchema()},
      {"kueue.x-k8s.io/ResourceFlavor", ResourceFlavorSchema()},
      {"kueue.x-k8s.io/ClusterQueue", ClusterQueueSchema()},
      {"kueue.x-k8s.io/LocalQueue", LocalQueueSchema()},
      {"kueue.x-k8s.io/Workload", WorkloadSchema()},
      {"batch.volcano.sh/Job", VolcanoJobSchema()},
      {"tessera.dev/UsageRecord", UsageRecordSchema()},
      {"tessera.dev/Budget", BudgetSchema()},
      {"tessera.dev/ApprovalPolicy", ApprovalPolicySchema()},
      {"tessera.dev/ApprovalRequest", ApprovalRequestSchema()},
  };
  return schemas;
}

// metadata.name: required, and of the kind's form.
void CheckName(const KindInfo& kind, const json& object, Errors& errors) {
  const json* metadata = Get(object, "metadata");
  const json* name = metadata ? Get(*metadata, "name") : nullptr;
  if (!name) {
    errors.Add("metadata.name", "required");
    return;
  }
  if (!name->is_string()) return;  // the schema reports the type
  if (Status s = ValidateName(kind.name_rule, name->get<std::string>()); !s.ok()) {
    errors.Add("metadata.name", s.message());
  }
}

Status ValidateObjectOrThrow(const KindInfo& kind, const json& object) {
  if (!object.is_object()) {
    return Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object)));
  }
  Errors errors;
  const json* api_version = Get(object, "apiVersion");
  const json* kind_field = Get(object, "kind");
  if (!api_version || *api_version != kind.api_version) {
    errors.Add("apiVersion", fmt::format("expected \"{}\" for kind {}, got {}", kind.api_version,
                                         kind.kind, api_version ? Describe(*api_version) : "none"));
  }
  if (!kind_field || *kind_field != kind.kind) {
    errors.Add("kind", fmt::format("expected \"{}\", got {}", kind.kind,
                                   kind_field ? Describe(*kind_field) : "none"));
  }
  if (kind.stored) CheckName(kind, object, errors);  // a review is answered, never named
  auto schema = Schemas().find(kind.store_key);
  if (schema == Schemas().end()) {
    return Status::Internal(fmt::format("no schema for kind {}", kind.store_key));
  }
  Validate(*schema->second, object, "", errors);
  return errors.ToStatus();
}

}  // namespace

// ===========================================================================
// Public interface.


Result<std::string> QuantityText(const json& value) {
  if (auto text = QuantityTextOf(value)) return *text;
  return Err(Status::InvalidArgument(fmt::format(
      "expected a quantity such as \"2\", \"500m\" or \"64Gi\", got {}", Describe(value))));
}

Result<const KindInfo*> ResolveKind(const json& object) {
  if (!object.is_object()) {
    return Err(Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object))));
  }
  const json* api_version = Get(object, "apiVersion");
  const json* kind = Get(object, "kind");
  if (!api_version) {
    return Err(Status::InvalidArgument(
        "apiVersion: required (for example \"v1\" or \"kueue.x-k8s.io/v1beta1\")"));
  }
  if (!api_version->is_string()) {
    return Err(Status::InvalidArgument(
        fmt::format("apiVersion: expected a string, got {}", Describe(*api_version))));
  }
  if (!kind) return Err(Status::InvalidArgument("kind: required (for example \"Pod\")"));
  if (!kind->is_string()) {
    return Err(Status::InvalidArgument(fmt::format("kind: expected a string, got {}", Describe(*kind))));
  }
  const std::string& av = api_version->get_ref<const std::string&>();
  const std::string& k = kind->get_ref<const std::string&>();
  if (const KindInfo* info = FindKindByApiVersion(av, k)) return info;

  // Not served: say what is.
  std::vector<std::string_view> versions = ApiVersionsServingKind(k);
  if (!versions.empty()) {
    std::string alternatives;
    for (size_t i = 0; i < versions.size(); ++i) {
      if (i > 0) alternatives += i + 1 == versions.size() ? " or " : ", ";
      alternatives += versions[i];
    }
    return Err(Status::InvalidArgument(fmt::format(
        "apiVersion: kind {} is not served as \"{}\"; use {}", k, av, alternatives)));
  }
  std::vector<std::string_view> in_version, all;
  for (const KindInfo& info : AllKinds()) {
    all.push_back(info.kind);
    if (info.api_version == av) in_version.push_back(info.kind);
  }
  auto hint = Suggest(k, in_version.empty() ? all : in_version);
  std::string suggestion = hint ? fmt::format("; did you mean \"{}\"?", *hint) : "";
  if (!in_version.empty()) {
    return Err(Status::InvalidArgument(fmt::format("kind: unknown kind \"{}\" in {}{} (served: {})",
                                                   k, av, suggestion, JoinNames(in_version))));
  }
  return Err(Status::InvalidArgument(fmt::format(
      "kind: unknown kind \"{}\"{} (apiVersion \"{}\" is not served either)", k, suggestion, av)));
}

Status ValidateObject(const KindInfo& kind, const json& object) {
  // Nothing below should throw (checks run on values whose types were checked);
  // the catch keeps a slip from crossing the API as an exception.
  try {
    return ValidateObjectOrThrow(kind, object);
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating {} failed: {}", kind.store_key, e.what()));
  }
}

Status ValidateTokenRequest(const json& object) {
  try {
    if (!object.is_object()) {
      return Status::InvalidArgument(fmt::format("expected a TokenRequest object, got {}", Describe(object)));
    }
    Errors errors;
    const json* api_version = Get(object, "apiVersion");
    const json* kind = Get(object, "kind");
    if (api_version && *api_version != "authentication.k8s.io/v1") {
      errors.Add("apiVersion", fmt::format("expected \"authentication.k8s.io/v1\", got {}", Describe(*api_version)));
    }
    if (kind && *kind != "TokenRequest") errors.Add("kind", fmt::format("expected \"TokenRequest\", got {}", Describe(*kind)));
    Validate(*TokenRequestSchema(), object, "", errors);
    return errors.ToStatus();
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating a TokenRequest failed: {}", e.what()));
  }
}

namespace {

// A Node's pod ranges as one list: spec.podCIDRs, or spec.podCIDR when that is all it has.
std::vector<json> PodCidrsOf(const json& node) {
  const json* spec = Get(node, "spec");
  if (!spec || !spec->is_object()) return {};
  if (const json* list = Get(*spec, "podCIDRs"); list && list->is_array() && !list->empty()) {
    return std::vector<json>(list->begin(), list->end());
  }
  const json* single = Get(*spec, "podCIDR");
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty()) {
    return {*single};
  }
  return {};
}

}  // namespace

Status ValidateUpdate(const KindInfo& kind, const nlohmann::json& stored, const nlohmann::json& next) {
  if (kind.store_key == "/Node") {
    // As kube-apiserver: the controller sets a Node's range once; no update moves it.
    const std::vector<json> before = PodCidrsOf(stored);
    if (!before.empty() && before != PodCidrsOf(next)) {
      return Status::InvalidArgument("spec.podCIDR: Forbidden: node updates may not change podCIDR except from \"\" to valid");
    }
  }
  if (kind.store_key == "/Service") {
    // As kube-apiserver: the allocated address stays the Service's for its life
    // (an update that leaves it out keeps it: KeepAllocatedServiceFields, api/service.h).
    const nlohmann::json& before = Get(stored, "spec") ? *Get(stored, "spec") : nlohmann::json::object();
    const nlohmann::json& after = Get(next, "spec") ? *Get(next, "spec") : nlohmann::json::object();
    for (const char* field : {"clusterIP", "clusterIPs"}) {
      const nlohmann::json was = before.value(field, nlohmann::json());
      const nlohmann::json is = after.value(field, nlohmann::json());
      if (was != is) {
        return Status::InvalidArgument(
            fmt::format("spec.{}: Invalid value: {}: field is immutable", field, is.is_null() ? "null" : Dump(is)));
      }
    }
  }
  if (kind.store_key == "discovery.k8s.io/EndpointSlice" &&
      stored.value("addressType", nlohmann::json()) != next.value("addressType", nlohmann::json())) {
    return Status::InvalidArgument(fmt::format("addressType: Invalid value: {}: field is immutable",
                                               Dump(next.value("addressType", nlohmann::json()))));
  }
  if ((kind.store_key == "/ConfigMap" || kind.store_key == "/Secret") && stored.value("immutable", false)) {
    // As kube-apiserver: an immutable one keeps its data (and stays immutable); delete it to change it.
    for (const char* field : {"data", "binaryData", "immutable"}) {
      if (stored.value(field, nlohmann::json()) != next.value(field, nlohmann::json())) {
        return Status::InvalidArgument(fmt::format(
            "{}: Forbidden: field is immutable when `immutable` is set (delete the {} and create it again)",
            std::string(field) == "immutable" ? "immutable" : field, kind.kind));
      }
    }
  }
  if (kind.store_key == "/PersistentVolumeClaim" &&
      stored.value("spec", nlohmann::json()) != next.value("spec", nlohmann::json())) {
    // No resizing yet (it would move the quota's requests.storage): delete and create again.
    return Status::InvalidArgument(
        "spec: Forbidden: spec is immutable after creation (Tessera does not resize claims: make a new one)");
  }
  if (kind.group == "rbac.authorization.k8s.io" && (kind.kind == "RoleBinding" || kind.kind == "ClusterRoleBinding")) {
    const nlohmann::json before = stored.value("roleRef", nlohmann::json::object());
    const nlohmann::json after = next.value("roleRef", nlohmann::json::object());
    if (before != after) {
      return Status::InvalidArgument(fmt::format(
          "roleRef: Invalid value: {{APIGroup:\"{}\", Kind:\"{}\", Name:\"{}\"}}: cannot change roleRef (delete the "
          "{} and create it again to bind another role)",
          after.value("apiGroup", ""), after.value("kind", ""), after.value("name", ""), kind.kind));
    }
  }
  return Status::Ok();
}

Result<const KindInfo*> ValidateManifest(const json& object) {
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKind(object));
  RETURN_IF_ERROR(ValidateObject(*kind, object));
  return kind;
}

}  // namespace tessera

