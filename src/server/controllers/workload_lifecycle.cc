#include "server/controllers/workload_lifecycle.h"

#include <fmt/format.h>

#include <cctype>

#include "common/time_format.h"
#include "server/controllers/job_lifecycle_controller.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

int64_t AdmittedPodCount(const json& workload) {
  int64_t n = 0;
  for (const json& a : ArrayAt(workload, {"status", "admission", "podSetAssignments"})) {
    if (a.is_object()) n += a.value("count", 0);
  }
  return n;
}

// The terminated state of a pod's (first) container, if any: a pointer into
// the pod.
const json* Terminated(const json& pod) {
  const json& statuses = ArrayAt(pod, {"status", "containerStatuses"});
  if (statuses.empty()) return nullptr;
  const json& t = ObjectAt(statuses[0], {"state", "terminated"});
  return t.empty() ? nullptr : &t;
}

}  // namespace

std::string PodFailureMessage(const StoredObject& pod) {
  std::string why = StringAt(pod.object, {"status", "message"});
  if (why.empty()) {
    if (const json* t = Terminated(pod.object)) {
      why = t->contains("signal") ? fmt::format("killed by signal {}", t->value("signal", 0))
                                  : fmt::format("exit code {}", t->value("exitCode", 0));
    }
  }
  return fmt::format("pod {} failed: {}", pod.key.name, why.empty() ? "no reason reported" : why);
}

namespace {

// The owning Job's status, as the Job controllers of Kubernetes and Volcano show it.
void AddJobStatus(const ObjectCache& cache, const StoredObject& workload, bool succeeded, int64_t pods_succeeded,
                  int64_t pods_failed, const std::string& message, const std::string& now_text, BatchedWriter& writer,
                  const std::string& failure_reason = "PodFailed") {
  const std::string job_name = StringAt(workload.object, {"metadata", "labels", "tessera.dev/job-name"});
  if (job_name.empty()) return;
  const json& owners = ObjectAt(workload.object, {"metadata"}).value("ownerReferences", json::array());
  if (owners.empty()) return;
  const bool volcano = owners[0].value("apiVersion", "").starts_with("batch.volcano.sh/");
  const StoredObject* job = cache.Find(ObjectKey{volcano ? kVolcanoJobKind : kJobKind, workload.key.ns, job_name});
  if (!job) return;
  json next = job->object;
  json& status = next["status"];
  if (volcano) {
    status["state"] = {{"phase", succeeded ? "Completed" : "Failed"}, {"message", message}, {"lastTransitionTime", now_text}};
    status["succeeded"] = pods_succeeded;
    status["failed"] = pods_failed;
  } else {
    status["succeeded"] = pods_succeeded;
    status["failed"] = pods_failed;
    status["completionTime"] = now_text;
    SetCondition(next, succeeded ? "Complete" : "Failed", true, succeeded ? "Completed" : failure_reason, message, now_text);
  }
  if (next == job->object) return;
  writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = job->key, .object = std::move(next), .expected_revision = job->revision},
             fmt::format("status of job {}/{}", job->key.ns, job->key.name));
}

}  // namespace

std::vector<WriteOp> EvictionOps(const StoredObject& workload, const PodIndex& pods, const std::string& reason,
                                 const std::string& message, const std::string& now_text) {
  json next = workload.object;
  SetCondition(next, "Evicted", true, reason, message, now_text);
  std::vector<WriteOp> unit;
  unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = workload.key, .object = std::move(next),
                         .expected_revision = workload.revision});
  if (auto it = pods.find({workload.key.ns, workload.key.name}); it != pods.end()) {
    for (const StoredObject* pod : it->second) {
      json pnext = pod->object;
      if (pnext["metadata"].contains("deletionTimestamp")) continue;
      pnext["metadata"]["deletionTimestamp"] = now_text;
      pnext["status"]["reason"] = reason;
      unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = pod->key, .object = std::move(pnext),
                             .expected_revision = pod->revision});
    }
  }
  return unit;
}

bool WorkloadOwnedBy(const json& workload, std::string_view api_version, std::string_view kind) {
  const json& owners = ArrayAt(workload, {"metadata", "ownerReferences"});
  return !owners.empty() && owners[0].is_object() && owners[0].value("apiVersion", "") == api_version &&
         owners[0].value("kind", "") == kind;
}

bool IsBatchJobWorkload(const json& workload) { return WorkloadOwnedBy(workload, "batch/v1", "Job"); }

void ReconcileWorkloadLifecycle(PassContext& pass) {
  const std::string& now_text = pass.now_text;
  for (const auto& [key, held] : pass.workloads.admitted()) {
    const StoredObject& w = *held;
    if (ConditionTrue(w.object, "Evicted") || IsBatchJobWorkload(w.object)) continue;
    auto it = pass.pods.find(key);
    // Past its run-time limit: it ends, and what still runs stops.
    if (std::optional<Timestamp> deadline = WorkloadDeadline(w.object)) {
      if (pass.now < *deadline) {
        pass.WakeAt(*deadline);
      } else {
        const std::string message = "the workload ran longer than its run-time limit (activeDeadlineSeconds)";
        // Its pods stop as an eviction's do, but the workload is Finished, not
        // Evicted: it does not go back to its queue.
        std::vector<WriteOp> unit = EvictionOps(w, pass.pods, "DeadlineExceeded", message, now_text);
        unit.front().object = w.object;
        SetCondition(unit.front().object, "Finished", true, "DeadlineExceeded", message, now_text);
        pass.writer.Add(std::move(unit), fmt::format("deadline of workload {}/{}", key.first, key.second));
        pass.events.Record(pass.writer, w, EventRecorder::Type::kWarning, "DeadlineExceeded", message, pass.now);
        AddJobStatus(pass.cache, w, false, 0, 0, message, now_text, pass.writer, "DeadlineExceeded");
        continue;
      }
    }
    if (it == pass.pods.end()) continue;
    int64_t succeeded = 0, failed = 0;
    const StoredObject* first_failed = nullptr;
    for (const StoredObject* pod : it->second) {
      if (ObjectAt(pod->object, {"metadata"}).contains("deletionTimestamp")) continue;
      const std::string phase = StringAt(pod->object, {"status", "phase"});
      if (phase == "Succeeded") ++succeeded;
      if (phase == "Failed") {
        ++failed;
        if (!first_failed) first_failed = pod;
      }
    }
    const bool all_succeeded = succeeded > 0 && succeeded == AdmittedPodCount(w.object);
    if (!all_succeeded && failed == 0) continue;
    // A TrainingJob's failed worker restarts the gang, or fails it: its
    // controller decides (trainingjob_controller.h).
    if (!all_succeeded && WorkloadOwnedBy(w.object, "tessera.dev/v1", "TrainingJob")) continue;
    const std::string message =
        all_succeeded ? fmt::format("all {} pods succeeded", succeeded) : PodFailureMessage(*first_failed);
    json next = w.object;
    SetCondition(next, "Finished", true, all_succeeded ? "Succeeded" : "Failed", message, now_text);
    pass.writer.Add(
        WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
        fmt::format("finish workload {}/{}", key.first, key.second));
    pass.events.Record(pass.writer, w, all_succeeded ? EventRecorder::Type::kNormal : EventRecorder::Type::kWarning,
                       all_succeeded ? "Succeeded" : "Failed", message, pass.now);
    AddJobStatus(pass.cache, w, all_succeeded, succeeded, failed, message, now_text, pass.writer);
  }
}

std::vector<WriteOp> DeleteWorkloadOps(const StoredObject& workload, const PodIndex& pods) {
  std::vector<WriteOp> unit;
  if (auto it = pods.find({workload.key.ns, workload.key.name}); it != pods.end()) {
    for (const StoredObject* p : it->second) unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = p->key});
  }
  unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = workload.key});
  return unit;
}

void DeleteOrphansOf(PassContext& pass, const std::string& owner_kind, const char* owner_label,
                     const std::vector<std::string>& also, std::string_view what, std::optional<uint64_t>& checked_at) {
  const uint64_t removals = pass.cache.removals(owner_kind);
  if (checked_at == removals) return;
  checked_at = removals;
  auto gone = [&](const std::string& ns, const nlohmann::json& obj) {
    const std::string owner = StringAt(obj, {"metadata", "labels", owner_label});
    return !owner.empty() && pass.cache.Find(ObjectKey{owner_kind, ns, owner}) == nullptr;
  };
  for (const auto& [key, w] : pass.cache.Of(kWorkloadKind)) {
    if (!gone(key.first, w.object)) continue;
    pass.writer.Add(DeleteWorkloadOps(w, pass.pods),
                    fmt::format("delete workload {}/{} of a deleted {}", key.first, key.second, what));
  }
  for (const std::string& kind : also) {
    std::string noun = kind.substr(kind.rfind('/') + 1);  // "/Service" -> "service"
    for (char& ch : noun) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const auto& [key, o] : pass.cache.Of(kind)) {
      if (!gone(key.first, o.object)) continue;
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = o.key},
                      fmt::format("delete {} {}/{} of a deleted {}", noun, key.first, key.second, what));
    }
  }
}

}  // namespace tessera
