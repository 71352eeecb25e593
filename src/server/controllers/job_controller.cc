#include "server/controllers/job_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/convert.h"
#include "server/object_json.h"

namespace tessera {

void JobController::Reconcile(const ObjectCache& cache, const PodIndex& pods, const std::string& now_text,
                              BatchedWriter& writer) {
  const ObjectCache::Objects& workloads = cache.Of(kWorkloadKind);
  // A job that names no queue goes to its namespace's LocalQueue when there is
  // exactly one (the seed's Volcano job names none).
  std::map<std::string, std::vector<std::string>> queues_in;
  for (const auto& [key, lq] : cache.Of("kueue.x-k8s.io/LocalQueue")) queues_in[key.first].push_back(key.second);
  for (const char* kind : {kJobKind, kVolcanoJobKind}) {
    for (const auto& [unused, active] : cache.ActiveOf(kind)) {
      const StoredObject& job = *active;
      // Converted only when its Workload is missing: most passes find every job's.
      const std::string name = WorkloadNameForJob(kind == std::string_view(kVolcanoJobKind), job.key.name);
      if (workloads.count({job.key.ns, name})) continue;
      auto wl = WorkloadForJob(job.object);
      if (!wl) {
        spdlog::warn("job {}/{}: {}", job.key.ns, job.key.name, wl.error().message());
        continue;
      }
      const bool names_queue = !StringAt(job.object, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}).empty() ||
                               !StringAt(job.object, {"spec", "queue"}).empty();
      const auto& queues = queues_in[job.key.ns];
      if (!names_queue && queues.size() == 1) (*wl)["spec"]["queueName"] = queues.front();
      if (StringAt(job.object, {"spec", "completionMode"}) == "Indexed") {
        (*wl)["metadata"]["annotations"][kCompletionModeAnnotation] = "Indexed";
      }
      (*wl)["metadata"]["creationTimestamp"] = now_text;
      (*wl)["metadata"]["generation"] = 1;
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
    std::vector<WriteOp> unit;
    if (auto it = pods.find(key); it != pods.end()) {
      for (const StoredObject* p : it->second) unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = p->key});
    }
    unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = w.key});
    writer.Add(std::move(unit), fmt::format("delete workload {}/{} of a deleted job", key.first, key.second));
  }
}

}  // namespace tessera
