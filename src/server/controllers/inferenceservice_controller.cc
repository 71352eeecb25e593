#include "server/controllers/inferenceservice_controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/convert.h"
#include "api/service.h"
#include "common/time_format.h"
#include "server/api/service_traffic.h"
#include "server/api/traffic_split.h"
#include "server/controllers/job_controller.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPodSet = "replica";
constexpr const char* kPriorityClassKind = "scheduling.k8s.io/PriorityClass";
constexpr const char* kProductionClass = "production";
constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";

// FNV-1a, 64 bits: a revision must not change between builds.
uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Suffix(uint64_t h, int length) {
  std::string out;
  for (int i = 0; i < length; ++i) {
    out += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return out;
}

std::optional<int64_t> IntField(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// The container port named http of the template, else spec.port (8080).
int64_t ServingPort(const json& spec) {
  for (const json& c : ArrayAt(spec, {"template", "spec", "containers"})) {
    for (const json& p : ArrayAt(c, {"ports"})) {
      if (p.is_object() && p.value("name", "") == "http" && p.value("containerPort", 0) > 0) {
        return p.value("containerPort", 0);
      }
    }
  }
  return IntField(spec, "port").value_or(kInferencePort);
}

constexpr int64_t kDefaultTargetConcurrency = 10;  // Knative KPA's container concurrency target
constexpr Duration kDefaultScaleDownDelay = Duration::Seconds(30);
constexpr Duration kRequestStatsPeriod = Duration::Seconds(10);

Duration ScaleDownDelay(const json& spec) {
  const std::string text = StringAt(spec, {"autoscaling", "scaleDownDelay"});
  if (text.empty()) return kDefaultScaleDownDelay;
  if (text == "0") return Duration::Millis(0);
  auto d = ParseDuration(text);
  return d ? *d : kDefaultScaleDownDelay;
}

// NAME cut so that NAME-REVISION-xxxxx-replica-0 (a pod's name, and the
// Workload's name as a label value) stays within 63 characters.
std::string ReplicaBase(const std::string& isvc) { return isvc.substr(0, 36); }
std::string RevisionServiceName(const std::string& isvc, const std::string& revision) {
  return ReplicaBase(isvc) + "-" + revision;
}

json OwnerReference(const StoredObject& isvc) {
  return json::array({{{"apiVersion", "tessera.dev/v1"},
                       {"kind", "InferenceService"},
                       {"name", isvc.key.name},
                       {"uid", StringAt(isvc.object, {"metadata", "uid"})},
                       {"controller", true}}});
}

// spec.priorityClassName, else "production" when that class exists.
std::string PriorityClassOf(const ObjectCache& cache, const json& spec) {
  const std::string named = StringAt(spec, {"priorityClassName"});
  if (!named.empty()) return named;
  if (cache.Find(ObjectKey{kPriorityClassKind, "", kProductionClass}) != nullptr) return kProductionClass;
  return StringAt(spec, {"template", "spec", "priorityClassName"});
}

// spec.queueName, the label kueue.x-k8s.io/queue-name (as a Job's), or the namespace's default queue.
std::string QueueOf(const ObjectCache& cache, const StoredObject& isvc) {
  std::string queue = StringAt(isvc.object, {"spec", "queueName"});
  if (queue.empty()) queue = StringAt(isvc.object, {"metadata", "labels", std::string(kQueueNameLabel).c_str()});
  return queue.empty() ? DefaultLocalQueue(cache, isvc.key.ns) : queue;
}

// A replica's pod template from `tmpl` (the revision's spec.template).
json ReplicaTemplate(const StoredObject& isvc, const json& tmpl, const json& spec, const std::string& revision,
                     const std::string& priority_class) {
  json out = tmpl.is_object() ? tmpl : json::object();
  json& labels = out["metadata"]["labels"];
  if (!labels.is_object()) labels = json::object();
  labels[kInferenceServiceLabel] = isvc.key.name;
  labels[kRevisionLabel] = revision;
  json& pod = out["spec"];
  if (!pod.is_object()) pod = json::object();
  pod["restartPolicy"] = "Never";  // a failed replica is replaced, through the scheduler
  if (!priority_class.empty()) pod["priorityClassName"] = priority_class;
  json& containers = pod["containers"];
  if (!containers.is_array() || containers.empty()) return out;
  json& c = containers[0];
  int64_t port = 0;
  for (const json& p : ArrayAt(c, {"ports"})) {
    if (p.is_object() && p.value("name", "") == "http") port = p.value("containerPort", 0);
  }
  if (port == 0) {
    port = IntField(spec, "port").value_or(kInferencePort);
    if (!c["ports"].is_array()) c["ports"] = json::array();
    c["ports"].push_back({{"name", "http"}, {"containerPort", port}, {"protocol", "TCP"}});
  }
  // PORT first, so that the user's own variables win (as Cloud Run and Knative set it).
  json env = json::array({{{"name", "PORT"}, {"value", std::to_string(port)}}});
  for (const json& e : ArrayAt(c, {"env"})) env.push_back(e);
  c["env"] = std::move(env);
  return out;
}

json ReplicaWorkload(const StoredObject& isvc, const std::string& name, const json& pod_template,
                     const std::string& revision, const std::string& queue, const std::string& priority_class,
                     const std::string& now_text) {
  json pod_set{{"name", kPodSet}, {"count", 1}, {"template", pod_template}};
  json wl_spec{{"queueName", queue}, {"podSets", json::array({pod_set})}};
  if (!priority_class.empty()) wl_spec["priorityClassName"] = priority_class;
  json annotations{{"tessera.dev/type", "inference"}};
  const std::string creator =
      StringAt(isvc.object, {"metadata", "annotations", std::string(kCreatedByAnnotation).c_str()});
  if (!creator.empty()) annotations[std::string(kCreatedByAnnotation)] = creator;
  json metadata{{"name", name},
                {"namespace", isvc.key.ns},
                {"labels", {{kInferenceServiceLabel, isvc.key.name}, {kRevisionLabel, revision}}},
                {"annotations", annotations},
                {"ownerReferences", OwnerReference(isvc)},
                {"creationTimestamp", now_text},
                {"generation", 1}};
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"metadata", metadata}, {"spec", wl_spec}};
}

// Headless (the proxy and the pods reach the replicas through the EndpointSlices;
// a cluster IP is given only by the API server's create).
json ServiceFor(const StoredObject& isvc, const std::string& name, json selector, int64_t port,
                const std::string& now_text) {
  json labels{{kInferenceServiceLabel, isvc.key.name}};
  if (selector.contains(kRevisionLabel)) labels[kRevisionLabel] = selector[kRevisionLabel];
  return json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata",
               {{"name", name},
                {"namespace", isvc.key.ns},
                {"labels", labels},
                {"ownerReferences", OwnerReference(isvc)},
                {"creationTimestamp", now_text}}},
              {"spec",
               {{"type", "ClusterIP"},
                {"clusterIP", "None"},
                {"clusterIPs", json::array({"None"})},
                {"selector", std::move(selector)},
                {"ports", json::array({{{"name", "http"}, {"port", port}, {"targetPort", "http"}, {"protocol", "TCP"}}})}}},
              {"status", {{"loadBalancer", json::object()}}}};
}

// One replica as this pass sees it.
struct Replica {
  const StoredObject* workload = nullptr;
  const StoredObject* pod = nullptr;  // its live pod, if any
  std::string revision;
  bool finished = false;
  bool ready = false;
};

const StoredObject* LivePod(const PodIndex& pods, const ObjectKey& workload) {
  auto it = pods.find({workload.ns, workload.name});
  if (it == pods.end()) return nullptr;
  for (const StoredObject* pod : it->second) {
    if (!ObjectAt(pod->object, {"metadata"}).contains("deletionTimestamp")) return pod;
  }
  return nullptr;
}

// Which of `group` to remove first: not ready before ready, then not admitted
// before admitted, then the newest (as a ReplicaSet scales down).
void SortForRemoval(std::vector<const Replica*>& group) {
  std::stable_sort(group.begin(), group.end(), [](const Replica* a, const Replica* b) {
    if (a->ready != b->ready) return !a->ready;
    const bool a_admitted = ObjectAt(a->workload->object, {"status"}).contains("admission");
    const bool b_admitted = ObjectAt(b->workload->object, {"status"}).contains("admission");
    if (a_admitted != b_admitted) return !a_admitted;
    return StringAt(a->workload->object, {"metadata", "creationTimestamp"}) >
           StringAt(b->workload->object, {"metadata", "creationTimestamp"});
  });
}

// The wait before the next replica after `failures` in a row ended before
// becoming ready: none after the first (a lost replica is replaced at once),
// then 10 s, doubling, at most 5 minutes (the kubelet's CrashLoopBackOff).
Duration ReplicaBackoff(int64_t failures) {
  if (failures <= 1) return Duration::Millis(0);
  const int64_t shift = std::min<int64_t>(failures - 2, 5);
  return Duration::Millis(std::min<int64_t>(10'000LL << shift, 300'000));
}

}  // namespace

std::string InferenceServiceUrl(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/services/{}:http/proxy/", ns, name);
}

std::string InferenceRevision(const json& spec) {
  const json& tmpl = ObjectAt(spec, {"template"});
  return Suffix(Fnv1a(tmpl.dump() + "|" + std::to_string(ServingPort(spec))), 10);
}

json InferenceReplicaWorkload(const ObjectCache& cache, const StoredObject& isvc, const std::string& name,
                              const std::string& now_text) {
  const json& spec = ObjectAt(isvc.object, {"spec"});
  const std::string rev = InferenceRevision(spec);
  const std::string priority_class = PriorityClassOf(cache, spec);
  json pod_template = ReplicaTemplate(isvc, ObjectAt(spec, {"template"}), spec, rev, priority_class);
  pod_template["metadata"]["annotations"][std::string(kTopologyAnnotation)] = "spread";
  return ReplicaWorkload(isvc, name, pod_template, rev, QueueOf(cache, isvc), priority_class, now_text);
}

int64_t ResolveIntOrPercent(const json* value, int64_t replicas, bool round_up, int64_t fallback) {
  if (value == nullptr) return fallback;
  if (value->is_number_integer()) return std::max<int64_t>(0, value->get<int64_t>());
  if (!value->is_string()) return fallback;
  const std::string& text = value->get_ref<const std::string&>();
  if (text.size() < 2 || text.back() != '%') return fallback;
  int64_t pct = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, pct);
  if (ec != std::errc() || end != text.data() + text.size() - 1) return fallback;
  // Kubernetes' GetScaledValueFromIntOrPercent: ceil or floor of replicas * pct / 100.
  return round_up ? (replicas * pct + 99) / 100 : replicas * pct / 100;
}

// status.requests: what the proxy answered over the last minute (service_traffic.h),
// brought up to date every kRequestStatsPeriod at most (as the HPA's status),
// so that steady traffic does not rewrite the object each pass.
void InferenceServiceController::UpdateRequestStats(PassContext& pass, const StoredObject& isvc, json& st) {
  if (pass.traffic == nullptr) return;
  const std::string key = isvc.key.ns + "/" + isvc.key.name;
  const bool shown = st.contains("requests");
  auto [at, fresh] = requests_at_.try_emplace(key, pass.now);
  if (!fresh && pass.now - at->second < kRequestStatsPeriod) {
    if (shown) pass.WakeAt(at->second + kRequestStatsPeriod);
    return;
  }
  const RequestStats stats = pass.traffic->Recent(isvc.key.ns, isvc.key.name);
  if (stats.requests == 0) {
    st.erase("requests");
    requests_at_.erase(key);
    return;
  }
  at->second = pass.now;
  const int64_t milli = stats.PerSecondMilli();
  st["requests"] = {{"window", fmt::format("{}s", RequestStats::kWindowSeconds)},
                    {"count", stats.requests},
                    {"errors", stats.errors},
                    {"perSecond", fmt::format("{}.{:02}", milli / 1000, milli % 1000 / 10)},
                    {"latencyP50Ms", stats.p50_ms},
                    {"latencyP99Ms", stats.p99_ms}};
  pass.WakeAt(pass.now + kRequestStatsPeriod);
}

int64_t InferenceServiceController::WantedReplicas(PassContext& pass, const StoredObject& isvc) {
  const json& spec = ObjectAt(isvc.object, {"spec"});
  if (auto n = IntField(spec, "replicas")) return *n;
  const auto min = IntField(spec, "minReplicas");
  if (!min) return 1;
  const int64_t max = std::max(*min, IntField(spec, "maxReplicas").value_or(*min));
  // Knative's KPA: ceil(in-flight requests / target concurrency per replica),
  // within [min, max]; down only once it was lower for scaleDownDelay.
  const int64_t target = std::max<int64_t>(1, IntField(ObjectAt(spec, {"autoscaling"}), "targetConcurrency")
                                                  .value_or(kDefaultTargetConcurrency));
  const int64_t in_flight = pass.traffic ? pass.traffic->InFlight(isvc.key.ns, isvc.key.name) : 0;
  const int64_t raw = std::clamp((in_flight + target - 1) / target, *min, max);
  const int64_t current =
      std::clamp(IntField(ObjectAt(isvc.object, {"status"}), "replicas").value_or(*min), *min, max);
  const std::string key = isvc.key.ns + "/" + isvc.key.name;
  auto [it, fresh] = needed_at_.try_emplace(key, pass.now);
  if (raw >= current) {
    it->second = pass.now;
    return raw;
  }
  const Duration delay = ScaleDownDelay(spec);
  if (!fresh && pass.now - it->second >= delay) {
    it->second = pass.now;
    return raw;
  }
  pass.WakeAt(it->second + delay);
  return current;
}

void InferenceServiceController::Reconcile(PassContext& pass) {
  // The replicas of each InferenceService, from one walk over the Workloads.
  std::map<std::pair<std::string, std::string>, std::vector<const StoredObject*>> replicas_of;
  for (const auto& [key, w] : pass.cache.Of(kWorkloadKind)) {
    const std::string owner = StringAt(w.object, {"metadata", "labels", kInferenceServiceLabel});
    if (!owner.empty()) replicas_of[{key.first, owner}].push_back(&w);
  }
  for (const auto& [key, isvc] : pass.cache.Of(kInferenceServiceKind)) {
    if (ObjectAt(isvc.object, {"metadata"}).contains("deletionTimestamp")) continue;
    const json& spec = ObjectAt(isvc.object, {"spec"});
    const std::string what = fmt::format("inferenceservice {}/{}", isvc.key.ns, isvc.key.name);
    const json& old_status = ObjectAt(isvc.object, {"status"});
    const std::string revision = InferenceRevision(spec);
    const std::string stable = StringAt(old_status, {"stableRevision"});

    // 1. Rollback, when asked: spec.template back to the stable revision's
    // (or the one before, when the current revision is the stable one).
    const json& annotations = ObjectAt(isvc.object, {"metadata", "annotations"});
    if (annotations.contains(kRollbackAnnotation)) {
      json next = isvc.object;
      next["metadata"]["annotations"].erase(kRollbackAnnotation);
      const bool to_stable = !stable.empty() && stable != revision;
      const json& target = ObjectAt(old_status, {to_stable ? "stableTemplate" : "previousTemplate"});
      const std::string target_revision = StringAt(old_status, {to_stable ? "stableRevision" : "previousRevision"});
      if (!target.empty()) {
        next["spec"]["template"] = target;
        next["metadata"]["generation"] = ObjectAt(isvc.object, {"metadata"}).value("generation", 1) + 1;
        pass.events.Record(pass.writer, isvc, EventRecorder::Type::kNormal, "RolledBack",
                           fmt::format("spec.template rolled back to revision {}", target_revision), pass.now);
      } else {
        pass.events.Record(pass.writer, isvc, EventRecorder::Type::kWarning, "RollbackNotPossible",
                           "no earlier revision was ever fully ready: nothing to roll back to", pass.now);
      }
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = isvc.key, .object = std::move(next),
                              .expected_revision = isvc.revision},
                      "rollback of " + what);
      pass.WakeAt(pass.now);
      continue;
    }

    const int64_t port = ServingPort(spec);
    const std::string priority_class = PriorityClassOf(pass.cache, spec);
    const std::string queue = QueueOf(pass.cache, isvc);
    // 2. The Services: NAME over every replica, NAME-REV per revision that has replicas.
    const ObjectKey service_key{std::string(kServiceKind), isvc.key.ns, isvc.key.name};
    const StoredObject* service = pass.cache.Find(service_key);
    if (service == nullptr) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = service_key,
                              .object = ServiceFor(isvc, isvc.key.name, {{kInferenceServiceLabel, isvc.key.name}},
                                                   port, pass.now_text)},
                      "service for " + what);
    }

    // 3. The replicas by revision; finished ones are replaced, with a back-off
    // when they keep failing (as the kubelet's CrashLoopBackOff).
    int64_t failures = ObjectAt(old_status, {"replicaFailures"}).value("count", int64_t{0});
    std::string last_failure_at = StringAt(old_status, {"replicaFailures", "lastTime"});
    std::string last_failure = StringAt(old_status, {"replicaFailures", "lastMessage"});
    std::vector<Replica> all;
    for (const StoredObject* w : replicas_of[{isvc.key.ns, isvc.key.name}]) {
      if (ObjectAt(w->object, {"metadata"}).contains("deletionTimestamp")) continue;
      Replica r{.workload = w, .pod = LivePod(pass.pods, w->key),
                .revision = StringAt(w->object, {"metadata", "labels", kRevisionLabel})};
      r.finished = ConditionTrue(w->object, "Finished");
      const std::string phase = r.pod ? StringAt(r.pod->object, {"status", "phase"}) : "";
      r.ready = r.pod != nullptr && phase == "Running" && ConditionTrue(r.pod->object, "Ready");
      if (r.finished || phase == "Failed" || phase == "Succeeded") {
        const std::string why = r.pod ? PodFailureMessage(*r.pod) : ConditionValue(w->object, "Finished", "message");
        pass.writer.Add(DeleteWorkloadOps(*w, pass.pods), fmt::format("replace replica {} of {}", w->key.name, what));
        ++failures;
        last_failure_at = pass.now_text;
        last_failure = fmt::format("replica {} ended ({})", w->key.name, why);
        pass.events.Record(pass.writer, isvc, EventRecorder::Type::kWarning, "ReplicaReplaced",
                           fmt::format("replica {} ended ({}); a new one replaces it", w->key.name, why), pass.now);
        pass.WakeAt(pass.now);
        continue;
      }
      all.push_back(r);
    }
    const int64_t wanted = WantedReplicas(pass, isvc);
    const int64_t pct = IntField(spec, "canaryTrafficPercent").value_or(100);
    const json& stable_template = ObjectAt(old_status, {"stableTemplate"});
    const bool canary = pct > 0 && pct < 100 && !stable.empty() && stable != revision && !stable_template.empty();

    // 4. What each revision should have: the current one `wanted` (or its
    // canary share), the stable one `wanted` while a canary runs, others none.
    std::map<std::string, std::vector<const Replica*>> by_revision;
    for (const Replica& r : all) by_revision[r.revision].push_back(&r);
    by_revision[revision];
    if (canary) by_revision[stable];
    auto count_ready = [](const std::vector<const Replica*>& group) {
      return static_cast<int64_t>(std::count_if(group.begin(), group.end(), [](const Replica* r) { return r->ready; }));
    };
    std::vector<WriteOp> creates;
    std::vector<const Replica*> removals;
    // One new replica per pass: the next one is made once this one's pod is
    // bound, so that it can avoid its node (spread: replicas prefer distinct
    // nodes; the core spreads one pod set, and each replica is its own).
    std::string spread_from;
    {
      std::set<std::string> nodes;
      for (const Replica& r : all) {
        const std::string node = r.pod ? StringAt(r.pod->object, {"spec", "nodeName"}) : "";
        if (!node.empty()) nodes.insert(node);
      }
      spread_from = fmt::format("{}", fmt::join(nodes, ","));
    }
    bool more_to_make = false;
    // A replica that becomes ready ends a run of failures.
    if (std::any_of(all.begin(), all.end(), [](const Replica& r) { return r.ready; })) failures = 0;
    std::optional<Timestamp> backoff_until;
    if (auto at = ParseRfc3339(last_failure_at); at && failures > 0) {
      const Duration delay = ReplicaBackoff(failures);
      if (pass.now < *at + delay) backoff_until = *at + delay;
    }
    auto create = [&](const std::string& rev, const json& tmpl, int64_t n) {
      if (n <= 0) return;
      if (backoff_until) {
        pass.WakeAt(*backoff_until);
        return;
      }
      if (!creates.empty() || n > 1) more_to_make = true;
      if (!creates.empty()) return;
      const std::string name = fmt::format("{}-{}-{}", ReplicaBase(isvc.key.name), rev, Suffix(Fnv1a(uuids_.Next()), 5));
      json pod_template = ReplicaTemplate(isvc, tmpl, spec, rev, priority_class);
      pod_template["metadata"]["annotations"][std::string(kTopologyAnnotation)] = "spread";
      if (!spread_from.empty()) {
        pod_template["metadata"]["annotations"][std::string(kSpreadFromNodesAnnotation)] = spread_from;
      }
      creates.push_back(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kWorkloadKind, isvc.key.ns, name},
                                .object = ReplicaWorkload(isvc, name, pod_template, rev, queue, priority_class,
                                                          pass.now_text)});
    };
    auto remove = [&](std::vector<const Replica*> group, int64_t n) {
      SortForRemoval(group);
      for (int64_t i = 0; i < n && i < static_cast<int64_t>(group.size()); ++i) removals.push_back(group[i]);
    };
    auto scale = [&](const std::string& rev, const json& tmpl, int64_t n) {
      const auto& group = by_revision[rev];
      const int64_t have = static_cast<int64_t>(group.size());
      if (have < n) create(rev, tmpl, n - have);
      if (have > n) remove(group, have - n);
    };
    const json& tmpl = ObjectAt(spec, {"template"});
    std::map<std::string, int64_t> traffic;
    if (canary) {
      const int64_t canary_replicas = wanted == 0 ? 0 : std::max<int64_t>(1, (wanted * pct + 99) / 100);
      scale(revision, tmpl, canary_replicas);
      scale(stable, stable_template, wanted);
      for (const auto& [rev, group] : by_revision) {
        if (rev != revision && rev != stable) remove(group, static_cast<int64_t>(group.size()));
      }
      const int64_t new_ready = count_ready(by_revision[revision]);
      const int64_t stable_ready = count_ready(by_revision[stable]);
      traffic[revision] = new_ready == 0 ? 0 : stable_ready == 0 ? 100 : pct;
      traffic[stable] = 100 - traffic[revision];
    } else {
      // A Deployment's rolling update (RollingUpdate strategy).
      const json& rollout = ObjectAt(spec, {"rollout"});
      auto field = [&](const char* k) -> const json* {
        auto it = rollout.find(k);
        return it == rollout.end() ? nullptr : &*it;
      };
      const int64_t surge = ResolveIntOrPercent(field("maxSurge"), wanted, true, (wanted * 25 + 99) / 100);
      int64_t unavailable = ResolveIntOrPercent(field("maxUnavailable"), wanted, false, wanted * 25 / 100);
      if (surge == 0 && unavailable == 0) unavailable = 1;  // as Kubernetes: something must be able to move
      const auto& current = by_revision[revision];
      const int64_t cur = static_cast<int64_t>(current.size());
      std::vector<const Replica*> old;
      for (const auto& [rev, group] : by_revision) {
        if (rev != revision) old.insert(old.end(), group.begin(), group.end());
      }
      const int64_t old_count = static_cast<int64_t>(old.size());
      if (old_count == 0) {
        scale(revision, tmpl, wanted);
      } else {
        const int64_t total = cur + old_count;
        const int64_t up = std::min(wanted - cur, wanted + surge - total);
        if (up > 0) create(revision, tmpl, up);
        // Old replicas go while replicas - maxUnavailable stay ready, counting
        // the new ones that are not ready yet as unavailable.
        const int64_t new_unavailable = cur - count_ready(current);
        const int64_t min_available = wanted - unavailable;
        const int64_t down = std::min(old_count, total - min_available - new_unavailable);
        if (down > 0) remove(old, down);
      }
      // Traffic follows the ready endpoints (the Service NAME over all of them).
      int64_t ready_all = 0;
      for (const auto& [rev, group] : by_revision) ready_all += count_ready(group);
      for (const auto& [rev, group] : by_revision) {
        traffic[rev] = ready_all == 0 ? (rev == revision ? 100 : 0) : count_ready(group) * 100 / ready_all;
      }
    }
    for (const Replica* r : removals) {
      pass.writer.Add(DeleteWorkloadOps(*r->workload, pass.pods),
                      fmt::format("remove replica {} of {}", r->workload->key.name, what));
    }
    if (!creates.empty()) {
      pass.writer.Add(std::move(creates), "replicas for " + what);
      pass.WakeAt(pass.now);  // their admission this pass, and the status after
    }
    if (!removals.empty() || more_to_make) pass.WakeAt(pass.now);

    // 5. The per-revision Services, and the split on NAME while a canary runs.
    std::set<std::string> serving;
    for (const auto& [rev, group] : by_revision) {
      if (group.empty() && rev != revision && !(canary && rev == stable)) continue;
      serving.insert(rev);
      const ObjectKey rev_key{std::string(kServiceKind), isvc.key.ns, RevisionServiceName(isvc.key.name, rev)};
      if (pass.cache.Find(rev_key) == nullptr) {
        pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = rev_key,
                                .object = ServiceFor(isvc, rev_key.name,
                                                     {{kInferenceServiceLabel, isvc.key.name}, {kRevisionLabel, rev}},
                                                     port, pass.now_text)},
                        "revision service for " + what);
      }
    }
    for (const auto& [skey, s] : pass.cache.Of(std::string(kServiceKind))) {
      if (skey.first != isvc.key.ns || StringAt(s.object, {"metadata", "labels", kInferenceServiceLabel}) != isvc.key.name)
        continue;
      const std::string rev = StringAt(s.object, {"metadata", "labels", kRevisionLabel});
      if (!rev.empty() && !serving.contains(rev)) {
        pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = s.key},
                        fmt::format("delete service {} of a retired revision", s.key.name));
      }
    }
    if (service != nullptr) {
      json split = json::object();
      if (canary) {
        for (const std::string& rev : {revision, stable}) split[RevisionServiceName(isvc.key.name, rev)] = traffic[rev];
      }
      const std::string want = canary ? split.dump() : "";
      const std::string have =
          StringAt(service->object, {"metadata", "annotations", std::string(kTrafficSplitAnnotation).c_str()});
      if (want != have) {
        json next = service->object;
        if (canary) {
          next["metadata"]["annotations"][std::string(kTrafficSplitAnnotation)] = want;
        } else if (next["metadata"].contains("annotations")) {
          next["metadata"]["annotations"].erase(std::string(kTrafficSplitAnnotation));
        }
        pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = service->key, .object = std::move(next),
                                .expected_revision = service->revision},
                        "traffic split of " + what);
      }
    }

    // 6. Status.
    json next = isvc.object;
    json& st = next["status"];
    if (!st.is_object()) st = json::object();
    st["url"] = InferenceServiceUrl(isvc.key.ns, isvc.key.name);
    st["replicas"] = wanted;
    st["revision"] = revision;
    st["observedGeneration"] = ObjectAt(isvc.object, {"metadata"}).value("generation", 1);
    int64_t ready_all = 0;
    json revisions = json::array();
    for (const auto& [rev, group] : by_revision) {
      if (group.empty() && rev != revision) continue;
      const int64_t ready = count_ready(group);
      ready_all += ready;
      revisions.push_back({{"name", rev},
                           {"replicas", static_cast<int64_t>(group.size())},
                           {"readyReplicas", ready},
                           {"trafficPercent", traffic[rev]}});
    }
    st["readyReplicas"] = ready_all;
    st["revisions"] = std::move(revisions);
    UpdateRequestStats(pass, isvc, st);
    // The stable revision: the current one once all its replicas are ready and no other is left.
    const int64_t current_ready = count_ready(by_revision[revision]);
    const bool settled = current_ready == wanted && wanted > 0 &&
                         std::all_of(by_revision.begin(), by_revision.end(),
                                     [&](const auto& e) { return e.first == revision || e.second.empty(); });
    if (settled && stable != revision) {
      if (!stable.empty()) {
        st["previousRevision"] = stable;
        st["previousTemplate"] = ObjectAt(old_status, {"stableTemplate"});
      }
      st["stableRevision"] = revision;
      st["stableTemplate"] = tmpl;
      pass.events.Record(pass.writer, isvc, EventRecorder::Type::kNormal, "RolledOut",
                         fmt::format("revision {} is ready: {} of {} replicas", revision, current_ready, wanted),
                         pass.now);
    }
    // Why a replica waits: one the scheduler has not admitted says it in its
    // Workload's words (quota, capacity, priority); else one that starts.
    std::string waiting;
    for (const bool want_admitted : {false, true}) {
      for (const Replica& r : all) {
        if (r.ready || !waiting.empty()) continue;
        const bool admitted = ObjectAt(r.workload->object, {"status"}).contains("admission");
        if (admitted != want_admitted) continue;
        std::string why;
        if (!admitted) {
          why = ConditionValue(r.workload->object, "QuotaReserved", "message");
          if (why.empty()) why = "queued; not yet considered by the scheduler";
        } else if (r.pod == nullptr) {
          why = "admitted; its pod is being made";
        } else {
          const std::string phase = StringAt(r.pod->object, {"status", "phase"});
          why = fmt::format("pod {} is {}, not ready yet", r.pod->key.name, phase.empty() ? "Pending" : phase);
        }
        waiting = fmt::format("replica {} waits: {}", r.workload->key.name, why);
      }
    }
    if (backoff_until) {
      waiting = fmt::format("back-off: {} replicas in a row ended before becoming ready (the last: {}); the next "
                            "starts in {} s",
                            failures, last_failure, (*backoff_until - pass.now).ms / 1000 + 1);
    }
    if (failures > 0) {
      st["replicaFailures"] = {{"count", failures}, {"lastTime", last_failure_at}, {"lastMessage", last_failure}};
    } else {
      st.erase("replicaFailures");
    }
    if (waiting.empty()) {
      st.erase("message");
    } else {
      st["message"] = waiting;
    }
    const bool ready = ready_all >= wanted && wanted > 0;
    SetCondition(next, "Ready", ready, ready ? "ReplicasReady" : wanted == 0 ? "ScaledToZero" : "ReplicasNotReady",
                 ready ? fmt::format("{} of {} replicas ready", ready_all, wanted)
                       : (waiting.empty() ? fmt::format("{} of {} replicas ready", ready_all, wanted) : waiting),
                 pass.now_text);
    if (next != isvc.object) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = isvc.key, .object = std::move(next),
                              .expected_revision = isvc.revision},
                      what);
    }
  }
  DeleteOrphans(pass);
}

void InferenceServiceController::DeleteOrphans(PassContext& pass) {
  DeleteOrphansOf(pass, kInferenceServiceKind, kInferenceServiceLabel, {std::string(kServiceKind)}, "inferenceservice",
                  orphans_checked_at_);
}

}  // namespace tessera
