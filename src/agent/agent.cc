#include "agent/agent.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mount.h>
#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "agent/cdi.h"
#include "agent/container_spec.h"
#include "agent/fence.h"
#include "agent/image_ref.h"
#include "agent/image_store.h"
#include "agent/informer.h"
#include "agent/log_files.h"
#include "sweep/metric_collector.h"
#include "sweep/observations.h"
#include "agent/log_server.h"
#include "agent/mounts.h"
#include "agent/node_registration.h"
#include "agent/notebook_activity.h"
#include "agent/pod_launch.h"
#include "agent/pod_network.h"
#include "agent/pod_volumes.h"
#include "agent/probes.h"
#include "agent/process_runner.h"
#include "agent/run_tool.h"
#include "agent/service_env.h"
#include "auth/pod_security.h"
#include "auth/service_account_tokens.h"
#include "net/cluster_view.h"
#include "net/nftables.h"
#include "net/node_ruleset.h"
#include "common/atomic_file.h"
#include "common/check.h"
#include "common/node_annotations.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kLeaseNamespace = "tessera-node-lease";
constexpr Duration kMaxBackoff = Duration::Seconds(300);
// The kubelet's image pull back-off: 10 s, doubling up to 5 minutes.
constexpr Duration kImagePullBackoff = Duration::Seconds(10);

// A container's PID 1, once runc has written it to <bundle>/init.pid.
std::optional<ProcessIdentity> ContainerInit(const std::string& bundle) {
  std::ifstream in(fs::path(bundle) / "init.pid");
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  auto ticks = ReadStartTicks(pid);
  if (!ticks) return std::nullopt;
  return ProcessIdentity{.pid = pid, .start_ticks = *ticks};
}

// Whether `path` is a mount point (on another device than its parent).
// "docker.io/library/busybox@sha256:...": what the kubelet shows as a container's imageID.
std::string ImageId(const ImageInfo& image) {
  auto ref = ParseImageRef(image.name);
  return (ref ? ref->Name() : image.name) + "@" + image.manifest_digest;
}
constexpr Duration kDefaultGrace = Duration::Seconds(30);
// A checkpoint a pod reports (docs/agent.md "Checkpoints"): the file it writes
// or touches in its checkpoint directory, and the Pod annotation the agent
// sets to that file's time. The annotation's name is the Workload's too
// (kLastCheckpointAnnotation in api/convert.h, which the agent may not include).
constexpr const char* kCheckpointFile = ".tessera-checkpoint";
constexpr const char* kLastCheckpointAnnotation = "tessera.dev/last-checkpoint";
// A trial's observations on its Pod (server/controllers/sweep_controller.h reads them).
constexpr const char* kMetricsAnnotation = "tessera.dev/metrics";
constexpr int64_t kMetricsIntervalMs = 2000;
// A Sweep's trial pod (labelled tessera.dev/trial by the sweep controller): the
// only pods whose output is read for metric lines.
bool SweepTrial(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  const json labels = meta.is_object() ? meta.value("labels", json::object()) : json::object();
  return labels.is_object() && labels.contains("tessera.dev/trial");
}
// A pod's token lives an hour and is renewed at 80 % of that, as the kubelet renews projected tokens.
constexpr Duration kPodTokenLifetime = Duration::Seconds(3600);
constexpr Duration kPodTokenRenewAfter = Duration::Seconds(2880);
// A namespace read for a start is used for 5 s: its uid block does not change, but
// its pod security level may be raised, and the next starts must see that soon.
constexpr Duration kNamespaceFresh = Duration::Seconds(5);
constexpr int64_t kKeysRefetchMs = 10'000;

// Reads the whole of a small file, without its trailing newline.
Result<std::string> ReadSecretFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Status::IoError(fmt::format("cannot read {}: {}", path, std::strerror(errno))));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return Err(Status::InvalidArgument(fmt::format("{} is empty: it should hold the node's token", path)));
  return text;
}

// Writes `text` to `path` (replacing it whole), owned by uid:gid and readable by them alone.
Status WriteOwnedFile(const fs::path& path, const std::string& text, uid_t uid, gid_t gid) {
  return WriteFileAtomically(path.string(), text, 0400, {.owner = std::pair{uid, gid}});
}

// A directory that pod uid:gid alone may use.
void OwnDirectory(const fs::path& dir, uid_t uid, gid_t gid, mode_t mode) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (::geteuid() == 0 && ::chown(dir.c_str(), uid, gid) != 0) {
    spdlog::warn("cannot give {} to uid {}: {}", dir.string(), uid, std::strerror(errno));
  }
  ::chmod(dir.c_str(), mode);
}

std::string PodPath(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

std::string Uid(const json& obj) { return obj["metadata"].value("uid", ""); }

bool Terminal(const json& pod) {
  const std::string phase = pod.value("status", json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

// Sleeps until `deadline` or until Stop; false when stopping.
class Stopper {
 public:
  bool SleepUntil(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return !cv_.wait_until(lock, deadline, [this] { return stop_; });
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  bool stopped() {
    std::lock_guard lock(mu_);
    return stop_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace

struct Agent::Impl {
  explicit Impl(AgentOptions o) : options(std::move(o)), runner(ProcessRunnerOptions{.cgroup_owner = options.node_name}) {}

  AgentOptions options;
  GpuInventory inventory;
  std::string summary;
  Stopper stopper;

  // The Pods bound to this node, as the watcher last saw them (uid -> pod), and
  // what changed since the loop last looked: the loop's work per pass follows
  // the changes, not the number of pods the node has run.
  std::mutex pods_mu;
  std::condition_variable pods_cv;
  std::map<std::string, json> pods;
  std::set<std::string> changed_uids;  // added, modified or deleted
  bool relisted = false;               // all of `pods` was replaced
  bool pods_listed = false;
  uint64_t pods_version = 0;

  // Heartbeat: when the Lease was last renewed (steady clock, ms), 0 = never.
  std::atomic<int64_t> last_renewed_ms{0};

  // The loop's own state.
  struct Run {
    json pod;                                   // as last seen
    std::optional<RunningProcess> process;      // while a process runs
    int restarts = 0;
    std::optional<Timestamp> restart_at;        // OnFailure back-off
    std::optional<Timestamp> started_at;
    bool terminating = false;
    bool done = false;                          // reached a terminal phase
    json status;                                // what the API should show
    bool unreported = false;                    // status changed since the API last took it
    std::optional<ProcessIdentity> identity;    // of the last process, kept after it ends
    std::optional<LogPump> logs;                // copies the pod's output into its log files
    // The pod's ServiceAccount token file, while it has one: renewed after this.
    std::optional<Timestamp> token_renew_at;
    std::pair<uint32_t, uint32_t> runs_as{0, 0};
    // A container pod (its container names an image): its image, as pulled, and runc's container.
    struct Container {
      std::string id;        // runc's
      std::string bundle;    // <pod dir>/container: config.json, rootfs (the overlay), init.pid
      std::string image;     // as the pod names it
      std::string image_id;  // canonical@digest
      std::optional<ProcessIdentity> init;  // the container's PID 1, once runc has written it
    };
    std::optional<Container> container;
    // Its image pull: the store's pull generation when it asked, the failures so far, the back-off.
    struct Pull {
      uint64_t asked_at_generation = 0;
      int failures = 0;
      std::optional<Timestamp> retry_at;
    };
    std::optional<Pull> pull;
    // Its network namespace and address (pod network kBridge; not hostNetwork),
    // from its first start until it ends: restarts keep them, as a sandbox's.
    std::optional<PodAttachment> net;
    // The mtime (whole seconds) of its checkpoint file that the Pod's
    // annotation last took: the file is reported again only once it changes.
    std::optional<int64_t> checkpoint_seen_s;
    // Its `tessera-metric` lines (a Sweep's trial: sweep/metric_line.h), read
    // from its log files as they grow, and what the Pod's tessera.dev/metrics
    // annotation last took (ObservationsToJson, compact).
    std::optional<LogFollower> metrics_follower;
    sweep::MetricCollector metrics;
    std::string metrics_reported;
    // Its container's probes (probes.h), from the time it runs until it ends;
    // a result of another run of it (another generation) is dropped.
    std::optional<ProbeState> probe_state;
    uint64_t probe_generation = 0;
    bool probes_checked = false;  // this run's probes were looked for
    std::string kill_message;     // why the agent killed it: "Liveness probe failed: ..."
    // Its probes' failures as the kubelet's Warning events (reason Unhealthy),
    // one Event per message with a count, as Kubernetes' event correlator
    // aggregates them; sent by ReportProbeEvents.
    struct ProbeEvent {
      std::string name;  // the Event's, once created
      std::string first, last;
      int64_t count = 0, sent = 0;
    };
    std::map<std::string, ProbeEvent> probe_events;  // by message
  };
  std::map<std::string, Run> runs;  // by pod uid
  // Container images (image_store.h), pulled by one worker off the loop.
  std::unique_ptr<ImageStore> images;
  struct PullState {
    bool in_flight = false;
    uint64_t generation = 0;            // pulls of this image finished
    std::optional<ImageInfo> image;     // what the last one pulled
    std::optional<Status> error;        // or why it failed
  };
  std::mutex pulls_mu;
  std::map<std::string, PullState> pulls;  // by canonical reference
  std::atomic<bool> images_changed{true};  // the Node's status.images is to be written
  std::unique_ptr<boost::asio::thread_pool> puller;
  std::map<std::string, json> current;  // the loop's copy of `pods`
  ProcessRunner runner;  // its cgroups are this node's (several agents may share a host)
  bool fenced = false;

  // GPU utilisation, published every options.usage_interval by the loop thread.
  std::unique_ptr<SimulatedGpuSampler> sampler;  // with a simulated inventory
  int64_t next_usage_ms = 0;
  NotebookActivity notebooks;  // notebook pods' kernel activity, asked with each usage sample
  // Running pods' checkpoint files, looked at every options.checkpoint_interval.
  int64_t next_checkpoint_ms = 0;
  std::string checkpoint_error;  // the last refusal logged, so that it is logged once
  // Running pods' metric lines, read every kMetricsInterval.
  int64_t next_metrics_ms = 0;
  // The directories of pods gone from this node, removed after options.log_retention.
  int64_t next_directory_gc_ms = 0;
  bool pods_seen = false;                 // the loop has had the server's list of this node's pods
  std::set<std::string> gc_failed;        // directories whose removal failed (said once each)

  // The server's signing keys and issuer, for the log endpoint's check of the
  // server's calls (fetched at start and again for a key not among them).
  std::mutex keys_mu;
  KeySet server_keys;
  std::string server_issuer;
  int64_t keys_fetched_ms = 0;
  // Namespaces' uid blocks, as last read (the loop's).
  struct NamespaceEntry {
    std::optional<UidRange> range;
    std::map<std::string, std::string> labels;  // its pod security level (auth/pod_security.h)
    Timestamp read;
  };
  std::map<std::string, NamespaceEntry> namespaces;
  std::optional<std::pair<uint32_t, uint32_t>> pod_user;  // --pod-user

  // The pod network (kBridge): opened once the Node has its podCIDR. The
  // informers keep the Nodes (routes to their pod ranges) and every pod's
  // network view (a gang's rank 0, the policies' peers).
  std::unique_ptr<PodNetwork> network;
  int64_t network_tried_ms = 0;
  Status network_error = Status::Unavailable("not set up yet");
  std::unique_ptr<Informer> nodes_informer;
  std::unique_ptr<Informer> pods_informer;
  std::unique_ptr<Informer> namespaces_informer;
  std::unique_ptr<Informer> policies_informer;
  std::unique_ptr<Informer> services_informer;
  std::unique_ptr<Informer> slices_informer;
  uint64_t routes_version = 0;
  // The node's nftables rules (NetworkPolicy), from the informers and this
  // node's pods: made again when either changed, applied when the text did.
  uint64_t local_net_version = 0;  // pods attached or detached
  std::array<uint64_t, 6> rules_inputs{};
  std::string applied_rules;
  std::string rules_error;          // why the rules could not be programmed ("" when they were)
  std::string published_rules_error = "-";
  std::string pod_server;           // TESSERA_SERVER as the pods reach it

  // Runs the pods' probes off the loop (made when a pod first has one).
  std::unique_ptr<ProbeWorker> prober;
  // Where a command runs in each running pod, for the exec endpoint
  // (exec_server.h), which serves on the log server's threads: written by the
  // loop each pass.
  struct ExecEntry {
    std::string ns, name;
    PodExecTarget target;
  };
  std::mutex exec_mu;
  std::map<std::string, ExecEntry> exec_targets;  // by pod uid
  Result<PodExecTarget> ExecTarget(const std::string& ns, const std::string& name, const std::string& uid) {
    std::lock_guard lock(exec_mu);
    auto it = exec_targets.find(uid);
    if (it == exec_targets.end() || it->second.ns != ns || it->second.name != name) {
      return Err(Status::NotFound(fmt::format("pod {}/{} (uid {}) is not running on node {}", ns, name, uid,
                                              options.node_name)));
    }
    return it->second.target;
  }
  PodExecTarget ExecTargetOf(const Run& run) const {
    PodExecTarget target;
    if (run.container) {
      target.exec_prefix = {options.runc, "--root", RuncRoot(), "exec", run.container->id};
    } else if (run.process) {
      target.process = PodExecTarget::Process{.pid = run.process->identity.pid, .cgroup_dirs = run.process->cgroup_dirs};
    }
    return target;
  }

  std::unique_ptr<ApiClient> watch_client;  // Stop cancels its stream
  std::unique_ptr<LogServer> log_server;
  std::thread watcher, heartbeat, loop;

  static int64_t SteadyMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  LogFileSet PodLogs(const json& pod) const { return LogFileSet{.dir = PodDir(pod)}; }
  std::string StatePath() const { return (fs::path(options.data_dir) / "agent-state.json").string(); }
  std::string PodDir(const json& pod) const {
    return PodDirectory((fs::path(options.data_dir) / "pods").string(), pod["metadata"].value("namespace", ""),
                        pod["metadata"].value("name", ""), Uid(pod));
  }
  // TESSERA_CHECKPOINT_DIR: <checkpoint root>/<namespace>/<workload, or the pod's name>,
  // shared by the workload's pods and kept across its restarts and preemptions.
  fs::path CheckpointDir(const json& pod) const {
    const fs::path root = options.checkpoint_root.empty() ? fs::path(options.data_dir) / "checkpoints"
                                                          : fs::path(options.checkpoint_root);
    const json meta = pod.value("metadata", json::object());
    const json labels = meta.value("labels", json::object());
    const std::string workload = labels.is_object() ? labels.value("tessera.dev/workload", "") : "";
    return root / SafePathPart(meta.value("namespace", "")) /
           SafePathPart(workload.empty() ? meta.value("name", "") : workload);
  }

  Status Register();
  Status FetchServerKeys();
  Status AuthorizeServerCall(std::string_view token);
  Status RenewLease(ApiClient& client);
  void WatchPods();
  void Heartbeat();
  void Loop();
  void Adopt();
  // False (with a warning logged) when the file could not be written.
  bool SaveState();
  void Reconcile(ApiClient& client);
  // A pod's start in two halves, so that a pass starts all its pods with one
  // ProcessRunner::StartAll: its directories, log pump and process spec (or,
  // when it cannot run, its Failed status and nullopt); then the outcome.
  // A third outcome: not yet (run.restart_at is set), when what it needs from
  // the server (its namespace, its token) could not be had just now.
  std::optional<ProcessSpec> PrepareStart(ApiClient& client, Run& run, const std::map<std::string, json>& all);
  // The namespace's uid block, read from the server at most once a minute.
  Result<std::optional<UidRange>> NamespaceUidRange(ApiClient& client, const std::string& ns);
  // Writes (or renews) the pod's ServiceAccount token into <pod dir>/serviceaccount/token.
  Status WritePodToken(ApiClient& client, Run& run);
  std::string TokenPath(const json& pod) const { return (fs::path(PodDir(pod)) / "serviceaccount" / "token").string(); }
  std::vector<std::string> HiddenPaths() const;
  // A container pod's image, when the store has it as its pull policy asks;
  // else nullopt, with the pod's waiting status (ContainerCreating,
  // ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName) and
  // when to look again.
  std::optional<ImageInfo> PrepareImage(ApiClient& client, Run& run, Timestamp now);
  // The registry credentials of the pod's imagePullSecrets (kubernetes.io/
  // dockerconfigjson), merged into <pod dir>/pull-auth.json for skopeo; "" when
  // it names none. A secret that is missing or of another type is skipped, as
  // the kubelet does (the pull may then fail: "unauthorized").
  std::string PullAuthFile(ApiClient& client, Run& run);
  void Waiting(Run& run, const std::string& reason, const std::string& message);
  // The runc bundle of a container pod (its overlay root and config.json) and
  // the process that runs it; InvalidArgument with the reason when it cannot.
  // NotFound while a volume's source is missing (the pod waits).
  Result<ProcessSpec> ContainerProcess(Run& run, const ImageInfo& image, const PodContainer& container,
                                       const std::string& checkpoint, const std::string& token_file,
                                       const PodSources& sources);
  // After runc has ended (or was killed): its container's processes killed,
  // runc's state deleted; with `done`, the overlay unmounted too.
  void CleanUpContainer(Run& run, bool done);
  std::string RuncRoot() const { return (fs::path(options.data_dir) / "runc").string(); }
  // runc's cgroup of container `id` (the pod's limits): one per node and pod.
  std::string ContainerCgroupsPath(const std::string& id) const {
    return fmt::format("/tessera-{}_{}", SafePathPart(options.node_name), id);
  }
  // The CDI spec of the node's GPUs (cdi.h), kept for container pods and
  // written to <data dir>/cdi/nvidia.com-gpu.json.
  Status WriteCdiSpec();
  json cdi_spec;
  // runc's state of container `id`, left when runc was killed before it could delete it.
  void DeleteRuncState(const std::string& id);
  // runc's state of containers no adopted pod runs (runc --keep leaves a
  // container's state until the agent deletes it; an agent killed just then leaves it).
  void DeleteStaleContainers();
  void PublishImages(ApiClient& client);
  void Started(Run& run, Result<RunningProcess> started, Timestamp now);
  // Its status once its process (a container pod: its container) runs.
  void SetRunning(Run& run, Timestamp now);
  // Starts the probes of a running pod's container (the first time it is seen
  // running), takes the results of those that finished, and submits those due;
  // a failed liveness or startup probe kills the container. Never blocks.
  void RunProbes(Timestamp now);
  void StartProbes(Run& run, Timestamp started_at);
  // Its Ready and ContainersReady conditions and its container's ready and
  // started, from its probes (ready once running when it has none).
  void ApplyReadiness(Run& run, Timestamp now);
  // Records how the process ended (marking the run unreported), or, for one
  // that never started, readies the pod to be started again.
  void OnExit(Run& run, const ProcessExit& exit, Timestamp now);
  void Report(ApiClient& client, Run& run);
  // Its probes' failures not yet sent as Events (Run::probe_events).
  void ReportProbeEvents(ApiClient& client, Run& run);
  uint64_t event_sequence = 0;
  void PublishUsage(ApiClient& client);
  // Sets the annotation tessera.dev/last-checkpoint of each running pod whose
  // checkpoint file changed since the Pod last took it: one stat per running pod.
  void ReportCheckpoints(ApiClient& client);
  // Reads the new output of each running trial pod for metric lines and sets the
  // annotation tessera.dev/metrics when its observations changed (at most every
  // metrics_interval per pod; and once more, whole, when the pod ends, before its
  // end is reported).
  void ReportMetrics(ApiClient& client);
  void ReportPodMetrics(ApiClient& client, Run& run, bool final);
  // Removes the directories of pods this node no longer has, once they are
  // older than options.log_retention (log_server.h CollectPodDirectories).
  void CollectDirectories();
  bool Bridged(const json& pod) const {
    return options.pod_network == AgentOptions::PodNetworkMode::kBridge &&
           !pod.value("spec", json::object()).value("hostNetwork", false);
  }
  // Opens the pod network once the Node has its podCIDR (asked at most once a
  // second); the error says what it waits for.
  Status EnsureNetwork(ApiClient& client);
  // The routes to the other nodes' pod ranges, when the Nodes changed.
  void SyncRoutes();
  // The pod's namespace and address, freed when it has ended.
  void ReleaseNetwork(Run& run);
  // NetworkPolicy: the node's ruleset made from the informers and its pods,
  // applied when it changed; when it cannot be, every pod's new traffic is
  // dropped (fail closed) and the Node's annotation says why.
  void SyncRules(ApiClient& client);
  // A server on loopback (tessera up) is reached by pods at their gateway:
  // DNAT to it, with route_localnet on the bridge. Returns the pods' URL.
  std::string PodFacingServer();
  // MASTER_ADDR of a gang's pod: its rank 0's pod IP (kBridge) or node address;
  // nullopt while rank 0 has none yet.
  std::optional<std::string> MasterAddress(const Run& run, const std::map<std::string, json>& all);
  std::string PodIp(const Run& run) const { return run.net ? FormatIpv4(run.net->ip) : options.address; }
  // How its container's previous run ended (containerStatuses[0].lastState),
  // kept while it runs again, as Kubernetes shows it; null when none.
  static json LastState(const Run& run) {
    if (run.restarts == 0 || !run.status.is_object()) return json();
    const auto cs = run.status.find("containerStatuses");
    if (cs == run.status.end() || !cs->is_array() || cs->empty() || !(*cs)[0].is_object()) return json();
    return (*cs)[0].value("lastState", json());
  }
  // This node's nftables table of `kind`: one per node, so that agents sharing
  // a network namespace (nodes on one host) keep one each.
  std::string NftTable(std::string_view kind) const {
    const std::string name = fmt::format("{}-{}", kind, options.node_name);
    return name.size() <= 64 ? name : fmt::format("{}-{}", kind, HostVethName(options.node_name));
  }
};

Status Agent::Impl::Register() {
  Node node;
  node.name = options.node_name;
  node.cpu_milli = options.cpu_milli > 0 ? options.cpu_milli : static_cast<int64_t>(sysconf(_SC_NPROCESSORS_ONLN)) * 1000;
  node.memory_bytes = options.memory_bytes > 0 ? options.memory_bytes
                                               : static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  node.gpus = inventory.devices;
  node.labels.Set("tessera.dev/flavor", "default");
  for (const auto& [k, v] : options.labels) node.labels.Set(k, v);
  json obj = NodeObject(node, inventory.simulated(), FormatRfc3339(SystemNow()));
  obj["status"]["addresses"] = json::array({{{"type", "InternalIP"}, {"address", options.address}},
                                            {{"type", "Hostname"}, {"address", options.node_name}}});
  // Where the server fetches pod logs from (a kubelet's endpoint, in Kubernetes' field).
  if (log_server) obj["status"]["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", log_server->port()}}}};
  ApiClient client(options.server, options.token, options.tls);
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("POST", "/api/v1/nodes", obj.dump()));
  if (r.status == 409) {  // registered before: refresh labels and annotations, then status
    // The server gave the Node its pod range (spec.podCIDR), which may not
    // change once set: the PUT carries it over from the stored Node, with
    // that Node's resourceVersion, and reads again if the Node changed meanwhile.
    const std::string path = "/api/v1/nodes/" + node.name;
    for (int attempt = 0; attempt < 5; ++attempt) {
      ASSIGN_OR_RETURN(ApiResponse got, client.Request("GET", path));
      if (got.status != 200) {
        r = std::move(got);
        break;
      }
      const json stored = json::parse(got.body, nullptr, false);
      json body = obj;
      if (stored.is_object() && stored.contains("spec") && stored["spec"].is_object()) {
        for (const char* field : {"podCIDR", "podCIDRs"}) {
          if (stored["spec"].contains(field)) body["spec"][field] = stored["spec"][field];
        }
      }
      if (stored.is_object() && stored.contains("metadata") && stored["metadata"].is_object() &&
          stored["metadata"].contains("resourceVersion")) {
        body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"];
      }
      ASSIGN_OR_RETURN(r, client.Request("PUT", path, body.dump()));
      if (r.status != 409) break;
    }
    if (r.status / 100 == 2) {
      ASSIGN_OR_RETURN(r, client.Request("PUT", "/api/v1/nodes/" + node.name + "/status", obj.dump()));
    }
  }
  if (r.status / 100 != 2) {
    return Status::Unavailable(fmt::format("registering node {}: HTTP {}: {}", node.name, r.status, r.body));
  }
  return RenewLease(client);
}

Status Agent::Impl::RenewLease(ApiClient& client) {
  const std::string now = FormatRfc3339(SystemNow());
  const int64_t seconds = std::max<int64_t>(1, options.lease_duration.ms / 1000);
  json lease{{"apiVersion", "coordination.k8s.io/v1"},
             {"kind", "Lease"},
             {"metadata", {{"name", options.node_name}, {"namespace", kLeaseNamespace}}},
             {"spec", {{"holderIdentity", options.node_name}, {"leaseDurationSeconds", seconds}, {"renewTime", now}}}};
  const std::string path = fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}", kLeaseNamespace, options.node_name);
  const int64_t sent = SteadyMs();
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("PUT", path, lease.dump()));
  if (r.status == 404) {
    ASSIGN_OR_RETURN(r, client.Request("POST", fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", kLeaseNamespace),
                                       lease.dump()));
    if (r.status == 404) {  // the namespace itself is missing (first agent of a fresh server)
      json ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kLeaseNamespace}}}};
      ASSIGN_OR_RETURN(ApiResponse created, client.Request("POST", "/api/v1/namespaces", ns.dump()));
      (void)created;
      ASSIGN_OR_RETURN(r, client.Request("POST", fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", kLeaseNamespace),
                                         lease.dump()));
    }
  }
  if (r.status / 100 != 2) return Status::Unavailable(fmt::format("renewing lease: HTTP {}: {}", r.status, r.body));
  // The fencing clock counts from when the renewal was sent: the server's renewTime is no earlier.
  last_renewed_ms = sent;
  RecordLeaseRenewal(options.data_dir, SystemNow());
  return Status::Ok();
}

Status Agent::Impl::FetchServerKeys() {
  ApiClient client(options.server, options.token, options.tls, std::chrono::seconds(10));
  ASSIGN_OR_RETURN(ApiResponse discovery, client.Request("GET", "/.well-known/openid-configuration"));
  if (discovery.status != 200) {
    return Status::Unavailable(fmt::format("reading the server's issuer: HTTP {}: {}", discovery.status, discovery.body));
  }
  const json doc = json::parse(discovery.body, nullptr, false);
  if (!doc.is_object() || !doc.contains("issuer") || !doc["issuer"].is_string()) {
    return Status::Unavailable("the server's /.well-known/openid-configuration names no issuer");
  }
  ASSIGN_OR_RETURN(ApiResponse jwks, client.Request("GET", "/openid/v1/jwks"));
  if (jwks.status != 200) return Status::Unavailable(fmt::format("reading the server's keys: HTTP {}", jwks.status));
  ASSIGN_OR_RETURN(KeySet keys, KeySet::FromJwks(jwks.body));
  std::lock_guard lock(keys_mu);
  server_keys = std::move(keys);
  server_issuer = doc["issuer"].get<std::string>();
  keys_fetched_ms = SteadyMs();
  return Status::Ok();
}

Status Agent::Impl::AuthorizeServerCall(std::string_view token) {
  auto verify = [&] {
    std::lock_guard lock(keys_mu);
    return VerifyAgentCall(token, server_keys, server_issuer, options.node_name, SystemNow());
  };
  Status s = verify();
  if (s.ok()) return s;
  {
    std::lock_guard lock(keys_mu);
    if (SteadyMs() - keys_fetched_ms < kKeysRefetchMs) return s;
  }
  // The server may have a new key: look once more.
  if (!FetchServerKeys().ok()) return s;
  return verify();
}

Result<std::optional<UidRange>> Agent::Impl::NamespaceUidRange(ApiClient& client, const std::string& ns) {
  const Timestamp now = SystemNow();
  if (auto it = namespaces.find(ns); it != namespaces.end() && it->second.range && now - it->second.read < kNamespaceFresh) {
    return it->second.range;
  }
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("GET", "/api/v1/namespaces/" + ns));
  if (r.status != 200) return Err(Status::Unavailable(fmt::format("reading namespace {}: HTTP {}", ns, r.status)));
  const json obj = json::parse(r.body, nullptr, false);
  std::optional<UidRange> range;
  if (obj.is_object()) {
    const json annotations = obj.value("metadata", json::object()).value("annotations", json::object());
    if (auto it = annotations.find(kUidRangeAnnotation); it != annotations.end() && it->is_string()) {
      auto parsed = ParseUidRange(it->get<std::string>());
      if (parsed) {
        range = *parsed;
      } else {
        spdlog::warn("agent {}: namespace {}: {}", options.node_name, ns, parsed.error().message());
      }
    }
  }
  namespaces[ns] = NamespaceEntry{.range = range, .labels = obj.is_object() ? LabelsOf(obj) : std::map<std::string, std::string>{},
                                  .read = now};
  return range;
}

Status Agent::Impl::WritePodToken(ApiClient& client, Run& run) {
  const json& pod = run.pod;
  const json& meta = pod["metadata"];
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  std::string sa = pod["spec"].value("serviceAccountName", "");
  if (sa.empty()) sa = "default";
  const json request{{"apiVersion", "authentication.k8s.io/v1"},
                     {"kind", "TokenRequest"},
                     {"spec",
                      {{"expirationSeconds", kPodTokenLifetime.seconds()},
                       {"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", name}, {"uid", Uid(pod)}}}}}};
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("POST", fmt::format("/api/v1/namespaces/{}/serviceaccounts/{}/token", ns, sa),
                                                 request.dump()));
  const json answer = json::parse(r.body, nullptr, false);
  if (r.status == 404 && answer.is_object() && answer.value("details", json::object()).value("kind", "") == "serviceaccounts") {
    return Status::NotFound(fmt::format("the pod's service account {}/{} does not exist: create it, or leave "
                                        "spec.serviceAccountName unset to use the namespace's default one",
                                        ns, sa));
  }
  if (r.status != 201 || !answer.is_object()) {
    return Status::Unavailable(fmt::format("requesting the pod's token: HTTP {}: {}", r.status,
                                           answer.is_object() ? answer.value("message", r.body) : r.body));
  }
  const std::string token = answer.value("status", json::object()).value("token", "");
  const fs::path dir = fs::path(TokenPath(pod)).parent_path();
  // The directory is root's, readable by the pod's group: the pod reads its
  // token but cannot put anything where the agent (root) writes.
  OwnDirectory(dir, 0, run.runs_as.second, 0750);
  RETURN_IF_ERROR(WriteOwnedFile(dir / "token", token, run.runs_as.first, run.runs_as.second));
  run.token_renew_at = SystemNow() + kPodTokenRenewAfter;
  return Status::Ok();
}

std::vector<std::string> Agent::Impl::HiddenPaths() const {
  std::vector<std::string> out{options.data_dir};
  if (!options.checkpoint_root.empty()) {
    out.push_back(fs::absolute(options.checkpoint_root).lexically_normal().string());
  }
  for (const std::string& p : options.hidden_paths) out.push_back(fs::absolute(p).lexically_normal().string());
  for (std::string& p : out) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  }
  return out;
}

void Agent::Impl::Heartbeat() {
  pthread_setname_np(pthread_self(), "agent-heartbeat");
  ApiClient client(options.server, options.token, options.tls);
  const auto period = std::chrono::milliseconds(std::max<int64_t>(100, options.lease_duration.ms / 4));
  bool failing = false;
  while (stopper.SleepUntil(std::chrono::steady_clock::now() + period)) {
    Status s = RenewLease(client);
    if (!s.ok() && !failing) spdlog::warn("agent {}: {}", options.node_name, s.message());
    if (s.ok() && failing) spdlog::info("agent {}: lease renewed again", options.node_name);
    failing = !s.ok();
  }
}

void Agent::Impl::WatchPods() {
  pthread_setname_np(pthread_self(), "agent-watch");
  ApiClient& client = *watch_client;
  const std::string selector = "fieldSelector=spec.nodeName%3D" + options.node_name;
  while (!stopper.stopped()) {
    // List, then watch from the list's revision; on any break, list again.
    auto listed = client.Request("GET", "/api/v1/pods?" + selector);
    if (!listed || listed->status != 200) {
      stopper.SleepUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
      continue;
    }
    json list = json::parse(listed->body, nullptr, false);
    std::string revision = list.is_object() ? list["metadata"].value("resourceVersion", "0") : "0";
    {
      std::lock_guard lock(pods_mu);
      pods.clear();
      for (const json& p : list.value("items", json::array())) {
        pods[Uid(p)] = p;  // the fieldSelector returns only this node's
      }
      pods_listed = true;
      relisted = true;
      changed_uids.clear();
      ++pods_version;
    }
    pods_cv.notify_all();
    Status s = client.Stream("/api/v1/pods?watch=true&resourceVersion=" + revision + "&" + selector,
                             [&](const std::string& line) {
                               json e = json::parse(line, nullptr, false);
                               if (!e.is_object() || !e.contains("object")) return !stopper.stopped();
                               const json& p = e["object"];
                               {
                                 std::lock_guard lock(pods_mu);
                                 if (e.value("type", "") == "DELETED") {
                                   pods.erase(Uid(p));
                                 } else {
                                   pods[Uid(p)] = p;
                                 }
                                 changed_uids.insert(Uid(p));
                                 ++pods_version;
                               }
                               pods_cv.notify_all();
                               return !stopper.stopped();
                             });
    if (!stopper.stopped()) stopper.SleepUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
  }
}

bool Agent::Impl::SaveState() {
  json state{{"node", options.node_name}, {"pods", json::object()}};
  for (const auto& [uid, run] : runs) {
    // Running, or ended with its end not yet taken by the API (the server was
    // unreachable): a restarted agent finds the process gone and reports the end
    // from the pod's exit status file, instead of starting the pod again.
    const bool owed = run.unreported && !run.terminating && run.identity;
    if (!run.process && !owed) continue;
    const ProcessIdentity& id = run.process ? run.process->identity : *run.identity;
    state["pods"][uid] = {{"namespace", run.pod["metadata"].value("namespace", "")},
                          {"name", run.pod["metadata"].value("name", "")},
                          {"pid", id.pid},
                          {"startTicks", id.start_ticks},
                          {"restarts", run.restarts},
                          {"startedAt", run.started_at ? run.started_at->ms : 0}};
    if (run.container) {
      json c{{"id", run.container->id}, {"image", run.container->image}, {"imageID", run.container->image_id}};
      if (run.container->init) c["init"] = {{"pid", run.container->init->pid}, {"startTicks", run.container->init->start_ticks}};
      state["pods"][uid]["container"] = std::move(c);
    }
    if (run.net) {
      state["pods"][uid]["network"] = {
          {"netns", run.net->netns_path}, {"ip", FormatIpv4(run.net->ip)}, {"veth", run.net->host_veth}};
    }
  }
  if (Status s = WriteFileAtomically(StatePath(), state.dump(2), 0600); !s.ok()) {
    spdlog::warn("agent {}: {}", options.node_name, s.message());
    return false;
  }
  return true;
}

// Takes over the processes a previous agent left running; the ones that ended
// meanwhile are reported as such (their exit code went to their old parent).
void Agent::Impl::Adopt() {
  std::ifstream in(StatePath());
  if (!in) return;
  json state = json::parse(in, nullptr, false);
  if (!state.is_object()) return;
  const json saved = state.value("pods", json::object());
  for (const auto& [uid, p] : saved.items()) {
    Run run;
    run.pod = {{"metadata", {{"uid", uid}, {"namespace", p.value("namespace", "")}, {"name", p.value("name", "")}}},
               {"spec", json::object()}};
    run.restarts = p.value("restarts", 0);
    if (const int64_t at = p.value("startedAt", int64_t{0}); at > 0) run.started_at = Timestamp::FromMillis(at);
    const ProcessIdentity id{.pid = p.value("pid", 0), .start_ticks = p.value("startTicks", uint64_t{0})};
    if (const json c = p.value("container", json()); c.is_object()) {
      run.container = Run::Container{.id = c.value("id", ""),
                                     .bundle = (fs::path(PodDir(run.pod)) / "container").string(),
                                     .image = c.value("image", ""),
                                     .image_id = c.value("imageID", "")};
      if (const json init = c.value("init", json()); init.is_object()) {
        run.container->init = ProcessIdentity{.pid = init.value("pid", 0), .start_ticks = init.value("startTicks", uint64_t{0})};
      }
    }
    if (const json n = p.value("network", json()); n.is_object()) {
      if (auto ip = ParseIpv4Cidr(n.value("ip", "") + "/32")) {
        run.net = PodAttachment{.netns_path = n.value("netns", ""), .ip = ip->network, .host_veth = n.value("veth", "")};
      }
    }
    const std::string exit_status = (fs::path(PodDir(run.pod)) / "exit-status").string();
    auto adopted = runner.Adopt(id, exit_status);
    if (adopted) {
      const LogFileSet log_files = PodLogs(run.pod);
      if (auto writer = RotatingLogWriter::Open(log_files)) {
        if (auto pump = LogPump::Open(log_files.FifoPath(), std::move(*writer))) run.logs.emplace(std::move(*pump));
      }
      spdlog::info("agent {}: adopted pod {}/{} ({})", options.node_name, p.value("namespace", ""), p.value("name", ""),
                   id.ToString());
      run.process = *adopted;
      run.identity = id;
    } else {
      const ProcessExit exit = ReadExitStatusFile(exit_status, id);
      if (exit.cause != ProcessExit::Cause::kNotStarted) {
        spdlog::info("agent {}: pod {}/{} ended while no agent ran", options.node_name, p.value("namespace", ""),
                     p.value("name", ""));
      }
      run.identity = id;
      OnExit(run, exit, SystemNow());
      CleanUpContainer(run, run.done);
    }
    runs[uid] = std::move(run);
  }
}

Status Agent::Impl::EnsureNetwork(ApiClient& client) {
  if (network) return Status::Ok();
  if (SteadyMs() - network_tried_ms < 1000) return network_error;
  network_tried_ms = SteadyMs();
  network_error = [&]() -> Status {
    ASSIGN_OR_RETURN(ApiResponse r, client.Request("GET", "/api/v1/nodes/" + options.node_name));
    const json node = r.status == 200 ? json::parse(r.body, nullptr, false) : json();
    const json spec = node.is_object() ? node.value("spec", json::object()) : json::object();
    const std::string cidr = spec.is_object() ? spec.value("podCIDR", "") : "";
    if (cidr.empty()) {
      return Status::Unavailable(fmt::format(
          "node {} has no spec.podCIDR yet (the server gives each node one from its --cluster-cidr)", options.node_name));
    }
    ASSIGN_OR_RETURN(Ipv4Cidr range, ParseIpv4Cidr(cidr));
    ASSIGN_OR_RETURN(network, PodNetwork::Open({.pod_cidr = range, .bridge = options.pod_bridge, .netns_dir = options.netns_dir}));
    spdlog::info("agent {}: pod network {} on bridge {} (gateway {})", options.node_name, range.ToString(),
                 options.pod_bridge, FormatIpv4(network->gateway()));
    // What pods running since before this agent hold.
    for (auto& [uid, run] : runs) {
      if (run.net && !network->Adopt(uid, *run.net)) run.net.reset();
    }
    if (const int stale = network->RemoveStale(); stale > 0) {
      spdlog::info("agent {}: removed {} stale pod network namespace(s) on bridge {}", options.node_name, stale,
                   options.pod_bridge);
    }
    routes_version = 0;
    pod_server = PodFacingServer();
    return Status::Ok();
  }();
  return network_error;
}

void Agent::Impl::SyncRoutes() {
  if (!network || !nodes_informer || !nodes_informer->synced() || nodes_informer->version() == routes_version) return;
  routes_version = nodes_informer->version();
  std::vector<PodRoute> routes;
  nodes_informer->Read([&](const std::map<std::string, json>& nodes) {
    for (const auto& [name, node] : nodes) {
      if (name == options.node_name) continue;
      const json spec = node.value("spec", json::object());
      auto cidr = ParseIpv4Cidr(spec.is_object() ? spec.value("podCIDR", "") : "");
      if (!cidr || cidr->Overlaps(network->pod_cidr())) continue;
      const json status = node.value("status", json::object());
      for (const json& a : status.is_object() ? status.value("addresses", json::array()) : json::array()) {
        if (!a.is_object() || a.value("type", "") != "InternalIP") continue;
        const std::string address = a.value("address", "");
        // A node at this node's own address shares its network (agents on one
        // host): its pods are on the same bridge, with no route needed.
        auto gateway = ParseIpv4Cidr(address + "/32");
        if (gateway && address != options.address) routes.push_back(PodRoute{*cidr, gateway->network});
        break;
      }
    }
  });
  if (Status s = network->SyncRoutes(routes); !s.ok()) {
    spdlog::warn("agent {}: routes to the other nodes' pods: {}", options.node_name, s.message());
    routes_version = 0;  // tried again next pass
  }
}

void Agent::Impl::ReleaseNetwork(Run& run) {
  if (!run.net) return;
  if (network) {
    if (Status s = network->Detach(Uid(run.pod)); !s.ok()) {
      spdlog::warn("agent {}: pod {}: {}", options.node_name, run.pod["metadata"].value("name", ""), s.message());
      return;
    }
  } else {
    PodNetwork::RemoveNamespace(*run.net);
  }
  run.net.reset();
  ++local_net_version;
  SaveState();
}

std::string Agent::Impl::PodFacingServer() {
  // http://127.0.0.1:PORT or http://localhost:PORT only: a TLS certificate would not name the gateway.
  std::string port;
  for (const char* prefix : {"http://127.0.0.1:", "http://localhost:"}) {
    if (options.server.starts_with(prefix)) port = options.server.substr(std::string_view(prefix).size());
  }
  while (!port.empty() && port.back() == '/') port.pop_back();
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) return "";
  const std::string gateway = FormatIpv4(network->gateway());
  const std::string table = NftTable("tessera-api");
  const std::string script = fmt::format(
      "table ip {0} {{}}\ndelete table ip {0}\ntable ip {0} {{\n  chain prerouting {{\n    type nat hook prerouting "
      "priority dstnat - 10; policy accept;\n    iifname \"{1}\" ip daddr {2} tcp dport {3} dnat to 127.0.0.1:{3}\n  "
      "}}\n}}\n",
      table, options.pod_bridge, gateway, port);
  const std::string localnet = fmt::format("/proc/sys/net/ipv4/conf/{}/route_localnet", options.pod_bridge);
  std::ofstream(localnet) << "1\n";
  if (Status s = net::ApplyRuleset(script); !s.ok()) {
    spdlog::warn("agent {}: pods cannot reach the server at {}: {}", options.node_name, options.server, s.message());
    return "";
  }
  return fmt::format("http://{}:{}", gateway, port);
}

void Agent::Impl::SyncRules(ApiClient& client) {
  if (!network || !pods_informer) return;
  const std::array<uint64_t, 6> inputs{pods_informer->version(),     namespaces_informer->version(),
                                       policies_informer->version(), services_informer->version(),
                                       slices_informer->version(),   local_net_version};
  if (inputs == rules_inputs && published_rules_error == rules_error) return;
  rules_inputs = inputs;
  auto cluster = ParseIpv4Cidr(options.cluster_cidr);
  net::NodeNetwork node{.table = NftTable("tessera"),
                        .bridge = options.pod_bridge,
                        .pod_cidr = network->pod_cidr(),
                        .cluster_cidr = cluster ? *cluster : network->pod_cidr()};
  net::ClusterView view;
  std::set<std::string> local;
  std::set<std::string> local_ips;
  for (const auto& [uid, run] : runs) {
    if (!run.net) continue;
    node.pods.push_back(net::LocalPod{.ip = run.net->ip, .veth = run.net->host_veth});
    // This node's pods as it knows them (their labels, their address now), not as the server last heard.
    if (auto info = net::PodInfoFromJson(run.pod)) {
      info->ip = FormatIpv4(run.net->ip);
      local.insert(info->ns + "/" + info->name);
      local_ips.insert(info->ip);
      view.pods.push_back(std::move(*info));
    }
  }
  std::string script;
  Status made = Status::Ok();
  if (!pods_informer->synced() || !namespaces_informer->synced() || !policies_informer->synced()) {
    made = Status::Unavailable("the pods, namespaces and network policies have not been listed yet");
  } else {
    namespaces_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, object] : objects) {
        if (auto ns = net::NamespaceInfoFromJson(object)) view.namespaces.push_back(std::move(*ns));
      }
    });
    policies_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, object] : objects) (void)view.AddPolicyJson(object);
    });
    pods_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, object] : objects) {
        if (local.contains(key)) continue;
        const std::string phase = object.value("status", json::object()).value("phase", "");
        if (phase == "Succeeded" || phase == "Failed") continue;  // its address is free again
        auto info = net::PodInfoFromJson(object);
        if (info && !local_ips.contains(info->ip)) view.pods.push_back(std::move(*info));
      }
    });
    // Services and their EndpointSlices (kubernetes.io/service-name), by namespace/name.
    std::map<std::string, std::vector<json>> slices;
    slices_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, slice] : objects) {
        const json meta = slice.value("metadata", json::object());
        const std::string service = meta.value("labels", json::object()).value("kubernetes.io/service-name", "");
        if (!service.empty()) slices[meta.value("namespace", "") + "/" + service].push_back(slice);
      }
    });
    services_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, service] : objects) {
        const auto it = slices.find(key);
        const std::span<const json> of = it == slices.end() ? std::span<const json>() : std::span<const json>(it->second);
        if (auto info = net::ServiceInfoFromJson(service, of)) view.services.push_back(std::move(*info));
      }
    });
    auto rendered = net::RenderNodeRuleset(view, node);
    if (rendered) {
      script = std::move(*rendered);
    } else {
      made = rendered.error();
    }
  }
  if (made.ok() && script != applied_rules) {
    made = net::ApplyRuleset(script);
    spdlog::debug("agent {}: network rules applied ({} bytes; {} pods, {} policies, {} services)", options.node_name,
                  script.size(), view.pods.size(), view.policies.size(), view.services.size());
  }
  if (made.ok()) {
    applied_rules = std::move(script);
    rules_error.clear();
  } else {
    rules_error = made.message();
    applied_rules.clear();
    auto deny = net::RenderDenyAllRuleset(node);
    Status denied = deny ? net::ApplyRuleset(*deny) : deny.error();
    spdlog::warn("agent {}: network policy rules not programmed ({}); {}", options.node_name, rules_error,
                 denied.ok() ? "new traffic of every pod is dropped until they are"
                             : "and the fail-closed rules failed too: " + denied.message());
  }
  if (published_rules_error != rules_error) {
    json value = rules_error.empty() ? json() : json(rules_error);
    json patch{{"metadata", {{"annotations", {{"tessera.dev/pod-network-error", value}}}}}};
    auto r = client.Request("PATCH", "/api/v1/nodes/" + options.node_name, patch.dump(), "application/merge-patch+json");
    if (r && r->status / 100 == 2) published_rules_error = rules_error;
  }
}

std::optional<std::string> Agent::Impl::MasterAddress(const Run& run, const std::map<std::string, json>& all) {
  const json& pod = run.pod;
  const json& annotations = pod["metadata"].value("annotations", json::object());
  const auto world = std::atoi(annotations.value("tessera.dev/world-size", "1").c_str());
  if (world <= 1 || annotations.value("tessera.dev/rank", "0") == "0") return PodIp(run);
  if (!Bridged(pod)) return options.address;
  const std::string ns = pod["metadata"].value("namespace", "");
  const std::string workload = pod["metadata"].value("labels", json::object()).value("tessera.dev/workload", "");
  const auto rank0 = [&](const json& other) {
    const json meta = other.value("metadata", json::object());
    return meta.value("namespace", "") == ns && meta.value("labels", json::object()).value("tessera.dev/workload", "") == workload &&
           meta.value("annotations", json::object()).value("tessera.dev/rank", "") == "0";
  };
  // On this node: its address is this agent's to know.
  for (const auto& [uid, other] : all) {
    if (!rank0(other)) continue;
    if (auto it = runs.find(uid); it != runs.end() && it->second.net) return FormatIpv4(it->second.net->ip);
  }
  std::optional<std::string> found;
  if (pods_informer) {
    pods_informer->Read([&](const std::map<std::string, json>& pods) {
      for (const auto& [key, other] : pods) {
        if (!rank0(other)) continue;
        const std::string ip = other.value("status", json::object()).value("podIP", "");
        if (!ip.empty()) found = ip;
      }
    });
  }
  return found;
}

std::optional<ProcessSpec> Agent::Impl::PrepareStart(ApiClient& client, Run& run, const std::map<std::string, json>& all) {
  const json& pod = run.pod;
  const std::string dir = PodDir(pod);
  const std::string workload = pod["metadata"].value("labels", json::object()).value("tessera.dev/workload", "");
  const std::string ns = pod["metadata"].value("namespace", "");
  // Whom it runs as decides who owns its directories: from its namespace's uid block.
  const bool root = ::geteuid() == 0;
  PodLaunchContext ctx{.node_name = options.node_name, .default_user = pod_user, .switch_user = root};
  if (root) {
    auto range = NamespaceUidRange(client, ns);
    if (!range) {
      spdlog::warn("agent {}: pod {}/{} waits: {}", options.node_name, ns, pod["metadata"].value("name", ""),
                   range.error().message());
      run.restart_at = SystemNow() + Duration::Seconds(1);
      return std::nullopt;
    }
    if (!range->has_value() && !pod_user) {
      // A namespace made a moment ago gets its block from the server's
      // namespace controller within a pass: the pod waits for it, read afresh.
      namespaces.erase(ns);
      Waiting(run, "ContainerCreating", fmt::format("waiting for namespace {} to get its uid range", ns));
      run.restart_at = SystemNow() + Duration::Millis(200);
      return std::nullopt;
    }
    ctx.uid_range = *range;
    // Its namespace's pod security level, checked again here (defence in depth:
    // the server refused what broke it when the pod was made, but a level may
    // have been raised since).
    if (Status allowed = CheckPodSecurity(pod["spec"], namespaces[ns].labels, pod["metadata"].value("name", ""));
        !allowed.ok()) {
      Started(run, Err(allowed), SystemNow());
      return std::nullopt;
    }
    auto runs_as = PodRunAs(pod, ctx);
    if (!runs_as) {
      Started(run, Err(runs_as.error()), SystemNow());
      return std::nullopt;
    }
    run.runs_as = *runs_as;
  }
  // A container pod needs its image first (pulled off the loop) and root, for runc.
  std::optional<ImageInfo> image;
  if (NamesImage(pod)) {
    if (!root) {
      Started(run, Err(Status::Unavailable(fmt::format(
                       "container images need the agent to run as root (runc and the pod's overlay mount); it runs "
                       "as uid {}",
                       ::geteuid()))),
              SystemNow());
      return std::nullopt;
    }
    image = PrepareImage(client, run, SystemNow());
    if (!image) return std::nullopt;
  }
  // Its network namespace and address, kept across its restarts.
  if (Bridged(pod) && !run.net) {
    Status ready = EnsureNetwork(client);
    auto attached = ready.ok() ? network->Attach(Uid(pod)) : Result<PodAttachment>(Err(ready));
    if (!attached) {
      Waiting(run, "ContainerCreating", fmt::format("setting up the pod's network: {}", attached.error().message()));
      run.restart_at = SystemNow() + Duration::Seconds(1);
      return std::nullopt;
    }
    run.net = *attached;
    ++local_net_version;
    SaveState();  // a new agent finds the namespace again, and frees it when the pod has gone
  }
  const auto [uid, gid] = run.runs_as;
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  OwnDirectory(fs::path(dir) / "work", uid, gid, 0700);
  const fs::path checkpoint = CheckpointDir(pod);
  OwnDirectory(checkpoint, uid, gid, 0700);
  // Its ServiceAccount's token, unless it asks for none.
  const json automount = pod["spec"].value("automountServiceAccountToken", json());
  if (!(automount.is_boolean() && !automount.get<bool>())) {
    Status token = WritePodToken(client, run);
    if (token.code() == StatusCode::kNotFound) {
      Started(run, Err(token), SystemNow());
      return std::nullopt;
    }
    if (!token.ok()) {
      spdlog::warn("agent {}: pod {}/{} waits for its token: {}", options.node_name, ns,
                   pod["metadata"].value("name", ""), token.message());
      run.restart_at = SystemNow() + Duration::Seconds(1);
      return std::nullopt;
    }
    ctx.token_file = TokenPath(pod);
  }

  // The server as the pod reaches it: from its own network, a loopback server at its gateway.
  ctx.server = run.net && !pod_server.empty() ? pod_server : options.server;
  const LogFileSet log_files = PodLogs(pod);
  if (!run.logs) {
    // The FIFO outlives an agent restart; a new agent reopens it by path.
    Status fifo = LogPump::CreateFifo(log_files.FifoPath());
    auto writer = fifo.ok() ? RotatingLogWriter::Open(log_files) : Result<RotatingLogWriter>(Err(fifo));
    auto pump = writer ? LogPump::Open(log_files.FifoPath(), std::move(*writer)) : Result<LogPump>(Err(writer.error()));
    if (pump) {
      run.logs.emplace(std::move(*pump));
    } else {
      spdlog::warn("agent {}: pod {}: no log files: {}", options.node_name, pod["metadata"].value("name", ""),
                   pump.error().message());
    }
  }
  ctx.working_dir = (fs::path(dir) / "work").string();
  ctx.output_path = run.logs ? log_files.FifoPath() : (fs::path(dir) / "pod.log").string();
  ctx.checkpoint_dir = checkpoint.string();
  const std::optional<std::string> master = MasterAddress(run, all);
  if (!master) {
    Waiting(run, "ContainerCreating", "waiting for rank 0 of its workload to have a pod IP (MASTER_ADDR)");
    run.restart_at = SystemNow() + Duration::Millis(100);
    return std::nullopt;
  }
  ctx.master_addr = *master;
  // LOCAL_RANK: this pod's place among its workload's pods on this node, by rank.
  const auto annotation = [](const json& p, const char* key) {
    return std::atoi(p["metadata"].value("annotations", json::object()).value(key, "0").c_str());
  };
  if (annotation(pod, "tessera.dev/world-size") > 1) {
    for (const auto& [uid, other] : all) {
      if (other["metadata"].value("namespace", "") == ns &&
          other["metadata"].value("labels", json::object()).value("tessera.dev/workload", "") == workload &&
          annotation(other, "tessera.dev/rank") < annotation(pod, "tessera.dev/rank")) {
        ++ctx.local_rank;
      }
    }
  }
  // Its variables from Secrets, ConfigMaps and its own fields, as the kubelet
  // makes them plain before a start (CreateContainerConfigError while it cannot).
  auto sources = FetchPodSources(client, pod);
  if (!sources) {
    if (sources.error().code() != StatusCode::kUnavailable) {
      Waiting(run, "CreateContainerConfigError", sources.error().message());
    }
    run.restart_at = SystemNow() + Duration::Seconds(sources.error().code() == StatusCode::kUnavailable ? 1 : 5);
    return std::nullopt;
  }
  auto resolved = ResolvePodEnv(pod, sources->secrets, options.address, PodIp(run), sources->config_maps);
  if (!resolved) {
    Waiting(run, "CreateContainerConfigError", resolved.error().message());
    run.restart_at = SystemNow() + Duration::Seconds(5);
    return std::nullopt;
  }
  // The Services' variables ({NAME}_SERVICE_HOST, ...), as the kubelet gives them.
  std::vector<json> services;
  if (services_informer) {
    const bool links = pod["spec"].value("enableServiceLinks", true);
    services_informer->Read([&](const std::map<std::string, json>& objects) {
      for (const auto& [key, service] : objects) {
        if ((links && key.starts_with(ns + "/")) || key == "default/kubernetes") services.push_back(service);
      }
    });
  }
  const json effective = WithServiceLinks(*resolved, services);
  if (image) {
    auto container = PodContainerSpec(effective, ctx);
    auto process = container ? ContainerProcess(run, *image, *container, ctx.checkpoint_dir, ctx.token_file, *sources)
                             : Result<ProcessSpec>(Err(container.error()));
    if (!process && process.error().code() == StatusCode::kNotFound) {
      // A volume's ConfigMap, Secret or claim is not there yet: it waits, as MountVolume.SetUp does.
      Waiting(run, "ContainerCreating", process.error().message());
      run.restart_at = SystemNow() + Duration::Seconds(5);
      return std::nullopt;
    }
    if (!process) {
      Started(run, Err(process.error()), SystemNow());
      return std::nullopt;
    }
    process->output_path = ctx.output_path;
    process->exit_status_path = (fs::path(dir) / "exit-status").string();
    return std::move(*process);
  }
  auto spec = PodProcessSpec(effective, ctx);
  if (!spec) {
    Started(run, Err(spec.error()), SystemNow());
    return std::nullopt;
  }
  spec->exit_status_path = (fs::path(dir) / "exit-status").string();
  if (run.net) spec->netns_path = run.net->netns_path;
  // Its own view of the node's files: the agent's (and the server's) hidden, its own directories kept.
  spec->hidden_paths = HiddenPaths();
  spec->visible_paths = {ctx.working_dir, ctx.checkpoint_dir};
  if (spec->working_dir != ctx.working_dir) spec->visible_paths.push_back(spec->working_dir);
  if (!ctx.token_file.empty()) spec->visible_paths.push_back(fs::path(ctx.token_file).parent_path().string());
  return std::move(*spec);
}

void Agent::Impl::Waiting(Run& run, const std::string& reason, const std::string& message) {
  const json& c = run.pod["spec"]["containers"][0];
  const json last_state = LastState(run);
  json waiting{{"reason", reason}};
  if (!message.empty()) waiting["message"] = message;
  json next{{"phase", "Pending"},
            {"hostIP", options.address},
            {"conditions", {{{"type", "Ready"}, {"status", "False"}, {"reason", "ContainersNotReady"}}}},
            {"containerStatuses",
             {{{"name", c.value("name", "main")},
               {"ready", false},
               {"started", false},
               {"restartCount", run.restarts},
               {"image", c.value("image", "")},
               {"imageID", ""},
               {"state", {{"waiting", std::move(waiting)}}}}}}};
  if (!last_state.is_null()) next["containerStatuses"][0]["lastState"] = last_state;
  if (run.net) {  // its sandbox is up: its address is known before its container runs
    next["podIP"] = PodIp(run);
    next["podIPs"] = {{{"ip", PodIp(run)}}};
  }
  if (run.status != next) {
    run.status = std::move(next);
    run.unreported = true;
  }
}

std::string Agent::Impl::PullAuthFile(ApiClient& client, Run& run) {
  const json& pod = run.pod;
  const std::string ns = pod["metadata"].value("namespace", "");
  json auths = json::object();
  bool named = false;
  for (const json& ref : pod["spec"].value("imagePullSecrets", json::array())) {
    if (!ref.is_object() || ref.value("name", "").empty()) continue;
    named = true;
    const std::string name = ref.value("name", "");
    auto r = client.Request("GET", "/api/v1/namespaces/" + ns + "/secrets/" + name);
    const json secret = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
    const json data = secret.is_object() ? secret.value("data", json::object()) : json::object();
    const auto encoded = data.is_object() ? data.find(".dockerconfigjson") : data.end();
    std::optional<std::string> text;
    if (secret.is_object() && secret.value("type", "") == "kubernetes.io/dockerconfigjson" && encoded != data.end() &&
        encoded->is_string()) {
      text = DecodeBase64(encoded->get<std::string>());
    }
    const json config = text ? json::parse(*text, nullptr, false) : json();
    if (!config.is_object() || !config.value("auths", json()).is_object()) {
      spdlog::warn("agent {}: pod {}/{}: image pull secret \"{}\" {}; pulling without it", options.node_name, ns,
                   pod["metadata"].value("name", ""), name,
                   !r || r->status != 200 ? fmt::format("could not be read (HTTP {})", r ? r->status : 0)
                                          : "is not a kubernetes.io/dockerconfigjson with .dockerconfigjson");
      continue;
    }
    for (const auto& [registry, auth] : config["auths"].items()) {
      if (!auths.contains(registry)) auths[registry] = auth;  // the first secret naming a registry wins
    }
  }
  if (!named) return "";
  const std::string path = (fs::path(PodDir(pod)) / "pull-auth.json").string();
  std::error_code ec;
  fs::create_directories(PodDir(pod), ec);
  if (Status s = WriteFileAtomically(path, json{{"auths", auths}}.dump(), 0600); !s.ok()) {
    spdlog::warn("agent {}: {}", options.node_name, s.message());
    return "";
  }
  return path;
}

std::optional<ImageInfo> Agent::Impl::PrepareImage(ApiClient& client, Run& run, Timestamp now) {
  const json& c = run.pod["spec"]["containers"][0];
  const std::string text = c.value("image", "");
  auto ref = ParseImageRef(text);
  if (!ref) {
    Waiting(run, "InvalidImageName", fmt::format("Failed to apply default image tag \"{}\": {}", text, ref.error().message()));
    run.restart_at = now + Duration::Seconds(10);
    return std::nullopt;
  }
  auto policy = ImagePullPolicy(c.value("imagePullPolicy", ""), *ref);
  if (!policy) {
    Started(run, Err(policy.error()), now);
    return std::nullopt;
  }
  std::optional<ImageInfo> held = images->Find(*ref);
  if (*policy == PullPolicy::kNever || (*policy == PullPolicy::kIfNotPresent && held)) {
    if (held) return held;
    Waiting(run, "ErrImageNeverPull",
            fmt::format("Container image \"{}\" is not present with pull policy of Never", text));
    run.restart_at = now + Duration::Seconds(5);
    return std::nullopt;
  }
  // Pull it (Always: once for each start, as the kubelet does; pods waiting at
  // once share one pull).
  const std::string name = ref->Canonical();
  // Pods pulling with different secrets do not share a pull (or its failure).
  std::string key = name;
  for (const json& s : run.pod["spec"].value("imagePullSecrets", json::array())) {
    if (s.is_object()) key += "|" + run.pod["metadata"].value("namespace", "") + "/" + s.value("name", "");
  }
  std::unique_lock lock(pulls_mu);
  PullState& state = pulls[key];
  if (!run.pull) run.pull = Run::Pull{.asked_at_generation = state.generation};
  if (state.generation > run.pull->asked_at_generation && !state.in_flight) {
    if (!state.error && state.image) {
      run.pull.reset();
      return state.image;
    }
    // It failed: ErrImagePull now, then ImagePullBackOff until the back-off passes.
    ++run.pull->failures;
    Duration backoff = kImagePullBackoff;
    for (int i = 1; i < run.pull->failures && backoff < kMaxBackoff; ++i) backoff = Duration::Millis(backoff.ms * 2);
    backoff = std::min(backoff, kMaxBackoff);
    run.pull->retry_at = now + backoff;
    run.pull->asked_at_generation = state.generation;
    Waiting(run, "ErrImagePull",
            fmt::format("Failed to pull image \"{}\": {}", text, state.error ? state.error->message() : "unknown"));
    run.restart_at = now + Duration::Millis(std::min<int64_t>(backoff.ms, 1000));
    return std::nullopt;
  }
  if (run.pull->retry_at && now < *run.pull->retry_at) {
    Waiting(run, "ImagePullBackOff", fmt::format("Back-off pulling image \"{}\"", text));
    run.restart_at = *run.pull->retry_at;
    return std::nullopt;
  }
  if (!state.in_flight) {
    state.in_flight = true;
    run.pull->asked_at_generation = state.generation;
    lock.unlock();  // the pull secrets are read from the server without it
    const std::string auth_file = PullAuthFile(client, run);
    boost::asio::post(*puller, [this, ref = *ref, name, key, auth_file] {
      auto pulled = images->Pull(ref, auth_file);
      {
        std::lock_guard lock(pulls_mu);
        PullState& done = pulls[key];
        done.in_flight = false;
        ++done.generation;
        if (pulled) {
          done.image = std::move(*pulled);
          done.error.reset();
        } else {
          done.error = pulled.error();
        }
      }
      if (pulled) {
        spdlog::info("agent {}: pulled image {}", options.node_name, name);
        images_changed = true;
      } else {
        spdlog::warn("agent {}: pulling image {}: {}", options.node_name, name, pulled.error().message());
      }
    });
  }
  if (!run.pull->retry_at) Waiting(run, "ContainerCreating", "");
  run.restart_at = now + Duration::Millis(50);
  return std::nullopt;
}

Status Agent::Impl::WriteCdiSpec() {
  if (inventory.devices.empty()) return Status::Ok();
  const fs::path path = fs::path(options.data_dir) / "cdi" / "nvidia.com-gpu.json";
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::vector<std::string> notes;
  ASSIGN_OR_RETURN(cdi_spec, NodeCdiSpec(inventory.devices, CdiOptions{.device_root = options.device_root},
                                         path.string() + ".ctk", &notes));
  for (const std::string& note : notes) spdlog::info("agent {}: GPUs in containers: {}", options.node_name, note);
  return WriteFileAtomically(path.string(), cdi_spec.dump(2), 0644);
}

Result<ProcessSpec> Agent::Impl::ContainerProcess(Run& run, const ImageInfo& image, const PodContainer& container,
                                                   const std::string& checkpoint, const std::string& token_file,
                                                   const PodSources& sources) {
  const json& pod = run.pod;
  ASSIGN_OR_RETURN(std::string lower, images->Rootfs(image));
  const fs::path bundle = fs::path(PodDir(pod)) / "container";
  const fs::path rootfs = bundle / "rootfs";
  std::error_code ec;
  for (const char* d : {"rootfs", "upper", "work"}) fs::create_directories(bundle / d, ec);
  ::chmod(bundle.c_str(), 0711);
  // The pod's own copy-on-write view of the image: an overlay, mounted once
  // (restarts reuse it; a new agent finds it mounted).
  if (!IsMountPoint(rootfs.string())) {
    const std::string data = fmt::format("lowerdir={},upperdir={},workdir={}", lower, (bundle / "upper").string(),
                                         (bundle / "work").string());
    if (::mount("overlay", rootfs.c_str(), "overlay", MS_NODEV, data.c_str()) != 0) {
      return Err(Status::Unavailable(fmt::format("cannot mount the pod's overlay of image {} on {}: {}", image.name,
                                                 rootfs.string(), std::strerror(errno))));
    }
  }
  // Its volumes (pod_volumes.h): made before the config that mounts them.
  ASSIGN_OR_RETURN(VolumeDirs volume_dirs,
                   PodVolumes(pod, VolumeContext{.pod_dir = PodDir(pod), .volume_root = options.volume_root, .sources = &sources}));
  RETURN_IF_ERROR(MakeVolumes(volume_dirs, run.runs_as.first, run.runs_as.second));
  RETURN_IF_ERROR(PrepareSubPaths(pod, volume_dirs, run.runs_as.first, run.runs_as.second));
  const std::string id = container.process.name;  // namespace_pod_uid, safe for runc's ids
  ContainerContext ctx{.rootfs = rootfs.string(),
                       .hostname = pod["metadata"].value("name", ""),
                       .cgroups_path = ContainerCgroupsPath(id),
                       .checkpoint_dir = checkpoint,
                       .token_dir = token_file.empty() ? "" : fs::path(token_file).parent_path().string(),
                       .volumes = std::move(volume_dirs),
                       .netns_path = run.net ? run.net->netns_path : "",
                       .cdi_spec = &cdi_spec};
  // Its GPUs (the scheduler's choice, by index): exactly those devices inside (cdi.h).
  const std::string gpus = pod["metadata"].value("annotations", json::object()).value("tessera.dev/gpu-devices", "");
  for (size_t start = 0; start < gpus.size();) {
    size_t comma = gpus.find(',', start);
    if (comma == std::string::npos) comma = gpus.size();
    const std::string device = gpus.substr(start, comma - start);
    start = comma + 1;
    if (device.empty()) continue;
    // A simulated GPU without a (stand-in) device node: the container runs without it, as before there were nodes.
    if (inventory.simulated() && !CdiHasDevice(cdi_spec, device)) continue;
    ctx.gpu_devices.push_back(device);
  }
  ASSIGN_OR_RETURN(json config, OciRuntimeConfig(pod, image.config, container, ctx));
  RETURN_IF_ERROR(WriteFileAtomically((bundle / "config.json").string(), config.dump(2), 0600));
  DeleteRuncState(id);  // of an earlier run of this container
  fs::remove(bundle / "init.pid", ec);
  run.container = Run::Container{.id = id,
                                 .bundle = bundle.string(),
                                 .image = pod["spec"]["containers"][0].value("image", ""),
                                 .image_id = ImageId(image)};
  ProcessSpec spec;
  spec.name = id;
  // --keep: its cgroup stays until the agent has read whether the OOM killer
  // ended it (OOMKilled), then deletes it (DeleteRuncState).
  spec.argv = {options.runc, "--root", RuncRoot(), "run", "--keep", "--bundle", bundle.string(), "--pid-file",
               (bundle / "init.pid").string(), id};
  spec.working_dir = bundle.string();
  return spec;
}

void Agent::Impl::DeleteStaleContainers() {
  std::set<std::string> adopted;
  for (const auto& [uid, run] : runs) {
    if (run.container) adopted.insert(run.container->id);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(RuncRoot(), ec)) {
    const std::string id = entry.path().filename().string();
    if (!adopted.contains(id)) DeleteRuncState(id);
  }
}

void Agent::Impl::DeleteRuncState(const std::string& id) {
  if (!fs::exists(fs::path(RuncRoot()) / id)) return;
  auto deleted = RunTool({options.runc, "--root", RuncRoot(), "delete", "--force", id});
  if (deleted && deleted->exit_code != 0) {
    spdlog::warn("agent {}: runc delete {}: {}", options.node_name, id, ToolMessage(deleted->output));
  }
}

void Agent::Impl::CleanUpContainer(Run& run, bool done) {
  if (!run.container) return;
  Run::Container& c = *run.container;
  if (!c.init) c.init = ContainerInit(c.bundle);  // runc may have written it just before it ended
  // runc forwards SIGTERM to the container, but a SIGKILL of runc leaves it
  // running: its PID 1 (and with it the whole PID namespace) ends here.
  if (c.init && IsRunning(*c.init)) ::kill(c.init->pid, SIGKILL);
  c.init.reset();
  DeleteRuncState(c.id);
  if (done) {
    const fs::path rootfs = fs::path(c.bundle) / "rootfs";
    if (::umount2(rootfs.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
      spdlog::warn("agent {}: cannot unmount {}: {}", options.node_name, rootfs.string(), std::strerror(errno));
    }
    std::error_code ec;
    fs::remove_all(fs::path(c.bundle) / "upper", ec);
    fs::remove_all(fs::path(c.bundle) / "work", ec);
    // Its emptyDir volumes end with it, as in Kubernetes (a tmpfs unmounted first).
    const fs::path volumes = fs::path(PodDir(run.pod)) / "volumes";
    for (const auto& v : fs::directory_iterator(volumes, ec)) ::umount2(v.path().c_str(), MNT_DETACH);
    fs::remove_all(volumes, ec);
  }
}

void Agent::Impl::PublishImages(ApiClient& client) {
  if (!images_changed.exchange(false)) return;
  json list = json::array();
  for (const ImageInfo& image : images->List()) {
    list.push_back({{"names", {ImageId(image), image.name}}, {"sizeBytes", image.size_bytes}});
  }
  auto r = client.Request("PATCH", "/api/v1/nodes/" + options.node_name + "/status",
                          json{{"status", {{"images", std::move(list)}}}}.dump(), "application/merge-patch+json");
  if (!r || r->status / 100 != 2) images_changed = true;  // next pass
}

void Agent::Impl::Started(Run& run, Result<RunningProcess> started, Timestamp now) {
  const json& pod = run.pod;
  const std::string ns = pod["metadata"].value("namespace", "");
  if (!started) {
    // It cannot run here: Failed with the reason, and no restarts (they would fail the same way).
    // Its launched process (recorded before it could run) is gone: nothing to adopt.
    run.identity.reset();
    run.done = true;
    run.status = {{"phase", "Failed"},
                  {"reason", "StartError"},
                  {"message", started.error().message()},
                  {"hostIP", options.address},
                  {"containerStatuses",
                   {{{"name", pod["spec"].value("containers", json::array()).empty()
                                  ? "main"
                                  : pod["spec"]["containers"][0].value("name", "main")},
                     {"ready", false},
                     {"restartCount", run.restarts},
                     {"state",
                      {{"terminated",
                        {{"exitCode", 128}, {"reason", "StartError"}, {"message", started.error().message()},
                         {"finishedAt", FormatRfc3339(now)}}}}}}}}};
    spdlog::warn("agent {}: pod {}/{} cannot start: {}", options.node_name, ns, pod["metadata"].value("name", ""),
                 started.error().message());
    if (run.logs) (void)run.logs->Pump();
    MarkPodEnded(PodDir(pod));
    return;
  }
  for (const std::string& w : started->warnings) spdlog::warn("agent {}: pod {}: {}", options.node_name, pod["metadata"].value("name", ""), w);
  run.process = *started;
  run.identity = started->identity;
  run.started_at = now;
  run.restart_at.reset();
  if (run.container) {
    // Running once runc has created the container (its --pid-file), not when runc starts.
    Waiting(run, "ContainerCreating", "");
    return;
  }
  SetRunning(run, now);
}

void Agent::Impl::SetRunning(Run& run, Timestamp now) {
  const json& pod = run.pod;
  const json last_state = LastState(run);
  run.status = {{"phase", "Running"},
                {"hostIP", options.address},
                {"podIP", PodIp(run)},
                {"podIPs", {{{"ip", PodIp(run)}}}},
                {"startTime", FormatRfc3339(now)},
                {"containerStatuses",
                 {{{"name", pod["spec"]["containers"][0].value("name", "main")},
                   {"ready", true},
                   {"started", true},
                   {"restartCount", run.restarts},
                   {"containerID", run.container ? "runc://" + run.container->id
                                                 : fmt::format("process://{}", run.identity ? run.identity->pid : 0)},
                   {"image", run.container ? run.container->image : ""},
                   {"imageID", run.container ? run.container->image_id : ""},
                   {"state", {{"running", {{"startedAt", FormatRfc3339(now)}}}}}}}}};
  if (!last_state.is_null()) run.status["containerStatuses"][0]["lastState"] = last_state;
  StartProbes(run, now);
  ApplyReadiness(run, now);
  run.unreported = true;
}

void Agent::Impl::StartProbes(Run& run, Timestamp started_at) {
  run.probes_checked = true;
  run.probe_state.reset();
  ++run.probe_generation;
  const json containers = run.pod.value("spec", json::object()).value("containers", json::array());
  if (!containers.is_array() || containers.empty()) return;
  auto probes = ParseContainerProbes(containers[0]);
  if (!probes) {
    spdlog::warn("agent {}: pod {}/{}: its probes are not run: {}", options.node_name,
                 run.pod["metadata"].value("namespace", ""), run.pod["metadata"].value("name", ""),
                 probes.error().message());
    return;
  }
  if (!probes->empty()) run.probe_state.emplace(std::move(*probes), started_at);
}

void Agent::Impl::ApplyReadiness(Run& run, Timestamp now) {
  const bool started = !run.probe_state || run.probe_state->started();
  const bool ready = !run.probe_state || run.probe_state->ready();
  const json containers = run.pod.value("spec", json::object()).value("containers", json::array());
  const std::string name = containers.is_array() && !containers.empty() && containers[0].is_object()
                               ? containers[0].value("name", "main")
                               : "main";
  json conditions = json::array();
  for (const char* type : {"Ready", "ContainersReady"}) {
    json c{{"type", type}, {"status", ready ? "True" : "False"}, {"lastTransitionTime", FormatRfc3339(now)}};
    if (!ready) {
      c["reason"] = "ContainersNotReady";
      c["message"] = fmt::format("containers with unready status: [{}]", name);
    }
    conditions.push_back(std::move(c));
  }
  if (!run.status.is_object()) run.status = json::object();
  run.status["conditions"] = std::move(conditions);
  if (auto cs = run.status.find("containerStatuses"); cs != run.status.end() && cs->is_array() && !cs->empty()) {
    (*cs)[0]["ready"] = ready;
    (*cs)[0]["started"] = started;
  }
}

void Agent::Impl::RunProbes(Timestamp now) {
  {
    std::map<std::string, ExecEntry> running;
    for (const auto& [uid, run] : runs) {
      if (!run.process || run.terminating || run.done || (run.container && !run.container->init)) continue;
      const json meta = run.pod.value("metadata", json::object());
      running[uid] = ExecEntry{.ns = meta.value("namespace", ""),
                               .name = meta.value("name", ""),
                               .target = ExecTargetOf(run)};
    }
    std::lock_guard lock(exec_mu);
    exec_targets.swap(running);
  }
  if (prober) {
    for (ProbeWorker::Finished& f : prober->TakeFinished()) {
      auto it = runs.find(f.key);
      if (it == runs.end()) continue;
      Run& run = it->second;
      if (!run.probe_state || run.probe_generation != f.generation || !run.process || run.terminating || run.done) {
        continue;
      }
      const std::string ns = run.pod["metadata"].value("namespace", "");
      const std::string name = run.pod["metadata"].value("name", "");
      const ProbeState::Verdict v = run.probe_state->Record(f.kind, f.outcome, now);
      if (!f.outcome.success) {
        spdlog::debug("agent {}: pod {}/{}: {} probe failed: {}", options.node_name, ns, name, ProbeKindName(f.kind),
                      f.outcome.message);
        const std::string message = fmt::format("{} probe failed: {}", ProbeKindName(f.kind), f.outcome.message);
        constexpr size_t kMaxProbeEvents = 16;  // distinct messages a run keeps; the rest are only logged
        if (run.probe_events.size() < kMaxProbeEvents || run.probe_events.contains(message)) {
          Run::ProbeEvent& e = run.probe_events[message];
          if (e.count++ == 0) e.first = FormatRfc3339(now);
          e.last = FormatRfc3339(now);
        }
      }
      if (v.changed || v.kill) {
        ApplyReadiness(run, now);
        run.unreported = true;
        spdlog::info("agent {}: pod {}/{} is {}{}", options.node_name, ns, name,
                     run.probe_state->ready() ? "ready" : "not ready",
                     run.probe_state->readiness_message().empty() ? "" : ": " + run.probe_state->readiness_message());
      }
      if (v.kill) {
        // As the kubelet: the container is killed with the probe's grace period
        // (else the pod's), and its restartPolicy says whether it runs again.
        run.kill_message = v.kill_message;
        const int64_t grace = v.kill_grace_seconds.value_or(
            run.pod.value("spec", json::object()).value("terminationGracePeriodSeconds", kDefaultGrace.ms / 1000));
        spdlog::info("agent {}: pod {}/{}: {}; killing its container (grace {}s)", options.node_name, ns, name,
                     v.kill_message, grace);
        (void)runner.BeginTermination(run.process->identity, Duration::Seconds(grace), now);
      }
    }
  }
  for (auto& [uid, run] : runs) {
    if (!run.process || run.terminating || run.done || fenced) continue;
    if (!run.probes_checked) {
      // Adopted from an earlier agent: its probes start again, once the server
      // listed it (its spec) and, for a container, runc has created it.
      if (!current.contains(uid) || (run.container && !run.container->init)) continue;
      StartProbes(run, now);
      if (run.probe_state) {
        ApplyReadiness(run, now);
        run.unreported = true;
      }
    }
    if (!run.probe_state) continue;
    const std::vector<ProbeKind> due = run.probe_state->TakeDue(now);
    if (due.empty()) continue;
    if (!prober) prober = std::make_unique<ProbeWorker>(2);
    ProbeTarget target;
    target.ip = run.net ? FormatIpv4(run.net->ip) : "127.0.0.1";
    target.exec = ExecTargetOf(run);
    for (ProbeKind kind : due) {
      const Probe& probe = *run.probe_state->probes().Of(kind);
      prober->Submit(uid, run.probe_generation, kind, probe.action, probe.timeout, target);
    }
  }
}

void Agent::Impl::OnExit(Run& run, const ProcessExit& exit, Timestamp now) {
  run.process.reset();
  run.probe_state.reset();  // the next run's start begins them again
  run.probes_checked = false;
  if (exit.cause == ProcessExit::Cause::kNotStarted) {
    // Launched by an agent that died before letting it run: it never ran, so it
    // starts now like any pod not yet started (no restart counted).
    spdlog::info("agent {}: pod {}/{} was never started by the last agent; starting it", options.node_name,
                 run.pod["metadata"].value("namespace", ""), run.pod["metadata"].value("name", ""));
    run.identity.reset();
    run.unreported = false;
    return;
  }
  run.unreported = true;  // its end, or its restart, is for the API to hear
  const std::string policy = run.pod["spec"].value("restartPolicy", "Never");
  const bool success = exit.cause == ProcessExit::Cause::kExited && exit.exit_code == 0;
  std::string reason = success ? "Completed" : exit.oom_killed ? "OOMKilled" : "Error";
  std::string message = exit.Describe();
  if (exit.cause == ProcessExit::Cause::kUnknown) {
    reason = "ContainerStatusUnknown";  // Kubernetes' word for a status that was lost
    message = "the process ended and its exit status was not recorded (killed while no agent was running?)";
  }
  if (!run.kill_message.empty()) {  // a failed liveness or startup probe: the kubelet's event, with how it ended
    message = fmt::format("{} (container {})", run.kill_message, message);
    run.kill_message.clear();
  }
  json terminated{{"exitCode", exit.cause == ProcessExit::Cause::kExited ? exit.exit_code : 128 + exit.signal},
                  {"reason", reason},
                  {"message", message},
                  {"finishedAt", FormatRfc3339(now)}};
  if (run.started_at) terminated["startedAt"] = FormatRfc3339(*run.started_at);
  if (exit.cause == ProcessExit::Cause::kSignaled) terminated["signal"] = exit.signal;
  const std::string container = run.pod["spec"].value("containers", json::array()).empty()
                                    ? "main"
                                    : run.pod["spec"]["containers"][0].value("name", "main");
  if (!success && !run.terminating && !fenced && (policy == "OnFailure" || policy == "Always")) {
    // Restart after a back-off that doubles each time (Kubernetes' CrashLoopBackOff).
    Duration delay = options.restart_backoff;
    for (int i = 0; i < run.restarts && delay < kMaxBackoff; ++i) delay = Duration::Millis(delay.ms * 2);
    delay = std::min(delay, kMaxBackoff);
    run.restart_at = now + delay;
    ++run.restarts;
    run.status["phase"] = "Running";
    if (run.container) {
      terminated["containerID"] = "runc://" + run.container->id;
    }
    run.status["containerStatuses"] = {{{"name", container},
                                        {"ready", false},
                                        {"restartCount", run.restarts},
                                        {"image", run.container ? run.container->image : ""},
                                        {"imageID", run.container ? run.container->image_id : ""},
                                        {"lastState", {{"terminated", terminated}}},
                                        {"state",
                                         {{"waiting",
                                           {{"reason", "CrashLoopBackOff"},
                                            {"message", fmt::format("back-off {}s restarting the failed process ({})",
                                                                    delay.ms / 1000, message)}}}}}}};
    return;
  }
  run.done = true;
  MarkPodEnded(PodDir(run.pod));
  run.status["phase"] = success ? "Succeeded" : "Failed";
  if (!success) {
    run.status["reason"] = reason;
    run.status["message"] = message;
  }
  run.status["conditions"] = {{{"type", "Ready"}, {"status", "False"}, {"reason", "PodCompleted"}}};
  run.status["containerStatuses"] = {{{"name", container},
                                      {"ready", false},
                                      {"restartCount", run.restarts},
                                      {"state", {{"terminated", terminated}}}}};
  if (run.container) {
    json& status = run.status["containerStatuses"][0];
    status["containerID"] = "runc://" + run.container->id;
    status["image"] = run.container->image;
    status["imageID"] = run.container->image_id;
  }
}

void Agent::Impl::ReportPodMetrics(ApiClient& client, Run& run, bool final) {
  if (!run.metrics_follower) {
    auto follower = LogFollower::Open(PodLogs(run.pod), LogStart::Beginning());
    if (!follower) return;
    run.metrics_follower.emplace(std::move(*follower));
  }
  for (int chunks = 0; chunks < 64; ++chunks) {  // at most 4 MiB a call
    auto chunk = run.metrics_follower->ReadNew();
    if (!chunk || chunk->bytes.empty()) break;
    run.metrics.Feed(chunk->bytes);
  }
  if (final) run.metrics.Finish();
  if (run.metrics.observations().empty()) return;
  std::string text = sweep::ObservationsToJson(run.metrics.observations()).dump();
  if (text == run.metrics_reported) return;
  const json meta = run.pod.value("metadata", json::object());
  const json patch{{"metadata", {{"annotations", {{kMetricsAnnotation, text}}}}}};
  auto r = client.Request("PATCH", PodPath(meta.value("namespace", ""), meta.value("name", "")), patch.dump(),
                          "application/merge-patch+json");
  if (r && (r->status / 100 == 2 || r->status == 404)) run.metrics_reported = std::move(text);
}

void Agent::Impl::ReportMetrics(ApiClient& client) {
  for (auto& [uid, run] : runs) {
    if (!run.process || run.done || run.terminating || !current.contains(uid) || !SweepTrial(run.pod)) continue;
    ReportPodMetrics(client, run, /*final=*/false);
  }
}

void Agent::Impl::Report(ApiClient& client, Run& run) {
  if (run.status.is_null() || !run.unreported) return;
  // A finished pod's last metrics go before its end, so that whoever reads the
  // end (a Sweep's controller) finds them.
  if (run.done && SweepTrial(run.pod)) ReportPodMetrics(client, run, /*final=*/true);
  const std::string ns = run.pod["metadata"].value("namespace", "");
  const std::string name = run.pod["metadata"].value("name", "");
  auto r = client.Request("PATCH", PodPath(ns, name) + "/status", json{{"status", run.status}}.dump(),
                          "application/merge-patch+json");
  if (r && (r->status / 100 == 2 || r->status == 404)) run.unreported = false;
}

void Agent::Impl::ReportProbeEvents(ApiClient& client, Run& run) {
  const std::string ns = run.pod["metadata"].value("namespace", "");
  const std::string pod = run.pod["metadata"].value("name", "");
  for (auto& [message, e] : run.probe_events) {
    if (e.count == e.sent) continue;
    const std::string events = fmt::format("/api/v1/namespaces/{}/events", ns);
    Result<ApiResponse> r;
    if (e.name.empty()) {
      const std::string name = fmt::format("{}.{:x}{:04x}", pod, SystemNow().ms, ++event_sequence & 0xffff);
      json event{{"apiVersion", "v1"},
                 {"kind", "Event"},
                 {"metadata", {{"name", name}, {"namespace", ns}}},
                 {"involvedObject",
                  {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", pod}, {"namespace", ns},
                   {"uid", run.pod["metadata"].value("uid", "")}}},
                 {"reason", "Unhealthy"},
                 {"message", message},
                 {"type", "Warning"},
                 {"source", {{"component", "kubelet"}, {"host", options.node_name}}},
                 {"reportingComponent", "kubelet"},
                 {"reportingInstance", options.node_name},
                 {"firstTimestamp", e.first},
                 {"lastTimestamp", e.last},
                 {"count", e.count}};
      r = client.Request("POST", events, event.dump());
      if (r && r->status / 100 == 2) e.name = name;
    } else {
      r = client.Request("PATCH", events + "/" + e.name, json{{"count", e.count}, {"lastTimestamp", e.last}}.dump(),
                         "application/merge-patch+json");
      if (r && r->status == 404) e.name.clear();  // expired: created again next time
    }
    if (r && r->status / 100 == 2) e.sent = e.count;
  }
}

void Agent::Impl::Reconcile(ApiClient& client) {
  bool listed;
  bool full;
  std::set<std::string> touched;
  {
    std::lock_guard lock(pods_mu);
    listed = pods_listed;
    full = relisted;
    relisted = false;
    if (full) {
      current = pods;
    } else {
      for (const std::string& uid : changed_uids) {
        if (auto it = pods.find(uid); it != pods.end()) {
          current[uid] = it->second;
        } else {
          current.erase(uid);
        }
      }
    }
    touched.swap(changed_uids);
  }
  const Timestamp now = SystemNow();
  const int64_t renewed = last_renewed_ms.load();
  const bool lease_lost = renewed == 0 || SteadyMs() - renewed > options.lease_duration.ms;
  if (lease_lost && !fenced) {
    spdlog::error("agent {}: lease not renewed for over {}s: stopping every pod (fencing)", options.node_name,
                  options.lease_duration.ms / 1000);
    for (auto& [uid, run] : runs) {
      if (run.process) (void)runner.BeginTermination(run.process->identity, Duration::Millis(0), now);
    }
  }
  if (!lease_lost && fenced) spdlog::info("agent {}: lease renewed; running pods again", options.node_name);
  fenced = lease_lost;

  pods_seen = pods_seen || listed;
  if (listed) {
    auto take = [&](const std::string& uid, const json& pod) {
      auto [it, fresh] = runs.try_emplace(uid);
      Run& run = it->second;
      // The node's rules take a running pod's labels from here, not from the pods informer (see SyncRules):
      // a relabelled pod must re-render them even when the informer saw the change first.
      if (!fresh && run.net && LabelsOf(run.pod) != LabelsOf(pod)) ++local_net_version;
      run.pod = pod;
      if (fresh && Terminal(pod)) {  // finished before this agent started
        run.done = true;
        run.status = pod["status"];
      }
      if (pod["metadata"].contains("deletionTimestamp") && !run.terminating) {
        run.terminating = true;
        const int64_t grace_s = pod["spec"].value("terminationGracePeriodSeconds", kDefaultGrace.ms / 1000);
        if (run.process) (void)runner.BeginTermination(run.process->identity, Duration::Seconds(grace_s), now);
      }
    };
    // Pods deleted from the API while running here: stop them.
    auto deleted = [&](Run& run) {
      if (run.terminating) return;
      run.terminating = true;
      run.unreported = false;  // nothing left to report to
      if (run.process) (void)runner.BeginTermination(run.process->identity, Duration::Seconds(2), now);
    };
    if (full) {
      for (const auto& [uid, pod] : current) take(uid, pod);
      for (auto& [uid, run] : runs) {
        if (!current.count(uid)) deleted(run);
      }
    } else {
      for (const std::string& uid : touched) {
        if (auto it = current.find(uid); it != current.end()) {
          take(uid, it->second);
        } else if (auto run = runs.find(uid); run != runs.end()) {
          deleted(run->second);
        }
      }
    }
  }

  bool changed = false;
  std::vector<Run*> to_start;  // pointers into runs: no Run is erased before StartAll
  std::vector<ProcessSpec> specs;
  runner.RetryCgroupRemovals();
  for (auto it = runs.begin(); it != runs.end();) {
    Run& run = it->second;
    if (run.net && !run.process && (run.done || run.terminating)) ReleaseNetwork(run);
    if (run.done && !run.terminating && !run.unreported) {  // finished and told: nothing to do until it is deleted
      ++it;
      continue;
    }
    if (run.logs) (void)run.logs->Pump();
    if (run.process && run.token_renew_at && now >= *run.token_renew_at && !run.terminating) {
      if (Status renewed = WritePodToken(client, run); !renewed.ok()) {
        spdlog::warn("agent {}: renewing the token of pod {}: {}", options.node_name,
                     run.pod["metadata"].value("name", ""), renewed.message());
        run.token_renew_at = now + Duration::Seconds(10);
      }
    }
    if (run.process) {
      auto polled = runner.Poll(run.process->identity, now);
      if (polled && *polled) {
        // Whatever the pod wrote before it ended goes to its files first.
        while (run.logs) {
          auto pumped = run.logs->Pump();
          if (!pumped || *pumped == 0) break;
        }
        ProcessExit exit = **polled;
        // runc reports the container's end as its own; the OOM killer's is in
        // the container's cgroup, which runc (--keep) leaves until CleanUpContainer.
        if (run.container && !exit.oom_killed) exit.oom_killed = CgroupOomKilled(ContainerCgroupsPath(run.container->id));
        OnExit(run, exit, now);
        CleanUpContainer(run, run.done);
        if (run.done) run.logs.reset();  // drained: a finished pod holds no descriptors
        changed = true;
      } else if (!polled) {
        run.process.reset();  // untracked: nothing we can do but forget it
        CleanUpContainer(run, true);
        changed = true;
      } else if (run.container && !run.container->init) {
        // runc writes its container's PID 1 once it is created: recorded, so that
        // the fence and a new agent can end the container even without runc.
        if ((run.container->init = ContainerInit(run.container->bundle))) {
          if (!run.terminating) SetRunning(run, now);
          changed = true;
        }
      }
    }
    if (!run.process && !run.done && !run.terminating && !fenced && listed && current.count(it->first) &&
        (!run.restart_at || now >= *run.restart_at)) {
      const json before = run.status;
      std::optional<ProcessSpec> spec = PrepareStart(client, run, current);
      if (spec || run.status != before) run.unreported = true;  // a pod waiting for its image is told once a change
      changed = true;
      if (spec) {  // started below, with the pass's other pods, then reported
        to_start.push_back(&run);
        specs.push_back(std::move(*spec));
        ++it;
        continue;
      }
    }
    if (run.terminating && !run.process) {
      CleanUpContainer(run, true);
      ReleaseNetwork(run);
      MarkPodEnded(PodDir(run.pod));
      // Its processes are gone: the pod object goes too (as a kubelet's final delete).
      if (current.count(it->first)) {
        const std::string ns = run.pod["metadata"].value("namespace", "");
        const std::string name = run.pod["metadata"].value("name", "");
        auto r = client.Request("DELETE", PodPath(ns, name));
        if (!r || (r->status / 100 != 2 && r->status != 404)) {
          ++it;
          continue;
        }
      }
      it = runs.erase(it);
      changed = true;
      continue;
    }
    if (!run.terminating) Report(client, run);
    ReportProbeEvents(client, run);
    ++it;
  }
  // The fence (fence.h) kills only the pods in the state file, and a restarted
  // agent adopts only those: so each new pod's process is recorded there
  // before its command may run (its reaper waits for StartAll to let it go,
  // and never runs it if this agent dies first). Otherwise a pod started just
  // before the agent was killed would outlive it unseen, and run twice once the
  // server placed it elsewhere (or once the next agent started it again). The
  // state saved there is the whole pass's (what ended above included), so it
  // is saved again only if a start failed after all; if it cannot be saved, no
  // pod starts, and they are tried again next pass.
  // A pod's rules are in place before its command runs.
  if (!to_start.empty()) SyncRules(client);
  bool held_back = false;
  auto record_launched = [&](const std::vector<std::optional<ProcessIdentity>>& launched) {
    std::vector<std::pair<std::optional<ProcessIdentity>, std::optional<Timestamp>>> before;
    const Timestamp launched_at = SystemNow();
    for (size_t i = 0; i < to_start.size(); ++i) {
      before.emplace_back(to_start[i]->identity, to_start[i]->started_at);
      if (!launched[i]) continue;
      to_start[i]->identity = *launched[i];
      to_start[i]->started_at = launched_at;
    }
    if (SaveState()) return true;
    for (size_t i = 0; i < to_start.size(); ++i) std::tie(to_start[i]->identity, to_start[i]->started_at) = before[i];
    held_back = true;
    return false;
  };
  std::vector<Result<RunningProcess>> started =
      runner.StartAll(specs, to_start.empty() ? ProcessRunner::BeforeRunning() : record_launched);
  if (held_back) {
    spdlog::warn("agent {}: {} pod(s) not started, since the state file could not record them; retrying",
                 options.node_name, to_start.size());
    return;
  }
  const Timestamp started_at = SystemNow();
  bool start_failed = false;
  for (size_t i = 0; i < to_start.size(); ++i) {
    start_failed = start_failed || !started[i];
    Started(*to_start[i], std::move(started[i]), started_at);
  }
  if (changed && (to_start.empty() || start_failed)) SaveState();
  for (Run* run : to_start) Report(client, *run);
}

void Agent::Impl::PublishUsage(ApiClient& client) {
  // Which pods use which devices: the group leader's pid and its share of each.
  GpuAssignment assignment;
  for (const auto& [uid, run] : runs) {
    if (!run.process || run.done) continue;
    const json& annotations = run.pod["metadata"].value("annotations", json::object());
    const std::string devices = annotations.value("tessera.dev/gpu-devices", "");
    const int64_t milli = std::strtoll(annotations.value("tessera.dev/gpu-milli", "0").c_str(), nullptr, 10);
    std::vector<int32_t> indices;
    for (size_t start = 0; start < devices.size();) {
      size_t comma = devices.find(',', start);
      if (comma == std::string::npos) comma = devices.size();
      indices.push_back(static_cast<int32_t>(std::strtol(devices.substr(start, comma - start).c_str(), nullptr, 10)));
      start = comma + 1;
    }
    for (int32_t index : indices) {
      assignment[index].push_back(GpuProcessShare{.pid = run.process->pgid,
                                                  .milli = milli / static_cast<int64_t>(indices.size())});
    }
  }
  Result<std::vector<GpuUsage>> usage =
      sampler ? sampler->Sample(assignment, SystemNow())
              : (inventory.nvml ? inventory.nvml->Sample() : Result<std::vector<GpuUsage>>(std::vector<GpuUsage>{}));
  if (!usage) {
    spdlog::warn("agent {}: sampling GPU usage: {}", options.node_name, usage.error().message());
    return;
  }
  json devices = json::array();
  for (const GpuUsage& u : *usage) {
    devices.push_back({{"index", u.index}, {"utilizationPercent", u.utilization_percent},
                       {"memoryUsedBytes", u.memory_used_bytes}});
  }
  json patch{{"metadata",
              {{"annotations",
                {{std::string(kGpuUsageAnnotation), devices.dump()},
                 {std::string(kGpuUsageTimeAnnotation), FormatRfc3339(SystemNow())}}}}}};
  auto r = client.Request("PATCH", "/api/v1/nodes/" + options.node_name, patch.dump(), "application/merge-patch+json");
  if (!r || r->status / 100 != 2) {
    spdlog::warn("agent {}: publishing GPU usage: {}", options.node_name,
                 r ? fmt::format("HTTP {}: {}", r->status, r->body) : r.error().message());
  }
}

void Agent::Impl::ReportCheckpoints(ApiClient& client) {
  const Timestamp now = SystemNow();
  for (auto& [uid, run] : runs) {
    // Pods the server listed (an adopted pod's own fields come with that), while they run.
    if (!run.process || run.done || run.terminating || !current.contains(uid)) continue;
    struct stat st {};
    if (::stat((CheckpointDir(run.pod) / kCheckpointFile).c_str(), &st) != 0) continue;
    const int64_t mtime_s = static_cast<int64_t>(st.st_mtim.tv_sec);
    if (run.checkpoint_seen_s == mtime_s) continue;
    // The file's time, never ahead of this node's clock (a skewed shared
    // filesystem, or a `touch -d` into the future).
    const std::string at = FormatRfc3339(Timestamp::FromSeconds(std::min(mtime_s, now.seconds())));
    const json meta = run.pod.value("metadata", json::object());
    const json annotations = meta.value("annotations", json::object());
    if (annotations.is_object() && annotations.value(kLastCheckpointAnnotation, "") == at) {
      run.checkpoint_seen_s = mtime_s;  // already there (a restarted agent, or another pod's report)
      continue;
    }
    const std::string ns = meta.value("namespace", "");
    const std::string name = meta.value("name", "");
    const json patch{{"metadata", {{"annotations", {{kLastCheckpointAnnotation, at}}}}}};
    auto r = client.Request("PATCH", PodPath(ns, name), patch.dump(), "application/merge-patch+json");
    if (r && (r->status / 100 == 2 || r->status == 404)) {
      run.checkpoint_seen_s = mtime_s;
      continue;
    }
    // Tried again next time; said once for as long as it fails the same way.
    const std::string error = r ? fmt::format("HTTP {}: {}", r->status, r->body) : r.error().message();
    if (error != checkpoint_error) {
      spdlog::warn("agent {}: reporting the checkpoint of pod {}/{}: {}", options.node_name, ns, name, error);
      checkpoint_error = error;
    }
  }
}

void Agent::Impl::CollectDirectories() {
  if (!pods_seen) return;  // which pods are this node's is not known yet
  // What the loop still has (running, finished but not deleted, terminating),
  // and every pod the server binds here.
  std::set<std::string> keep;
  for (const auto& [uid, run] : runs) keep.insert(SafePathPart(uid));
  for (const auto& [uid, pod] : current) keep.insert(SafePathPart(uid));
  const CollectedPodDirectories collected =
      CollectPodDirectories((fs::path(options.data_dir) / "pods").string(), keep, options.log_retention);
  for (const std::string& dir : collected.removed) {
    spdlog::info("agent {}: removed {}: its pod is gone from this node and its logs are older than the retention ({}s)",
                 options.node_name, dir, options.log_retention.ms / 1000);
    gc_failed.erase(dir);
  }
  for (const auto& [dir, why] : collected.failed) {
    if (gc_failed.insert(dir).second) spdlog::warn("agent {}: not removing {} yet: {}", options.node_name, dir, why);
  }
}

void Agent::Impl::Loop() {
  pthread_setname_np(pthread_self(), "agent-loop");
  ApiClient client(options.server, options.token, options.tls);
  uint64_t seen_version = 0;
  while (!stopper.stopped()) {
    Reconcile(client);
    RunProbes(SystemNow());
    SyncRoutes();
    SyncRules(client);
    PublishImages(client);
    if (options.usage_interval.ms > 0 && SteadyMs() >= next_usage_ms) {
      next_usage_ms = SteadyMs() + options.usage_interval.ms;
      PublishUsage(client);
      std::vector<NotebookPod> asked;
      for (const auto& [uid, run] : runs) {
        if (run.process && !run.done && !run.terminating) {
          if (auto nb = NotebookPodOf(run.pod, PodIp(run))) asked.push_back(std::move(*nb));
        }
      }
      notebooks.Poll(client, asked, SystemNow());
    }
    if (options.checkpoint_interval.ms > 0 && SteadyMs() >= next_checkpoint_ms) {
      next_checkpoint_ms = SteadyMs() + options.checkpoint_interval.ms;
      ReportCheckpoints(client);
    }
    if (SteadyMs() >= next_metrics_ms) {
      next_metrics_ms = SteadyMs() + kMetricsIntervalMs;
      ReportMetrics(client);
    }
    if (SteadyMs() >= next_directory_gc_ms) {
      // A fraction of the retention (a tiny one in tests), at most once a minute.
      next_directory_gc_ms =
          SteadyMs() + std::min<int64_t>(std::max<int64_t>(options.log_retention.ms / 4, options.poll_interval.ms), 60'000);
      CollectDirectories();
    }
    // A container being created is looked at every 5 ms: it is Running once runc says so.
    bool creating = false;
    for (const auto& [uid, run] : runs) creating = creating || (run.container && run.process && !run.container->init);
    std::unique_lock lock(pods_mu);
    pods_cv.wait_for(lock, std::chrono::milliseconds(creating ? std::min<int64_t>(5, options.poll_interval.ms) : options.poll_interval.ms),
                     [&] { return pods_version != seen_version || stopper.stopped(); });
    seen_version = pods_version;
  }
}

Agent::Agent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Agent::~Agent() { Stop(); }

void Agent::Stop() {
  if (!impl_) return;
  impl_->stopper.Stop();
  impl_->pods_cv.notify_all();
  if (impl_->watch_client) impl_->watch_client->Cancel();
  if (impl_->log_server) impl_->log_server->Stop();
  for (std::thread* t : {&impl_->loop, &impl_->heartbeat, &impl_->watcher}) {
    if (t->joinable()) t->join();
  }
  impl_->prober.reset();  // waits for the probes running, each bounded by its timeout
  if (impl_->puller) impl_->puller->join();  // a pull under way ends first (skopeo's own timeout bounds it)
  impl_->nodes_informer.reset();
  impl_->pods_informer.reset();
  impl_->namespaces_informer.reset();
  impl_->policies_informer.reset();
  impl_->services_informer.reset();
  impl_->slices_informer.reset();
}

const std::string& Agent::inventory_summary() const { return impl_->summary; }
const std::string& Agent::node_name() const { return impl_->options.node_name; }

Result<std::unique_ptr<Agent>> Agent::Start(AgentOptions options) {
  if (options.node_name.empty()) return Err(Status::InvalidArgument("the agent needs a node name (--node)"));
  if (options.data_dir.empty()) return Err(Status::InvalidArgument("the agent needs a data directory"));
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec) return Err(Status::IoError(fmt::format("creating {}: {}", options.data_dir, ec.message())));
  // The agent's state, pods' logs and tokens are the agent's alone.
  ::chmod(options.data_dir.c_str(), 0700);
  if (options.token.empty()) {
    if (options.token_file.empty()) {
      return Err(Status::InvalidArgument(
          "the agent needs its node's credential: --token-file FILE (an admin makes one with `tessera create token "
          "--node NAME`)"));
    }
    ASSIGN_OR_RETURN(options.token, ReadSecretFile(options.token_file));
  }
  std::optional<std::pair<uint32_t, uint32_t>> pod_user;
  if (!options.pod_user.empty()) {
    ASSIGN_OR_RETURN(pod_user, ParsePodUser(options.pod_user));
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->pod_user = pod_user;
  impl->images = std::make_unique<ImageStore>(ImageStoreOptions{
      .root = impl->options.image_store.empty() ? (fs::path(impl->options.data_dir) / "images").string()
                                                : impl->options.image_store,
      .insecure_registries = impl->options.insecure_registries});
  impl->puller = std::make_unique<boost::asio::thread_pool>(1);
  // Images the store holds but has not unpacked (put there by hand, or by an
  // agent that stopped first) are unpacked now, so no pod's start waits for it.
  boost::asio::post(*impl->puller, [store = impl->images.get()] {
    for (const ImageInfo& image : store->List()) {
      if (auto rootfs = store->Rootfs(image); !rootfs) spdlog::warn("unpacking image {}: {}", image.name, rootfs.error().message());
    }
  });
  ASSIGN_OR_RETURN(impl->inventory, DiscoverGpus(impl->options.gpus));
  impl->summary = impl->inventory.reason;
  if (impl->inventory.simulated()) impl->sampler = std::make_unique<SimulatedGpuSampler>(impl->inventory.devices);
  RETURN_IF_ERROR(impl->WriteCdiSpec());
  Impl* self = impl.get();
  ASSIGN_OR_RETURN(impl->log_server,
                   LogServer::Start((fs::path(impl->options.data_dir) / "pods").string(),
                                    [self](std::string_view token) { return self->AuthorizeServerCall(token); },
                                    impl->options.address, impl->options.log_port,
                                    [self](const std::string& ns, const std::string& name, const std::string& uid) {
                                      return self->ExecTarget(ns, name, uid);
                                    }));
  RETURN_IF_ERROR(impl->Register());
  RETURN_IF_ERROR(impl->FetchServerKeys());
  if (!impl->options.fence_command.empty()) RETURN_IF_ERROR(EnsureFence(impl->options.data_dir, impl->options.fence_command));
  impl->runner.RemoveStaleCgroups();
  impl->Adopt();
  impl->DeleteStaleContainers();
  Impl* p = impl.get();
  p->watch_client = std::make_unique<ApiClient>(p->options.server, p->options.token, p->options.tls);
  if (p->options.pod_network == AgentOptions::PodNetworkMode::kBridge) {
    if (::geteuid() != 0) {
      return Err(Status::PermissionDenied(fmt::format(
          "the pod network (--pod-network bridge) needs the agent to run as root; it runs as uid {}: run it as root, "
          "or give --pod-network host to run every pod in the node's network",
          ::geteuid())));
    }
    const auto wake = [p] { p->pods_cv.notify_all(); };
    p->nodes_informer = std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls, "/api/v1/nodes", wake);
    p->pods_informer = std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls, "/api/v1/pods", wake);
    p->namespaces_informer =
        std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls, "/api/v1/namespaces", wake);
    p->policies_informer = std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls,
                                                      "/apis/networking.k8s.io/v1/networkpolicies", wake);
    p->services_informer =
        std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls, "/api/v1/services", wake);
    p->slices_informer = std::make_unique<Informer>(p->options.server, p->options.token, p->options.tls,
                                                    "/apis/discovery.k8s.io/v1/endpointslices", wake);
  }
  p->watcher = std::thread([p] { p->WatchPods(); });
  p->heartbeat = std::thread([p] { p->Heartbeat(); });
  p->loop = std::thread([p] { p->Loop(); });
  return std::unique_ptr<Agent>(new Agent(std::move(impl)));
}

}  // namespace tessera
