#include "agent/cdi.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/run_tool.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A device node as CDI writes it, from stat() of `host_path`; nullopt when it is not a device.
std::optional<json> DeviceNode(const std::string& container_path, const std::string& host_path) {
  struct stat st {};
  if (::stat(host_path.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) return std::nullopt;
  return json{{"path", container_path},
              {"hostPath", host_path},
              {"type", S_ISCHR(st.st_mode) ? "c" : "b"},
              {"major", major(st.st_rdev)},
              {"minor", minor(st.st_rdev)},
              {"fileMode", st.st_mode & 0777},
              {"permissions", "rwm"}};
}

json Edits() { return json{{"deviceNodes", json::array()}, {"mounts", json::array()}}; }

void ApplyEdits(const json& edits, json& config) {
  if (!edits.is_object()) return;
  json& linux = config["linux"];
  if (!linux.contains("devices")) linux["devices"] = json::array();
  json& rules = linux["resources"]["devices"];
  if (!rules.is_array()) rules = json::array({{{"allow", false}, {"access", "rwm"}}});
  for (const json& node : edits.value("deviceNodes", json::array())) {
    if (!node.is_object() || !node.contains("major")) continue;
    const std::string type = node.value("type", "c");
    linux["devices"].push_back({{"path", node.value("path", "")},
                                {"type", type},
                                {"major", node["major"]},
                                {"minor", node.value("minor", 0)},
                                {"fileMode", node.value("fileMode", 0666)},
                                {"uid", 0},
                                {"gid", 0}});
    rules.push_back({{"allow", true},
                     {"type", type},
                     {"major", node["major"]},
                     {"minor", node.value("minor", 0)},
                     {"access", node.value("permissions", "rwm")}});
  }
  for (const json& m : edits.value("mounts", json::array())) {
    if (!m.is_object()) continue;
    json options = m.value("options", json::array({"ro", "nosuid", "nodev", "bind"}));
    config["mounts"].push_back({{"destination", m.value("containerPath", "")},
                                {"type", m.value("type", "bind")},
                                {"source", m.value("hostPath", "")},
                                {"options", std::move(options)}});
  }
  for (const json& e : edits.value("env", json::array())) {
    if (e.is_string()) config["process"]["env"].push_back(e);
  }
  for (const json& h : edits.value("hooks", json::array())) {
    if (!h.is_object()) continue;
    json hook{{"path", h.value("path", "")}};
    if (h.contains("args")) hook["args"] = h["args"];
    if (h.contains("env")) hook["env"] = h["env"];
    config["hooks"][h.value("hookName", "createContainer")].push_back(std::move(hook));
  }
}

}  // namespace

std::vector<std::string> DefaultDriverLibraryDirs() {
  return {"/usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu/nvidia/current", "/usr/lib64", "/usr/lib",
          "/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/lib/aarch64-linux-gnu"};
}

std::vector<std::string> FindDriverLibraries(const std::vector<std::string>& dirs) {
  static const std::vector<std::string> kPrefixes{
      "libcuda.so",         "libnvidia-ml.so",     "libnvidia-ptxjitcompiler.so", "libnvidia-nvvm.so",
      "libnvidia-gpucomp.so", "libcudadebugger.so", "libnvidia-allocator.so",      "libnvidia-cfg.so",
      "libnvidia-opencl.so", "libnvidia-fatbinaryloader.so"};
  std::set<std::string> found;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      for (const std::string& prefix : kPrefixes) {
        if (name.starts_with(prefix)) {
          found.insert(entry.path().string());
          break;
        }
      }
    }
  }
  return {found.begin(), found.end()};
}

json NvidiaCdiSpec(const std::vector<GpuDevice>& devices, const CdiOptions& options, std::vector<std::string>* notes) {
  const auto note = [&](std::string line) {
    if (notes != nullptr) notes->push_back(std::move(line));
  };
  json spec{{"cdiVersion", "0.6.0"}, {"kind", kNvidiaCdiKind}, {"devices", json::array()}, {"containerEdits", Edits()}};
  std::vector<std::string> missing;
  for (const GpuDevice& d : devices) {
    const std::string name = fmt::format("nvidia{}", d.index);
    auto node = DeviceNode("/dev/" + name, (fs::path(options.device_root) / name).string());
    if (!node) {
      missing.push_back(std::to_string(d.index));
      continue;
    }
    json edits = Edits();
    edits["deviceNodes"].push_back(std::move(*node));
    spec["devices"].push_back({{"name", std::to_string(d.index)}, {"containerEdits", std::move(edits)}});
  }
  if (!missing.empty()) {
    note(fmt::format("no device node {}/nvidiaN for GPU {}: containers cannot be given {}", options.device_root,
                     fmt::join(missing, ", "), missing.size() == 1 ? "it" : "them"));
  }
  json& common = spec["containerEdits"];
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}) {
    if (auto node = DeviceNode(std::string("/dev/") + name, (fs::path(options.device_root) / name).string())) {
      common["deviceNodes"].push_back(std::move(*node));
    }
  }
  const std::vector<std::string> libraries =
      FindDriverLibraries(options.library_dirs.empty() ? DefaultDriverLibraryDirs() : options.library_dirs);
  for (const std::string& lib : libraries) {
    common["mounts"].push_back({{"hostPath", lib}, {"containerPath", lib}, {"options", {"ro", "nosuid", "nodev", "bind"}}});
  }
  for (const char* tool : {"/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump", "/usr/bin/nvidia-cuda-mps-control"}) {
    if (fs::exists(tool)) {
      common["mounts"].push_back({{"hostPath", tool}, {"containerPath", tool}, {"options", {"ro", "nosuid", "nodev", "bind"}}});
    }
  }
  if (libraries.empty()) {
    note("no NVIDIA driver libraries (libcuda.so*, libnvidia-ml.so*, ...) in the library directories: containers get "
         "their GPUs' device nodes and no driver libraries");
  } else {
    note(fmt::format("{} NVIDIA driver libraries mounted into GPU containers", libraries.size()));
  }
  return spec;
}

Status ResolveCdiDeviceNodes(json& spec) {
  const auto resolve = [](json& edits) -> Status {
    if (!edits.is_object() || !edits.contains("deviceNodes")) return Status::Ok();
    for (json& node : edits["deviceNodes"]) {
      if (!node.is_object() || node.contains("major")) continue;
      const std::string path = node.value("hostPath", node.value("path", ""));
      auto resolved = DeviceNode(node.value("path", path), path);
      if (!resolved) return Status::NotFound(fmt::format("CDI device node {} is not a device on this node", path));
      node = std::move(*resolved);
    }
    return Status::Ok();
  };
  if (spec.contains("containerEdits")) RETURN_IF_ERROR(resolve(spec["containerEdits"]));
  if (spec.contains("devices") && spec["devices"].is_array()) {
    for (json& d : spec["devices"]) {
      if (d.is_object() && d.contains("containerEdits")) RETURN_IF_ERROR(resolve(d["containerEdits"]));
    }
  }
  return Status::Ok();
}

Status ApplyCdiDevices(const json& spec, const std::vector<std::string>& names, json& config) {
  if (names.empty()) return Status::Ok();
  std::vector<const json*> edits;
  static const json kNone = json::array();
  auto listed = spec.find("devices");
  const json& devices = listed != spec.end() && listed->is_array() ? *listed : kNone;
  for (const std::string& name : names) {
    const json* found = nullptr;
    for (const json& d : devices) {
      if (d.is_object() && d.value("name", "") == name) found = &d;
    }
    if (found == nullptr) {
      return Status::NotFound(fmt::format("CDI device {}={} is not in this node's spec (its GPU has no device node)",
                                          spec.value("kind", std::string(kNvidiaCdiKind)), name));
    }
    edits.push_back(found);
  }
  ApplyEdits(spec.value("containerEdits", json::object()), config);
  for (const json* d : edits) ApplyEdits(d->value("containerEdits", json::object()), config);
  return Status::Ok();
}

std::string FindNvidiaCtk() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, colon - start)) / "nvidia-ctk";
    if (!dirs.substr(start, colon - start).empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = colon + 1;
  }
  return "";
}

Result<json> NodeCdiSpec(const std::vector<GpuDevice>& devices, const CdiOptions& options, const std::string& output,
                         std::vector<std::string>* notes) {
  if (const std::string ctk = FindNvidiaCtk(); !ctk.empty() && options.device_root == "/dev") {
    auto ran = RunTool({ctk, "cdi", "generate", "--format=json", "--output=" + output});
    if (ran && ran->exit_code == 0) {
      std::ifstream in(output);
      json spec = json::parse(in, nullptr, false);
      if (spec.is_object()) {
        RETURN_IF_ERROR(ResolveCdiDeviceNodes(spec));
        if (notes != nullptr) notes->push_back(fmt::format("CDI spec from {} cdi generate", ctk));
        return spec;
      }
    }
    if (notes != nullptr) {
      notes->push_back(fmt::format("{} cdi generate failed ({}): the agent's own spec is used", ctk,
                                   ran ? ToolMessage(ran->output) : ran.error().message()));
    }
  }
  return NvidiaCdiSpec(devices, options, notes);
}

bool CdiHasDevice(const json& spec, const std::string& name) {
  auto listed = spec.find("devices");
  if (listed == spec.end() || !listed->is_array()) return false;
  for (const json& d : *listed) {
    if (d.is_object() && d.value("name", "") == name) return true;
  }
  return false;
}

}  // namespace tessera
