#include "api/service.h"

#include <fmt/format.h>

#include "common/json_fields.h"

namespace tessera {

using nlohmann::json;

namespace {

// The text of a string field, "" when absent or of another type (validation refuses that).
std::string Text(const json& obj, const char* key) {
  const json* v = JsonFind(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool Missing(const json& obj, const char* key) {
  const json* v = JsonFind(obj, key);
  return v == nullptr || (v->is_string() && v->get_ref<const std::string&>().empty()) ||
         (v->is_array() && v->empty());
}

}  // namespace

void DefaultService(json& service) {
  if (!service.is_object()) return;
  if (!service.contains("spec") || !service["spec"].is_object()) service["spec"] = json::object();
  json& spec = service["spec"];
  for (const auto& [field, value] : {std::pair{"type", "ClusterIP"}, std::pair{"sessionAffinity", "None"},
                                     std::pair{"internalTrafficPolicy", "Cluster"},
                                     std::pair{"ipFamilyPolicy", "SingleStack"}}) {
    if (Missing(spec, field)) spec[field] = value;
  }
  if (Missing(spec, "ipFamilies")) spec["ipFamilies"] = json::array({"IPv4"});
  // clusterIP and clusterIPs say the same; either may be given.
  const std::string ip = Text(spec, "clusterIP");
  const json* ips = JsonFind(spec, "clusterIPs");
  if (ip.empty() && ips != nullptr && ips->is_array() && !ips->empty() && (*ips)[0].is_string()) {
    spec["clusterIP"] = (*ips)[0];
  } else if (!ip.empty() && (ips == nullptr || !ips->is_array() || ips->empty())) {
    spec["clusterIPs"] = json::array({ip});
  }
  if (json* ports = spec.contains("ports") && spec["ports"].is_array() ? &spec["ports"] : nullptr) {
    for (json& p : *ports) {
      if (!p.is_object()) continue;
      if (Missing(p, "protocol")) p["protocol"] = "TCP";
      const json* target = JsonFind(p, "targetPort");
      const bool unset = target == nullptr || (target->is_string() && target->get_ref<const std::string&>().empty()) ||
                         (target->is_number_integer() && target->get<int64_t>() == 0);
      if (unset && p.contains("port")) p["targetPort"] = p["port"];
    }
  }
}

void KeepAllocatedServiceFields(json& next, const json& stored) {
  const json* before = JsonFind(stored, "spec");
  if (before == nullptr || !before->is_object() || !next.is_object()) return;
  if (!next.contains("spec") || !next["spec"].is_object()) next["spec"] = json::object();
  json& spec = next["spec"];
  // As kube-apiserver reads a changed clusterIP beside the clusterIPs it had: the new one for both.
  const std::string ip = Text(spec, "clusterIP");
  const json* ips = JsonFind(spec, "clusterIPs");
  if (!ip.empty() && ip != Text(*before, "clusterIP") && ips != nullptr && ips->is_array() && !ips->empty() &&
      *ips == before->value("clusterIPs", json())) {
    spec["clusterIPs"][0] = ip;
  }
  if (Missing(spec, "clusterIP") && Missing(spec, "clusterIPs")) {
    for (const char* field : {"clusterIP", "clusterIPs"}) {
      if (const json* v = JsonFind(*before, field)) spec[field] = *v;
    }
  }
  for (const char* field : {"ipFamilies", "ipFamilyPolicy"}) {
    if (const json* v = JsonFind(*before, field); v != nullptr && Missing(spec, field)) spec[field] = *v;
  }
}

Result<ServiceView> ServiceViewFromJson(const json& service) {
  ServiceView view;
  const json* meta = JsonFind(service, "metadata");
  if (meta == nullptr || !meta->is_object()) return Err(Status::InvalidArgument("metadata: required"));
  ASSIGN_OR_RETURN(view.ns, ReadJsonString(*meta, "namespace", "metadata", false));
  ASSIGN_OR_RETURN(view.name, ReadJsonString(*meta, "name", "metadata", true));
  ASSIGN_OR_RETURN(view.uid, ReadJsonString(*meta, "uid", "metadata", false));
  const json* spec = JsonFind(service, "spec");
  if (spec == nullptr) return view;
  if (!spec->is_object()) return Err(JsonTypeError("spec", "an object", *spec));
  ASSIGN_OR_RETURN(view.cluster_ip, ReadJsonString(*spec, "clusterIP", "spec", false));
  ASSIGN_OR_RETURN(view.selector, ReadJsonStringMap(*spec, "selector", "spec"));
  if (const json* v = JsonFind(*spec, "publishNotReadyAddresses")) {
    if (!v->is_boolean()) return Err(JsonTypeError("spec.publishNotReadyAddresses", "a boolean", *v));
    view.publish_not_ready_addresses = v->get<bool>();
  }
  ASSIGN_OR_RETURN(const json* ports, ReadJsonObjectList(*spec, "ports", "spec"));
  if (ports == nullptr) return view;
  for (size_t i = 0; i < ports->size(); ++i) {
    const json& p = (*ports)[i];
    const std::string path = fmt::format("spec.ports[{}]", i);
    ServicePortSpec port;
    ASSIGN_OR_RETURN(port.name, ReadJsonString(p, "name", path, false));
    ASSIGN_OR_RETURN(port.protocol, ReadJsonString(p, "protocol", path, false));
    if (port.protocol.empty()) port.protocol = "TCP";
    ASSIGN_OR_RETURN(port.app_protocol, ReadJsonString(p, "appProtocol", path, false));
    const json* number = JsonFind(p, "port");
    if (number == nullptr || !number->is_number_integer() || number->get<int64_t>() < 1 ||
        number->get<int64_t>() > 65535) {
      return Err(Status::InvalidArgument(fmt::format("{}.port: must be a number from 1 to 65535", path)));
    }
    port.port = number->get<int32_t>();
    const json* target = JsonFind(p, "targetPort");
    if (target == nullptr) {
      port.target_number = port.port;
    } else if (target->is_string()) {
      port.target_name = target->get<std::string>();
      if (port.target_name.empty()) port.target_number = port.port;
    } else if (target->is_number_integer() && target->get<int64_t>() >= 0 && target->get<int64_t>() <= 65535) {
      port.target_number = target->get<int64_t>() == 0 ? port.port : target->get<int32_t>();
    } else {
      return Err(JsonTypeError(path + ".targetPort", "a port number or a port name", *target));
    }
    view.ports.push_back(std::move(port));
  }
  return view;
}

}  // namespace tessera
