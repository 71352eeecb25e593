// Mount facts the agent checks before it mounts: a pod's overlay, a tmpfs
// volume, a network namespace file bound (pod_network.h).
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace tessera {

// Whether `path` is a mount point: on another device than its parent, or the
// root itself (a bind mount of a namespace file keeps the device of nsfs).
inline bool IsMountPoint(const std::string& path) {
  struct stat self {}, parent {};
  if (::stat(path.c_str(), &self) != 0 ||
      ::stat(std::filesystem::path(path).parent_path().c_str(), &parent) != 0) {
    return false;
  }
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

}  // namespace tessera
