#include "agent/pod_volumes.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "agent/mounts.h"
#include "common/atomic_file.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A relative path that stays where it is put: no "..", not absolute, not empty.
bool StaysInside(const std::string& path) {
  if (path.empty() || path.starts_with("/")) return false;
  for (const auto& part : fs::path(path)) {
    if (part == "..") return false;
  }
  return true;
}

Status Invalid(const std::string& volume, const std::string& what) {
  return Status::InvalidArgument(fmt::format("volume \"{}\": {}", volume, what));
}

std::unexpected<Status> InvalidErr(const std::string& volume, const std::string& what) {
  return Err(Invalid(volume, what));
}

// A configMap or secret volume: its files, from `data` (nullptr: not found).
Result<VolumeDir> FilesVolume(const std::string& name, const json& source, bool secret,
                              const std::map<std::string, std::string>* data, VolumeDir dir) {
  const char* field = secret ? "secret" : "configMap";
  const std::string object = source.value(secret ? "secretName" : "name", "");
  const bool optional = source.value("optional", false);
  int mode = source.value("defaultMode", 0644);
  if (mode < 0 || mode > 0777) {
    return InvalidErr(name, fmt::format("{}.defaultMode: Invalid value: {}: must be a number between 0 and 0777 (octal)",
                                     field, mode));
  }
  dir.files = true;
  dir.read_only = true;
  dir.tmpfs = secret;  // as the kubelet keeps secrets off the node's disk
  if (data == nullptr) {
    if (optional) return dir;
    return Err(Status::NotFound(fmt::format("MountVolume.SetUp failed for volume \"{}\" : {} \"{}\" not found",
                                                      name, secret ? "secret" : "configmap", object)));
  }
  const json items = source.value("items", json::array());
  if (!items.is_array() || items.empty()) {
    for (const auto& [key, value] : *data) dir.contents.push_back({.path = key, .content = value, .mode = static_cast<mode_t>(mode)});
    return dir;
  }
  std::set<std::string> paths;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& item = items[i];
    const std::string key = item.is_object() ? item.value("key", "") : "";
    const std::string path = item.is_object() ? item.value("path", "") : "";
    const std::string at = fmt::format("{}.items[{}]", field, i);
    if (!StaysInside(path)) {
      return InvalidErr(name, fmt::format("{}.path: Invalid value: \"{}\": must be a relative path without '..'", at, path));
    }
    if (!paths.insert(path).second) return InvalidErr(name, fmt::format("{}.path: Duplicate value: \"{}\"", at, path));
    const int item_mode = item.value("mode", mode);
    if (item_mode < 0 || item_mode > 0777) {
      return InvalidErr(name, fmt::format("{}.mode: Invalid value: {}: must be a number between 0 and 0777 (octal)", at,
                                       item_mode));
    }
    auto value = data->find(key);
    if (value == data->end()) {
      if (optional) continue;
      return Err(Status::NotFound(
          fmt::format("MountVolume.SetUp failed for volume \"{}\" : {} references non-existent {} key: {}", name,
                      secret ? "secret" : "configmap", secret ? "secret" : "config", key)));
    }
    dir.contents.push_back({.path = path, .content = value->second, .mode = static_cast<mode_t>(item_mode)});
  }
  return dir;
}

// The kubelet's hostPath types.
Status CheckHostPathType(const std::string& volume, const std::string& path, const std::string& type) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  const auto wrong = [&](const char* what) {
    return Invalid(volume, fmt::format("hostPath type check failed: {} is not {}", path, what));
  };
  if (type.empty()) return Status::Ok();
  if (type == "DirectoryOrCreate") {
    if (!exists) {
      std::error_code ec;
      fs::create_directories(path, ec);
      if (ec) return Invalid(volume, fmt::format("hostPath: cannot make directory {}: {}", path, ec.message()));
      ::chmod(path.c_str(), 0755);
      return Status::Ok();
    }
    return S_ISDIR(st.st_mode) ? Status::Ok() : wrong("a directory");
  }
  if (type == "FileOrCreate") {
    if (!exists) {
      const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0) return Invalid(volume, fmt::format("hostPath: cannot make file {}: {}", path, std::strerror(errno)));
      ::close(fd);
      return Status::Ok();
    }
    return S_ISREG(st.st_mode) ? Status::Ok() : wrong("a file");
  }
  if (!exists) return Invalid(volume, fmt::format("hostPath type check failed: {} does not exist", path));
  if (type == "Directory") return S_ISDIR(st.st_mode) ? Status::Ok() : wrong("a directory");
  if (type == "File") return S_ISREG(st.st_mode) ? Status::Ok() : wrong("a file");
  if (type == "Socket") return S_ISSOCK(st.st_mode) ? Status::Ok() : wrong("a socket");
  if (type == "CharDevice") return S_ISCHR(st.st_mode) ? Status::Ok() : wrong("a character device");
  if (type == "BlockDevice") return S_ISBLK(st.st_mode) ? Status::Ok() : wrong("a block device");
  return Invalid(volume, fmt::format("hostPath.type: Unsupported value: \"{}\"", type));
}

}  // namespace

Result<PodSources> FetchPodSources(ApiClient& client, const json& pod) {
  const std::string ns = pod["metadata"].value("namespace", "");
  PodSources out;
  // GET one object; nullopt when it is not there.
  const auto get = [&](const std::string& plural, const std::string& name) -> Result<std::optional<json>> {
    auto r = client.Request("GET", fmt::format("/api/v1/namespaces/{}/{}/{}", ns, plural, name));
    if (!r) return Err(Status::Unavailable(r.error().message()));
    if (r->status == 404) return std::optional<json>();
    json obj = r->status == 200 ? json::parse(r->body, nullptr, false) : json();
    if (!obj.is_object()) {
      const std::string what = fmt::format("cannot read {} \"{}\": HTTP {}", plural, name, r->status);
      return Err(r->status == 403 ? Status::PermissionDenied(what) : Status::Internal(what));
    }
    return std::optional<json>(std::move(obj));
  };
  for (const std::string& name : PodSecretNames(pod)) {
    ASSIGN_OR_RETURN(auto secret, get("secrets", name));
    if (!secret) continue;
    auto& decoded = out.secrets[name];
    const json data = secret->value("data", json::object());
    for (const auto& [key, value] : data.items()) {
      if (auto text = value.is_string() ? DecodeBase64(value.get<std::string>()) : std::nullopt) decoded[key] = *text;
    }
  }
  for (const std::string& name : PodConfigMapNames(pod)) {
    ASSIGN_OR_RETURN(auto config_map, get("configmaps", name));
    if (!config_map) continue;
    auto& text = out.config_maps[name];
    auto& binaries = out.config_map_binaries[name];
    const json data = config_map->value("data", json::object());
    const json binary = config_map->value("binaryData", json::object());
    for (const auto& [key, value] : data.items()) {
      if (value.is_string()) text[key] = value.get<std::string>();
    }
    for (const auto& [key, value] : binary.items()) {
      if (auto bytes = value.is_string() ? DecodeBase64(value.get<std::string>()) : std::nullopt) binaries[key] = *bytes;
    }
  }
  for (const json& v : pod["spec"].value("volumes", json::array())) {
    const json claim = v.is_object() ? v.value("persistentVolumeClaim", json()) : json();
    const std::string name = claim.is_object() ? claim.value("claimName", "") : "";
    if (name.empty() || out.claims.count(name)) continue;
    ASSIGN_OR_RETURN(auto object, get("persistentvolumeclaims", name));
    if (object) out.claims[name] = std::move(*object);
  }
  return out;
}

std::string ClaimDirectory(const std::string& volume_root, const std::string& ns, const std::string& claim,
                           const std::string& uid) {
  return (fs::path(volume_root) / fmt::format("{}-{}-{}", ns, claim, uid)).string();
}

Result<std::map<std::string, VolumeDir>> PodVolumes(const json& pod, const VolumeContext& ctx) {
  static const PodSources kNone;
  const PodSources& sources = ctx.sources != nullptr ? *ctx.sources : kNone;
  std::map<std::string, VolumeDir> out;
  const json& spec = pod["spec"];
  const std::string ns = pod["metadata"].value("namespace", "");
  for (const json& v : spec.value("volumes", json::array())) {
    if (!v.is_object()) continue;
    const std::string name = v.value("name", "");
    VolumeDir dir{.path = ctx.pod_dir + "/volumes/" + name};
    const auto source = [&](const char* key) {
      auto it = v.find(key);
      return it != v.end() && it->is_object() ? *it : json::object();
    };
    if (v.contains("emptyDir")) {
      const json empty_dir = source("emptyDir");
      dir.tmpfs = empty_dir.value("medium", "") == "Memory";
      if (const std::string limit = empty_dir.value("sizeLimit", ""); dir.tmpfs && !limit.empty()) {
        auto bytes = ParseUnits(limit);
        if (!bytes) return InvalidErr(name, fmt::format("emptyDir.sizeLimit \"{}\" is not a quantity", limit));
        dir.size_bytes = *bytes;
      }
    } else if (v.contains("configMap") || v.contains("secret")) {
      const bool secret = v.contains("secret");
      const json src = source(secret ? "secret" : "configMap");
      const std::string object = src.value(secret ? "secretName" : "name", "");
      if (object.empty()) {
        return InvalidErr(name, fmt::format("{}: Required value", secret ? "secret.secretName" : "configMap.name"));
      }
      const SecretData& data = secret ? sources.secrets : sources.config_maps;
      auto found = data.find(object);
      std::map<std::string, std::string> files;  // a ConfigMap's data and binaryData together
      if (found != data.end()) {
        files = found->second;
        if (auto binary = sources.config_map_binaries.find(object); !secret && binary != sources.config_map_binaries.end()) {
          files.insert(binary->second.begin(), binary->second.end());
        }
      }
      ASSIGN_OR_RETURN(dir, FilesVolume(name, src, secret, found == data.end() ? nullptr : &files, dir));
      // Room for its files on the tmpfs (and a page each), not the kernel's half of memory.
      int64_t bytes = 0;
      for (const VolumeFile& f : dir.contents) bytes += static_cast<int64_t>(f.content.size()) + 4096;
      if (dir.tmpfs) dir.size_bytes = std::max<int64_t>(bytes + 65536, 1 << 20);
    } else if (v.contains("hostPath")) {
      const json src = source("hostPath");
      const std::string path = src.value("path", "");
      if (!path.starts_with("/")) {
        return InvalidErr(name, fmt::format("hostPath.path: Invalid value: \"{}\": must be an absolute path", path));
      }
      dir.path = fs::path(path).lexically_normal().string();
      while (dir.path.size() > 1 && dir.path.ends_with("/")) dir.path.pop_back();
      dir.own = false;
      dir.host_path_type = src.value("type", "");
      static const std::set<std::string> kTypes{"",     "DirectoryOrCreate", "Directory",  "FileOrCreate",
                                                "File", "Socket",            "CharDevice", "BlockDevice"};
      if (!kTypes.count(dir.host_path_type)) {
        return InvalidErr(name, fmt::format("hostPath.type: Unsupported value: \"{}\"", dir.host_path_type));
      }
    } else if (v.contains("persistentVolumeClaim")) {
      const json src = source("persistentVolumeClaim");
      const std::string claim = src.value("claimName", "");
      if (claim.empty()) return InvalidErr(name, "persistentVolumeClaim.claimName: Required value");
      auto found = sources.claims.find(claim);
      if (found == sources.claims.end()) {
        return Err(Status::NotFound(fmt::format("persistentvolumeclaim \"{}\" not found", claim)));
      }
      const json& object = found->second;
      const json status = object.value("status", json::object());
      if (!status.is_object() || status.value("phase", "") != "Bound") {
        return Err(Status::NotFound(
            fmt::format("pod has unbound immediate PersistentVolumeClaims (persistentvolumeclaim \"{}\")", claim)));
      }
      if (ctx.volume_root.empty()) {
        return Err(Status::NotFound(fmt::format(
            "volume \"{}\": persistentvolumeclaim \"{}\" needs a shared volume root on the node (tessera agent "
            "--volume-root DIR)",
            name, claim)));
      }
      const json meta = object.value("metadata", json::object());
      dir.path = ClaimDirectory(ctx.volume_root, ns, claim, meta.is_object() ? meta.value("uid", "") : "");
      dir.own = false;
      dir.claim = true;
      dir.read_only = src.value("readOnly", false);
    } else {
      std::string kind = "this kind of";
      for (const auto& [key, value] : v.items()) {
        if (key != "name") kind = key;
      }
      return InvalidErr(name, fmt::format("{} volumes are not supported (emptyDir, configMap, secret, hostPath and "
                                       "persistentVolumeClaim are)",
                                       kind));
    }
    out[name] = std::move(dir);
  }
  for (const json& c : spec.value("containers", json::array())) {
    for (const json& m : c.value("volumeMounts", json::array())) {
      if (!out.count(m.value("name", ""))) {
        return Err(Status::InvalidArgument(fmt::format(
            "container \"{}\": volumeMount \"{}\" names no volume of the pod", c.value("name", ""), m.value("name", ""))));
      }
    }
  }
  return out;
}

Status MakeVolumes(const std::map<std::string, VolumeDir>& volumes, uid_t uid, gid_t gid) {
  const bool root = ::geteuid() == 0;
  for (const auto& [name, v] : volumes) {
    std::error_code ec;
    if (!v.own) {
      if (v.claim && !fs::exists(v.path)) {
        // A claim's directory: made on first use, the pod's to write.
        fs::create_directories(v.path, ec);
        if (ec) return Invalid(name, fmt::format("cannot make {}: {}", v.path, ec.message()));
        if (root && ::chown(v.path.c_str(), uid, gid) != 0) {
          return Invalid(name, fmt::format("cannot give {} to uid {}: {}", v.path, uid, std::strerror(errno)));
        }
        ::chmod(v.path.c_str(), 0770);
      }
      // hostPath: checked (or made) as the kubelet does.
      RETURN_IF_ERROR(CheckHostPathType(name, v.path, v.host_path_type));
      continue;
    }
    fs::create_directories(v.path, ec);
    if (ec) return Invalid(name, fmt::format("cannot make {}: {}", v.path, ec.message()));
    if (root && ::chown(v.path.c_str(), uid, gid) != 0) {
      return Invalid(name, fmt::format("cannot give {} to uid {}: {}", v.path, uid, std::strerror(errno)));
    }
    ::chmod(v.path.c_str(), v.files ? 0755 : 0700);
    if (v.tmpfs && !IsMountPoint(v.path)) {
      std::string data = fmt::format("mode={},uid={},gid={}", v.files ? "0755" : "0700", uid, gid);
      if (v.size_bytes > 0) data += fmt::format(",size={}", v.size_bytes);
      if (::mount("tmpfs", v.path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, data.c_str()) != 0) {
        return Status::Unavailable(fmt::format("volume \"{}\": cannot mount its tmpfs: {}", name, std::strerror(errno)));
      }
    }
    if (!v.files) continue;
    // Its files, afresh: what an earlier start wrote goes first.
    for (const auto& entry : fs::directory_iterator(v.path, ec)) fs::remove_all(entry.path(), ec);
    for (const VolumeFile& f : v.contents) {
      const fs::path path = fs::path(v.path) / f.path;
      fs::create_directories(path.parent_path(), ec);
      for (fs::path d = path.parent_path(); d != fs::path(v.path) && d.string().size() > v.path.size(); d = d.parent_path()) {
        if (root) (void)::chown(d.c_str(), uid, gid);
        ::chmod(d.c_str(), 0755);
      }
      AtomicWriteOptions options;
      if (root) options.owner = std::pair{uid, gid};
      RETURN_IF_ERROR(WriteFileAtomically(path.string(), f.content, f.mode, options));
    }
  }
  return Status::Ok();
}

Result<std::string> SubPathSource(const VolumeDir& volume, const std::string& mount_name, const std::string& sub_path) {
  if (sub_path.empty()) return volume.path;
  if (!StaysInside(sub_path)) {
    return Err(Status::InvalidArgument(fmt::format(
        "volumeMount \"{}\": subPath: Invalid value: \"{}\": must be a relative path without '..'", mount_name, sub_path)));
  }
  return (fs::path(volume.path) / sub_path).lexically_normal().string();
}

Status PrepareSubPaths(const json& pod, const std::map<std::string, VolumeDir>& volumes, uid_t uid, gid_t gid) {
  for (const json& c : pod["spec"].value("containers", json::array())) {
    for (const json& m : c.value("volumeMounts", json::array())) {
      const std::string name = m.value("name", ""), sub_path = m.value("subPath", "");
      auto volume = volumes.find(name);
      if (sub_path.empty() || volume == volumes.end()) continue;
      ASSIGN_OR_RETURN(std::string path, SubPathSource(volume->second, name, sub_path));
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(path, ec)) && !volume->second.files && !volume->second.read_only) {
        fs::create_directories(path, ec);
        for (fs::path d = path; d.string().size() > volume->second.path.size(); d = d.parent_path()) {
          if (::geteuid() == 0) (void)::chown(d.c_str(), uid, gid);
        }
      }
      // Where it really is, after any symbolic link a pod may have planted: inside the volume.
      const fs::path real = fs::weakly_canonical(path, ec);
      const fs::path base = fs::weakly_canonical(volume->second.path, ec);
      const std::string r = real.string(), b = base.string();
      if (ec || !(r == b || r.starts_with(b + "/"))) {
        return Status::InvalidArgument(
            fmt::format("volumeMount \"{}\": subPath \"{}\" leaves its volume (it resolves to {})", name, sub_path, r));
      }
      if (!fs::exists(real, ec)) {
        return Status::InvalidArgument(
            fmt::format("volumeMount \"{}\": subPath \"{}\" does not exist in its volume", name, sub_path));
      }
    }
  }
  return Status::Ok();
}

}  // namespace tessera
