// The core API group (v1): namespaces, pods, nodes, services, configuration and
// storage, with kubectl's short names.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/age.h"
#include "api/common_schemas.h"
#include "api/names.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "domain/ipv4_cidr.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

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

SchemaRef ServiceAccountSchema() {
  return Root({
      Opt("secrets", Arr(ObjectReference())),
      Opt("imagePullSecrets", Arr(Obj({Opt("name", Str())}))),
      Opt("automountServiceAccountToken", Bool()),
  });
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

// ---------------------------------------------------------------------------
// What updates keep, as kube-apiserver keeps it.

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

// The controller sets a Node's range once; no update moves it.
Status KeepPodCidr(const KindInfo&, const json& stored, const json& next) {
  const std::vector<json> before = PodCidrsOf(stored);
  if (!before.empty() && before != PodCidrsOf(next)) {
    return Status::InvalidArgument(
        "spec.podCIDR: Forbidden: node updates may not change podCIDR except from \"\" to valid");
  }
  return Status::Ok();
}

// The allocated address stays the Service's for its life (an update that
// leaves it out keeps it: KeepAllocatedServiceFields, api/service.h).
Status KeepClusterIp(const KindInfo&, const json& stored, const json& next) {
  const json& before = Get(stored, "spec") ? *Get(stored, "spec") : json::object();
  const json& after = Get(next, "spec") ? *Get(next, "spec") : json::object();
  for (const char* field : {"clusterIP", "clusterIPs"}) {
    const json was = before.value(field, json());
    const json is = after.value(field, json());
    if (was != is) {
      return Status::InvalidArgument(
          fmt::format("spec.{}: Invalid value: {}: field is immutable", field, is.is_null() ? "null" : Dump(is)));
    }
  }
  return Status::Ok();
}

// An immutable ConfigMap or Secret keeps its data (and stays immutable); delete it to change it.
Status KeepImmutableData(const KindInfo& kind, const json& stored, const json& next) {
  if (!stored.value("immutable", false)) return Status::Ok();
  for (const char* field : {"data", "binaryData", "immutable"}) {
    if (stored.value(field, json()) != next.value(field, json())) {
      return Status::InvalidArgument(fmt::format(
          "{}: Forbidden: field is immutable when `immutable` is set (delete the {} and create it again)",
          std::string(field) == "immutable" ? "immutable" : field, kind.kind));
    }
  }
  return Status::Ok();
}

// No resizing yet (it would move the quota's requests.storage): delete and create again.
Status KeepClaimSpec(const KindInfo&, const json& stored, const json& next) {
  if (stored.value("spec", json()) != next.value("spec", json())) {
    return Status::InvalidArgument(
        "spec: Forbidden: spec is immutable after creation (Tessera does not resize claims: make a new one)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Printer columns, as kubectl prints them.

// Ready, NotReady or Unknown from the Ready condition; SchedulingDisabled when cordoned.
std::string NodeStatus(const json& o, const ColumnOptions&) {
  const std::string ready = ConditionStatus(o, "Ready");
  std::string s = ready == "True" ? "Ready" : ready == "False" ? "NotReady" : "Unknown";
  if (const json* u = Find(o, "spec.unschedulable"); u && u->is_boolean() && u->get<bool>()) {
    s += ",SchedulingDisabled";
  }
  return s;
}

std::string Allocatable(const json& o, const std::string& resource) {
  const json* v = Child(Find(o, "status.allocatable"), resource);
  return v ? DisplayQuantity(resource, *v) : "0";
}

PrinterColumn AllocatableColumn(std::string_view name, std::string resource, int priority) {
  return {.name = name,
          .priority = priority,
          .description = fmt::format("allocatable {}", resource),
          .cell = [resource](const json& o, const ColumnOptions&) { return Allocatable(o, resource); }};
}

// As kubectl shows it: Terminating, else the container's waiting or terminated
// reason (CrashLoopBackOff, Completed, Error, OOMKilled), else the phase.
std::string PodStatus(const json& o, const ColumnOptions&) {
  if (Find(o, "metadata.deletionTimestamp")) return "Terminating";
  const json* statuses = Find(o, "status.containerStatuses");
  if (statuses && statuses->is_array() && !statuses->empty()) {
    const json* state = Child(&(*statuses)[0], "state");
    for (const char* kind : {"waiting", "terminated"}) {
      const std::string reason = Text(Child(Child(state, kind), "reason"));
      if (!reason.empty()) return reason;
    }
  }
  const std::string reason = TextAt(o, "status.reason");
  return reason.empty() ? Text(Find(o, "status.phase"), "Pending") : reason;
}

std::string PodReady(const json& o, const ColumnOptions&) {
  const json* spec_containers = Find(o, "spec.containers");
  const size_t total = spec_containers && spec_containers->is_array() ? spec_containers->size() : 0;
  size_t ready = 0;
  if (const json* statuses = Find(o, "status.containerStatuses"); statuses && statuses->is_array()) {
    for (const json& s : *statuses) {
      const json* r = Child(&s, "ready");
      if (r && r->is_boolean() && r->get<bool>()) ++ready;
    }
  }
  return fmt::format("{}/{}", ready, total);
}

std::string PodRestarts(const json& o, const ColumnOptions&) {
  int64_t restarts = 0;
  if (const json* statuses = Find(o, "status.containerStatuses"); statuses && statuses->is_array()) {
    for (const json& s : *statuses) {
      const json* r = Child(&s, "restartCount");
      if (r && r->is_number_integer()) restarts += r->get<int64_t>();
    }
  }
  return std::to_string(restarts);
}

std::string PodGpus(const json& o, const ColumnOptions&) {
  int64_t milli = 0;
  if (const json* containers = Find(o, "spec.containers"); containers && containers->is_array()) {
    for (const json& c : *containers) {
      const json* r = Child(Find(c, "resources.requests"), "nvidia.com/gpu");
      if (!r) r = Child(Find(c, "resources.limits"), "nvidia.com/gpu");
      if (r) milli += QuantityValue("nvidia.com/gpu", *r);
    }
  }
  return FormatQuantityValue("nvidia.com/gpu", milli);
}

// "requests.cpu: 0/64, pods: 0/50" as kubectl prints a quota's requests (or limits).
std::string QuotaUsage(const json& o, bool limits) {
  const json* hard = Find(o, "status.hard");
  if (!hard || !hard->is_object()) hard = Find(o, "spec.hard");
  if (!hard || !hard->is_object()) return "";
  const json* used = Find(o, "status.used");
  std::string out;
  for (const auto& [resource, amount] : hard->items()) {
    if (resource.starts_with("limits.") != limits) continue;
    const json* u = Child(used, resource);
    if (!out.empty()) out += ", ";
    out += fmt::format("{}: {}/{}", resource, u ? DisplayQuantity(resource, *u) : "0",
                       DisplayQuantity(resource, amount));
  }
  return out;
}

std::string EventLastSeen(const json& o, const ColumnOptions& options) {
  for (const char* f : {"lastTimestamp", "eventTime", "firstTimestamp", "metadata.creationTimestamp"}) {
    const std::string t = TextAt(o, f);
    if (!t.empty()) return AgeSince(t, options.now);
  }
  return "<unknown>";
}

std::string EventObject(const json& o, const ColumnOptions&) {
  std::string kind = TextAt(o, "involvedObject.kind");
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return fmt::format("{}/{}", kind, TextAt(o, "involvedObject.name"));
}

std::string ServiceExternalIps(const json& o, const ColumnOptions&) {
  const json* ips = Find(o, "spec.externalIPs");
  if (!ips || !ips->is_array() || ips->empty()) return std::string("<none>");
  std::string out;
  for (const json& ip : *ips) out += (out.empty() ? "" : ",") + Text(&ip);
  return out;
}

// "80/TCP,443/TCP"; "<none>" without ports.
std::string ServicePorts(const json& o, const ColumnOptions&) {
  const json* ports = Find(o, "spec.ports");
  if (!ports || !ports->is_array() || ports->empty()) return "<none>";
  std::string out;
  for (const json& p : *ports) {
    if (!out.empty()) out += ",";
    const std::string node_port = TextAt(p, "nodePort");
    out += TextAt(p, "port") + (node_port.empty() || node_port == "0" ? "" : ":" + node_port) + "/" +
           TextAt(p, "protocol", "TCP");
  }
  return out;
}

// The number of keys of data (a Secret) or of data and binaryData together (a ConfigMap), as kubectl counts them.
std::string DataCount(const json& o, std::initializer_list<const char*> fields) {
  size_t n = 0;
  for (const char* field : fields) {
    const json* data = Find(o, field);
    if (data != nullptr && data->is_object()) n += data->size();
  }
  return std::to_string(n);
}

std::string AccessModes(const json& o, const ColumnOptions&) {
  static const std::map<std::string, std::string> kShort{
      {"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}};
  std::string out;
  const json* modes = Find(o, "spec.accessModes");
  if (modes == nullptr || !modes->is_array()) return out;
  for (const json& m : *modes) {
    auto it = m.is_string() ? kShort.find(m.get<std::string>()) : kShort.end();
    if (it != kShort.end()) out += (out.empty() ? "" : ",") + it->second;
  }
  return out;
}

}  // namespace

std::vector<KindDefinition> CoreKinds() {
  return {
      {.info = {.group = "", .version = "v1", .kind = "Namespace", .api_version = "v1", .plural = "namespaces",
                .singular = "namespace", .short_names = {"ns"}, .namespaced = false,
                .name_rule = NameRule::kDns1123Label, .store_key = "/Namespace"},
       .schema = NamespaceSchema(),
       .columns = {NameColumn(),
                   FieldColumn("STATUS", "status.phase", "Active"),
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status")}},
       .controller = "namespace-controller"},
      {.info = {.group = "", .version = "v1", .kind = "ResourceQuota", .api_version = "v1",
                .plural = "resourcequotas", .singular = "resourcequota", .short_names = {"quota"}, .namespaced = true,
                .store_key = "/ResourceQuota"},
       .schema = ResourceQuotaSchema(),
       .columns = {NameColumn(),
                   AgeColumn(),
                   {.name = "REQUEST",
                    .description = "used/hard of each requests.* resource",
                    .cell = [](const json& o, const ColumnOptions&) { return QuotaUsage(o, false); }},
                   {.name = "LIMIT",
                    .description = "used/hard of each limits.* resource",
                    .cell = [](const json& o, const ColumnOptions&) { return QuotaUsage(o, true); }}},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status")}},
       .controller = "scheduler-loop"},
      {.info = {.group = "", .version = "v1", .kind = "Pod", .api_version = "v1", .plural = "pods", .singular = "pod",
                .short_names = {"po"}, .categories = {"all"}, .namespaced = true, .store_key = "/Pod"},
       .schema = PodSchema(),
       .columns = {NameColumn(),
                   {.name = "READY", .description = "ready containers/containers", .cell = PodReady},
                   {.name = "STATUS",
                    .description = "Terminating, a container's waiting or terminated reason, else the phase",
                    .cell = PodStatus},
                   {.name = "RESTARTS",
                    .type = ColumnType::kInteger,
                    .description = "restarts of all containers",
                    .cell = PodRestarts},
                   AgeColumn(),
                   // -o wide: its IP (the pod network's), as kubectl shows it before NODE.
                   FieldColumn("IP", "status.podIP", "<none>", /*priority=*/1),
                   FieldColumn("NODE", "spec.nodeName", "<none>"),
                   {.name = "GPUS",
                    .priority = 1,
                    .description = "nvidia.com/gpu requested by its containers",
                    .cell = PodGpus},
                   {.name = "GPU DEVICES",
                    .priority = 1,
                    .description = "the devices it was given (tessera.dev/gpu-devices)",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return Text(Child(Find(o, "metadata.annotations"), "tessera.dev/gpu-devices"), "<none>");
                    }}},
       // As Kubernetes' edit role: pods/proxy, pods/portforward and pods/exec
       // reach into the pod's programs, so view holds none of them.
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("log"), ViewReads("status"), EditWrites(),
                                      {.role = DefaultRole::kEdit, .subresource = "proxy", .verbs = verbs::kAll},
                                      {.role = DefaultRole::kEdit, .subresource = "portforward", .verbs = verbs::kAll},
                                      {.role = DefaultRole::kEdit, .subresource = "exec", .verbs = verbs::kAll}}},
       .controller = "scheduler-loop"},
      {.info = {.group = "", .version = "v1", .kind = "Node", .api_version = "v1", .plural = "nodes",
                .singular = "node", .short_names = {"no"}, .namespaced = false, .store_key = "/Node"},
       .schema = NodeSchema(),
       .update_rules = {KeepPodCidr},
       .columns = {NameColumn(),
                   {.name = "STATUS",
                    .description = "Ready, NotReady or Unknown; SchedulingDisabled when cordoned",
                    .cell = NodeStatus},
                   AllocatableColumn("GPUS", "nvidia.com/gpu", 0),
                   {.name = "GPU MODEL",
                    .description = "the nvidia.com/gpu.product label",
                    .cell = [](const json& o, const ColumnOptions&) {
                      return Text(Child(Find(o, "metadata.labels"), "nvidia.com/gpu.product"), "<none>");
                    }},
                   AgeColumn(),
                   AllocatableColumn("CPU", "cpu", 1),
                   AllocatableColumn("MEMORY", "memory", 1)},
       // No default role grants it: cluster-scoped; the nodes write their own (node authorizer).
       .roles = NoDefaultRoles(),
       .controller = "node-lifecycle"},
      {.info = {.group = "", .version = "v1", .kind = "Event", .api_version = "v1", .plural = "events",
                .singular = "event", .short_names = {"ev"}, .namespaced = true, .store_key = "/Event"},
       .schema = EventSchema(),
       .columns = {{.name = "LAST SEEN",
                    .type = ColumnType::kDate,
                    .description = "time since it last happened",
                    .cell = EventLastSeen},
                   FieldColumn("TYPE", "type"),
                   FieldColumn("REASON", "reason"),
                   {.name = "OBJECT", .description = "kind/name of the object it is about", .cell = EventObject},
                   FieldColumn("MESSAGE", "message")},
       .roles = RoleGrants{.grants = {ViewReads()}}},
      {.info = {.group = "", .version = "v1", .kind = "ServiceAccount", .api_version = "v1",
                .plural = "serviceaccounts", .singular = "serviceaccount", .short_names = {"sa"}, .namespaced = true,
                .store_key = "/ServiceAccount"},
       .schema = ServiceAccountSchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {ViewReads(), EditWrites(),
                                    {.role = DefaultRole::kEdit, .subresource = "token", .verbs = verbs::kCreate}}},
       .controller = "namespace-controller"},
      {.info = {.group = "", .version = "v1", .kind = "Secret", .api_version = "v1", .plural = "secrets",
                .singular = "secret", .namespaced = true, .store_key = "/Secret"},
       .schema = SecretSchema(),
       .update_rules = {KeepImmutableData},
       .columns = {NameColumn(),
                   FieldColumn("TYPE", "type", "Opaque"),
                   {.name = "DATA",
                    .type = ColumnType::kInteger,
                    .description = "keys of .data",
                    .cell = [](const json& o, const ColumnOptions&) { return DataCount(o, {"data"}); }},
                   AgeColumn()},
       // As Kubernetes' edit; view cannot read them.
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kEdit, .verbs = verbs::kAll}}}},
      // A Service's name becomes {NAME}_SERVICE_HOST in its pods' variables: a DNS-1035 label.
      {.info = {.group = "", .version = "v1", .kind = "Service", .api_version = "v1", .plural = "services",
                .singular = "service", .short_names = {"svc"}, .categories = {"all"}, .namespaced = true,
                .name_rule = NameRule::kDns1035Label, .store_key = "/Service"},
       .schema = ServiceSchema(),
       .update_rules = {KeepClusterIp},
       .columns = {NameColumn(),
                   FieldColumn("TYPE", "spec.type", "ClusterIP"),
                   FieldColumn("CLUSTER-IP", "spec.clusterIP", "<none>"),
                   {.name = "EXTERNAL-IP", .description = ".spec.externalIPs", .cell = ServiceExternalIps},
                   {.name = "PORT(S)", .description = "port/protocol of each port", .cell = ServicePorts},
                   AgeColumn(),
                   {.name = "SELECTOR",
                    .priority = 1,
                    .description = ".spec.selector",
                    .cell = [](const json& o, const ColumnOptions&) { return JoinMap(Find(o, "spec.selector")); }}},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites(),
                                      {.role = DefaultRole::kEdit, .subresource = "proxy", .verbs = verbs::kAll}}},
       .controller = "endpointslice-controller"},
      {.info = {.group = "", .version = "v1", .kind = "ConfigMap", .api_version = "v1", .plural = "configmaps",
                .singular = "configmap", .short_names = {"cm"}, .namespaced = true, .store_key = "/ConfigMap"},
       .schema = ConfigMapSchema(),
       .update_rules = {KeepImmutableData},
       .columns = {NameColumn(),
                   {.name = "DATA",
                    .type = ColumnType::kInteger,
                    .description = "keys of .data and .binaryData",
                    .cell = [](const json& o, const ColumnOptions&) { return DataCount(o, {"data", "binaryData"}); }},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), EditWrites()}}},
      {.info = {.group = "", .version = "v1", .kind = "PersistentVolumeClaim", .api_version = "v1",
                .plural = "persistentvolumeclaims", .singular = "persistentvolumeclaim", .short_names = {"pvc"},
                .namespaced = true, .store_key = "/PersistentVolumeClaim"},
       .schema = PersistentVolumeClaimSchema(),
       .update_rules = {KeepClaimSpec},
       .columns = {NameColumn(),
                   FieldColumn("STATUS", "status.phase", "Pending"),
                   FieldColumn("VOLUME", "spec.volumeName"),
                   FieldColumn("CAPACITY", "status.capacity.storage"),
                   {.name = "ACCESS MODES", .description = "RWO, ROX, RWX, RWOP", .cell = AccessModes},
                   FieldColumn("STORAGECLASS", "spec.storageClassName"),
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "claim-reclaimer"},
  };
}

}  // namespace tessera
