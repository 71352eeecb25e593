#include "server/controllers/notebook_controller.h"

#include <fmt/format.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api/convert.h"
#include "api/service.h"
#include "auth/base64.h"
#include "common/node_annotations.h"
#include "common/time_format.h"
#include "common/uuid.h"
#include "domain/quantity.h"
#include "server/api/claim_admission.h"
#include "server/cluster_gauges.h"
#include "server/controllers/idle_reclaimer.h"
#include "server/controllers/job_controller.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kClaimKind = "/PersistentVolumeClaim";
constexpr const char* kPodSet = "notebook";
constexpr const char* kDefaultHome = "/home/jovyan";
constexpr Duration kGpuUseSampleEvery = Duration::Seconds(60);
constexpr Duration kGpuUseWindow = Duration::Seconds(3600);

std::string WorkloadName(const std::string& nb) { return "notebook-" + nb; }
std::string ServiceName(const std::string& nb) { return "notebook-" + nb; }
std::string ClaimName(const std::string& nb) { return nb + "-home"; }
std::string TokenSecretName(const std::string& nb) { return "notebook-" + nb + "-token"; }

int64_t Port(const json& spec) {
  auto it = spec.find("port");
  return it != spec.end() && it->is_number_integer() ? it->get<int64_t>() : kNotebookPort;
}

// A quantity as written ("0.25", 1, "20Gi") as text.
std::string QuantityText(const json& spec, const char* key) {
  auto it = spec.find(key);
  if (it == spec.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

json OwnerReference(const StoredObject& nb) {
  return json::array({{{"apiVersion", "tessera.dev/v1"},
                       {"kind", "Notebook"},
                       {"name", nb.key.name},
                       {"uid", StringAt(nb.object, {"metadata", "uid"})},
                       {"controller", true}}});
}

// Jupyter on the proxy's path (its base_url: the Service keeps it, see
// ServiceFor), its token from JUPYTER_TOKEN (the Secret NAME's-token, which
// the proxy sends it: users authenticate to the server, not to Jupyter), no
// password. Jupyter Lab where
// the node (or image) has it, else the classic Notebook (Debian's
// jupyter-notebook): "$1" the base URL, "$2" the port, "$3" the root directory.
constexpr const char* kJupyterScript =
    "if command -v jupyter-lab >/dev/null 2>&1; then\n"
    "  exec jupyter-lab --ip=0.0.0.0 --port=\"$2\" --no-browser --ServerApp.base_url=\"$1\" "
    "--ServerApp.password= --ServerApp.allow_remote_access=True "
    "${3:+\"--ServerApp.root_dir=$3\"}\n"
    "fi\n"
    "exec jupyter-notebook --ip=0.0.0.0 --port=\"$2\" --no-browser --NotebookApp.base_url=\"$1\" "
    "--NotebookApp.password= --NotebookApp.allow_remote_access=True "
    "${3:+\"--NotebookApp.notebook_dir=$3\"}\n";

json JupyterCommand(const std::string& url, int64_t port, const std::string& root) {
  return json::array({"sh", "-c", kJupyterScript, "jupyter", url, std::to_string(port), root});
}

json PodTemplate(const StoredObject& nb) {
  const json& spec = ObjectAt(nb.object, {"spec"});
  const std::string url = NotebookUrl(nb.key.ns, nb.key.name);
  const int64_t port = Port(spec);
  json resources{{"cpu", QuantityText(spec, "cpu").empty() ? "1" : QuantityText(spec, "cpu")},
                 {"memory", QuantityText(spec, "memory").empty() ? "4Gi" : QuantityText(spec, "memory")}};
  if (const std::string gpu = QuantityText(spec, "gpu"); !gpu.empty()) {
    if (auto milli = ParseGpuMilli(gpu); milli && *milli > 0) resources["nvidia.com/gpu"] = FormatMilliDecimal(*milli);
  }
  if (const std::string bytes = QuantityText(spec, "gpuMemory"); !bytes.empty()) {
    resources["tessera.dev/gpu-memory"] = bytes;
  }
  const bool home = spec.contains("home");
  const std::string mount = home ? StringAt(spec, {"home", "mountPath"}) : "";
  const std::string home_dir = home ? (mount.empty() ? std::string(kDefaultHome) : mount) : "";
  // Ready once its server listens: until then the proxy shows the starting
  // page (notebook_wake.h) rather than a refused connection.
  json container{{"name", "notebook"},
                 {"ports", json::array({{{"name", "http"}, {"containerPort", port}, {"protocol", "TCP"}}})},
                 {"readinessProbe", {{"tcpSocket", {{"port", port}}}, {"periodSeconds", 1}, {"failureThreshold", 1}}},
                 {"resources", {{"requests", resources}, {"limits", resources}}},
                 {"env", json::array({{{"name", "NOTEBOOK_BASE_URL"}, {"value", url}},
                                      {{"name", "NOTEBOOK_PORT"}, {"value", std::to_string(port)}},
                                      {{"name", "JUPYTER_TOKEN"},
                                       {"valueFrom",
                                        {{"secretKeyRef", {{"name", TokenSecretName(nb.key.name)}, {"key", "token"}}}}}}})}};
  const json& command = ArrayAt(spec, {"command"});
  container["command"] = command.empty() ? JupyterCommand(url, port, home_dir) : command;
  if (const std::string image = StringAt(spec, {"image"}); !image.empty()) container["image"] = image;
  json pod_spec{{"restartPolicy", "OnFailure"}};
  if (home) {
    container["env"].push_back({{"name", "HOME"}, {"value", home_dir}});
    container["volumeMounts"] = json::array({{{"name", "home"}, {"mountPath", home_dir}}});
    pod_spec["volumes"] =
        json::array({{{"name", "home"}, {"persistentVolumeClaim", {{"claimName", ClaimName(nb.key.name)}}}}});
  }
  pod_spec["containers"] = json::array({container});
  if (const std::string pc = StringAt(spec, {"priorityClassName"}); !pc.empty()) pod_spec["priorityClassName"] = pc;
  return json{{"metadata", {{"labels", {{kNotebookLabel, nb.key.name}}}}}, {"spec", pod_spec}};
}

json WorkloadFor(const StoredObject& nb, const std::string& queue, const std::string& now_text) {
  const json& spec = ObjectAt(nb.object, {"spec"});
  json pod_set{{"name", kPodSet}, {"count", 1}, {"template", PodTemplate(nb)}};
  json wl_spec{{"queueName", queue}, {"podSets", json::array({pod_set})}};
  if (const std::string pc = StringAt(spec, {"priorityClassName"}); !pc.empty()) wl_spec["priorityClassName"] = pc;
  if (spec.value("suspend", false)) wl_spec["active"] = false;
  json annotations{{"tessera.dev/type", "notebook"}};
  if (const std::string timeout = StringAt(spec, {"idle", "timeout"}); !timeout.empty()) {
    annotations[kIdleTimeoutAnnotation] = timeout;
  }
  const std::string creator =
      StringAt(nb.object, {"metadata", "annotations", std::string(kCreatedByAnnotation).c_str()});
  if (!creator.empty()) annotations[std::string(kCreatedByAnnotation)] = creator;
  json metadata{{"name", WorkloadName(nb.key.name)},
                {"namespace", nb.key.ns},
                {"labels", {{kNotebookLabel, nb.key.name}}},
                {"annotations", annotations},
                {"ownerReferences", OwnerReference(nb)},
                {"creationTimestamp", now_text},
                {"generation", 1}};
  json wl{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"metadata", metadata}, {"spec", wl_spec}};
  if (spec.value("suspend", false)) {
    SetCondition(wl, "Suspended", true, "Suspended",
                 fmt::format("suspended by its spec.suspend; `tessera notebook resume {}` starts it", nb.key.name),
                 now_text);
  }
  return wl;
}

// Headless: the proxy and the pods reach the notebook's pod through its
// EndpointSlice; no cluster IP to allocate from the loop.
// The Secret NAME's-token: 32 random bytes, hex, for Jupyter's JUPYTER_TOKEN.
// View cannot read Secrets; the proxy and the notebook's node do.
json TokenSecretFor(const StoredObject& nb, const std::string& now_text) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();  // no CSPRNG: nothing safe to do
  std::string token;
  for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"type", "Opaque"},
              {"metadata",
               {{"name", TokenSecretName(nb.key.name)},
                {"namespace", nb.key.ns},
                {"labels", {{kNotebookLabel, nb.key.name}}},
                {"ownerReferences", OwnerReference(nb)},
                {"creationTimestamp", now_text}}},
              {"data", {{"token", EncodeBase64(token)}}}};
}

json ServiceFor(const StoredObject& nb, const std::string& now_text) {
  const int64_t port = Port(ObjectAt(nb.object, {"spec"}));
  return json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata",
               {{"name", ServiceName(nb.key.name)},
                {"namespace", nb.key.ns},
                {"labels", {{kNotebookLabel, nb.key.name}}},
                // Jupyter serves under its base_url, the proxy path: the proxy keeps it,
                // and sends Jupyter its token.
                {"annotations", {{kProxyKeepPathAnnotation, "true"},
                                 {kProxyTokenSecretAnnotation, TokenSecretName(nb.key.name)}}},
                {"ownerReferences", OwnerReference(nb)},
                {"creationTimestamp", now_text}}},
              {"spec",
               {{"type", "ClusterIP"},
                {"clusterIP", "None"},
                {"clusterIPs", json::array({"None"})},
                {"selector", {{kNotebookLabel, nb.key.name}}},
                {"ports", json::array({{{"name", "http"}, {"port", port}, {"targetPort", port}, {"protocol", "TCP"}}})}}},
              {"status", {{"loadBalancer", json::object()}}}};
}

// The home claim, bound as the API server binds one (claim_admission.h), or
// the quota it would exceed, in kube-apiserver's words. The loop's cache holds
// every claim and quota of the namespace that is stored; a claim the API
// server is admitting at this moment is not among them (the one race left,
// bounded by one claim; the quota's status shows the overshoot).
Result<json> ChargeClaim(const ObjectCache& cache, const StoredObject& nb, UuidGenerator& uuids,
                         const std::string& now_text) {
  const std::string size = QuantityText(ObjectAt(nb.object, {"spec", "home"}), "size");
  json claim{{"apiVersion", "v1"},
             {"kind", "PersistentVolumeClaim"},
             {"metadata",
              {{"name", ClaimName(nb.key.name)},
               {"namespace", nb.key.ns},
               {"labels", {{kNotebookLabel, nb.key.name}}},
               {"creationTimestamp", now_text}}},
             {"spec", {{"accessModes", json::array({"ReadWriteOnce"})}, {"resources", {{"requests", {{"storage", size}}}}}}}};
  const int64_t bytes = ClaimBytes(claim);
  int64_t used_count = 0, used_bytes = 0;
  for (const auto& [key, c] : cache.Of(kClaimKind)) {
    if (key.first != nb.key.ns) continue;
    ++used_count;
    used_bytes += ClaimBytes(c.object);
  }
  for (const auto& [key, q] : cache.Of("/ResourceQuota")) {
    if (key.first != nb.key.ns) continue;
    const json& hard = ObjectAt(q.object, {"spec", "hard"});
    std::vector<std::string> requested, used, limited;
    auto limit_of = [&](const char* name) -> std::optional<int64_t> {
      auto it = hard.find(name);
      if (it == hard.end()) return std::nullopt;
      auto limit = ParseUnits(it->is_string() ? it->get<std::string>() : it->dump());
      return limit ? std::optional<int64_t>(*limit) : std::nullopt;
    };
    if (auto limit = limit_of("persistentvolumeclaims"); limit && used_count + 1 > *limit) {
      requested.push_back("persistentvolumeclaims=1");
      used.push_back(fmt::format("persistentvolumeclaims={}", used_count));
      limited.push_back(fmt::format("persistentvolumeclaims={}", *limit));
    }
    if (auto limit = limit_of("requests.storage"); limit && used_bytes + bytes > *limit) {
      requested.push_back("requests.storage=" + FormatBytes(bytes));
      used.push_back("requests.storage=" + FormatBytes(used_bytes));
      limited.push_back("requests.storage=" + FormatBytes(*limit));
    }
    if (requested.empty()) continue;
    return Err(Status::PermissionDenied(fmt::format("exceeded quota: {}, requested: {}, used: {}, limited: {}",
                                                    q.key.name, fmt::join(requested, ","), fmt::join(used, ","),
                                                    fmt::join(limited, ","))));
  }
  const std::string uid = uuids.Next();
  claim["metadata"]["uid"] = uid;
  claim["metadata"]["annotations"] = {{"volume.kubernetes.io/storage-provisioner", "tessera.dev/volume-root"},
                                      {"pv.kubernetes.io/bind-completed", "yes"},
                                      {std::string(kCreatedByAnnotation),
                                       StringAt(nb.object, {"metadata", "annotations",
                                                            std::string(kCreatedByAnnotation).c_str()})}};
  claim["spec"]["volumeName"] = "pvc-" + uid;
  claim["spec"]["volumeMode"] = "Filesystem";
  claim["status"] = {{"phase", "Bound"},
                     {"accessModes", json::array({"ReadWriteOnce"})},
                     {"capacity", {{"storage", FormatBytes(bytes)}}}};
  return claim;
}

// The latest kernel activity its pods' agents reported (Jupyter's /api/status).
std::string LastActivity(const PodIndex& pods, const ObjectKey& workload) {
  std::string latest;
  std::optional<Timestamp> latest_at;
  auto it = pods.find({workload.ns, workload.name});
  if (it == pods.end()) return latest;
  for (const StoredObject* pod : it->second) {
    const std::string text =
        StringAt(pod->object, {"metadata", "annotations", std::string(kLastActivityAnnotation).c_str()});
    auto at = ParseRfc3339(text);
    if (at && (!latest_at || *latest_at < *at)) {
      latest_at = *at;
      latest = text;
    }
  }
  return latest;
}

const StoredObject* LivePod(const PodIndex& pods, const ObjectKey& workload) {
  auto it = pods.find({workload.ns, workload.name});
  if (it == pods.end()) return nullptr;
  for (const StoredObject* pod : it->second) {
    if (!ObjectAt(pod->object, {"metadata"}).contains("deletionTimestamp")) return pod;
  }
  return nullptr;
}

// status.gpuUtilization: one sample a minute (the mean utilisation of the
// Notebook's devices in their agents' last samples; devices without one left out) for the last hour, and
// their mean; minutes it held no GPU (suspended, queued) have no sample.
void RecordGpuUse(json& st, const std::vector<std::optional<GpuUsageSample>>& devices, PassContext& pass) {
  if (devices.empty()) return;
  const int64_t minute_ms = pass.now.ms - pass.now.ms % kGpuUseSampleEvery.ms;
  pass.WakeAt(Timestamp{minute_ms} + kGpuUseSampleEvery);
  json history = json::array();
  for (const json& s : ArrayAt(st, {"gpuUtilization", "history"})) {
    auto at = ParseRfc3339(s.value("time", ""));
    if (at && pass.now - *at < kGpuUseWindow) history.push_back(s);
  }
  if (!history.empty()) {
    auto last = ParseRfc3339(history.back().value("time", ""));
    if (last && last->ms >= minute_ms) return;  // this minute's is taken
  }
  int64_t sum = 0, sampled = 0;
  for (const auto& d : devices) {
    if (!d) continue;
    sum += std::lround(d->utilization * 100);
    ++sampled;
  }
  if (sampled == 0) return;  // its agents have published nothing yet
  history.push_back(json{{"time", FormatRfc3339(Timestamp{minute_ms})}, {"percent", sum / sampled}});
  int64_t total = 0;
  for (const json& s : history) total += s.value("percent", int64_t{0});
  st["gpuUtilization"] = json{{"window", "1h"},
                              {"averagePercent", total / static_cast<int64_t>(history.size())},
                              {"history", std::move(history)}};
}

}  // namespace

json NotebookWorkload(const ObjectCache& cache, const StoredObject& nb, const std::string& now_text) {
  const std::string named = StringAt(nb.object, {"spec", "queueName"});
  return WorkloadFor(nb, named.empty() ? DefaultLocalQueue(cache, nb.key.ns) : named, now_text);
}

std::string NotebookUrl(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/services/{}:http/proxy/", ns, ServiceName(name));
}

void NotebookController::Reconcile(PassContext& pass) {
  for (const auto& [key, nb] : pass.cache.Of(kNotebookKind)) {
    if (ObjectAt(nb.object, {"metadata"}).contains("deletionTimestamp")) continue;
    const json& spec = ObjectAt(nb.object, {"spec"});
    const std::string what = fmt::format("notebook {}/{}", nb.key.ns, nb.key.name);
    json next = nb.object;
    json& st = next["status"];
    st["url"] = NotebookUrl(nb.key.ns, nb.key.name);
    std::vector<WriteOp> unit;
    // 1. The Service, whenever it is missing.
    const ObjectKey service_key{std::string(kServiceKind), nb.key.ns, ServiceName(nb.key.name)};
    if (const StoredObject* service = pass.cache.Find(service_key); service == nullptr) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = service_key, .object = ServiceFor(nb, pass.now_text)},
                      "service for " + what);
    } else if (StringAt(service->object, {"metadata", "annotations", kProxyKeepPathAnnotation}) != "true" ||
               StringAt(service->object, {"metadata", "annotations", kProxyTokenSecretAnnotation}).empty()) {
      json annotated = service->object;  // made before the proxy kept paths and sent tokens
      annotated["metadata"]["annotations"][kProxyKeepPathAnnotation] = "true";
      annotated["metadata"]["annotations"][kProxyTokenSecretAnnotation] = TokenSecretName(nb.key.name);
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = service_key, .object = std::move(annotated),
                              .expected_revision = service->revision},
                      "service for " + what);
    }
    // Jupyter's token, before the Workload whose pod reads it.
    const ObjectKey token_key{"/Secret", nb.key.ns, TokenSecretName(nb.key.name)};
    if (pass.cache.Find(token_key) == nullptr) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = token_key, .object = TokenSecretFor(nb, pass.now_text)},
                      "jupyter token for " + what);
      pass.WakeAt(pass.now);
      continue;
    }
    // 2. The home claim, before the Workload whose pod mounts it.
    if (spec.contains("home")) {
      const ObjectKey claim_key{kClaimKind, nb.key.ns, ClaimName(nb.key.name)};
      if (pass.cache.Find(claim_key) == nullptr) {
        auto claim = ChargeClaim(pass.cache, nb, uuids_, pass.now_text);
        if (!claim) {
          st["phase"] = "Pending";
          st["message"] = fmt::format("its home volume {} cannot be made: {}", ClaimName(nb.key.name),
                                      claim.error().message());
        } else {
          pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = claim_key, .object = std::move(*claim)},
                          "home volume for " + what);
          st["phase"] = "Pending";
          st["message"] = fmt::format("making its home volume {}", ClaimName(nb.key.name));
          pass.WakeAt(pass.now);
        }
        if (next != nb.object) {
          pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = nb.key, .object = std::move(next),
                                  .expected_revision = nb.revision},
                          what);
        }
        continue;
      }
      st["homeVolume"] = ClaimName(nb.key.name);
    }
    // 3. The Workload.
    const ObjectKey wl_key{kWorkloadKind, nb.key.ns, WorkloadName(nb.key.name)};
    const StoredObject* wl = pass.cache.Find(wl_key);
    st["workload"] = wl_key.name;
    if (wl == nullptr) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = wl_key,
                              .object = NotebookWorkload(pass.cache, nb, pass.now_text)},
                      "workload for " + what);
      pass.WakeAt(pass.now);  // its status follows the admission this pass may make
      st["phase"] = spec.value("suspend", false) ? "Suspended" : "Pending";
      st["message"] = "waiting for its workload to be queued";
    } else {
      // 4. Suspend and resume by spec.suspend, and resume from an idle suspension when asked.
      const bool want_suspended = spec.value("suspend", false);
      const bool inactive = WorkloadInactive(wl->object);
      const bool admitted = ObjectAt(wl->object, {"status"}).contains("admission");
      const std::string suspended_at = ConditionValue(wl->object, "Suspended", "lastTransitionTime");
      const std::string suspended_why = ConditionValue(wl->object, "Suspended", "reason");
      const bool idle_suspended = inactive && suspended_why == "Idle";
      const std::string resume_from =
          StringAt(nb.object, {"metadata", "annotations", kNotebookResumeAnnotation});
      if (want_suspended && !inactive) {
        const std::string message = fmt::format(
            "suspended by its spec.suspend: its GPU is freed, its home volume kept; `tessera notebook resume {}` "
            "brings it back",
            nb.key.name);
        StoredObject suspended = *wl;
        suspended.object["spec"]["active"] = false;
        SetCondition(suspended.object, "Suspended", true, "Suspended", message, pass.now_text);
        if (admitted && !ConditionTrue(wl->object, "Evicted")) {
          unit = EvictionOps(suspended, pass.pods, "Suspended", message, pass.now_text);
        } else {
          unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = wl->key, .object = std::move(suspended.object),
                                 .expected_revision = wl->revision});
        }
        pass.events.Record(pass.writer, nb, EventRecorder::Type::kNormal, "Suspended", message, pass.now);
        st["phase"] = "Suspended";
        st["message"] = message;
        st["suspendedAt"] = pass.now_text;
      } else if (!want_suspended && inactive && (!idle_suspended || (!resume_from.empty() && resume_from == suspended_at))) {
        json active = wl->object;
        active["spec"]["active"] = true;
        unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = wl->key, .object = std::move(active),
                               .expected_revision = wl->revision});
        pass.events.Record(pass.writer, nb, EventRecorder::Type::kNormal, "Resuming", "resuming: queued again", pass.now);
        st["phase"] = "Resuming";
        st["message"] = "queued again; it starts when admitted";
      } else if (inactive) {
        st["phase"] = "Suspended";
        st["message"] = ConditionValue(wl->object, "Suspended", "message");
        if (!suspended_at.empty()) st["suspendedAt"] = suspended_at;
      } else {
        // 5. Its phase from the Workload and its pod.
        const StoredObject* pod = LivePod(pass.pods, wl->key);
        const std::string pod_phase = pod ? StringAt(pod->object, {"status", "phase"}) : "";
        const bool evicted = ConditionTrue(wl->object, "Evicted");
        const std::string was = StringAt(nb.object, {"status", "phase"});
        const bool resuming = was == "Suspended" || was == "Resuming";
        bool ready = false;
        for (const json& c : pod ? ArrayAt(pod->object, {"status", "conditions"}) : json::array()) {
          if (c.is_object() && c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
        }
        if (admitted && !evicted && pod_phase == "Running" && ready) {
          st["phase"] = "Running";
          st["message"] = fmt::format("pod {} is running", pod->key.name);
          st.erase("suspendedAt");
        } else if (admitted && !evicted && pod_phase == "Running") {
          st["phase"] = resuming ? "Resuming" : "Pending";
          st["message"] = fmt::format("pod {} is running; its server is not listening on port {} yet", pod->key.name,
                                      Port(spec));
        } else if (admitted && !evicted) {
          st["phase"] = resuming ? "Resuming" : "Pending";
          st["message"] = pod ? fmt::format("pod {} is {}", pod->key.name, pod_phase.empty() ? "Pending" : pod_phase)
                              : "admitted; its pod is being made";
        } else {
          st["phase"] = resuming ? "Resuming" : "Pending";
          const std::string why = ConditionValue(wl->object, evicted ? "Evicted" : "QuotaReserved", "message");
          st["message"] = why.empty() ? "waiting in its queue" : why;
        }
        if (pod != nullptr) {
          st["pod"] = pod->key.name;
        } else {
          st.erase("pod");
        }
      }
      // 6. Activity: the kernels' (from its pod's agent) and since when GPU and kernels are quiet.
      if (const std::string last = LastActivity(pass.pods, wl->key); !last.empty()) st["lastActivity"] = last;
      const std::string idle_since = StringAt(wl->object, {"metadata", "annotations", kIdleSinceAnnotation});
      if (!idle_since.empty() && !inactive) {
        const std::string last = st.value("lastActivity", "");
        const auto last_at = ParseRfc3339(last);
        const auto since_at = ParseRfc3339(idle_since);
        st["idleSince"] = last_at && since_at && *since_at < *last_at ? last : idle_since;
      } else {
        st.erase("idleSince");
      }
      // 7. GPU use over the last hour, a sample a minute while it holds GPUs.
      if (!inactive && admitted) RecordGpuUse(st, WorkloadDeviceSamples(wl->object, pass.gpu_usage()), pass);
    }
    if (next != nb.object) {
      unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = nb.key, .object = std::move(next),
                             .expected_revision = nb.revision});
    }
    if (!unit.empty()) pass.writer.Add(std::move(unit), what);
  }
  DeleteOrphans(pass);
}

void NotebookController::DeleteOrphans(PassContext& pass) {
  // Its Service and its token go too; its home claim stays (delete it by hand to drop the files).
  DeleteOrphansOf(pass, kNotebookKind, kNotebookLabel, {std::string(kServiceKind), "/Secret"}, "notebook",
                  orphans_checked_at_);
}

}  // namespace tessera
