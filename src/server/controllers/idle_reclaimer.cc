#include "server/controllers/idle_reclaimer.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/node_annotations.h"
#include "common/time_format.h"
#include "server/object_json.h"
#include "server/controllers/workload_lifecycle.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kTypeAnnotation = "tessera.dev/type";

std::string Annotation(const json& obj, const char* key) { return StringAt(obj, {"metadata", "annotations", key}); }

// nullopt: never idle (a timeout of "0").
std::optional<Duration> IdleTimeout(const ObjectCache& cache, const json& workload) {
  std::string text = Annotation(workload, kIdleTimeoutAnnotation);
  if (text.empty()) {
    const std::string cq = StringAt(workload, {"status", "admission", "clusterQueue"});
    if (const StoredObject* q = cache.Find(ObjectKey{"kueue.x-k8s.io/ClusterQueue", "", cq})) {
      text = Annotation(q->object, kIdleTimeoutAnnotation);
    }
  }
  if (text == "0") return std::nullopt;
  if (auto d = ParseDuration(text); !text.empty() && d) {
    if (d->ms <= 0) return std::nullopt;
    return *d;
  }
  return kDefaultIdleTimeout;
}

// The latest kernel activity the workload's pods report; nullopt when none does.
std::optional<Timestamp> KernelActivity(const PodIndex& pods, const std::pair<std::string, std::string>& key) {
  std::optional<Timestamp> latest;
  auto it = pods.find(key);
  if (it == pods.end()) return latest;
  for (const StoredObject* pod : it->second) {
    auto at = ParseRfc3339(Annotation(pod->object, std::string(kLastActivityAnnotation).c_str()));
    if (at && (!latest || *latest < *at)) latest = *at;
  }
  return latest;
}

// Every device the workload holds, idle in its last sample; false when one has none.
bool AllDevicesIdle(const json& workload, const GpuUsageByDevice& usage) {
  const auto samples = WorkloadDeviceSamples(workload, usage);
  return !samples.empty() && std::ranges::all_of(samples, [](const std::optional<GpuUsageSample>& s) {
    return s && s->utilization < kIdleUtilization;
  });
}

}  // namespace

bool WorkloadInactive(const json& workload) {
  auto spec = workload.find("spec");
  if (spec == workload.end() || !spec->is_object()) return false;
  auto it = spec->find("active");
  return it != spec->end() && it->is_boolean() && !it->get<bool>();
}

void IdleReclaimer::Reconcile(PassContext& pass) {
  const ObjectCache& cache = pass.cache;
  const WorkloadSubsets& subsets = pass.workloads;
  const PodIndex& pods = pass.pods;
  const GpuUsageByDevice& usage = pass.gpu_usage();
  const Timestamp now = pass.now;
  BatchedWriter& writer = pass.writer;
  EventRecorder& events = pass.events;
  const std::string now_text = FormatRfc3339(now);
  std::set<std::pair<std::string, std::string>> resumed;
  for (const auto& [key, held] : subsets.suspended()) {
    const StoredObject& w = *held;
    // Resumed (spec.active true again) after a suspension: say so, once.
    if (WorkloadInactive(w.object)) continue;
    json next = w.object;
    SetCondition(next, "Suspended", false, "Resumed", "resumed; waiting in its queue", now_text);
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
               fmt::format("resume workload {}/{}", key.first, key.second));
    events.Record(writer, w, EventRecorder::Type::kNormal, "Resumed", "resumed; waiting in its queue", now);
    resumed.insert(key);
  }
  for (const auto& [key, held] : subsets.admitted()) {
    const StoredObject& w = *held;
    if (resumed.contains(key) || Annotation(w.object, kTypeAnnotation) != "notebook") continue;
    if (ConditionTrue(w.object, "Evicted") || WorkloadInactive(w.object)) continue;
    const std::string since_text = Annotation(w.object, kIdleSinceAnnotation);
    const bool idle = AllDevicesIdle(w.object, usage);
    if (!idle) {
      if (since_text.empty()) continue;
      json next = w.object;
      next["metadata"]["annotations"].erase(kIdleSinceAnnotation);
      writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
                 fmt::format("busy again: workload {}/{}", key.first, key.second));
      continue;
    }
    auto since = ParseRfc3339(since_text);
    if (!since) {
      json next = w.object;
      next["metadata"]["annotations"][kIdleSinceAnnotation] = now_text;
      writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
                 fmt::format("idle: workload {}/{}", key.first, key.second));
      if (auto timeout = IdleTimeout(cache, w.object)) pass.WakeAt(now + *timeout);
      continue;
    }
    const std::optional<Duration> timeout = IdleTimeout(cache, w.object);
    if (!timeout) continue;
    // Quiet since the later of: its GPUs went idle, its kernels' last activity.
    const std::optional<Timestamp> kernel = KernelActivity(pods, key);
    const Timestamp quiet = kernel && *since < *kernel ? *kernel : *since;
    if (now - quiet < *timeout) {
      pass.WakeAt(quiet + *timeout);  // nothing else need happen for its timeout to pass
      continue;
    }
    const std::string notebook = StringAt(w.object, {"metadata", "labels", "tessera.dev/notebook"});
    const std::string message = fmt::format(
        "suspended: its GPUs were idle (under {:.0f} % utilisation){} for {} s, longer than its idle timeout of {} s; "
        "{}; `{}` brings it back",
        kIdleUtilization * 100,
        kernel ? fmt::format(" and its kernels quiet (last activity {})", FormatRfc3339(*kernel)) : "",
        (now - quiet).ms / 1000, timeout->ms / 1000,
        notebook.empty() ? "its checkpoint directory is kept" : "its home volume is kept",
        notebook.empty() ? "tessera resume " + key.second : "tessera notebook open " + notebook);
    StoredObject suspended = w;
    suspended.object["spec"]["active"] = false;
    suspended.object["metadata"]["annotations"].erase(kIdleSinceAnnotation);
    SetCondition(suspended.object, "Suspended", true, "Idle", message, now_text);
    writer.Add(EvictionOps(suspended, pods, "Suspended", message, now_text),
               fmt::format("suspend idle workload {}/{}", key.first, key.second));
    events.Record(writer, w, EventRecorder::Type::kNormal, "Suspended", message, now);
  }
}

}  // namespace tessera
