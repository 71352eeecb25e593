#include "server/controllers/ttl_after_finished_controller.h"

#include <fmt/format.h>

#include "common/time_format.h"
#include "server/object_json.h"

namespace tessera {
namespace {

// When the Job finished: its Complete or Failed condition's last transition.
std::optional<Timestamp> FinishedAt(const nlohmann::json& job) {
  for (const char* type : {"Complete", "Failed"}) {
    if (!ConditionTrue(job, type)) continue;
    if (auto at = ParseRfc3339(ConditionValue(job, type, "lastTransitionTime"))) return *at;
  }
  return std::nullopt;
}

}  // namespace

TtlAfterFinishedController::TtlAfterFinishedController(ObjectCache& cache) {
  cache.Observe(kJobKind, [this](const Key& job, const StoredObject* now) { Changed(job, now); });
}

void TtlAfterFinishedController::Changed(const Key& job, const StoredObject* now) {
  if (auto held = expiry_of_.find(job); held != expiry_of_.end()) {
    expiries_.erase({held->second, job});
    expiry_of_.erase(held);
  }
  if (now == nullptr) return;
  const nlohmann::json& spec = ObjectAt(now->object, {"spec"});
  auto ttl = spec.find("ttlSecondsAfterFinished");
  if (ttl == spec.end() || !ttl->is_number_integer()) return;
  std::optional<Timestamp> finished = FinishedAt(now->object);
  if (!finished) return;
  const Timestamp expiry = *finished + Duration::Seconds(ttl->get<int64_t>());
  expiries_.insert({expiry, job});
  expiry_of_[job] = expiry;
}

void TtlAfterFinishedController::Reconcile(PassContext& pass) {
  for (auto it = expiries_.begin(); it != expiries_.end(); ++it) {
    const auto& [expiry, key] = *it;
    if (expiry > pass.now) {
      pass.WakeAt(expiry);
      break;
    }
    const StoredObject* job = pass.cache.Find(ObjectKey{kJobKind, key.first, key.second});
    if (job == nullptr) continue;
    pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = job->key, .expected_revision = job->revision},
                    fmt::format("delete job {}/{}: its ttlSecondsAfterFinished passed", key.first, key.second));
    pass.WakeAt(pass.now);  // the next pass deletes its Workload and Pods (the Job controller's orphans)
  }
}

}  // namespace tessera
