#include "agent/image_store.h"

#include "agent/run_tool.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kRefAnnotation = "org.opencontainers.image.ref.name";

// The JSON object in a file; an empty object when the file is missing or holds another thing.
json ReadJsonFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  json parsed = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? parsed : json::object();
}

// "sha256:abc" -> <layout>/blobs/sha256/abc
fs::path BlobPath(const std::string& layout, const std::string& digest) {
  const auto colon = digest.find(':');
  if (colon == std::string::npos || digest.find('/') != std::string::npos || digest.find("..") != std::string::npos) {
    return {};
  }
  return fs::path(layout) / "blobs" / digest.substr(0, colon) / digest.substr(colon + 1);
}

// <root>/rootfs/sha256-<hex>: no ':' in it, which an overlay's lowerdir= would take for a separator.
fs::path RootfsDir(const std::string& root, const ImageInfo& image) {
  std::string name = image.manifest_digest;
  std::replace(name.begin(), name.end(), ':', '-');
  return fs::path(root) / "rootfs" / name;
}

}  // namespace

ImageStore::ImageStore(ImageStoreOptions options) : options_(std::move(options)) {}

std::string ImageStore::Layout() const { return (fs::path(options_.root) / "oci").string(); }

std::optional<ImageInfo> ImageStore::Read(const json& descriptor) const {
  if (!descriptor.is_object()) return std::nullopt;
  ImageInfo info;
  const json annotations = descriptor.value("annotations", json::object());
  if (!annotations.is_object()) return std::nullopt;
  info.name = annotations.value(kRefAnnotation, "");
  info.manifest_digest = descriptor.value("digest", "");
  const json manifest = ReadJsonFile(BlobPath(Layout(), info.manifest_digest));
  auto config_descriptor = manifest.find("config");
  if (config_descriptor == manifest.end() || !config_descriptor->is_object()) return std::nullopt;
  const json config = ReadJsonFile(BlobPath(Layout(), config_descriptor->value("digest", "")));
  if (config.empty()) return std::nullopt;
  info.config = config.value("config", json::object());
  if (!info.config.is_object()) info.config = json::object();
  info.size_bytes = config_descriptor->value("size", int64_t{0});
  for (const json& layer : manifest.value("layers", json::array())) info.size_bytes += layer.value("size", int64_t{0});
  return info;
}

std::optional<ImageInfo> ImageStore::Find(const ImageRef& ref) const {
  const std::string name = ref.Canonical();
  const json index = ReadJsonFile(fs::path(Layout()) / "index.json");
  for (const json& m : index.value("manifests", json::array())) {
    if (!m.is_object() || !m.value("annotations", json::object()).is_object()) continue;
    if (m.value("annotations", json::object()).value(kRefAnnotation, "") == name) return Read(m);
  }
  return std::nullopt;
}

std::vector<ImageInfo> ImageStore::List() const {
  std::vector<ImageInfo> out;
  const json index = ReadJsonFile(fs::path(Layout()) / "index.json");
  for (const json& m : index.value("manifests", json::array())) {
    if (auto info = Read(m)) out.push_back(std::move(*info));
  }
  return out;
}

Result<ImageInfo> ImageStore::Pull(const ImageRef& ref, const std::string& auth_file) {
  std::lock_guard lock(pull_mu_);
  std::error_code ec;
  fs::create_directories(options_.root, ec);
  const bool insecure = ref.Loopback() || std::find(options_.insecure_registries.begin(),
                                                    options_.insecure_registries.end(),
                                                    ref.registry) != options_.insecure_registries.end();
  std::vector<std::string> argv{options_.skopeo, "--command-timeout", fmt::format("{}s", options_.pull_timeout_seconds),
                                "copy", "--quiet"};
  if (insecure) argv.push_back("--src-tls-verify=false");
  if (!auth_file.empty()) {
    argv.push_back("--src-authfile");
    argv.push_back(auth_file);
  }
  argv.push_back(ref.Transport());
  argv.push_back("oci:" + Layout() + ":" + ref.Canonical());
  ASSIGN_OR_RETURN(ToolResult run, RunTool(argv));
  if (run.exit_code != 0) return Err(Status::Unavailable(ToolMessage(run.output)));
  auto info = Find(ref);
  if (!info) return Err(Status::Internal(fmt::format("skopeo pulled {} but the store does not show it", ref.Canonical())));
  ASSIGN_OR_RETURN(std::string rootfs, UnpackLocked(*info));
  (void)rootfs;
  return std::move(*info);
}

Result<std::string> ImageStore::Rootfs(const ImageInfo& image) {
  const fs::path dir = RootfsDir(options_.root, image);
  if (fs::exists(dir / "rootfs")) return (dir / "rootfs").string();
  std::lock_guard lock(pull_mu_);
  return UnpackLocked(image);
}

Result<std::string> ImageStore::UnpackLocked(const ImageInfo& image) {
  const fs::path dir = RootfsDir(options_.root, image);
  if (fs::exists(dir / "rootfs")) return (dir / "rootfs").string();
  // umoci names images by reference only: the reference must still be this manifest.
  auto ref = ParseImageRef(image.name);
  if (!ref) return Err(ref.error());
  auto now = Find(*ref);
  if (!now || now->manifest_digest != image.manifest_digest) {
    return Err(Status::Unavailable(fmt::format("image {} changed in the store while it was unpacked; pull it again", image.name)));
  }
  std::error_code ec;
  const fs::path tmp = RootfsDir(options_.root, image).string() + ".tmp";
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  ASSIGN_OR_RETURN(ToolResult run, RunTool({options_.umoci, "raw", "unpack", "--image", Layout() + ":" + image.name,
                                            (tmp / "rootfs").string()}));
  if (run.exit_code != 0) {
    fs::remove_all(tmp, ec);
    return Err(Status::Internal(fmt::format("cannot unpack image {}: {}", image.name, ToolMessage(run.output))));
  }
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) return Err(Status::IoError(fmt::format("cannot keep the unpacked image {}: {}", image.name, ec.message())));
  return (dir / "rootfs").string();
}

}  // namespace tessera
