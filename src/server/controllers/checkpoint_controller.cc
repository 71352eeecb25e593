#include "server/controllers/checkpoint_controller.h"

#include <fmt/format.h>

#include "api/convert.h"
#include "common/time_format.h"
#include "server/object_json.h"

namespace tessera {

void CheckpointController::Reconcile(PassContext& pass) {
  const std::string annotation(kLastCheckpointAnnotation);
  for (const auto& [key, held] : pass.workloads.admitted()) {
    auto pods = pass.pods.find(key);
    if (pods == pass.pods.end()) continue;
    std::optional<Timestamp> newest;
    std::string newest_text;
    for (const StoredObject* pod : pods->second) {
      const std::string text = StringAt(pod->object, {"metadata", "annotations", annotation.c_str()});
      if (text.empty()) continue;
      auto at = ParseRfc3339(text);
      if (at && (!newest || *at > *newest)) {
        newest = *at;
        newest_text = text;
      }
    }
    if (!newest) continue;
    const StoredObject& w = *held;
    const std::string current = StringAt(w.object, {"metadata", "annotations", annotation.c_str()});
    if (auto at = ParseRfc3339(current); at && *at >= *newest) continue;
    nlohmann::json next = w.object;
    next["metadata"]["annotations"][annotation] = newest_text;
    pass.writer.Add(
        WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next), .expected_revision = w.revision},
        fmt::format("last checkpoint of workload {}/{}", key.first, key.second));
    // The controllers before this one (a TrainingJob's growth waits for a
    // checkpoint) see it in the next pass, not at the next resync.
    pass.WakeAt(pass.now);
  }
}

}  // namespace tessera
