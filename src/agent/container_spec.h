// What the agent asks runc to run for a container pod: the OCI runtime
// configuration (config.json of the bundle) made from the pod, its image's
// configuration and the node's facts, as the kubelet's runtime (containerd's
// CRI plugin) makes it.
//
// - The program, as Kubernetes defines it: `command` replaces the image's
//   Entrypoint, `args` its Cmd; with neither, Entrypoint then Cmd. An image
//   and a pod that give no program at all are refused.
// - The environment: the image's Env, then the pod's (the same variables as a
//   process pod's, pod_launch.h), which win; PATH defaults to containerd's.
// - The working directory: the container's workingDir, else the image's, else /.
// - The user: who pod_launch.h says the pod runs as (its namespace's uid
//   block); the image's USER is not taken, as it could name root.
// - Namespaces: pid, ipc, uts (hostname: the pod's name) and mount, and the
//   pod's network namespace (pod_network.h) when it has one; without one
//   (hostNetwork) the node's network. The root filesystem is the pod's overlay of its image,
//   read-only with securityContext.readOnlyRootFilesystem.
// - Docker's default capabilities, with securityContext.capabilities' drop
//   and add; no new privileges unless allowPrivilegeEscalation is true;
//   runc's default masked and read-only paths. A privileged container gets
//   every capability, every device in its cgroup, a writable /sys and nothing
//   masked. Which of these a pod may ask for is its namespace's pod security
//   level's to say (auth/pod_security.h), checked before this.
// - Mounts: /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys (read-only),
//   the node's /etc/resolv.conf and /etc/hosts (read-only), the workload's
//   checkpoint directory and the ServiceAccount token directory at the same
//   paths as on the node (TESSERA_CHECKPOINT_DIR and TESSERA_TOKEN_FILE name
//   them), the token also at /var/run/secrets/kubernetes.io/serviceaccount;
//   each volumeMount of the pod's volumes (pod_volumes.h), its subPath
//   under the volume, read-only when it says or its volume is (configMap,
//   secret, a claim mounted readOnly).
// - Limits (not requests) through runc's cgroup `cgroups_path`.
//
// Pure: JSON in, JSON out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cdi.h"
#include "agent/pod_launch.h"
#include "agent/pod_volumes.h"
#include "common/result.h"

namespace tessera {

// The pod's volumes on the node, by name: what the container's volumeMounts
// name (pod_volumes.h).
using VolumeDirs = std::map<std::string, VolumeDir>;

struct ContainerContext {
  std::string rootfs;          // the pod's root filesystem (absolute)
  std::string hostname;        // the pod's name
  std::string cgroups_path;    // for runc, e.g. "/tessera-ctr-node-1_ns_pod_uid"
  std::string checkpoint_dir;  // bind-mounted at the same path; empty: none
  std::string token_dir;       // the ServiceAccount token's directory; empty: none
  VolumeDirs volumes;          // the pod's volumes on the node, by name
  std::string netns_path;      // the pod's network namespace; empty: the node's network
  // The node's CDI spec of GPUs (cdi.h) and the pod's devices in it (their
  // names: indices); the container gets exactly those, with
  // CUDA_VISIBLE_DEVICES as their UUIDs (the container's own numbering starts at 0).
  const nlohmann::json* cdi_spec = nullptr;
  std::vector<std::string> gpu_devices;
};

Result<nlohmann::json> OciRuntimeConfig(const nlohmann::json& pod, const nlohmann::json& image_config,
                                        const PodContainer& container, const ContainerContext& ctx);

}  // namespace tessera
