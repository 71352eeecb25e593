#include "server/controllers/requeue_controller.h"

#include <fmt/format.h>

#include "server/controllers/idle_reclaimer.h"
#include "server/object_json.h"

namespace tessera {

void RequeueController::Reconcile(PassContext& pass) {
  for (const auto& [key, held] : pass.workloads.admitted()) {
    const StoredObject& w = *held;
    if (!ConditionTrue(w.object, "Evicted")) continue;
    if (auto it = pass.pods.find(key); it != pass.pods.end() && !it->second.empty()) continue;
    nlohmann::json next = w.object;
    next["status"].erase("admission");
    const std::string why = WorkloadInactive(w.object)
                                ? fmt::format("suspended; `tessera resume {}` queues it again", key.second)
                            : ConditionValue(w.object, "Evicted", "reason") == "Resizing"
                                ? "resizing; waiting in its queue to start again with more workers"
                                : "preempted; waiting in its queue again";
    SetCondition(next, "QuotaReserved", false, "Evicted", why, pass.now_text);
    SetCondition(next, "Admitted", false, "Evicted", why, pass.now_text);
    SetCondition(next, "Evicted", false, "Requeued", "its pods have terminated; back in the queue", pass.now_text);
    pass.writer.Add(
        WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
        fmt::format("requeue workload {}/{}", key.first, key.second));
    pass.events.Record(pass.writer, w, EventRecorder::Type::kNormal, "Requeued",
                       "its pods have terminated; back in the queue", pass.now);
  }
}

}  // namespace tessera
