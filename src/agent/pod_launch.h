// What the agent runs for a Pod: the command, environment and limits that a Pod
// object bound to this node asks for (DESIGN.md section 6), as a ProcessSpec.
//
// Pure: the Pod as JSON and facts about the node in, a ProcessSpec (or the
// reason the pod cannot run here) out, so it is tested without processes.
//
// The environment, after the container's own `env` entries (which win):
//   CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES  the pod's devices (indices in
//       PCI bus order, CUDA_DEVICE_ORDER=PCI_BUS_ID; UUIDs for NVIDIA's runtime);
//       empty when the pod has no GPU, so it cannot use one by accident
//   TESSERA_GPU_FRACTION                 e.g. 0.25 when the pod holds part of a device
//   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE     its share of the SMs under MPS (fractions)
//   CUDA_MPS_PINNED_DEVICE_MEM_LIMIT      "<index>=<MiB>M" when it asks for GPU memory
//   WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT  for every pod of a workload
//   TESSERA_CHECKPOINT_DIR                per workload, kept across preemptions and restarts
//   TESSERA_POD_NAME, TESSERA_NAMESPACE, TESSERA_NODE_NAME, TESSERA_WORKLOAD
//   TESSERA_TOKEN_FILE                    the pod's ServiceAccount token, when it has one
//   HOME                                  its working directory, when it runs as a user of its own
//
// Who it runs as (DESIGN.md section 12): securityContext.runAsUser and
// runAsGroup (the container's over the pod's) when they lie in the namespace's
// uid block; without them, the context's default user (--pod-user) or else the
// block's first uid, with the same number as its group. A request outside the
// block, or a namespace without one, is refused with the reason.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/process_runner.h"
#include "common/result.h"
#include "domain/uid_range.h"

namespace tessera {

struct PodLaunchContext {
  std::string node_name;
  std::string working_dir;     // used when the container names no workingDir
  std::string output_path;     // where stdout and stderr go
  std::string checkpoint_dir;  // TESSERA_CHECKPOINT_DIR
  std::string master_addr;     // the address of the node running rank 0
  int local_rank = 0;          // among this workload's pods on this node
  // Who the pod may run as: its namespace's uid block (nullopt: unknown), and
  // --pod-user's uid and gid when the agent was given one.
  std::optional<UidRange> uid_range;
  std::optional<std::pair<uint32_t, uint32_t>> default_user;
  bool switch_user = true;   // false: run as the agent (it is not root, and says so)
  std::string token_file;    // TESSERA_TOKEN_FILE; empty: the pod has no token
  std::string server;        // TESSERA_SERVER: the API server the pod's token is for
};

// Who the pod runs as (rules above): InvalidArgument with the reason, for the
// pod's StartError, when it may not run as it asks.
Result<std::pair<uint32_t, uint32_t>> PodRunAs(const nlohmann::json& pod, const PodLaunchContext& ctx);

// "UID" or "UID:GID" (--pod-user), numbers only.
Result<std::pair<uint32_t, uint32_t>> ParsePodUser(std::string_view text);

// The reason a pod whose container names an image, with or without a command,
// fails: no OCI runtime here. It never runs on the host instead (a process pod
// is a command without an image).
inline constexpr const char* kNoOciRuntime = "container images need an OCI runtime, which this node does not have";

// InvalidArgument with a reason for the user when the pod cannot run as a process.
Result<ProcessSpec> PodProcessSpec(const nlohmann::json& pod, const PodLaunchContext& ctx);

// Whether the pod's container names an image (a container pod, not a process pod).
bool NamesImage(const nlohmann::json& pod);

// The pod's one container as the rules above make it, image or not: the
// ProcessSpec a process pod runs (argv: command then args), and its command
// and args apart ($(VAR) expanded), which a container's image completes
// (container_spec.h). InvalidArgument with the reason when it cannot run.
struct PodContainer {
  ProcessSpec process;
  std::vector<std::string> command;
  std::vector<std::string> args;
};
Result<PodContainer> PodContainerSpec(const nlohmann::json& pod, const PodLaunchContext& ctx);

// The Secrets the pod's container takes variables from (env valueFrom
// secretKeyRef, envFrom secretRef).
std::vector<std::string> EnvSecretNames(const nlohmann::json& pod);
// The Secrets and the ConfigMaps the pod names anywhere the agent reads them
// before a start: env, envFrom and volumes (secret.secretName, configMap.name).
std::vector<std::string> PodSecretNames(const nlohmann::json& pod);
std::vector<std::string> PodConfigMapNames(const nlohmann::json& pod);

// A Secret's (or ConfigMap's) data, decoded, by key; by its name.
using SecretData = std::map<std::string, std::map<std::string, std::string>>;

// The pod with its container's variables made plain, as the kubelet makes
// them before it starts a container: envFrom's secretRef and configMapRef keys
// (with their prefix) first, then env, whose valueFrom becomes a value:
// secretKeyRef from `secrets`, configMapKeyRef from `config_maps`, fieldRef
// (metadata.name, .namespace, .uid, spec.nodeName, spec.serviceAccountName,
// status.hostIP: `host_ip`, status.podIP: `pod_ip`). A source or key that is missing
// is an error in the kubelet's words (`secret "x" not found`, `configmap "x"
// not found`, `couldn't find key k in Secret ns/x`, `... in ConfigMap ns/x`)
// unless the reference is optional; resourceFieldRef is refused as not
// supported yet.
Result<nlohmann::json> ResolvePodEnv(const nlohmann::json& pod, const SecretData& secrets, const std::string& host_ip,
                                     const std::string& pod_ip, const SecretData& config_maps = {});

// The port a workload's rank 0 listens on: stable for the workload, in 20000-29999.
int MasterPort(const std::string& workload_uid);

// "team-a/train-0" style directory names that cannot escape their parent.
std::string SafePathPart(const std::string& s);

}  // namespace tessera
