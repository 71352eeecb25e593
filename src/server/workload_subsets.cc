#include "server/workload_subsets.h"

#include "server/controllers/job_controller.h"
#include "server/object_json.h"

namespace tessera {

WorkloadSubsets::WorkloadSubsets(ObjectCache& cache) {
  cache.Observe(kWorkloadKind, [this](const auto& key, const StoredObject* now) { Changed(key, now); });
}

void WorkloadSubsets::Changed(const std::pair<std::string, std::string>& key, const StoredObject* now) {
  const bool unfinished = now != nullptr && !ConditionTrue(now->object, "Finished");
  auto keep = [&](ObjectCache::Active& subset, bool member) {
    if (member) {
      subset.insert_or_assign(key, now);
    } else {
      subset.erase(key);
    }
  };
  const nlohmann::json* status = nullptr;
  if (unfinished) {
    auto it = now->object.find("status");
    if (it != now->object.end() && it->is_object()) status = &*it;
  }
  keep(admitted_, status != nullptr && status->contains("admission"));
  keep(suspended_, unfinished && ConditionTrue(now->object, "Suspended"));
}

}  // namespace tessera
