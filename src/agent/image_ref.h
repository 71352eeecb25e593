// Image references as the kubelet (and Docker's distribution/reference) read
// them: "busybox", "busybox:1.36", "registry.example.com:5000/team/trainer:v1",
// "name@sha256:<64 hex>". A name without a registry is Docker Hub's
// (docker.io), and a one-part Docker Hub name is under library/; a reference
// with neither tag nor digest means :latest.
//
// Pure: text in, a value or the reason it is not a reference out.
//
// Thread-safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera {

struct ImageRef {
  std::string registry;    // "docker.io", "127.0.0.1:5000"
  std::string repository;  // "library/busybox", "team/trainer"
  std::string tag;         // empty when only a digest is given
  std::string digest;      // "sha256:...", or empty

  // "docker.io/library/busybox:1.36", "127.0.0.1:5000/t/x@sha256:..." (the tag is
  // left out when there is a digest, which alone names the image).
  std::string Canonical() const;
  // "docker.io/library/busybox": the registry and repository, no tag or digest.
  std::string Name() const { return registry + "/" + repository; }
  // "docker://" + Canonical(), for skopeo.
  std::string Transport() const { return "docker://" + Canonical(); }
  // Whether the registry is on this host (localhost, 127.0.0.0/8, ::1): Docker
  // and the kubelet's runtimes talk plain HTTP to those.
  bool Loopback() const;
  friend bool operator==(const ImageRef&, const ImageRef&) = default;
};

// InvalidArgument in the kubelet's words ("couldn't parse image reference
// \"X\": invalid reference format", "... repository name must be lowercase").
Result<ImageRef> ParseImageRef(std::string_view text);

enum class PullPolicy { kAlways, kIfNotPresent, kNever };

// The container's imagePullPolicy, or Kubernetes' default for its image:
// Always for :latest or no tag (and no digest), else IfNotPresent.
// InvalidArgument for another value.
Result<PullPolicy> ImagePullPolicy(std::string_view policy, const ImageRef& image);

}  // namespace tessera
