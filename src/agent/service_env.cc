#include "agent/service_env.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace tessera {
namespace {

using json = nlohmann::json;

std::string EnvName(std::string name) {
  for (char& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ServiceLinkVariables(std::span<const json> services) {
  std::vector<const json*> sorted;
  for (const json& s : services) {
    if (s.is_object()) sorted.push_back(&s);
  }
  const auto name_of = [](const json* s) { return s->value("metadata", json::object()).value("name", ""); };
  std::sort(sorted.begin(), sorted.end(), [&](const json* a, const json* b) { return name_of(a) < name_of(b); });
  std::vector<std::pair<std::string, std::string>> out;
  for (const json* s : sorted) {
    const json spec = s->value("spec", json::object());
    if (!spec.is_object()) continue;
    const std::string ip = spec.value("clusterIP", "");
    if (ip.empty() || ip == "None") continue;
    const json ports = spec.value("ports", json::array());
    if (!ports.is_array() || ports.empty()) continue;
    const std::string prefix = EnvName(name_of(s));
    const auto port_of = [](const json& p) { return p.is_object() ? p.value("port", 0) : 0; };
    const auto proto_of = [](const json& p) {
      std::string proto = p.is_object() ? p.value("protocol", "TCP") : "TCP";
      return proto;
    };
    out.emplace_back(prefix + "_SERVICE_HOST", ip);
    out.emplace_back(prefix + "_SERVICE_PORT", std::to_string(port_of(ports[0])));
    for (const json& p : ports) {
      const std::string name = p.is_object() ? p.value("name", "") : "";
      if (!name.empty()) out.emplace_back(prefix + "_SERVICE_PORT_" + EnvName(name), std::to_string(port_of(p)));
    }
    std::string first_proto = proto_of(ports[0]);
    std::transform(first_proto.begin(), first_proto.end(), first_proto.begin(), ::tolower);
    out.emplace_back(prefix + "_PORT", fmt::format("{}://{}:{}", first_proto, ip, port_of(ports[0])));
    for (const json& p : ports) {
      const std::string upper = proto_of(p);
      std::string lower = upper;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      const std::string base = fmt::format("{}_PORT_{}_{}", prefix, port_of(p), upper);
      out.emplace_back(base, fmt::format("{}://{}:{}", lower, ip, port_of(p)));
      out.emplace_back(base + "_PROTO", lower);
      out.emplace_back(base + "_PORT", std::to_string(port_of(p)));
      out.emplace_back(base + "_ADDR", ip);
    }
  }
  return out;
}

json WithServiceLinks(json pod, std::span<const json> services) {
  const auto vars = ServiceLinkVariables(services);
  if (vars.empty()) return pod;
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return pod;
  auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return pod;
  for (json& c : *containers) {
    if (!c.is_object()) continue;
    json own = c.value("env", json::array());
    if (!own.is_array()) continue;
    std::set<std::string> set;
    for (const json& e : own) {
      if (e.is_object()) set.insert(e.value("name", ""));
    }
    json env = json::array();
    for (const auto& [name, value] : vars) {
      if (!set.contains(name)) env.push_back({{"name", name}, {"value", value}});
    }
    for (json& e : own) env.push_back(std::move(e));
    c["env"] = std::move(env);
  }
  return pod;
}

}  // namespace tessera
