// A container pod's volumes on the node, as the kubelet's volume plugins make
// them (docs/agent.md, "Volumes"):
//
//   emptyDir               <pod dir>/volumes/<name>, the pod's own, removed with it;
//                          a tmpfs of its sizeLimit for medium Memory
//   configMap, secret      <pod dir>/volumes/<name> holding one file per key (or
//                          per `items` entry: key, path, mode), mode `defaultMode`
//                          (0644) unless the item says; a Secret's on a tmpfs, as
//                          the kubelet keeps secrets off the disk; always read-only
//                          in the container; written afresh at each start (not
//                          updated while the pod runs)
//   hostPath               the node's own path (type "", Directory,
//                          DirectoryOrCreate, File, FileOrCreate, Socket,
//                          CharDevice, BlockDevice checked as the kubelet does);
//                          only where the namespace's pod security level allows
//                          it (api/pod_security.h), checked before
//   persistentVolumeClaim  <volume root>/<namespace>-<claim>-<claim uid> on the
//                          node's shared filesystem (--volume-root), made when a
//                          pod first mounts it and kept after the pod
//
// A missing ConfigMap, Secret or claim (unless the volume is optional) is
// NotFound: the pod waits, as the kubelet's MountVolume.SetUp does;
// anything the pod got wrong is InvalidArgument: it fails, naming the volume.
//
// PodVolumes is pure (the pod and what was read for it in, a plan out);
// MakeVolumes and FetchPodSources do the I/O.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/pod_launch.h"
#include "auth/base64.h"  // DecodeBase64: a Secret's data
#include "client/api_client.h"
#include "common/result.h"

namespace tessera {

// What the agent reads from the server before a start: the Secrets and
// ConfigMaps the pod names (env, envFrom, volumes), decoded, and its claims
// (the PersistentVolumeClaim objects), by name. A name missing from a map was
// not found (404).
struct PodSources {
  SecretData secrets;
  SecretData config_maps;         // data (what env and envFrom take, as the kubelet)
  SecretData config_map_binaries;  // binaryData (files of configMap volumes only)
  std::map<std::string, nlohmann::json> claims;
};

// Reads them through `client` (the node may read what its pods name).
// Unavailable when the server could not be asked (try again soon);
// PermissionDenied or Internal with the HTTP status when it refused.
Result<PodSources> FetchPodSources(ApiClient& client, const nlohmann::json& pod);

// The directory of a claim on a node's (shared) volume root:
// <volume_root>/<namespace>-<claim>-<uid>, as an NFS client provisioner names it.
std::string ClaimDirectory(const std::string& volume_root, const std::string& ns, const std::string& claim,
                           const std::string& uid);

struct VolumeFile {
  std::string path;  // relative to the volume
  std::string content;
  mode_t mode = 0644;
};

struct VolumeDir {
  std::string path;  // on the node
  bool tmpfs = false;
  int64_t size_bytes = 0;  // tmpfs only; 0: the kernel's default (half the memory)
  bool read_only = false;  // configMap and secret volumes, a claim mounted readOnly
  bool own = true;         // the pod's own (removed with it); hostPath and claims are not
  bool claim = false;      // a persistentVolumeClaim's directory (made on first use)
  bool files = false;      // configMap, secret: `contents` replaces what it held
  std::vector<VolumeFile> contents;
  std::string host_path_type;  // hostPath: "" (anything), Directory, File, ...
};

struct VolumeContext {
  std::string pod_dir;      // the pod's directory on the node
  std::string volume_root;  // --volume-root; empty: claims cannot be mounted here
  const PodSources* sources = nullptr;
};

// The pod's volumes, by name (see above).
Result<std::map<std::string, VolumeDir>> PodVolumes(const nlohmann::json& pod, const VolumeContext& ctx);

// Makes them on the node: the directories (the pod's own ones owned by
// uid:gid, mode 0700), tmpfs mounts, the files of configMap and secret
// volumes (owned by uid:gid), a claim's directory (made on first use), and
// hostPath's checks. A hostPath of the wrong type is InvalidArgument.
Status MakeVolumes(const std::map<std::string, VolumeDir>& volumes, uid_t uid, gid_t gid);

// A volumeMount's subPath (relative, no ".."): what the container's mount
// takes from under its volume (SubPathSource). Prepares each of the pod's:
// made (as a directory) when missing in a writable volume of the pod's own or a
// claim; one that leaves its volume through a symbolic link is refused.
Status PrepareSubPaths(const nlohmann::json& pod, const std::map<std::string, VolumeDir>& volumes, uid_t uid,
                       gid_t gid);

// The node path of a volumeMount: the volume's directory, or its subPath
// under it; InvalidArgument for an absolute subPath or one with "..".
Result<std::string> SubPathSource(const VolumeDir& volume, const std::string& mount_name, const std::string& sub_path);

}  // namespace tessera
