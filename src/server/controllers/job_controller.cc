#include "server/controllers/job_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/convert.h"
#include "server/controllers/dependency_controller.h"
#include "server/controllers/idle_reclaimer.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

namespace {

constexpr const char* kSuspendedMessage = "its Job is suspended (spec.suspend: true); set spec.suspend to false to queue it again";

bool JobSuspended(const nlohmann::json& job) {
  const nlohmann::json& spec = ObjectAt(job, {"spec"});
  auto it = spec.find("suspend");
  return it != spec.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

std::string DefaultLocalQueue(const ObjectCache& cache, const std::string& ns) {
  if (cache.Find(ObjectKey{"kueue.x-k8s.io/LocalQueue", ns, "default"}) != nullptr) return "default";
  std::string only;
  for (const auto& [key, lq] : cache.Of("kueue.x-k8s.io/LocalQueue")) {
    if (key.first != ns) continue;
    if (!only.empty()) return "default";
    only = key.second;
  }
  return only.empty() ? "default" : only;
}

void JobController::SyncSuspend(const StoredObject& job, const StoredObject& workload, const PodIndex& pods,
                                const std::string& now_text, BatchedWriter& writer) {
  // Kueue's contract: spec.suspend true stops the Job (its Workload is
  // deactivated and, if admitted, evicted: pods stopped, quota released);
  // false queues it again. Only a suspension this controller made is undone.
  if (ConditionTrue(workload.object, "Finished")) return;
  const bool suspend = JobSuspended(job.object);
  const bool active = !WorkloadInactive(workload.object);
  json next = workload.object;
  std::string job_reason, job_message;
  if (suspend && active) {
    next["spec"]["active"] = false;
    SetCondition(next, "Suspended", true, "JobSuspended", kSuspendedMessage, now_text);
    job_reason = "JobSuspended";
    job_message = "Job suspended";
  } else if (!suspend && !active && ConditionValue(workload.object, "Suspended", "reason") == "JobSuspended") {
    next["spec"]["active"] = true;
    SetCondition(next, "Suspended", false, "JobResumed", "its Job was resumed (spec.suspend: false)", now_text);
    job_reason = "JobResumed";
    job_message = "Job resumed";
  } else {
    return;
  }
  std::vector<WriteOp> unit;
  const bool admitted = ObjectAt(workload.object, {"status"}).contains("admission");
  if (suspend && admitted && !ConditionTrue(workload.object, "Evicted")) {
    StoredObject suspended{workload.key, workload.revision, std::move(next)};
    unit = EvictionOps(suspended, pods, "Suspended", kSuspendedMessage, now_text);
  } else {
    unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = workload.key, .object = std::move(next),
                           .expected_revision = workload.revision});
  }
  json job_next = job.object;
  SetCondition(job_next, "Suspended", suspend, job_reason, job_message, now_text);
  unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = job.key, .object = std::move(job_next),
                         .expected_revision = job.revision});
  writer.Add(std::move(unit), fmt::format("{} job {}/{}", suspend ? "suspend" : "resume", job.key.ns, job.key.name));
}

Result<json> JobWorkload(const ObjectCache& cache, const StoredObject& job, const std::string& now_text) {
  auto wl = WorkloadForJob(job.object);
  if (!wl) return wl;
  const bool names_queue = !StringAt(job.object, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}).empty() ||
                           !StringAt(job.object, {"spec", "queue"}).empty();
  // A job that names no queue (the seed's Volcano job) goes to the
  // namespace's default LocalQueue.
  if (!names_queue) (*wl)["spec"]["queueName"] = DefaultLocalQueue(cache, job.key.ns);
  if (const std::string deps = StringAt(job.object, {"metadata", "annotations", kDependsOnAnnotation}); !deps.empty()) {
    (*wl)["metadata"]["annotations"][kDependsOnAnnotation] = deps;
  }
  if (StringAt(job.object, {"spec", "completionMode"}) == "Indexed") {
    (*wl)["metadata"]["annotations"][kCompletionModeAnnotation] = "Indexed";
  }
  if (JobSuspended(job.object)) {
    (*wl)["spec"]["active"] = false;
    SetCondition(*wl, "Suspended", true, "JobSuspended", kSuspendedMessage, now_text);
  }
  (*wl)["metadata"]["creationTimestamp"] = now_text;
  (*wl)["metadata"]["generation"] = 1;
  return wl;
}

void JobController::Reconcile(const ObjectCache& cache, const PodIndex& pods, const std::string& now_text,
                              BatchedWriter& writer) {
  const ObjectCache::Objects& workloads = cache.Of(kWorkloadKind);
  for (const char* kind : {kJobKind, kVolcanoJobKind}) {
    for (const auto& [unused, active] : cache.ActiveOf(kind)) {
      const StoredObject& job = *active;
      // Converted only when its Workload is missing: most passes find every job's.
      const std::string name = WorkloadNameForJob(kind == std::string_view(kVolcanoJobKind), job.key.name);
      if (auto held = workloads.find({job.key.ns, name}); held != workloads.end()) {
        if (kind == std::string_view(kJobKind)) SyncSuspend(job, held->second, pods, now_text, writer);
        continue;
      }
      auto wl = JobWorkload(cache, job, now_text);
      if (!wl) {
        spdlog::warn("job {}/{}: {}", job.key.ns, job.key.name, wl.error().message());
        continue;
      }
      writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kWorkloadKind, job.key.ns, name}, .object = std::move(*wl)},
                 fmt::format("workload for job {}/{}", job.key.ns, job.key.name));
    }
  }

  // Workloads whose Job is gone, finished ones included. The controller creates
  // a Workload only for a Job it holds, so one is orphaned only by a removal.
  const uint64_t removals = cache.removals(kJobKind) + cache.removals(kVolcanoJobKind);
  if (orphans_checked_at_ == removals) return;
  orphans_checked_at_ = removals;
  std::set<std::pair<std::string, std::string>> owned;  // (ns, workload name) whose job exists
  for (const char* kind : {kJobKind, kVolcanoJobKind}) {
    for (const auto& [unused, job] : cache.Of(kind)) {
      owned.insert({job.key.ns, WorkloadNameForJob(kind == std::string_view(kVolcanoJobKind), job.key.name)});
    }
  }
  for (const auto& [key, w] : workloads) {
    const bool job_owned = !StringAt(w.object, {"metadata", "labels", "tessera.dev/job-name"}).empty();
    if (!job_owned || owned.count(key)) continue;
    writer.Add(DeleteWorkloadOps(w, pods), fmt::format("delete workload {}/{} of a deleted job", key.first, key.second));
  }
}

}  // namespace tessera
