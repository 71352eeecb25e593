#include "auth/pod_security.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tessera {
namespace {

using nlohmann::json;

const json& ObjectField(const json& object, const char* key) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

bool True(const json& object, const char* key) {
  auto it = object.find(key);
  return object.is_object() && it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string String(const json& object, const char* key) {
  auto it = object.find(key);
  return object.is_object() && it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string JoinQuoted(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += "\"" + item + "\"";
  }
  return out;
}

std::string Containers(const std::vector<std::string>& names) {
  return fmt::format("{} {}", names.size() == 1 ? "container" : "containers", JoinQuoted(names));
}

struct Container {
  std::string name;
  const json* spec;
  const json* sc;  // its securityContext (an empty object when it has none)
};

std::vector<Container> AllContainers(const json& spec) {
  std::vector<Container> out;
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (const json& c : *it) {
      if (!c.is_object()) continue;
      out.push_back({String(c, "name"), &c, &ObjectField(c, "securityContext")});
    }
  }
  return out;
}

// The capabilities Pod Security's baseline lets a container add (Docker's
// defaults less NET_RAW).
const std::set<std::string>& BaselineCapabilities() {
  static const std::set<std::string> caps{"AUDIT_WRITE", "CHOWN",  "DAC_OVERRIDE",     "FOWNER", "FSETID",
                                          "KILL",        "MKNOD",  "NET_BIND_SERVICE", "SETFCAP", "SETGID",
                                          "SETPCAP",     "SETUID", "SYS_CHROOT"};
  return caps;
}

const std::set<std::string>& SafeSysctls() {
  static const std::set<std::string> names{
      "kernel.shm_rmid_forced",       "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
      "net.ipv4.tcp_syncookies",      "net.ipv4.ping_group_range",    "net.ipv4.ip_local_reserved_ports",
      "net.ipv4.tcp_keepalive_time",  "net.ipv4.tcp_fin_timeout",     "net.ipv4.tcp_keepalive_intvl",
      "net.ipv4.tcp_keepalive_probes"};
  return names;
}

std::vector<std::string> Added(const json& sc) {
  std::vector<std::string> out;
  const json add = ObjectField(sc, "capabilities").value("add", json::array());
  for (const json& a : add) {
    if (!a.is_string()) continue;
    std::string name = a.get<std::string>();
    if (name.starts_with("CAP_")) name = name.substr(4);
    out.push_back(name);
  }
  return out;
}

using Reasons = std::vector<std::pair<std::string, std::string>>;  // check id, "reason (detail)"

void Baseline(const json& spec, const std::vector<Container>& containers, bool restricted, Reasons& out) {
  // capabilities_baseline (restricted has its own)
  if (!restricted) {
    std::vector<std::string> bad;
    std::set<std::string> caps;
    for (const Container& c : containers) {
      bool any = false;
      for (const std::string& cap : Added(*c.sc)) {
        if (!BaselineCapabilities().count(cap)) {
          caps.insert(cap);
          any = true;
        }
      }
      if (any) bad.push_back(c.name);
    }
    if (!bad.empty()) {
      out.push_back({"capabilities_baseline",
                     fmt::format("non-default capabilities ({} must not include {} in securityContext.capabilities.add)",
                                 Containers(bad), JoinQuoted({caps.begin(), caps.end()}))});
    }
  }
  // hostNamespaces
  std::vector<std::string> hosts;
  for (const char* field : {"hostNetwork", "hostPID", "hostIPC"}) {
    if (True(spec, field)) hosts.push_back(std::string(field) + "=true");
  }
  if (!hosts.empty()) {
    std::string joined;
    for (const std::string& h : hosts) joined += (joined.empty() ? "" : ", ") + h;
    out.push_back({"hostNamespaces", fmt::format("host namespaces ({})", joined)});
  }
  // hostPathVolumes (restricted: restrictedVolumes says it)
  if (!restricted) {
    std::vector<std::string> volumes;
    for (const json& v : spec.value("volumes", json::array())) {
      if (v.is_object() && v.contains("hostPath")) volumes.push_back(String(v, "name"));
    }
    if (!volumes.empty()) {
      out.push_back({"hostPathVolumes", fmt::format("hostPath volumes ({} {})", volumes.size() == 1 ? "volume" : "volumes",
                                                    JoinQuoted(volumes))});
    }
  }
  // hostPorts
  std::vector<std::string> port_containers;
  std::vector<std::string> ports;
  for (const Container& c : containers) {
    bool any = false;
    for (const json& p : c.spec->value("ports", json::array())) {
      if (p.is_object() && p.value("hostPort", 0) != 0) {
        ports.push_back(std::to_string(p.value("hostPort", 0)));
        any = true;
      }
    }
    if (any) port_containers.push_back(c.name);
  }
  if (!port_containers.empty()) {
    std::string joined;
    for (const std::string& p : ports) joined += (joined.empty() ? "" : ", ") + p;
    out.push_back({"hostPorts", fmt::format("hostPort ({} {} {} {})", Containers(port_containers),
                                            port_containers.size() == 1 ? "uses" : "use",
                                            ports.size() == 1 ? "hostPort" : "hostPorts", joined)});
  }
  // privileged
  std::vector<std::string> privileged;
  for (const Container& c : containers) {
    if (True(*c.sc, "privileged")) privileged.push_back(c.name);
  }
  if (!privileged.empty()) {
    out.push_back({"privileged", fmt::format("privileged ({} must not set securityContext.privileged=true)",
                                             Containers(privileged))});
  }
  // procMount
  std::vector<std::string> unmasked;
  for (const Container& c : containers) {
    const std::string mount = String(*c.sc, "procMount");
    if (!mount.empty() && mount != "Default") unmasked.push_back(c.name);
  }
  if (!unmasked.empty()) {
    out.push_back({"procMount", fmt::format("procMount ({} must not set securityContext.procMount to \"Unmasked\")",
                                            Containers(unmasked))});
  }
  // seccompProfile_baseline (restricted has its own)
  if (!restricted) {
    std::vector<std::string> details;
    const json& pod_sc = ObjectField(spec, "securityContext");
    if (String(ObjectField(pod_sc, "seccompProfile"), "type") == "Unconfined") {
      details.push_back("pod must not set securityContext.seccompProfile.type to \"Unconfined\"");
    }
    std::vector<std::string> bad;
    for (const Container& c : containers) {
      if (String(ObjectField(*c.sc, "seccompProfile"), "type") == "Unconfined") bad.push_back(c.name);
    }
    if (!bad.empty()) {
      details.push_back(fmt::format("{} must not set securityContext.seccompProfile.type to \"Unconfined\"", Containers(bad)));
    }
    if (!details.empty()) {
      std::string joined;
      for (const std::string& d : details) joined += (joined.empty() ? "" : "; ") + d;
      out.push_back({"seccompProfile_baseline", fmt::format("seccompProfile ({})", joined)});
    }
  }
  // sysctls
  std::vector<std::string> sysctls;
  for (const json& s : ObjectField(spec, "securityContext").value("sysctls", json::array())) {
    const std::string name = String(s, "name");
    if (!SafeSysctls().count(name)) sysctls.push_back(name);
  }
  if (!sysctls.empty()) {
    std::string joined;
    for (const std::string& s : sysctls) joined += (joined.empty() ? "" : ", ") + s;
    out.push_back({"sysctls", fmt::format("forbidden sysctls ({})", joined)});
  }
}

void Restricted(const json& spec, const std::vector<Container>& containers, Reasons& out) {
  const json& pod_sc = ObjectField(spec, "securityContext");
  // allowPrivilegeEscalation
  std::vector<std::string> escalating;
  for (const Container& c : containers) {
    auto it = c.sc->find("allowPrivilegeEscalation");
    if (it == c.sc->end() || !it->is_boolean() || it->get<bool>()) escalating.push_back(c.name);
  }
  if (!escalating.empty()) {
    out.push_back({"allowPrivilegeEscalation",
                   fmt::format("allowPrivilegeEscalation != false ({} must set securityContext.allowPrivilegeEscalation=false)",
                               Containers(escalating))});
  }
  // capabilities_restricted
  {
    std::vector<std::string> no_drop, bad_add;
    std::set<std::string> caps;
    for (const Container& c : containers) {
      const json drop = ObjectField(*c.sc, "capabilities").value("drop", json::array());
      if (std::find(drop.begin(), drop.end(), "ALL") == drop.end()) no_drop.push_back(c.name);
      bool any = false;
      for (const std::string& cap : Added(*c.sc)) {
        if (cap != "NET_BIND_SERVICE") {
          caps.insert(cap);
          any = true;
        }
      }
      if (any) bad_add.push_back(c.name);
    }
    std::vector<std::string> details;
    if (!no_drop.empty()) {
      details.push_back(fmt::format("{} must set securityContext.capabilities.drop=[\"ALL\"]", Containers(no_drop)));
    }
    if (!bad_add.empty()) {
      details.push_back(fmt::format("{} must not include {} in securityContext.capabilities.add", Containers(bad_add),
                                    JoinQuoted({caps.begin(), caps.end()})));
    }
    if (!details.empty()) {
      std::string joined;
      for (const std::string& d : details) joined += (joined.empty() ? "" : "; ") + d;
      out.push_back({"capabilities_restricted", fmt::format("unrestricted capabilities ({})", joined)});
    }
  }
  // restrictedVolumes
  {
    static const std::set<std::string> kAllowed{"configMap", "csi",      "downwardAPI", "emptyDir",
                                                "ephemeral", "persistentVolumeClaim", "projected", "secret"};
    std::vector<std::string> names;
    std::set<std::string> types;
    for (const json& v : spec.value("volumes", json::array())) {
      if (!v.is_object()) continue;
      for (const auto& [key, unused] : v.items()) {
        if (key == "name" || kAllowed.count(key)) continue;
        names.push_back(String(v, "name"));
        types.insert(key);
        break;
      }
    }
    if (!names.empty()) {
      out.push_back({"restrictedVolumes",
                     fmt::format("restricted volume types ({} {} {} restricted volume {} {})",
                                 names.size() == 1 ? "volume" : "volumes", JoinQuoted(names),
                                 names.size() == 1 ? "uses" : "use", types.size() == 1 ? "type" : "types",
                                 JoinQuoted({types.begin(), types.end()}))});
    }
  }
  // runAsNonRoot
  {
    const bool pod_non_root = True(pod_sc, "runAsNonRoot");
    std::vector<std::string> bad;
    for (const Container& c : containers) {
      auto it = c.sc->find("runAsNonRoot");
      const bool set = it != c.sc->end() && it->is_boolean();
      if (set ? !it->get<bool>() : !pod_non_root) bad.push_back(c.name);
    }
    if (!bad.empty()) {
      out.push_back({"runAsNonRoot", fmt::format("runAsNonRoot != true ({} {} must set securityContext.runAsNonRoot=true)",
                                                 pod_non_root ? "" : "pod or", Containers(bad))});
      if (pod_non_root) out.back().second = fmt::format("runAsNonRoot != true ({} must not set securityContext.runAsNonRoot=false)", Containers(bad));
    }
  }
  // runAsUser
  {
    std::vector<std::string> details;
    if (pod_sc.contains("runAsUser") && pod_sc["runAsUser"] == 0) details.push_back("pod must not set runAsUser=0");
    std::vector<std::string> bad;
    for (const Container& c : containers) {
      if (c.sc->contains("runAsUser") && (*c.sc)["runAsUser"] == 0) bad.push_back(c.name);
    }
    if (!bad.empty()) details.push_back(fmt::format("{} must not set runAsUser=0", Containers(bad)));
    if (!details.empty()) {
      std::string joined;
      for (const std::string& d : details) joined += (joined.empty() ? "" : "; ") + d;
      out.push_back({"runAsUser", fmt::format("runAsUser=0 ({})", joined)});
    }
  }
  // seccompProfile_restricted
  {
    const auto ok = [](const json& sc) {
      const std::string type = String(ObjectField(sc, "seccompProfile"), "type");
      return type == "RuntimeDefault" || type == "Localhost";
    };
    const bool pod_ok = ok(pod_sc);
    std::vector<std::string> bad;
    for (const Container& c : containers) {
      const std::string type = String(ObjectField(*c.sc, "seccompProfile"), "type");
      if (type.empty() ? !pod_ok : !ok(*c.sc)) bad.push_back(c.name);
    }
    if (!bad.empty()) {
      out.push_back({"seccompProfile_restricted",
                     fmt::format("seccompProfile ({}{} must set securityContext.seccompProfile.type to \"RuntimeDefault\" "
                                 "or \"Localhost\")",
                                 pod_ok ? "" : "pod or ", Containers(bad))});
    }
  }
}

}  // namespace

std::map<std::string, std::string> LabelsOf(const json& object) {
  std::map<std::string, std::string> out;
  const json& labels = ObjectField(ObjectField(object, "metadata"), "labels");
  for (const auto& [key, value] : labels.items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

std::string PodSecurityLevel(const std::map<std::string, std::string>& labels) {
  auto it = labels.find(std::string(kPodSecurityEnforceLabel));
  if (it == labels.end()) return "baseline";
  if (it->second == "privileged" || it->second == "restricted") return it->second;
  return "baseline";  // anything else was refused when the label was set (ValidatePodSecurityLabels)
}

bool AllowsHostNetwork(const std::map<std::string, std::string>& labels) {
  return PodSecurityLevel(labels) == "privileged";
}

Status CheckPodSecurity(const json& pod_spec, const std::map<std::string, std::string>& labels,
                        std::string_view pod_name) {
  const std::string level = PodSecurityLevel(labels);
  if (level == "privileged" || !pod_spec.is_object()) return Status::Ok();
  const std::vector<Container> containers = AllContainers(pod_spec);
  Reasons reasons;
  const bool restricted = level == "restricted";
  Baseline(pod_spec, containers, restricted, reasons);
  if (restricted) Restricted(pod_spec, containers, reasons);
  if (reasons.empty()) return Status::Ok();
  std::sort(reasons.begin(), reasons.end());
  std::string version = "latest";
  if (auto it = labels.find(std::string(kPodSecurityEnforceVersionLabel)); it != labels.end() && !it->second.empty()) {
    version = it->second;
  }
  std::string joined;
  for (const auto& [id, text] : reasons) joined += (joined.empty() ? "" : ", ") + text;
  std::string message = fmt::format("violates PodSecurity \"{}:{}\": {}", level, version, joined);
  if (!pod_name.empty()) message = fmt::format("pods \"{}\" is forbidden: {}", pod_name, message);
  return Status::PermissionDenied(std::move(message));
}

std::vector<std::pair<std::string, const json*>> PodSpecsOf(const json& object) {
  std::vector<std::pair<std::string, const json*>> out;
  if (!object.is_object()) return out;
  const json& spec = ObjectField(object, "spec");
  if (String(object, "kind") == "Pod") {
    out.push_back({"spec", &spec});
    return out;
  }
  if (spec.contains("template") && spec["template"].is_object()) {
    out.push_back({"spec.template.spec", &ObjectField(spec["template"], "spec")});
  }
  for (const char* list : {"tasks", "podSets"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& item = (*it)[i];
      if (!item.is_object() || !item.contains("template")) continue;
      out.push_back({fmt::format("spec.{}[{}].template.spec", list, i), &ObjectField(ObjectField(item, "template"), "spec")});
    }
  }
  return out;
}

Status ValidatePodSecurityLabels(const json& namespace_object) {
  const std::map<std::string, std::string> labels = LabelsOf(namespace_object);
  for (const char* mode : {"enforce", "audit", "warn"}) {
    const std::string key = fmt::format("pod-security.kubernetes.io/{}", mode);
    auto it = labels.find(key);
    if (it != labels.end() && it->second != "privileged" && it->second != "baseline" && it->second != "restricted") {
      return Status::InvalidArgument(fmt::format(
          "metadata.labels[{}]: Unsupported value: \"{}\": supported values: \"privileged\", \"baseline\", \"restricted\"",
          key, it->second));
    }
    auto version = labels.find(key + "-version");
    if (version != labels.end() && version->second != "latest" &&
        !(version->second.starts_with("v1.") && version->second.size() > 3 &&
          version->second.find_first_not_of("0123456789", 3) == std::string::npos)) {
      return Status::InvalidArgument(fmt::format(
          "metadata.labels[{}-version]: Invalid value: \"{}\": must be \"latest\" or a Kubernetes minor version (v1.30)",
          key, version->second));
    }
  }
  return Status::Ok();
}

}  // namespace tessera
