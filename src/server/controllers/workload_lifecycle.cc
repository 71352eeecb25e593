#include "server/controllers/workload_lifecycle.h"

#include <fmt/format.h>

#include "common/time_format.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

int64_t AdmittedPodCount(const json& workload) {
  int64_t n = 0;
  const json& assignments = workload["status"]["admission"].value("podSetAssignments", json::array());
  for (const json& a : assignments) n += a.value("count", 0);
  return n;
}

// The terminated state of a pod's (first) container, if any.
const json* Terminated(const json& pod) {
  const json& statuses = pod["status"].value("containerStatuses", json::array());
  if (statuses.empty()) return nullptr;
  auto state = statuses[0].find("state");
  if (state == statuses[0].end()) return nullptr;
  auto t = state->find("terminated");
  return t == state->end() ? nullptr : &*t;
}

std::string FailureOf(const StoredObject& pod) {
  std::string why = StringAt(pod.object, {"status", "message"});
  if (why.empty()) {
    if (const json* t = Terminated(pod.object)) {
      why = t->contains("signal") ? fmt::format("killed by signal {}", t->value("signal", 0))
                                  : fmt::format("exit code {}", t->value("exitCode", 0));
    }
  }
  return fmt::format("pod {} failed: {}", pod.key.name, why.empty() ? "no reason reported" : why);
}

// The owning Job's status, as the Job controllers of Kubernetes and Volcano show it.
void AddJobStatus(const ObjectCache& cache, const StoredObject& workload, bool succeeded, int64_t pods_succeeded,
                  int64_t pods_failed, const std::string& message, const std::string& now_text, BatchedWriter& writer) {
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
    SetCondition(next, succeeded ? "Complete" : "Failed", true, succeeded ? "Completed" : "PodFailed", message, now_text);
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

void ReconcileWorkloadLifecycle(const ObjectCache& cache, const ObjectCache::Active& admitted, const PodIndex& pods,
                                Timestamp now, BatchedWriter& writer, EventRecorder& events) {
  const std::string now_text = FormatRfc3339(now);
  for (const auto& [key, held] : admitted) {
    const StoredObject& w = *held;
    if (ConditionTrue(w.object, "Evicted")) continue;
    auto it = pods.find(key);
    if (it == pods.end()) continue;
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
    const std::string message =
        all_succeeded ? fmt::format("all {} pods succeeded", succeeded) : FailureOf(*first_failed);
    json next = w.object;
    SetCondition(next, "Finished", true, all_succeeded ? "Succeeded" : "Failed", message, now_text);
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
               fmt::format("finish workload {}/{}", key.first, key.second));
    events.Record(writer, w, all_succeeded ? EventRecorder::Type::kNormal : EventRecorder::Type::kWarning,
                  all_succeeded ? "Succeeded" : "Failed", message, now);
    AddJobStatus(cache, w, all_succeeded, succeeded, failed, message, now_text, writer);
  }
}

}  // namespace tessera
