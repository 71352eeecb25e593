// The node agent (`tessera agent`, and embedded in `tessera up`): like a kubelet,
// it registers its Node, renews the Node's Lease, watches the Pods bound to it,
// runs each as a process group, reports their status, and terminates them when
// they are deleted or preempted (DESIGN.md sections 3 and 6).
//
// Threads: a watcher keeps the Pods bound to this node (list, then watch); a
// heartbeat renews the Lease every lease_duration/4; the loop starts, polls,
// restarts and terminates processes and writes Pod status. Each has its own
// connection to the server.
//
// Fencing: when the heartbeat has not renewed the Lease for longer than
// lease_duration, the loop SIGKILLs every pod and starts none until it renews
// again, so that the server (which waits lease_duration plus a margin before it
// places the work elsewhere; see src/server/node_lifecycle.h) never has a pod
// running twice.
//
// Restart: the agent keeps <data_dir>/agent-state.json (pod uid -> pid and start
// time). A new agent adopts the processes still running with the same identity
// and reports the ones that ended meanwhile.
//
// Identity (DESIGN.md section 12): the agent authenticates with its node's own
// credential (system:node:NAME), read from a file, never from the command
// line; the server lets it touch only its Node, its Lease and the pods bound to
// it. The server's calls to its log endpoint carry a token the server signs for
// this node alone, checked against the keys the server publishes
// (/openid/v1/jwks).
//
// Pods run unprivileged (when the agent is root): as the first uid of their
// namespace's block (tessera.dev/uid-range, domain/uid_range.h), or the uid their
// securityContext asks for within that block, or --pod-user. Each runs in a
// mount namespace of its own where the agent's data directory (and the server's,
// under `tessera up`) is an empty directory but for the pod's own working
// directory, checkpoint directory and token: a pod cannot read the agent's
// state or credentials, nor another pod's files or logs. Each pod gets its
// ServiceAccount's token (the namespace's "default" unless it names one),
// bound to the pod and renewed before it expires, as the file named by
// TESSERA_TOKEN_FILE (and /var/run/secrets/... is not used: process pods have no image).
//
// Checkpoints: a pod reports one by writing or touching
// $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint. The loop looks at each running
// pod's file every checkpoint_interval, and sets the file's time (whole
// seconds, never later than the node's clock) on the Pod as the annotation
// tessera.dev/last-checkpoint, with a merge patch, when it changed; the server
// carries the newest onto the Workload, for least-waste preemption.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/gpu_inventory.h"
#include "client/api_client.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

struct AgentOptions {
  std::string server;  // API server URL
  std::string token;       // the node's credential; empty: read from token_file
  std::string token_file;  // where the node's credential is (--token-file)
  TlsClientOptions tls;
  std::string node_name;
  std::string data_dir;         // agent-state.json, pods/<pod>/ (working directory, logs)
  std::string checkpoint_root;  // empty: <data_dir>/checkpoints; shared storage on a real fleet
  // The node's mount of the shared filesystem that PersistentVolumeClaims live
  // on (<volume_root>/<namespace>-<claim>-<uid>); empty: no claims here.
  std::string volume_root;
  std::string address = "127.0.0.1";  // how other nodes and the server reach this one (MASTER_ADDR, logs)
  uint16_t log_port = 0;              // the log endpoint (src/agent/log_server.h); 0: any free port
  GpuDiscoveryOptions gpus;
  std::map<std::string, std::string> labels;  // extra Node labels (flavor, rack)
  int64_t cpu_milli = 0;     // 0: this machine's CPUs
  int64_t memory_bytes = 0;  // 0: this machine's memory
  Duration lease_duration = Duration::Seconds(40);
  Duration restart_backoff = Duration::Seconds(10);  // OnFailure: first delay, doubling up to 5 minutes
  Duration poll_interval = Duration::Millis(50);     // how often running processes are checked
  // How often GPU utilisation and memory use are sampled (NVML, or the simulated
  // inventory's model) and published on the Node (annotation tessera.dev/gpu-usage).
  Duration usage_interval = Duration::Seconds(10);
  // How often running pods' checkpoint files ($TESSERA_CHECKPOINT_DIR/.tessera-checkpoint)
  // are looked at (one stat each); a changed one's time is set on the Pod as the
  // annotation tessera.dev/last-checkpoint (docs/agent.md "Checkpoints"). 0: never.
  Duration checkpoint_interval = Duration::Seconds(2);
  // How long the directory of a pod this node no longer has (its logs, its
  // working directory) is kept after it last changed; then it is removed
  // (docs/agent.md "Logs"). While it is kept, the server serves its logs
  // (`tessera logs --previous`, a finished or preempted job's logs).
  Duration log_retention = Duration::Seconds(72 * 3600);
  // Who pods run as when they do not say (securityContext.runAsUser): empty,
  // the first uid of their namespace's block; else "UID[:GID]" for every pod
  // (weaker: pods of different namespaces then share a uid).
  std::string pod_user;
  // Directories pods must not see, besides data_dir (the server's data
  // directory under `tessera up`).
  std::vector<std::string> hidden_paths;
  // argv of the node's fence process (src/agent/fence.h), which kills the pods
  // when this agent stops renewing the Lease, even when it is dead; empty: none
  // (the agent then fences only while it runs).
  std::vector<std::string> fence_command;
  // Container pods (docs/agent.md): the node's image store (empty:
  // <data_dir>/images), the OCI runtime, and registries spoken to over plain
  // HTTP besides loopback ones (Docker's --insecure-registry).
  std::string image_store;
  std::string runc = "runc";
  // Where the GPUs' device nodes are (/dev/nvidia0, /dev/nvidiactl, ...), for
  // the CDI spec of GPU containers (cdi.h); tests point it at stand-ins.
  std::string device_root = "/dev";
  std::vector<std::string> insecure_registries;
  // The pod network (docs/agent.md "Pod network"). kBridge: every pod but a
  // hostNetwork one gets a network namespace of its own and an address of
  // the Node's spec.podCIDR on the bridge `pod_bridge` (src/agent/pod_network.h),
  // and the node routes to the other nodes' pod ranges (host-gw). kHost: every
  // pod shares the node's network.
  enum class PodNetworkMode { kHost, kBridge };
  PodNetworkMode pod_network = PodNetworkMode::kHost;
  std::string pod_bridge = "tsr0";
  std::string netns_dir = "/run/netns";  // the pods' network namespace files, as `ip netns` keeps them
  // Every node's pod ranges together (the server's --cluster-cidr, as
  // kube-proxy is told it): pods' traffic beyond it is masqueraded.
  std::string cluster_cidr = "10.244.0.0/16";
};

class Agent {
 public:
  // Discovers the GPUs, registers the Node and its Lease, adopts the pods of a
  // previous run, and starts the threads.
  static Result<std::unique_ptr<Agent>> Start(AgentOptions options);
  ~Agent();
  // Stops the threads; running pods keep running (a restarted agent adopts them).
  void Stop();

  // How the GPUs were found, for the user: "no NVIDIA driver ...: simulated inventory 8xH100-80GB".
  const std::string& inventory_summary() const;
  const std::string& node_name() const;

 private:
  struct Impl;
  explicit Agent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
