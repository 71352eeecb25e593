#include "agent/pod_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string Annotation(const json& pod, const char* key) {
  const json& a = pod["metadata"].value("annotations", json::object());
  auto it = a.find(key);
  return it != a.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<std::vector<std::string>> Strings(const json& container, const char* field) {
  std::vector<std::string> out;
  auto it = container.find(field);
  if (it == container.end()) return out;
  if (!it->is_array()) return Err(Status::InvalidArgument(fmt::format("containers[0].{} must be a list of strings", field)));
  for (const json& s : *it) {
    if (!s.is_string()) return Err(Status::InvalidArgument(fmt::format("containers[0].{} must be a list of strings", field)));
    out.push_back(s.get<std::string>());
  }
  return out;
}

// Kubernetes expands $(VAR) in command and args from the container's env.
std::string ExpandVars(const std::string& s, const std::map<std::string, std::string>& env) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '(') {
      const size_t close = s.find(')', i + 2);
      if (close != std::string::npos) {
        auto it = env.find(s.substr(i + 2, close - i - 2));
        if (it != env.end()) {
          out += it->second;
          i = close;
          continue;
        }
      }
    }
    out += s[i];
  }
  return out;
}

// securityContext.<field> of the container, else of the pod; nullopt when neither says.
Result<std::optional<int64_t>> SecurityContextId(const json& pod, const json& container, const char* field) {
  for (const json* holder : {&container, &pod["spec"]}) {
    auto sc = holder->find("securityContext");
    if (sc == holder->end() || !sc->is_object()) continue;
    auto v = sc->find(field);
    if (v == sc->end() || v->is_null()) continue;
    if (!v->is_number_integer()) return Err(Status::InvalidArgument(fmt::format("securityContext.{} must be a number", field)));
    return std::optional<int64_t>(v->get<int64_t>());
  }
  return std::optional<int64_t>();
}

}  // namespace

Result<std::pair<uint32_t, uint32_t>> ParsePodUser(std::string_view text) {
  const size_t colon = text.find(':');
  auto number = [](std::string_view s) -> std::optional<uint32_t> {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos || s.size() > 10) return std::nullopt;
    const uint64_t v = std::stoull(std::string(s));
    if (v >= 0xFFFFFFFFull) return std::nullopt;
    return static_cast<uint32_t>(v);
  };
  const auto uid = number(text.substr(0, colon));
  const auto gid = colon == std::string_view::npos ? uid : number(text.substr(colon + 1));
  if (!uid || !gid) {
    return Err(Status::InvalidArgument(
        fmt::format("--pod-user \"{}\": expected UID or UID:GID, numbers such as 65534:65534", text)));
  }
  return std::pair{*uid, *gid};
}

Result<std::pair<uint32_t, uint32_t>> PodRunAs(const json& pod, const PodLaunchContext& ctx) {
  const json& containers = pod["spec"].value("containers", json::array());
  const json& c = containers.empty() ? json::object() : containers[0];
  ASSIGN_OR_RETURN(std::optional<int64_t> user, SecurityContextId(pod, c, "runAsUser"));
  ASSIGN_OR_RETURN(std::optional<int64_t> group, SecurityContextId(pod, c, "runAsGroup"));
  const std::string ns = pod["metadata"].value("namespace", "");
  auto in_block = [&](int64_t id, const char* field) -> Status {
    if (!ctx.uid_range) {
      return Status::InvalidArgument(fmt::format(
          "securityContext.{} {}: namespace {} has no uid range (annotation {}) to check it against", field, id, ns,
          kUidRangeAnnotation));
    }
    if (ctx.uid_range->Contains(id)) return Status::Ok();
    return Status::InvalidArgument(fmt::format(
        "securityContext.{} {} is not allowed in namespace {}: its pods run as ids {}-{} (annotation {}); leave it "
        "unset or pick one of those",
        field, id, ns, ctx.uid_range->first, ctx.uid_range->last(), kUidRangeAnnotation));
  };
  if (user) RETURN_IF_ERROR(in_block(*user, "runAsUser"));
  if (group) RETURN_IF_ERROR(in_block(*group, "runAsGroup"));
  std::pair<uint32_t, uint32_t> runs_as;
  if (ctx.default_user) {
    runs_as = *ctx.default_user;
  } else if (ctx.uid_range) {
    runs_as = {ctx.uid_range->first, ctx.uid_range->first};
  } else if (!user) {
    return Err(Status::InvalidArgument(fmt::format(
        "namespace {} has no uid range yet (annotation {}, given by the server to every namespace): the pod has no "
        "user to run as",
        ns, kUidRangeAnnotation)));
  }
  if (user) runs_as = {static_cast<uint32_t>(*user), group ? static_cast<uint32_t>(*group) : static_cast<uint32_t>(*user)};
  if (group) runs_as.second = static_cast<uint32_t>(*group);
  return runs_as;
}

namespace {

std::vector<std::string> NamesIn(const json& pod, const char* key_ref, const char* source_ref, const char* volume,
                                 const char* volume_name) {
  std::vector<std::string> names;
  const auto add = [&](const json& ref, const char* field) {
    if (ref.is_object() && ref.contains(field) && ref[field].is_string() && !ref[field].get<std::string>().empty()) {
      names.push_back(ref[field].get<std::string>());
    }
  };
  const json spec = pod.value("spec", json::object());
  for (const json& c : spec.value("containers", json::array())) {
    if (!c.is_object()) continue;
    for (const json& e : c.value("env", json::array())) {
      if (e.is_object()) add(e.value("valueFrom", json::object()).value(key_ref, json::object()), "name");
    }
    for (const json& from : c.value("envFrom", json::array())) {
      if (from.is_object()) add(from.value(source_ref, json::object()), "name");
    }
  }
  if (volume != nullptr) {
    for (const json& v : spec.value("volumes", json::array())) {
      if (v.is_object()) add(v.value(volume, json::object()), volume_name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const char* SourceKind(bool secret) { return secret ? "Secret" : "ConfigMap"; }

}  // namespace

std::vector<std::string> EnvSecretNames(const json& pod) {
  return NamesIn(pod, "secretKeyRef", "secretRef", nullptr, nullptr);
}

std::vector<std::string> PodSecretNames(const json& pod) {
  return NamesIn(pod, "secretKeyRef", "secretRef", "secret", "secretName");
}

std::vector<std::string> PodConfigMapNames(const json& pod) {
  return NamesIn(pod, "configMapKeyRef", "configMapRef", "configMap", "name");
}

Result<json> ResolvePodEnv(const json& pod, const SecretData& secrets, const std::string& host_ip,
                           const std::string& pod_ip, const SecretData& config_maps) {
  json out = pod;
  const std::string ns = pod["metadata"].value("namespace", "");
  for (json& c : out["spec"]["containers"]) {
    if (!c.is_object() || (!c.contains("env") && !c.contains("envFrom"))) continue;
    json env = json::array();
    for (const json& from : c.value("envFrom", json::array())) {
      if (!from.is_object()) continue;
      const bool secret = from.contains("secretRef");
      if (!secret && !from.contains("configMapRef")) continue;
      const json ref = from.value(secret ? "secretRef" : "configMapRef", json::object());
      const std::string name = ref.is_object() ? ref.value("name", "") : "";
      const SecretData& sources = secret ? secrets : config_maps;
      auto source = sources.find(name);
      if (source == sources.end()) {
        if (ref.is_object() && ref.value("optional", false)) continue;
        return Err(Status::NotFound(fmt::format("{} \"{}\" not found", secret ? "secret" : "configmap", name)));
      }
      for (const auto& [key, value] : source->second) {
        env.push_back({{"name", from.value("prefix", "") + key}, {"value", value}});
      }
    }
    for (const json& e : c.value("env", json::array())) {
      if (!e.is_object() || !e.contains("valueFrom")) {
        env.push_back(e);
        continue;
      }
      const std::string var = e.value("name", "");
      const json from = e["valueFrom"].is_object() ? e["valueFrom"] : json::object();
      if (from.contains("secretKeyRef") || from.contains("configMapKeyRef")) {
        const bool secret = from.contains("secretKeyRef");
        const json ref = from[secret ? "secretKeyRef" : "configMapKeyRef"];
        const std::string name = ref.value("name", ""), key = ref.value("key", "");
        const SecretData& sources = secret ? secrets : config_maps;
        auto source = sources.find(name);
        const bool found = source != sources.end() && source->second.count(key);
        if (!found && ref.value("optional", false)) continue;
        if (source == sources.end()) {
          return Err(Status::NotFound(fmt::format("{} \"{}\" not found", secret ? "secret" : "configmap", name)));
        }
        if (!found) {
          return Err(Status::NotFound(
              fmt::format("couldn't find key {} in {} {}/{}", key, SourceKind(secret), ns, name)));
        }
        env.push_back({{"name", var}, {"value", source->second.at(key)}});
      } else if (from.contains("fieldRef")) {
        const std::string path = from["fieldRef"].value("fieldPath", "");
        const json& meta = pod["metadata"];
        const json& spec = pod["spec"];
        std::string value;
        if (path == "metadata.name") value = meta.value("name", "");
        else if (path == "metadata.namespace") value = ns;
        else if (path == "metadata.uid") value = meta.value("uid", "");
        else if (path == "spec.nodeName") value = spec.value("nodeName", "");
        else if (path == "spec.serviceAccountName") value = spec.value("serviceAccountName", "default");
        else if (path == "status.hostIP") value = host_ip;
        else if (path == "status.podIP") value = pod_ip;
        else {
          return Err(Status::InvalidArgument(fmt::format(
              "env {}: fieldRef {} is not supported yet (metadata.name, metadata.namespace, metadata.uid, "
              "spec.nodeName, spec.serviceAccountName, status.hostIP and status.podIP are)",
              var, path)));
        }
        env.push_back({{"name", var}, {"value", value}});
      } else {
        std::string source = "this source";
        for (const auto& [key, unused] : from.items()) source = key;
        return Err(Status::InvalidArgument(fmt::format(
            "env {}: valueFrom {} is not supported yet (secretKeyRef, configMapKeyRef and fieldRef are)", var,
            source)));
      }
    }
    c["env"] = std::move(env);
    c.erase("envFrom");
  }
  return out;
}

int MasterPort(const std::string& workload_uid) {
  return 20000 + static_cast<int>(std::hash<std::string>{}(workload_uid) % 10000);
}

std::string SafePathPart(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

bool NamesImage(const json& pod) {
  const json& containers = pod["spec"].value("containers", json::array());
  if (containers.empty() || !containers[0].is_object()) return false;
  auto image = containers[0].find("image");
  return image != containers[0].end() && !(image->is_string() && image->get_ref<const std::string&>().empty());
}

Result<ProcessSpec> PodProcessSpec(const json& pod, const PodLaunchContext& ctx) {
  // A container that names an image runs in that image or not at all: its
  // command is the image's program, never one of the host's of the same name.
  if (NamesImage(pod)) return Err(Status::InvalidArgument(kNoOciRuntime));
  ASSIGN_OR_RETURN(PodContainer c, PodContainerSpec(pod, ctx));
  if (c.command.empty()) return Err(Status::InvalidArgument("the container has neither a command nor an image"));
  // Volumes are mounted into a container's own file system; a process pod runs in the node's.
  const json& container = pod["spec"]["containers"][0];
  if (const json mounts = container.value("volumeMounts", json::array()); mounts.is_array() && !mounts.empty()) {
    return Err(Status::InvalidArgument(fmt::format(
        "volumeMount \"{}\": volumes are mounted only into containers (give the container an image); a process pod "
        "runs in the node's file system, with its working directory and TESSERA_CHECKPOINT_DIR",
        mounts[0].is_object() ? mounts[0].value("name", "") : "")));
  }
  return std::move(c.process);
}

Result<PodContainer> PodContainerSpec(const json& pod, const PodLaunchContext& ctx) {
  const json& containers = pod["spec"].value("containers", json::array());
  if (containers.empty()) return Err(Status::InvalidArgument("the pod has no containers"));
  if (containers.size() > 1) {
    return Err(Status::InvalidArgument(
        fmt::format("the pod has {} containers; the agent runs one per pod", containers.size())));
  }
  const json& c = containers[0];
  ASSIGN_OR_RETURN(std::vector<std::string> command, Strings(c, "command"));
  ASSIGN_OR_RETURN(std::vector<std::string> args, Strings(c, "args"));

  std::map<std::string, std::string> env;
  const std::string name = pod["metadata"].value("name", "");
  const std::string ns = pod["metadata"].value("namespace", "");
  const json& labels = pod["metadata"].value("labels", json::object());
  const std::string workload = labels.value("tessera.dev/workload", "");
  env["TESSERA_POD_NAME"] = name;
  env["TESSERA_NAMESPACE"] = ns;
  env["TESSERA_NODE_NAME"] = ctx.node_name;
  env["TESSERA_WORKLOAD"] = workload;
  env["TESSERA_CHECKPOINT_DIR"] = ctx.checkpoint_dir;
  if (!ctx.token_file.empty()) env["TESSERA_TOKEN_FILE"] = ctx.token_file;
  if (!ctx.server.empty()) env["TESSERA_SERVER"] = ctx.server;  // with the token: `tessera` in a pod calls the API as itself

  const std::string devices = Annotation(pod, "tessera.dev/gpu-devices");
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  env["CUDA_VISIBLE_DEVICES"] = devices;
  env["NVIDIA_VISIBLE_DEVICES"] = devices.empty() ? "void" : Annotation(pod, "tessera.dev/gpu-uuids");
  const std::string milli_text = Annotation(pod, "tessera.dev/gpu-milli");
  const int64_t milli = milli_text.empty() ? 0 : std::strtoll(milli_text.c_str(), nullptr, 10);
  if (milli > 0 && milli % 1000 != 0) {
    env["TESSERA_GPU_FRACTION"] = FormatMilliDecimal(milli);
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(std::max<int64_t>(1, milli % 1000 / 10));
  }
  const json& limits = c.value("resources", json::object()).value("limits", json::object());
  const json& requests = c.value("resources", json::object()).value("requests", json::object());
  auto resource = [&](const char* key) -> std::string {
    if (limits.contains(key) && limits[key].is_string()) return limits[key];
    if (requests.contains(key) && requests[key].is_string()) return requests[key];
    return "";
  };
  if (const std::string gpu_memory = resource("tessera.dev/gpu-memory"); !gpu_memory.empty() && !devices.empty()) {
    if (auto bytes = ParseUnits(gpu_memory)) {
      std::vector<std::string> parts;
      for (size_t start = 0; start <= devices.size();) {
        size_t comma = devices.find(',', start);
        if (comma == std::string::npos) comma = devices.size();
        parts.push_back(fmt::format("{}={}M", devices.substr(start, comma - start), *bytes / (1024 * 1024)));
        start = comma + 1;
      }
      env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = fmt::format("{}", fmt::join(parts, ","));
    }
  }

  const std::string rank = Annotation(pod, "tessera.dev/rank");
  const std::string world = Annotation(pod, "tessera.dev/world-size");
  if (!world.empty()) {
    env["WORLD_SIZE"] = world;
    env["RANK"] = rank.empty() ? "0" : rank;
    env["LOCAL_RANK"] = std::to_string(ctx.local_rank);
    env["MASTER_ADDR"] = ctx.master_addr;
    const json& owners = pod["metadata"].value("ownerReferences", json::array());
    const std::string owner_uid = owners.empty() ? workload : owners[0].value("uid", workload);
    env["MASTER_PORT"] = std::to_string(MasterPort(owner_uid));
  }
  // The container's own env comes last and wins, as in Kubernetes.
  for (const json& e : c.value("env", json::array())) {
    if (!e.is_object() || !e.contains("name")) continue;
    if (e.contains("valueFrom")) {
      return Err(Status::InvalidArgument(
          fmt::format("env {}: valueFrom must be resolved first (ResolvePodEnv)", e.value("name", ""))));
    }
    env[e.value("name", "")] = ExpandVars(e.value("value", ""), env);
  }

  ProcessSpec spec;
  if (ctx.switch_user) {
    ASSIGN_OR_RETURN(auto runs_as, PodRunAs(pod, ctx));
    spec.uid = runs_as.first;
    spec.gid = runs_as.second;
    // The agent's own home is not the pod's to read; its working directory is.
    if (!env.count("HOME")) env["HOME"] = c.value("workingDir", ctx.working_dir);
  }
  spec.name = fmt::format("{}_{}_{}", SafePathPart(ns), SafePathPart(name), SafePathPart(pod["metadata"].value("uid", "")));
  PodContainer out;
  for (const std::string& s : command) out.command.push_back(ExpandVars(s, env));
  for (const std::string& s : args) out.args.push_back(ExpandVars(s, env));
  spec.argv = out.command;
  spec.argv.insert(spec.argv.end(), out.args.begin(), out.args.end());
  for (const auto& [k, v] : env) spec.env.push_back(k + "=" + v);
  spec.working_dir = c.value("workingDir", ctx.working_dir);
  spec.output_path = ctx.output_path;
  // Limits, not requests, are enforced (requests only place the pod), as in Kubernetes.
  if (limits.contains("cpu") && limits["cpu"].is_string()) {
    if (auto m = ParseMilli(limits["cpu"].get<std::string>())) spec.limits.cpu_millicores = *m;
  }
  if (limits.contains("memory") && limits["memory"].is_string()) {
    if (auto b = ParseUnits(limits["memory"].get<std::string>())) spec.limits.memory_bytes = *b;
  }
  out.process = std::move(spec);
  return out;
}

}  // namespace tessera
