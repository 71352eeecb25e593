#include "server/controllers/dependency_controller.h"

#include <fmt/format.h>

#include <vector>

#include "server/object_json.h"

namespace tessera {
namespace {

std::vector<std::string> Names(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) out.push_back(std::move(name));
    start = comma + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts.front();
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace

DependencyController::DependencyController(ObjectCache& cache) {
  cache.Observe(kWorkloadKind, [this](const Key& key, const StoredObject* now) {
    const bool keep = now != nullptr && !ConditionTrue(now->object, "Finished") &&
                      !ObjectAt(now->object, {"status"}).contains("admission") &&
                      !StringAt(now->object, {"metadata", "annotations", kDependsOnAnnotation}).empty();
    if (keep) {
      dependent_.insert(key);
    } else {
      dependent_.erase(key);
    }
  });
}

void DependencyController::Reconcile(PassContext& pass) {
  // For each waiting workload with dependencies: 1. each dependency's state
  // (its Job's Complete or Failed condition); 2. all succeeded: it joins the
  // queue; one failed: it ends Failed; else 3. it stays out, saying why.
  gated_.clear();
  for (const Key& key : dependent_) {
    const StoredObject* w = pass.cache.Find(ObjectKey{kWorkloadKind, key.first, key.second});
    if (w == nullptr) continue;
    std::vector<std::string> waiting, failed;
    for (const std::string& dep : Names(StringAt(w->object, {"metadata", "annotations", kDependsOnAnnotation}))) {
      const StoredObject* job = pass.cache.Find(ObjectKey{kJobKind, key.first, dep});
      if (job == nullptr) {
        waiting.push_back(dep + " (not found)");
      } else if (ConditionTrue(job->object, "Failed")) {
        failed.push_back(dep);
      } else if (!ConditionTrue(job->object, "Complete")) {
        waiting.push_back(fmt::format("{} ({})", dep, ObjectAt(job->object, {"status"}).value("active", 0) > 0 ? "running" : "not started"));
      }
    }
    nlohmann::json next = w->object;
    bool changed = false;
    if (!failed.empty()) {
      const std::string message = fmt::format(
          "job {} failed, so this one never starts (tessera.dev/depends-on: it needs them to succeed)", Join(failed));
      changed = SetCondition(next, "Finished", true, "DependencyFailed", message, pass.now_text);
      SetCondition(next, "QuotaReserved", false, "DependencyFailed", message, pass.now_text);
      const std::string job_name = StringAt(w->object, {"metadata", "labels", "tessera.dev/job-name"});
      if (const StoredObject* own = job_name.empty() ? nullptr : pass.cache.Find(ObjectKey{kJobKind, key.first, job_name})) {
        nlohmann::json job_next = own->object;
        if (SetCondition(job_next, "Failed", true, "DependencyFailed", message, pass.now_text)) {
          pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = own->key, .object = std::move(job_next),
                                  .expected_revision = own->revision},
                          fmt::format("job {}/{}: a dependency failed", key.first, job_name));
        }
      }
    } else if (!waiting.empty()) {
      gated_.insert(w);
      changed = SetCondition(next, "QuotaReserved", false, "WaitingForDependencies",
                             fmt::format("waits for job{} {} to succeed (tessera.dev/depends-on)",
                                         waiting.size() > 1 ? "s" : "", Join(waiting)),
                             pass.now_text);
    }
    if (changed) {
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w->key, .object = std::move(next),
                              .expected_revision = w->revision},
                      fmt::format("dependencies of workload {}/{}", key.first, key.second));
    }
  }
}

}  // namespace tessera
