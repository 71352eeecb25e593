#include "server/controllers/trainingjob_controller.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "api/convert.h"
#include "common/time_format.h"
#include "server/controllers/job_controller.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kOwnerLabel = "tessera.dev/trainingjob";

std::string WorkloadName(const std::string& job) { return "trainingjob-" + job; }

std::optional<int64_t> IntField(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// The worker template with the torchrun variables Kubeflow sets ($(VAR) expands
// the agent's MASTER_ADDR, MASTER_PORT and RANK).
json WorkerTemplate(const json& spec, int64_t max_workers) {
  json tmpl = ObjectAt(spec, {"template"});
  const int64_t nproc = IntField(spec, "nprocPerNode").value_or(1);
  const std::string nnodes = spec.contains("replicas")
                                 ? std::to_string(max_workers)
                                 : fmt::format("{}:{}", IntField(spec, "minReplicas").value_or(1), max_workers);
  // A worker does not restart alone: the gang restarts (spec.restartPolicy).
  if (StringAt(tmpl, {"spec", "restartPolicy"}).empty()) tmpl["spec"]["restartPolicy"] = "Never";
  json& containers = tmpl["spec"]["containers"];
  if (!containers.is_array()) return tmpl;
  const json added = json::array({{{"name", "NODE_RANK"}, {"value", "$(RANK)"}},
                                  {{"name", "PET_NODE_RANK"}, {"value", "$(RANK)"}},
                                  {{"name", "PET_NNODES"}, {"value", nnodes}},
                                  {{"name", "PET_NPROC_PER_NODE"}, {"value", std::to_string(nproc)}},
                                  {{"name", "PET_MASTER_ADDR"}, {"value", "$(MASTER_ADDR)"}},
                                  {{"name", "PET_MASTER_PORT"}, {"value", "$(MASTER_PORT)"}}});
  for (json& c : containers) {
    json env = json::array();
    for (const json& e : added) env.push_back(e);
    // The user's own variables come last and win, as in Kubernetes.
    if (c.contains("env") && c["env"].is_array()) {
      for (const json& e : c["env"]) env.push_back(e);
    }
    c["env"] = std::move(env);
  }
  return tmpl;
}

json WorkloadFor(const StoredObject& tj, const std::string& queue) {
  const json& spec = ObjectAt(tj.object, {"spec"});
  const int64_t max = IntField(spec, "replicas").value_or(IntField(spec, "maxReplicas").value_or(1));
  const int64_t min = IntField(spec, "replicas").value_or(IntField(spec, "minReplicas").value_or(max));
  json tmpl = WorkerTemplate(spec, max);
  json pod_set{{"name", "worker"}, {"count", max}, {"minCount", min}, {"template", tmpl}};
  json wl_spec{{"queueName", queue}, {"podSets", json::array({pod_set})}};
  const std::string priority_class = StringAt(tmpl, {"spec", "priorityClassName"});
  if (!priority_class.empty()) wl_spec["priorityClassName"] = priority_class;
  json metadata{{"name", WorkloadName(tj.key.name)},
                {"namespace", tj.key.ns},
                {"labels", {{kOwnerLabel, tj.key.name}}},
                {"annotations", {{"tessera.dev/type", "training"}}},
                {"ownerReferences",
                 json::array({{{"apiVersion", "tessera.dev/v1"},
                               {"kind", "TrainingJob"},
                               {"name", tj.key.name},
                               {"uid", StringAt(tj.object, {"metadata", "uid"})},
                               {"controller", true}}})}};
  if (auto deadline = IntField(spec, "activeDeadlineSeconds")) {
    metadata["annotations"][std::string(kMaxRunSecondsAnnotation)] = std::to_string(*deadline);
  }
  const std::string creator = StringAt(tj.object, {"metadata", "annotations", std::string(kCreatedByAnnotation).c_str()});
  if (!creator.empty()) metadata["annotations"][std::string(kCreatedByAnnotation)] = creator;
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"metadata", metadata}, {"spec", wl_spec}};
}

std::string GrowthName(const std::string& job) { return WorkloadName(job) + "-grow"; }

// The placeholder that claims room for `extra` more workers of `wl`'s gang:
// the same worker template, at a priority below all real work (it takes only
// room nobody waiting wants, and anyone may preempt it), never preempting.
json GrowthPlaceholderFor(const StoredObject& tj, const StoredObject& wl, int64_t extra, const std::string& now_text) {
  json spec = ObjectAt(wl.object, {"spec"});
  spec.erase("priorityClassName");  // its value and non-preemptibility are not the placeholder's
  spec["priority"] = kGrowthPlaceholderPriority;
  json& pod_set = spec["podSets"][0];
  pod_set["count"] = extra;
  pod_set["minCount"] = 1;
  json metadata{{"name", GrowthName(tj.key.name)},
                {"namespace", tj.key.ns},
                {"labels", {{kOwnerLabel, tj.key.name}}},
                {"annotations", {{std::string(kPlaceholderAnnotation), "true"}, {"tessera.dev/type", "training"}}},
                {"ownerReferences", ArrayAt(wl.object, {"metadata", "ownerReferences"})},
                {"creationTimestamp", now_text},
                {"generation", 1}};
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"metadata", metadata}, {"spec", spec}};
}

int64_t AdmittedWorkers(const json& workload) {
  int64_t n = 0;
  for (const json& a : ArrayAt(workload, {"status", "admission", "podSetAssignments"})) {
    if (a.is_object()) n += a.value("count", 0);
  }
  return n;
}

}  // namespace

json TrainingJobWorkload(const ObjectCache& cache, const StoredObject& tj, const std::string& now_text) {
  const std::string named = StringAt(tj.object, {"spec", "queueName"});
  json workload = WorkloadFor(tj, named.empty() ? DefaultLocalQueue(cache, tj.key.ns) : named);
  workload["metadata"]["creationTimestamp"] = now_text;
  workload["metadata"]["generation"] = 1;
  return workload;
}

void TrainingJobController::Reconcile(PassContext& pass) {
  // For each TrainingJob in flight: 1. its Workload, made when missing; 2. a
  // failed worker restarts the gang (eviction, then the requeue controller
  // queues it again) while restarts are left; 3. its status from the Workload
  // and the pods.
  for (const auto& [key, held] : pass.cache.ActiveOf(kTrainingJobKind)) {
    const StoredObject& tj = *held;
    const json& spec = ObjectAt(tj.object, {"spec"});
    const StoredObject* wl = pass.cache.Find(ObjectKey{kWorkloadKind, tj.key.ns, WorkloadName(tj.key.name)});
    if (wl == nullptr) {
      json workload = TrainingJobWorkload(pass.cache, tj, pass.now_text);
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate,
                              .key = ObjectKey{kWorkloadKind, tj.key.ns, WorkloadName(tj.key.name)},
                              .object = std::move(workload)},
                      fmt::format("workload for trainingjob {}/{}", tj.key.ns, tj.key.name));
      pass.WakeAt(pass.now);  // its status follows the admission this pass may make
      continue;
    }
    const json& status = ObjectAt(tj.object, {"status"});
    const int64_t restarts = IntField(status, "restarts").value_or(0);
    const int64_t backoff_limit = IntField(spec, "backoffLimit").value_or(kDefaultTrainingBackoffLimit);
    const bool restart_on_failure = StringAt(tj.object, {"spec", "restartPolicy"}) != "Never";
    auto pods_it = pass.pods.find({wl->key.ns, wl->key.name});
    const StoredObject* failed = nullptr;
    int64_t running = 0, ended = 0, live = 0;
    if (pods_it != pass.pods.end()) {
      for (const StoredObject* pod : pods_it->second) {
        if (ObjectAt(pod->object, {"metadata"}).contains("deletionTimestamp")) continue;
        const std::string phase = StringAt(pod->object, {"status", "phase"});
        if (phase == "Failed" && failed == nullptr) failed = pod;
        if (phase == "Running") ++running;
        if (phase == "Succeeded" || phase == "Failed") ++ended;
        ++live;
      }
    }
    // When every worker has ended, the workload lifecycle (later in this pass)
    // finishes the Workload: the next pass carries that to the TrainingJob at
    // once. (Not while some still run: that would be a pass after pass.)
    if (live > 0 && ended == live && !ConditionTrue(wl->object, "Finished")) pass.WakeAt(pass.now);

    json next = tj.object;
    json& st = next["status"];
    st["workload"] = wl->key.name;
    const bool admitted = ObjectAt(wl->object, {"status"}).contains("admission");
    const bool evicted = ConditionTrue(wl->object, "Evicted");
    const StoredObject* growth = pass.cache.Find(ObjectKey{kWorkloadKind, tj.key.ns, GrowthName(tj.key.name)});
    std::vector<WriteOp> unit;
    // The growth placeholder goes when the gang ends, and when the gang's pods
    // have all stopped for a restart or a resize: its room is then the gang's,
    // in this very pass (the requeue controller queues the gang after this one).
    const bool no_pods = pods_it == pass.pods.end() || pods_it->second.empty();  // terminating ones count
    if (growth != nullptr && (ConditionTrue(wl->object, "Finished") || !admitted || (evicted && no_pods))) {
      unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = growth->key});
      growth = nullptr;
    }
    std::string phase;
    std::string message;
    if (ConditionTrue(wl->object, "Finished")) {
      const bool ok = ConditionValue(wl->object, "Finished", "reason") == "Succeeded";
      phase = ok ? "Succeeded" : "Failed";
      message = ConditionValue(wl->object, "Finished", "message");
      SetCondition(next, ok ? "Succeeded" : "Failed", true, ok ? "Succeeded" : ConditionValue(wl->object, "Finished", "reason"),
                   message, pass.now_text);
      if (!ok && failed != nullptr && restart_on_failure && restarts >= backoff_limit) {
        message = fmt::format("{} (the gang restarted {} times, its backoffLimit)", message, restarts);
      }
      if (!st.contains("completionTime")) st["completionTime"] = pass.now_text;
    } else if (admitted && !evicted && failed != nullptr && restart_on_failure && restarts < backoff_limit) {
      // 2. A worker failed: the gang restarts from its last checkpoint.
      phase = "Restarting";
      message = fmt::format("{}; restarting the gang from its last checkpoint (restart {} of {})",
                            PodFailureMessage(*failed), restarts + 1, backoff_limit);
      st["restarts"] = restarts + 1;
      unit = EvictionOps(*wl, pass.pods, "GangRestart", message, pass.now_text);
      pass.events.Record(pass.writer, tj, EventRecorder::Type::kWarning, "GangRestart", message, pass.now);
    } else if (admitted && !evicted && failed != nullptr) {
      // A worker failed with no restart left (or restartPolicy Never): the
      // Workload ends Failed and what still runs stops.
      phase = "Failed";
      message = restart_on_failure ? fmt::format("{} (the gang restarted {} times, its backoffLimit)",
                                                 PodFailureMessage(*failed), restarts)
                                   : PodFailureMessage(*failed);
      unit = EvictionOps(*wl, pass.pods, "Failed", message, pass.now_text);
      unit.front().object = wl->object;
      SetCondition(unit.front().object, "Finished", true, "Failed", message, pass.now_text);
      SetCondition(next, "Failed", true, restart_on_failure ? "BackoffLimitExceeded" : "WorkerFailed", message,
                   pass.now_text);
      if (!st.contains("completionTime")) st["completionTime"] = pass.now_text;
    } else if (admitted && !evicted) {
      const int64_t world = AdmittedWorkers(wl->object);
      phase = running == world ? "Running" : "Starting";
      st["worldSize"] = world;
      message = fmt::format("{} of {} workers running", running, world);
      if (!st.contains("startTime")) st["startTime"] = pass.now_text;
      const int64_t max = IntField(spec, "maxReplicas").value_or(world);
      if (!spec.contains("replicas") && world < max && running == world) {
        Grow(pass, tj, *wl, growth, world, max, st, message, unit);
        if (!unit.empty() && unit.front().key == wl->key) phase = "Resizing";
      }
    } else {
      const bool resizing = evicted && ConditionValue(wl->object, "Evicted", "reason") == "Resizing";
      phase = resizing ? "Resizing" : evicted || restarts > 0 ? "Restarting" : "Pending";
      message = ConditionValue(wl->object, evicted ? "Evicted" : "QuotaReserved", "message");
    }
    st["phase"] = phase;
    st["message"] = message;
    const std::string checkpoint =
        StringAt(wl->object, {"metadata", "annotations", std::string(kLastCheckpointAnnotation).c_str()});
    if (!checkpoint.empty()) st["lastCheckpoint"] = checkpoint;
    if (next != tj.object) {
      unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = tj.key, .object = std::move(next),
                             .expected_revision = tj.revision});
    }
    if (!unit.empty()) pass.writer.Add(std::move(unit), fmt::format("trainingjob {}/{}", tj.key.ns, tj.key.name));
  }
  DeleteOrphans(pass);
}

void TrainingJobController::Grow(PassContext& pass, const StoredObject& tj, const StoredObject& wl,
                                 const StoredObject* growth, int64_t world, int64_t max, json& st,
                                 std::string& message, std::vector<WriteOp>& unit) {
  const std::string checkpoint =
      StringAt(wl.object, {"metadata", "annotations", std::string(kLastCheckpointAnnotation).c_str()});
  if (growth == nullptr) {
    // Only a gang that checkpoints can restart without losing its work; and
    // after a try that found no checkpoint in time, only after a new one.
    if (checkpoint.empty()) {
      message += fmt::format("; it grows toward {} workers once it reports a checkpoint", max);
      return;
    }
    if (checkpoint == StringAt(st, {"growthSkippedAt"})) return;
    pass.writer.Add(WriteOp{.op = WriteOp::Kind::kCreate,
                            .key = ObjectKey{kWorkloadKind, tj.key.ns, GrowthName(tj.key.name)},
                            .object = GrowthPlaceholderFor(tj, wl, max - world, pass.now_text)},
                    fmt::format("growth placeholder of trainingjob {}/{}", tj.key.ns, tj.key.name));
    message += fmt::format("; waiting for room to grow to {} workers", max);
    return;
  }
  const bool held = ObjectAt(growth->object, {"status"}).contains("admission") && !ConditionTrue(growth->object, "Evicted");
  if (!held) {
    message += fmt::format("; waiting for room to grow to {} workers", max);
    return;
  }
  const int64_t extra = AdmittedWorkers(growth->object);
  const Result<Timestamp> held_since = ParseRfc3339(ConditionValue(growth->object, "Admitted", "lastTransitionTime"));
  const Result<Timestamp> checkpointed = ParseRfc3339(checkpoint);
  if (held_since && checkpointed && *checkpointed >= *held_since) {
    // Restart at the checkpoint: the gang's pods stop, it is queued again with
    // the placeholder's room free, and starts with more workers.
    message = fmt::format("growing from {} to {} workers: room was free and the gang checkpointed at {}", world,
                          world + extra, checkpoint);
    std::vector<WriteOp> evict = EvictionOps(wl, pass.pods, "Resizing", message, pass.now_text);
    unit.insert(unit.begin(), std::make_move_iterator(evict.begin()), std::make_move_iterator(evict.end()));
    pass.events.Record(pass.writer, tj, EventRecorder::Type::kNormal, "Resizing", message, pass.now);
    return;
  }
  if (held_since && pass.now >= *held_since + kGrowthCheckpointWait) {
    // No checkpoint came: the room goes back rather than be held idle.
    unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = growth->key});
    st["growthSkippedAt"] = checkpoint;
    const std::string why = fmt::format(
        "room for {} more workers was free for {}s but no checkpoint came; the gang keeps {} workers and tries again "
        "after its next checkpoint",
        extra, kGrowthCheckpointWait.ms / 1000, world);
    pass.events.Record(pass.writer, tj, EventRecorder::Type::kNormal, "GrowthSkipped", why, pass.now);
    return;
  }
  if (held_since) pass.WakeAt(*held_since + kGrowthCheckpointWait);
  message += fmt::format("; room for {} more workers is held: the gang grows to {} at its next checkpoint", extra,
                         world + extra);
}

void TrainingJobController::DeleteOrphans(PassContext& pass) {
  DeleteOrphansOf(pass, kTrainingJobKind, kOwnerLabel, {}, "trainingjob", orphans_checked_at_);
}

}  // namespace tessera
