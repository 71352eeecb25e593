#include "api/common_schemas.h"

#include <fmt/format.h>

#include <limits>
#include <set>
#include <utility>

#include "api/names.h"
#include "common/time_format.h"
#include "domain/quantity.h"

namespace tessera::schema {
namespace {

using nlohmann::json;

// requests[r] <= limits[r] for every resource both list (Kubernetes' rule).
void CheckRequestsWithinLimits(const json& v, const std::string& path, Errors& errors) {
  const json* requests = Get(v, "requests");
  const json* limits = Get(v, "limits");
  if (!requests || !limits) return;
  for (const auto& [name, req] : requests->items()) {
    auto lim = limits->find(name);
    if (lim == limits->end() || lim->is_null()) continue;
    Errors ignored;
    auto r = CheckAmount(name, req, "", ignored);
    auto l = CheckAmount(name, *lim, "", ignored);
    if (r && l && *r > *l) {
      errors.Add(KeyPath(FieldPath(path, "requests"), name),
                 fmt::format("{} is more than the limit {}", *QuantityTextOf(req),
                             *QuantityTextOf(*lim)));
    }
  }
}

// Container names are unique across containers and initContainers.
void CheckContainerNames(const json& spec, const std::string& path, Errors& errors) {
  std::set<std::string> seen;
  for (std::string_view list : {"initContainers", "containers"}) {
    const json* containers = Get(spec, list);
    if (!containers) continue;
    for (size_t i = 0; i < containers->size(); ++i) {
      std::string name = GetString((*containers)[i], "name");
      if (!seen.insert(name).second) {
        errors.Add(FieldPath(IndexPath(FieldPath(path, list), i), "name"),
                   fmt::format("duplicate container name \"{}\"", name));
      }
    }
  }
}

// A probe's port: a number in 1..65535, or the name of one of the container's
// ports (IANA_SVC_NAME as Kubernetes has it: at most 15 characters).
void CheckProbePort(const json& port, const std::string& path, Errors& errors) {
  if (port.is_number_integer()) {
    const int64_t n = port.get<int64_t>();
    if (n < 1 || n > 65535) errors.Add(path, fmt::format("Invalid value: {}: must be between 1 and 65535, inclusive", n));
  } else if (port.is_string() && (port.get<std::string>().empty() || port.get<std::string>().size() > 15)) {
    errors.Add(path, fmt::format("Invalid value: \"{}\": must be a port number or the name (at most 15 characters) of "
                                 "one of the container's ports",
                                 port.get<std::string>()));
  }
}

// A probe names a container port by name only when the container has it (the
// kubelet would fail the probe for ever; Tessera says so at once).
void CheckProbePortNames(const json& container, const std::string& path, Errors& errors) {
  std::set<std::string> names;
  if (const json* ports = Get(container, "ports"); ports && ports->is_array()) {
    for (const json& p : *ports) {
      if (p.is_object()) names.insert(GetString(p, "name"));
    }
  }
  for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    const json* spec = Get(container, probe);
    if (!spec || !spec->is_object()) continue;
    for (std::string_view handler : {"httpGet", "tcpSocket"}) {
      const json* h = Get(*spec, handler);
      const json* port = h && h->is_object() ? Get(*h, "port") : nullptr;
      if (!port || !port->is_string() || port->get<std::string>().empty() || names.contains(port->get<std::string>())) {
        continue;
      }
      errors.Add(FieldPath(FieldPath(FieldPath(path, probe), handler), "port"),
                 fmt::format("Invalid value: \"{}\": the container has no port of that name (name it in ports, or "
                             "give the number)",
                             port->get<std::string>()));
    }
  }
}

// readinessProbe, livenessProbe or startupProbe (`kind`), as Kubernetes
// validates them: exactly one handler (httpGet, tcpSocket, exec; grpc is not
// run by Tessera's agent yet, so it is refused rather than never passing),
// thresholds and periods of at least 1, successThreshold 1 but for readiness,
// terminationGracePeriodSeconds only for liveness and startup.
SchemaRef Probe(std::string_view kind) {
  SchemaRef port = IntOrStr();
  SchemaRef header = Obj({Req("name", Str()), Req("value", Str())});
  SchemaRef http = Obj({Opt("path", Str()), Req("port", port), Opt("host", Str()),
                        Opt("scheme", Enum({"HTTP"})), Opt("httpHeaders", Arr(header))},
                       {[](const json& v, const std::string& path, Errors& errors) {
                         if (const json* p = Get(v, "port")) CheckProbePort(*p, FieldPath(path, "port"), errors);
                         const std::string target = GetString(v, "path");
                         if (!target.empty() && !target.starts_with("/")) {
                           errors.Add(FieldPath(path, "path"),
                                      fmt::format("Invalid value: \"{}\": must be an absolute path", target));
                         }
                       }});
  SchemaRef tcp = Obj({Req("port", port), Opt("host", Str())}, {[](const json& v, const std::string& path, Errors& errors) {
    if (const json* p = Get(v, "port")) CheckProbePort(*p, FieldPath(path, "port"), errors);
  }});
  SchemaRef exec = Obj({Opt("command", Arr(Str()))}, {[](const json& v, const std::string& path, Errors& errors) {
    const json* command = Get(v, "command");
    if (!command || command->empty()) errors.Add(FieldPath(path, "command"), "Required value: the command to run in the container");
  }});
  const std::string probe_kind(kind);
  return Obj({Opt("httpGet", http), Opt("tcpSocket", tcp), Opt("exec", exec), Opt("grpc", OpenObj()),
              Opt("initialDelaySeconds", Int(0)), Opt("periodSeconds", Int(1)), Opt("timeoutSeconds", Int(1)),
              Opt("successThreshold", Int(1)), Opt("failureThreshold", Int(1)),
              Opt("terminationGracePeriodSeconds", Int64(1))},
             {[probe_kind](const json& v, const std::string& path, Errors& errors) {
               if (Get(v, "grpc")) {
                 errors.Add(FieldPath(path, "grpc"),
                            "Unsupported value: Tessera's agent does not run gRPC probes yet: use httpGet, tcpSocket or "
                            "exec (e.g. exec: {command: [grpc_health_probe, -addr=:PORT]})");
                 return;
               }
               int handlers = 0;
               for (std::string_view h : {"httpGet", "tcpSocket", "exec"}) handlers += Get(v, h) ? 1 : 0;
               if (handlers == 0) errors.Add(path, "Required value: must specify a handler type (httpGet, tcpSocket or exec)");
               if (handlers > 1) errors.Add(path, "Forbidden: may not specify more than 1 handler type");
               const auto success = GetInt(v, "successThreshold");
               if (probe_kind != "readiness" && success && *success != 1) {
                 errors.Add(FieldPath(path, "successThreshold"), fmt::format("Invalid value: {}: must be 1", *success));
               }
               const auto grace = GetInt(v, "terminationGracePeriodSeconds");
               if (probe_kind == "readiness" && grace) {
                 errors.Add(FieldPath(path, "terminationGracePeriodSeconds"),
                            fmt::format("Invalid value: {}: must not be set for readinessProbes", *grace));
               }
             }});
}

}  // namespace

SchemaRef LabelMap() { return MapOf(Str(StringRule::kLabelValue), KeyRule::kLabelKey); }

SchemaRef AnnotationMap() {
  auto s = *MapOf(Str(), KeyRule::kLabelKey);
  s.checks.push_back([](const json& v, const std::string& path, Errors& errors) {
    size_t total = 0;
    for (const auto& [k, val] : v.items()) total += k.size() + val.get_ref<const std::string&>().size();
    if (total > kMaxAnnotationBytes) {
      errors.Add(path, fmt::format("annotations take {} bytes, more than the limit of {}", total,
                                   kMaxAnnotationBytes));
    }
  });
  return Make(std::move(s));
}

SchemaRef ObjectMeta() {
  static const SchemaRef s = Obj({
      Opt("name", Str()),
      Opt("generateName", Str()),
      Opt("namespace", Str(StringRule::kNamespace)),
      Opt("labels", LabelMap()),
      Opt("annotations", AnnotationMap()),
      Opt("uid", Str()),
      Opt("resourceVersion", Str()),
      Opt("generation", Int64()),
      Opt("creationTimestamp", Str()),
      Opt("deletionTimestamp", Str()),
      Opt("deletionGracePeriodSeconds", Int64()),
      Opt("finalizers", Arr(Str(StringRule::kQualifiedName))),
      Opt("ownerReferences", Arr(Obj({
                                 Req("apiVersion", Str()),
                                 Req("kind", Str()),
                                 Req("name", Str()),
                                 Req("uid", Str()),
                                 Opt("controller", Bool()),
                                 Opt("blockOwnerDeletion", Bool()),
                             }))),
      Opt("managedFields", Arr(OpenObj())),
      Opt("selfLink", Str()),
  });
  return s;
}

void CheckRequirementValues(const json& v, const std::string& path, Errors& errors,
                            std::string_view op_field) {
  std::string op = GetString(v, op_field);
  const json* values = Get(v, "values");
  bool has_values = values && !values->empty();
  if ((op == "In" || op == "NotIn") && !has_values) {
    errors.Add(FieldPath(path, "values"), fmt::format("required for operator {}", op));
  } else if ((op == "Exists" || op == "DoesNotExist") && has_values) {
    errors.Add(FieldPath(path, "values"), fmt::format("must be empty for operator {}", op));
  }
}

SchemaRef LabelSelector() {
  static const SchemaRef s = Obj({
      Opt("matchLabels", LabelMap()),
      Opt("matchExpressions",
          Arr(Obj({Req("key", Str(StringRule::kQualifiedName)),
                   Req("operator", Enum({"In", "NotIn", "Exists", "DoesNotExist"})),
                   Opt("values", Arr(Str()))},
                  {[](const json& v, const std::string& path, Errors& errors) {
                    CheckRequirementValues(v, path, errors, "operator");
                  }}))),
  });
  return s;
}

SchemaRef Taint() {
  static const SchemaRef s = Obj({
      Req("key", Str(StringRule::kQualifiedName)),
      Opt("value", Str(StringRule::kLabelValue)),
      Req("effect", Enum({"NoSchedule", "PreferNoSchedule", "NoExecute"})),
      Opt("timeAdded", Str()),
  });
  return s;
}

SchemaRef Toleration() {
  static const SchemaRef s = Obj(
      {
          Opt("key", Str()),
          Opt("operator", Enum({"Exists", "Equal"})),
          Opt("value", Str()),
          Opt("effect", Enum({"", "NoSchedule", "PreferNoSchedule", "NoExecute"})),
          Opt("tolerationSeconds", Int64(std::numeric_limits<int64_t>::min())),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        std::string key = GetString(v, "key");
        std::string op = GetString(v, "operator");
        if (!key.empty()) {
          if (Status st = ValidateQualifiedName(key); !st.ok()) {
            errors.Add(FieldPath(path, "key"), st.message());
          }
        } else if (op != "Exists") {
          errors.Add(FieldPath(path, "operator"),
                     "must be Exists when key is empty (a toleration of every taint)");
        }
        if (op == "Exists" && !GetString(v, "value").empty()) {
          errors.Add(FieldPath(path, "value"), "must be empty when operator is Exists");
        }
      }});
  return s;
}


SchemaRef ResourceRequirements() {
  static const SchemaRef s = Obj(
      {
          Opt("limits", ResourceList()),
          Opt("requests", ResourceList()),
          Opt("claims", Arr(Obj({Req("name", Str()), Opt("request", Str())}))),
      },
      {CheckRequestsWithinLimits});
  return s;
}

SchemaRef Container() {
  static const SchemaRef s = [] {
    SchemaRef key_ref = Obj({Opt("name", Str()), Req("key", Str()), Opt("optional", Bool())});
    SchemaRef source_ref = Obj({Opt("name", Str()), Opt("optional", Bool())});
    SchemaRef env_var = Obj({
        Req("name", Str()),
        Opt("value", Str()),
        Opt("valueFrom", Obj({
                             Opt("fieldRef", Obj({Opt("apiVersion", Str()), Req("fieldPath", Str())})),
                             Opt("resourceFieldRef", Obj({Opt("containerName", Str()),
                                                          Req("resource", Str()),
                                                          Opt("divisor", Qty())})),
                             Opt("configMapKeyRef", key_ref),
                             Opt("secretKeyRef", key_ref),
                         })),
    });
    SchemaRef port = Obj({
        Opt("name", Str()),
        Req("containerPort", Int(1, 65535)),
        Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
        Opt("hostPort", Int(0, 65535)),
        Opt("hostIP", Str()),
    });
    SchemaRef mount = Obj({
        Req("name", Str()),
        Req("mountPath", Str()),
        Opt("readOnly", Bool()),
        Opt("subPath", Str()),
        Opt("subPathExpr", Str()),
        Opt("mountPropagation", Enum({"None", "HostToContainer", "Bidirectional"})),
        Opt("recursiveReadOnly", Enum({"Disabled", "IfPossible", "Enabled"})),
    });
    return Obj({
        Req("name", Str(StringRule::kDns1123Label)),
        Opt("image", Str()),
        Opt("command", Arr(Str())),
        Opt("args", Arr(Str())),
        Opt("workingDir", Str()),
        Opt("ports", Arr(port)),
        Opt("envFrom", Arr(Obj({Opt("prefix", Str()), Opt("configMapRef", source_ref),
                                Opt("secretRef", source_ref)}))),
        Opt("env", Arr(env_var)),
        Opt("resources", ResourceRequirements()),
        Opt("resizePolicy", Arr(OpenObj())),
        Opt("restartPolicy", Enum({"Always"})),  // init containers as sidecars
        Opt("volumeMounts", Arr(mount)),
        Opt("volumeDevices", Arr(OpenObj())),
        Opt("livenessProbe", Probe("liveness")),
        Opt("readinessProbe", Probe("readiness")),
        Opt("startupProbe", Probe("startup")),
        Opt("lifecycle", OpenObj()),
        Opt("terminationMessagePath", Str()),
        Opt("terminationMessagePolicy", Enum({"File", "FallbackToLogsOnError"})),
        Opt("imagePullPolicy", Enum({"Always", "Never", "IfNotPresent"})),
        Opt("securityContext", OpenObj()),
        Opt("stdin", Bool()),
        Opt("stdinOnce", Bool()),
        Opt("tty", Bool()),
    }, {CheckProbePortNames});
  }();
  return s;
}

// A pod volume: the sources Tessera mounts (docs/agent.md, "Volumes") checked
// field by field; others are left to the agent, which names what it does not
// support. One source a volume.
SchemaRef Volume() {
  static const SchemaRef s = [] {
    SchemaRef mode = Int(0, 0777);
    SchemaRef items = Arr(Obj({Req("key", Str()), Req("path", Str()), Opt("mode", mode)},
                              {[](const json& v, const std::string& path, Errors& errors) {
                                const std::string p = GetString(v, "path");
                                bool dots = false;
                                for (size_t start = 0; start <= p.size();) {
                                  size_t slash = p.find('/', start);
                                  if (slash == std::string::npos) slash = p.size();
                                  dots = dots || p.substr(start, slash - start) == "..";
                                  start = slash + 1;
                                }
                                if (p.starts_with("/") || dots) {
                                  errors.Add(FieldPath(path, "path"),
                                             fmt::format("Invalid value: \"{}\": must be a relative path without '..'", p));
                                }
                              }}));
    SchemaRef host_path_type = Enum({"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
                                     "CharDevice", "BlockDevice"});
    return Make({.type = Type::kObject,
                 .fields = {Req("name", Str(StringRule::kDns1123Label)),
                            Opt("emptyDir", Obj({Opt("medium", Enum({"", "Memory"})), Opt("sizeLimit", Qty())})),
                            Opt("configMap", Obj({Req("name", Str()), Opt("items", items), Opt("defaultMode", mode),
                                                  Opt("optional", Bool())})),
                            Opt("secret", Obj({Req("secretName", Str()), Opt("items", items), Opt("defaultMode", mode),
                                               Opt("optional", Bool())})),
                            Opt("hostPath", Obj({Req("path", Str()), Opt("type", host_path_type)})),
                            Opt("persistentVolumeClaim", Obj({Req("claimName", Str()), Opt("readOnly", Bool())}))},
                 .open = true,
                 .checks = {[](const json& v, const std::string& path, Errors& errors) {
                   int sources = 0;
                   for (const auto& [key, unused] : v.items()) sources += key != "name" ? 1 : 0;
                   if (sources > 1) errors.Add(path, "Forbidden: may not specify more than 1 volume type");
                   const std::string host = GetString(Get(v, "hostPath") ? *Get(v, "hostPath") : json::object(), "path");
                   if (Get(v, "hostPath") && !host.starts_with("/")) {
                     errors.Add(FieldPath(path, "hostPath.path"),
                                fmt::format("Invalid value: \"{}\": must be an absolute path", host));
                   }
                 }}});
  }();
  return s;
}


SchemaRef PodSpec() {
  static const SchemaRef s = Obj(
      {
          Opt("volumes", Arr(Volume())),
          Opt("initContainers", Arr(Container())),
          Req("containers", Arr(Container(), /*non_empty=*/true)),
          Opt("ephemeralContainers", Arr(OpenObj())),
          Opt("restartPolicy", Enum({"Always", "OnFailure", "Never"})),
          Opt("terminationGracePeriodSeconds", Int64()),
          Opt("activeDeadlineSeconds", Int64(1)),
          Opt("dnsPolicy", Enum({"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"})),
          Opt("nodeSelector", LabelMap()),
          Opt("serviceAccountName", Str()),
          Opt("serviceAccount", Str()),
          Opt("automountServiceAccountToken", Bool()),
          Opt("nodeName", Str()),
          Opt("hostNetwork", Bool()),
          Opt("hostPID", Bool()),
          Opt("hostIPC", Bool()),
          Opt("shareProcessNamespace", Bool()),
          Opt("securityContext", OpenObj()),
          Opt("imagePullSecrets", Arr(Obj({Opt("name", Str())}))),
          Opt("hostname", Str()),
          Opt("subdomain", Str()),
          Opt("affinity", OpenObj()),
          Opt("schedulerName", Str()),
          Opt("tolerations", Arr(Toleration())),
          Opt("hostAliases", Arr(OpenObj())),
          Opt("priorityClassName", Str()),
          Opt("priority", Int(kInt32Min)),
          Opt("dnsConfig", OpenObj()),
          Opt("readinessGates", Arr(OpenObj())),
          Opt("runtimeClassName", Str()),
          Opt("enableServiceLinks", Bool()),
          Opt("preemptionPolicy", Enum({"PreemptLowerPriority", "Never"})),
          Opt("overhead", ResourceList()),
          Opt("topologySpreadConstraints", Arr(OpenObj())),
          Opt("setHostnameAsFQDN", Bool()),
          Opt("os", OpenObj()),
          Opt("hostUsers", Bool()),
          Opt("schedulingGates", Arr(Obj({Req("name", Str())}))),
          Opt("resourceClaims", Arr(OpenObj())),
          Opt("resources", ResourceRequirements()),
      },
      {CheckContainerNames});
  return s;
}

SchemaRef PodTemplateSpec() {
  static const SchemaRef s = Obj({Opt("metadata", ObjectMeta()), Req("spec", PodSpec())});
  return s;
}

SchemaRef Root(std::vector<FieldSpec> fields, std::vector<Check> checks) {
  fields.insert(fields.begin(), {Opt("apiVersion", Str()), Opt("kind", Str()),
                                 Opt("metadata", ObjectMeta())});
  fields.push_back(Opt("status", Any()));
  return Obj(std::move(fields), std::move(checks));
}

SchemaRef ObjectReference() {
  return Obj({Opt("kind", Str()), Opt("namespace", Str()), Opt("name", Str()), Opt("uid", Str()),
              Opt("apiVersion", Str()), Opt("resourceVersion", Str()), Opt("fieldPath", Str())});
}

void CheckDecimal(const json& v, const std::string& path, Errors& errors) {
  std::optional<std::string> text = QuantityTextOf(v);
  auto milli = text ? ParseMilli(*text) : Result<int64_t>(Err(Status::InvalidArgument("")));
  if (!milli || *milli < 0) {
    errors.Add(path, fmt::format("expected an amount such as \"5000\" or \"2.10\" (at most 3 decimals, not negative), "
                                 "got {}",
                                 Describe(v)));
  }
}
SchemaRef Decimal() { return Make({.type = Type::kAny, .checks = {CheckDecimal}}); }

SchemaRef DurationText() {
  return Make({.type = Type::kString, .checks = {[](const json& v, const std::string& path, Errors& errors) {
                 if (!v.is_string() || !ParseDuration(v.get<std::string>())) {
                   errors.Add(path, fmt::format("expected a duration such as \"24h\" or \"30m\", got {}", Describe(v)));
                 }
               }}});
}

}  // namespace tessera::schema
