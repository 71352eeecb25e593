#include "net/cluster_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "domain/ipv4_cidr.h"

namespace tessera::net {
namespace {

using nlohmann::json;

const json& EmptyObject() {
  static const json kEmpty = json::object();
  return kEmpty;
}

// The object at `key`, or an empty object when absent; an error for another type.
Result<const json*> ObjectField(const json& object, const char* key, std::string_view path) {
  const json* v = JsonFind(object, key);
  if (v == nullptr) return &EmptyObject();
  if (!v->is_object()) return Err(JsonTypeError(JoinJsonPath(path, key), "an object", *v));
  return v;
}

Result<bool> BoolField(const json& object, const char* key, std::string_view path, bool fallback) {
  const json* v = JsonFind(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) return Err(JsonTypeError(JoinJsonPath(path, key), "true or false", *v));
  return v->get<bool>();
}

Result<uint16_t> PortField(const json& object, const char* key, std::string_view path) {
  const std::string field = JoinJsonPath(path, key);
  const json* v = JsonFind(object, key);
  if (v == nullptr) return Err(Status::InvalidArgument(fmt::format("{}: is required", field)));
  if (!v->is_number_integer()) return Err(JsonTypeError(field, "an integer", *v));
  const int64_t n = v->get<int64_t>();
  if (n < 1 || n > 65535) return Err(Status::InvalidArgument(fmt::format("{}: must be 1..65535, not {}", field, n)));
  return static_cast<uint16_t>(n);
}

Result<Protocol> ProtocolField(const json& object, std::string_view path) {
  ASSIGN_OR_RETURN(std::string text, ReadJsonString(object, "protocol", path, /*required=*/false));
  if (text.empty()) return Protocol::kTCP;
  auto p = ParseProtocol(text);
  if (!p) {
    return Err(Status::InvalidArgument(
        fmt::format("{}: must be TCP, UDP or SCTP, not \"{}\"", JoinJsonPath(path, "protocol"), text)));
  }
  return *p;
}

Status AppendContainerPorts(const json& containers, std::string_view path, bool sidecars_only,
                            std::vector<ContainerPort>& out) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const json& c = containers[i];
    const std::string cpath = fmt::format("{}[{}]", path, i);
    if (sidecars_only) {
      ASSIGN_OR_RETURN(std::string restart, ReadJsonString(c, "restartPolicy", cpath, /*required=*/false));
      if (restart != "Always") continue;
    }
    ASSIGN_OR_RETURN(const json* ports, ReadJsonObjectList(c, "ports", cpath));
    if (ports == nullptr) continue;
    for (size_t j = 0; j < ports->size(); ++j) {
      const json& p = (*ports)[j];
      const std::string ppath = fmt::format("{}.ports[{}]", cpath, j);
      ContainerPort port;
      ASSIGN_OR_RETURN(port.name, ReadJsonString(p, "name", ppath, /*required=*/false));
      ASSIGN_OR_RETURN(port.port, PortField(p, "containerPort", ppath));
      ASSIGN_OR_RETURN(port.protocol, ProtocolField(p, ppath));
      out.push_back(std::move(port));
    }
  }
  return Status::Ok();
}

struct Meta {
  std::string ns;
  std::string name;
  std::map<std::string, std::string> labels;
};

Result<Meta> ReadMeta(const json& object, bool namespaced) {
  if (!object.is_object()) return Err(JsonTypeError("object", "an object", object));
  ASSIGN_OR_RETURN(const json* metadata, ObjectField(object, "metadata", ""));
  Meta m;
  ASSIGN_OR_RETURN(m.name, ReadJsonString(*metadata, "name", "metadata", /*required=*/true));
  if (namespaced) {
    ASSIGN_OR_RETURN(m.ns, ReadJsonString(*metadata, "namespace", "metadata", /*required=*/true));
  }
  ASSIGN_OR_RETURN(m.labels, ReadJsonStringMap(*metadata, "labels", "metadata"));
  return m;
}

}  // namespace

std::optional<uint32_t> ParseIpv4(std::string_view text) {
  if (text.empty() || text.size() > 15 || text.find('/') != std::string_view::npos) return std::nullopt;
  auto cidr = ParseIpv4Cidr(fmt::format("{}/32", text));
  if (!cidr) return std::nullopt;
  return cidr->network;
}

std::map<std::string, std::string> NamespaceLabels(const ClusterView& view, std::string_view ns) {
  std::map<std::string, std::string> labels;
  for (const NamespaceInfo& n : view.namespaces) {
    if (n.name == ns) {
      labels = n.labels;
      break;
    }
  }
  labels[std::string(kNamespaceNameLabel)] = std::string(ns);
  return labels;
}

Status ClusterView::AddPolicyJson(const json& object) {
  auto policy = ParseNetworkPolicy(object);
  if (policy) {
    policies.push_back(std::move(*policy));
    return Status::Ok();
  }
  UnparsedPolicy u;
  u.error = policy.error().message();
  if (const json* metadata = JsonFind(object, "metadata")) {
    if (auto ns = ReadJsonString(*metadata, "namespace", "metadata", false)) u.ns = *ns;
    if (auto name = ReadJsonString(*metadata, "name", "metadata", false)) u.name = *name;
  }
  if (!u.ns.empty()) unparsed_policies.push_back(u);
  return policy.error();
}

Result<PodInfo> PodInfoFromJson(const json& pod) {
  ASSIGN_OR_RETURN(Meta meta, ReadMeta(pod, /*namespaced=*/true));
  PodInfo info;
  info.ns = std::move(meta.ns);
  info.name = std::move(meta.name);
  info.labels = std::move(meta.labels);
  ASSIGN_OR_RETURN(const json* spec, ObjectField(pod, "spec", ""));
  ASSIGN_OR_RETURN(info.host_network, BoolField(*spec, "hostNetwork", "spec", false));
  ASSIGN_OR_RETURN(const json* containers, ReadJsonObjectList(*spec, "containers", "spec"));
  if (containers != nullptr) RETURN_IF_ERROR(AppendContainerPorts(*containers, "spec.containers", false, info.ports));
  ASSIGN_OR_RETURN(const json* init, ReadJsonObjectList(*spec, "initContainers", "spec"));
  if (init != nullptr) RETURN_IF_ERROR(AppendContainerPorts(*init, "spec.initContainers", true, info.ports));

  ASSIGN_OR_RETURN(const json* status, ObjectField(pod, "status", ""));
  ASSIGN_OR_RETURN(std::string phase, ReadJsonString(*status, "phase", "status", false));
  // A finished pod keeps status.podIP, but the address may be another pod's by now.
  if (phase == "Succeeded" || phase == "Failed") return info;
  ASSIGN_OR_RETURN(std::string ip, ReadJsonString(*status, "podIP", "status", false));
  if (ParseIpv4(ip)) {
    info.ip = ip;
  } else {
    ASSIGN_OR_RETURN(const json* ips, ReadJsonObjectList(*status, "podIPs", "status"));
    if (ips != nullptr) {
      for (size_t i = 0; i < ips->size(); ++i) {
        ASSIGN_OR_RETURN(std::string one, ReadJsonString((*ips)[i], "ip", fmt::format("status.podIPs[{}]", i), false));
        if (ParseIpv4(one)) {
          info.ip = one;
          break;
        }
      }
    }
  }
  return info;
}

Result<NamespaceInfo> NamespaceInfoFromJson(const json& ns) {
  ASSIGN_OR_RETURN(Meta meta, ReadMeta(ns, /*namespaced=*/false));
  NamespaceInfo info;
  info.name = std::move(meta.name);
  info.labels = std::move(meta.labels);
  info.labels[std::string(kNamespaceNameLabel)] = info.name;
  return info;
}

Result<ServiceInfo> ServiceInfoFromJson(const json& service, std::span<const json> endpoint_slices) {
  ASSIGN_OR_RETURN(Meta meta, ReadMeta(service, /*namespaced=*/true));
  ServiceInfo info;
  info.ns = std::move(meta.ns);
  info.name = std::move(meta.name);
  ASSIGN_OR_RETURN(const json* spec, ObjectField(service, "spec", ""));
  ASSIGN_OR_RETURN(std::string cluster_ip, ReadJsonString(*spec, "clusterIP", "spec", false));
  if (ParseIpv4(cluster_ip)) info.cluster_ip = cluster_ip;

  // The slices of this Service: their ready IPv4 addresses and their ports.
  struct SlicePort {
    std::string name;
    Protocol protocol;
    uint16_t port;
  };
  std::vector<SlicePort> slice_ports;
  bool any_slice = false;
  for (size_t s = 0; s < endpoint_slices.size(); ++s) {
    const json& slice = endpoint_slices[s];
    const std::string spath = fmt::format("endpointSlices[{}]", s);
    auto slice_meta = ReadMeta(slice, /*namespaced=*/true);
    if (!slice_meta) return Err(slice_meta.error().WithContext(spath));
    auto owner = slice_meta->labels.find("kubernetes.io/service-name");
    if (slice_meta->ns != info.ns || owner == slice_meta->labels.end() || owner->second != info.name) continue;
    ASSIGN_OR_RETURN(std::string type, ReadJsonString(slice, "addressType", spath, false));
    if (!type.empty() && type != "IPv4") continue;
    any_slice = true;
    ASSIGN_OR_RETURN(const json* ports, ReadJsonObjectList(slice, "ports", spath));
    if (ports != nullptr) {
      for (size_t j = 0; j < ports->size(); ++j) {
        const std::string ppath = fmt::format("{}.ports[{}]", spath, j);
        SlicePort p;
        ASSIGN_OR_RETURN(p.name, ReadJsonString((*ports)[j], "name", ppath, false));
        ASSIGN_OR_RETURN(p.protocol, ProtocolField((*ports)[j], ppath));
        ASSIGN_OR_RETURN(p.port, PortField((*ports)[j], "port", ppath));
        slice_ports.push_back(std::move(p));
      }
    }
    ASSIGN_OR_RETURN(const json* endpoints, ReadJsonObjectList(slice, "endpoints", spath));
    if (endpoints == nullptr) continue;
    for (size_t j = 0; j < endpoints->size(); ++j) {
      const json& e = (*endpoints)[j];
      const std::string epath = fmt::format("{}.endpoints[{}]", spath, j);
      ASSIGN_OR_RETURN(const json* conditions, ObjectField(e, "conditions", epath));
      ASSIGN_OR_RETURN(bool ready, BoolField(*conditions, "ready", JoinJsonPath(epath, "conditions"), true));
      if (!ready) continue;
      ASSIGN_OR_RETURN(std::vector<std::string> addresses, ReadJsonStringList(e, "addresses", epath));
      for (std::string& a : addresses) {
        if (ParseIpv4(a)) info.ready_endpoint_ips.push_back(std::move(a));
      }
    }
  }
  std::sort(info.ready_endpoint_ips.begin(), info.ready_endpoint_ips.end());
  info.ready_endpoint_ips.erase(std::unique(info.ready_endpoint_ips.begin(), info.ready_endpoint_ips.end()),
                                info.ready_endpoint_ips.end());

  ASSIGN_OR_RETURN(const json* ports, ReadJsonObjectList(*spec, "ports", "spec"));
  if (ports != nullptr) {
    for (size_t i = 0; i < ports->size(); ++i) {
      const json& p = (*ports)[i];
      const std::string ppath = fmt::format("spec.ports[{}]", i);
      ServicePort port;
      ASSIGN_OR_RETURN(port.name, ReadJsonString(p, "name", ppath, false));
      ASSIGN_OR_RETURN(port.protocol, ProtocolField(p, ppath));
      ASSIGN_OR_RETURN(port.port, PortField(p, "port", ppath));
      std::optional<uint16_t> target;
      for (const SlicePort& sp : slice_ports) {
        if (sp.name == port.name && sp.protocol == port.protocol) target = sp.port;
      }
      if (!target && !any_slice) {
        const json* t = JsonFind(p, "targetPort");
        if (t == nullptr) {
          target = port.port;
        } else if (t->is_number_integer()) {
          ASSIGN_OR_RETURN(target, PortField(p, "targetPort", ppath));
        }
      }
      if (!target) continue;  // a named target no slice resolves: nothing to send to
      port.target_port = *target;
      info.ports.push_back(std::move(port));
    }
  }
  return info;
}

}  // namespace tessera::net
