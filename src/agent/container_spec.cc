#include "agent/container_spec.h"


#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Docker's (and containerd's) default set.
const std::vector<std::string>& DefaultCapabilities() {
  static const std::vector<std::string> caps{
      "CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",     "CAP_MKNOD",
      "CAP_NET_RAW", "CAP_SETGID",      "CAP_SETUID",           "CAP_SETFCAP",    "CAP_SETPCAP",
      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",     "CAP_AUDIT_WRITE"};
  return caps;
}

// Every capability Linux has (to CAP_CHECKPOINT_RESTORE, 40): a privileged container's.
const std::vector<std::string>& AllCapabilities() {
  static const std::vector<std::string> caps{
      "CAP_CHOWN",           "CAP_DAC_OVERRIDE",   "CAP_DAC_READ_SEARCH", "CAP_FOWNER",          "CAP_FSETID",
      "CAP_KILL",            "CAP_SETGID",         "CAP_SETUID",          "CAP_SETPCAP",         "CAP_LINUX_IMMUTABLE",
      "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN",       "CAP_NET_RAW",         "CAP_IPC_LOCK",
      "CAP_IPC_OWNER",       "CAP_SYS_MODULE",     "CAP_SYS_RAWIO",       "CAP_SYS_CHROOT",      "CAP_SYS_PTRACE",
      "CAP_SYS_PACCT",       "CAP_SYS_ADMIN",      "CAP_SYS_BOOT",        "CAP_SYS_NICE",        "CAP_SYS_RESOURCE",
      "CAP_SYS_TIME",        "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",           "CAP_LEASE",           "CAP_AUDIT_WRITE",
      "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",        "CAP_MAC_OVERRIDE",    "CAP_MAC_ADMIN",       "CAP_SYSLOG",
      "CAP_WAKE_ALARM",      "CAP_BLOCK_SUSPEND",  "CAP_AUDIT_READ",      "CAP_PERFMON",         "CAP_BPF",
      "CAP_CHECKPOINT_RESTORE"};
  return caps;
}

std::vector<std::string> StringList(const json& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const json& v : value) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// "NET_ADMIN" or "CAP_NET_ADMIN" -> "CAP_NET_ADMIN"
std::string CapName(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name.starts_with("CAP_") ? name : "CAP_" + name;
}

const json* SecurityContext(const json& container) {
  auto it = container.find("securityContext");
  return it != container.end() && it->is_object() ? &*it : nullptr;
}

json Mount(const std::string& destination, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return json{{"destination", destination}, {"type", type}, {"source", source}, {"options", std::move(options)}};
}

json Bind(const std::string& source, const std::string& destination, bool read_only) {
  std::vector<std::string> options{"rbind", "nosuid", "nodev"};
  if (read_only) options.push_back("ro");
  return Mount(destination, "bind", source, std::move(options));
}

}  // namespace

Result<json> OciRuntimeConfig(const json& pod, const json& image_config, const PodContainer& container,
                              const ContainerContext& ctx) {
  const json& c = pod["spec"]["containers"][0];
  const json* sc = SecurityContext(c);
  // Allowed only where the namespace's pod security level is privileged
  // (auth/pod_security.h, checked before): all capabilities, every device,
  // /sys writable, nothing masked, as Docker's --privileged.
  const bool privileged = sc != nullptr && sc->value("privileged", false);

  // The program: command replaces Entrypoint, args replaces Cmd.
  const std::vector<std::string> entrypoint = StringList(image_config.value("Entrypoint", json()));
  const std::vector<std::string> cmd = StringList(image_config.value("Cmd", json()));
  std::vector<std::string> argv;
  if (!container.command.empty()) {
    argv = container.command;
    argv.insert(argv.end(), container.args.begin(), container.args.end());
  } else {
    argv = entrypoint;
    const std::vector<std::string>& rest = container.args.empty() ? cmd : container.args;
    argv.insert(argv.end(), rest.begin(), rest.end());
  }
  if (argv.empty()) {
    return Err(Status::InvalidArgument(
        "the container gives no command and its image has no Entrypoint or Cmd: give the container a command"));
  }

  // The environment: the image's, then the pod's.
  std::map<std::string, std::string> env;
  for (const std::string& e : StringList(image_config.value("Env", json()))) {
    const auto eq = e.find('=');
    if (eq != std::string::npos) env[e.substr(0, eq)] = e.substr(eq + 1);
  }
  for (const std::string& e : container.process.env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = e.substr(0, eq);
    // The process runtime's HOME is the pod's directory on the node, which is not in the image.
    if (key == "HOME") continue;
    env[key] = e.substr(eq + 1);
  }
  for (const json& e : c.value("env", json::array())) {
    if (e.is_object() && e.value("name", "") == "HOME") env["HOME"] = e.value("value", "");
  }
  if (!ctx.gpu_devices.empty() && env.count("NVIDIA_VISIBLE_DEVICES")) {
    // Inside, CUDA numbers the container's own GPUs from 0: the node's indices would miss; UUIDs name them anywhere.
    env["CUDA_VISIBLE_DEVICES"] = env["NVIDIA_VISIBLE_DEVICES"];
  }
  if (!env.count("PATH")) env["PATH"] = kDefaultPath;
  if (!env.count("HOME")) env["HOME"] = "/";
  env["HOSTNAME"] = ctx.hostname;
  std::vector<std::string> env_list;
  for (const auto& [k, v] : env) env_list.push_back(k + "=" + v);

  std::string cwd = c.value("workingDir", "");
  if (cwd.empty()) cwd = image_config.value("WorkingDir", "");
  if (cwd.empty()) cwd = "/";
  if (!cwd.starts_with("/")) {
    return Err(Status::InvalidArgument(fmt::format("workingDir \"{}\" must be an absolute path", cwd)));
  }

  // Capabilities: the default set, less what is dropped, plus what is added from it.
  std::set<std::string> caps(DefaultCapabilities().begin(), DefaultCapabilities().end());
  if (sc != nullptr && sc->contains("capabilities")) {
    const json& capabilities = (*sc)["capabilities"];
    for (const std::string& d : StringList(capabilities.value("drop", json()))) {
      if (CapName(d) == "CAP_ALL") {
        caps.clear();
      } else {
        caps.erase(CapName(d));
      }
    }
    // Any capability (pod security decided, before, which may be added here).
    for (const std::string& a : StringList(capabilities.value("add", json()))) caps.insert(CapName(a));
  }
  if (privileged) caps.insert(AllCapabilities().begin(), AllCapabilities().end());
  const uint32_t uid = container.process.uid.value_or(0);
  const uint32_t gid = container.process.gid.value_or(0);
  const std::vector<std::string> cap_list(caps.begin(), caps.end());
  // A user other than root holds none of them unless it gains them by exec (no new privileges stops that).
  const std::vector<std::string> effective = uid == 0 ? cap_list : std::vector<std::string>{};
  const bool escalation = sc != nullptr && sc->value("allowPrivilegeEscalation", false);

  json process{{"terminal", false},
               {"user", {{"uid", uid}, {"gid", gid}}},
               {"args", argv},
               {"env", env_list},
               {"cwd", cwd},
               {"capabilities",
                {{"bounding", cap_list}, {"effective", effective}, {"permitted", effective}}},
               {"noNewPrivileges", !escalation && !privileged}};

  json mounts = json::array({
      Mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
      Mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs", privileged ? std::vector<std::string>{"nosuid", "noexec", "nodev"}
                                                 : std::vector<std::string>{"nosuid", "noexec", "nodev", "ro"}),
      Bind("/etc/resolv.conf", "/etc/resolv.conf", true),
      Bind("/etc/hosts", "/etc/hosts", true),
  });
  if (!ctx.checkpoint_dir.empty()) mounts.push_back(Bind(ctx.checkpoint_dir, ctx.checkpoint_dir, false));
  if (!ctx.token_dir.empty()) {
    mounts.push_back(Bind(ctx.token_dir, ctx.token_dir, true));
    mounts.push_back(Bind(ctx.token_dir, kServiceAccountDir, true));
  }

  for (const json& m : c.value("volumeMounts", json::array())) {
    const std::string name = m.value("name", "");
    const std::string path = m.value("mountPath", "");
    auto dir = ctx.volumes.find(name);
    if (dir == ctx.volumes.end()) {
      return Err(Status::InvalidArgument(fmt::format("volumeMount \"{}\" names no volume of the pod", name)));
    }
    if (!path.starts_with("/")) {
      return Err(Status::InvalidArgument(fmt::format("volumeMount \"{}\": mountPath \"{}\" must be absolute", name, path)));
    }
    if (m.contains("subPathExpr")) {
      return Err(Status::InvalidArgument(fmt::format("volumeMount \"{}\": subPathExpr is not supported yet; give subPath", name)));
    }
    ASSIGN_OR_RETURN(std::string source, SubPathSource(dir->second, name, m.value("subPath", "")));
    mounts.push_back(Bind(source, path, m.value("readOnly", false) || dir->second.read_only));
  }

  json resources = json::object();
  if (container.process.limits.memory_bytes) {
    resources["memory"] = {{"limit", *container.process.limits.memory_bytes},
                           {"swap", *container.process.limits.memory_bytes}};
  }
  if (container.process.limits.cpu_millicores) {
    constexpr int64_t kPeriod = 100000;  // µs, as the kubelet uses
    resources["cpu"] = {{"period", kPeriod},
                        {"quota", std::max<int64_t>(1000, *container.process.limits.cpu_millicores * kPeriod / 1000)}};
  }
  resources["devices"] = json::array({{{"allow", privileged}, {"access", "rwm"}}});

  const bool read_only = sc != nullptr && sc->value("readOnlyRootFilesystem", false);
  json namespaces = json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}});
  if (!ctx.netns_path.empty()) namespaces.push_back({{"type", "network"}, {"path", ctx.netns_path}});
  json linux{{"cgroupsPath", ctx.cgroups_path},
             {"resources", std::move(resources)},
             {"namespaces", std::move(namespaces)}};
  if (!privileged) {
    linux["maskedPaths"] = {"/proc/acpi",          "/proc/asound",     "/proc/kcore",      "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
                            "/sys/firmware",       "/proc/scsi"};
    linux["readonlyPaths"] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};
  }
  json config{{"ociVersion", "1.0.2"},
               {"process", std::move(process)},
               {"root", {{"path", ctx.rootfs}, {"readonly", read_only}}},
               {"hostname", ctx.hostname},
               {"mounts", std::move(mounts)},
               {"linux", std::move(linux)}};
  if (!ctx.gpu_devices.empty()) {
    if (ctx.cdi_spec == nullptr) {
      return Err(Status::Unavailable("the pod has GPUs but the node has no CDI spec of them (no device nodes)"));
    }
    RETURN_IF_ERROR(ApplyCdiDevices(*ctx.cdi_spec, ctx.gpu_devices, config));
  }
  return config;
}

}  // namespace tessera
