#include "server/pod_index.h"

#include <algorithm>

#include "server/object_json.h"

namespace tessera {
namespace {

std::pair<std::string, std::string> WorkloadOfPod(const StoredObject& pod) {
  return {pod.key.ns, StringAt(pod.object, {"metadata", "labels", "tessera.dev/workload"})};
}

}  // namespace

PodsByWorkload::PodsByWorkload(ObjectCache& cache) {
  cache.Observe(kPodKind, [this](const Key& pod, const StoredObject* now) { Changed(pod, now); });
}

void PodsByWorkload::Changed(const Key& pod, const StoredObject* now) {
  auto by_name = [](const StoredObject* a, const std::string& name) { return a->key.name < name; };
  auto held = workload_of_.find(pod);
  if (held != workload_of_.end()) {
    if (now != nullptr && WorkloadOfPod(*now) == held->second) return;  // same entry, same pointer
    auto entry = index_.find(held->second);
    if (entry != index_.end()) {
      std::vector<const StoredObject*>& pods = entry->second;
      auto it = std::lower_bound(pods.begin(), pods.end(), pod.second, by_name);
      if (it != pods.end() && (*it)->key.name == pod.second) pods.erase(it);
      if (pods.empty()) index_.erase(entry);
    }
    workload_of_.erase(held);
  }
  if (now == nullptr) return;
  Key workload = WorkloadOfPod(*now);
  std::vector<const StoredObject*>& pods = index_[workload];
  pods.insert(std::lower_bound(pods.begin(), pods.end(), pod.second, by_name), now);
  workload_of_.emplace(pod, std::move(workload));
}

}  // namespace tessera
