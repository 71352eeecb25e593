// The node's image store: one OCI image layout (<root>/oci) that every pod of
// the node shares, filled by skopeo from registries as the kubelet's runtime
// pulls, and each image's root filesystem unpacked once (by umoci, under
// <root>/rootfs/sha256-<hex>) for pods to use read-only, as the lower
// layer of an overlay of their own (docs/agent.md).
//
// An image is kept under its canonical reference (image_ref.h), so a tag
// pulled again is updated in place (the old manifest's files stay until no
// reference names it; nothing is garbage-collected yet).
//
// Thread-safety: Pull and Rootfs may be called from one worker thread while the
// agent's loop calls Find and List: writes to the layout's index.json go
// through a rename, so a reader sees the old index or the new one.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/image_ref.h"
#include "common/result.h"

namespace tessera {

struct ImageInfo {
  std::string name;             // the canonical reference it is kept under
  std::string manifest_digest;  // "sha256:..."
  nlohmann::json config;        // the image configuration's "config": Entrypoint, Cmd, Env, WorkingDir, User
  int64_t size_bytes = 0;       // its config and layers, compressed, as the manifest gives them
};

struct ImageStoreOptions {
  std::string root;               // created when missing
  std::string skopeo = "skopeo";  // looked up in PATH
  std::string umoci = "umoci";
  // Registries spoken to over plain HTTP besides loopback ones (Docker's
  // --insecure-registry; the agent's too).
  std::vector<std::string> insecure_registries;
  int pull_timeout_seconds = 600;
};

class ImageStore {
 public:
  explicit ImageStore(ImageStoreOptions options);

  // The image last pulled under this reference, when the store holds it.
  std::optional<ImageInfo> Find(const ImageRef& ref) const;
  // Every image the store holds (for the Node's status.images).
  std::vector<ImageInfo> List() const;

  // Pulls the image with skopeo, with the registry credentials in `auth_file`
  // (containers-auth.json, as made from an imagePullSecret; empty: none), and
  // unpacks its root filesystem. Blocks for as long as the registry takes: call
  // it off the agent's loop. On failure, Unavailable with the registry's own
  // words ("manifest unknown", "unauthorized: ...", "connection refused").
  Result<ImageInfo> Pull(const ImageRef& ref, const std::string& auth_file);
  // The image's unpacked root filesystem, unpacking it first when needed.
  Result<std::string> Rootfs(const ImageInfo& image);

  const std::string& root() const { return options_.root; }

 private:
  std::string Layout() const;
  std::optional<ImageInfo> Read(const nlohmann::json& descriptor) const;
  Result<std::string> UnpackLocked(const ImageInfo& image);  // pull_mu_ held

  ImageStoreOptions options_;
  std::mutex pull_mu_;  // one skopeo or umoci at a time writes the layout
};

}  // namespace tessera
