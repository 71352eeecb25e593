#include "server/controllers/controller.h"

#include <vector>

#include "common/time_format.h"

namespace tessera {

PassContext::PassContext(const ObjectCache& cache, const PodIndex& pods, const WorkloadSubsets& workloads,
                         Timestamp now, BatchedWriter& writer, EventRecorder& events)
    : cache(cache), pods(pods), workloads(workloads), now(now), now_text(FormatRfc3339(now)), writer(writer),
      events(events) {}

const GpuUsageByDevice& PassContext::gpu_usage() {
  if (!gpu_usage_) {
    std::vector<const nlohmann::json*> nodes;
    for (const auto& [unused, n] : cache.Of("/Node")) nodes.push_back(&n.object);
    gpu_usage_ = GpuUsageFromNodes(nodes);
  }
  return *gpu_usage_;
}

}  // namespace tessera
