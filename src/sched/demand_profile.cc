#include "sched/demand_profile.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace tessera {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

int64_t RoundUp(int64_t v, int64_t step) { return v <= 0 ? 0 : (v + step - 1) / step * step; }

}  // namespace

void DemandProfile::Add(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_bytes, int64_t weight) {
  if (weight <= 0) return;
  demand_gpu_milli_ += std::max<int64_t>(gpu_milli, 0) * weight;
  demand_cpu_milli_ += std::max<int64_t>(cpu_milli, 0) * weight;
  if (gpu_milli <= 0) return;
  const int64_t gpu = gpu_milli < 1000 ? std::max<int64_t>(gpu_milli / 10 * 10, 10) : gpu_milli / 1000 * 1000;
  const int64_t cpu = RoundUp(cpu_milli, 1000);
  const int64_t memory = RoundUp(memory_bytes, kGiB);
  weights_[{gpu, cpu, memory}] += weight;
}

void DemandProfile::Finish() {
  shapes_.clear();
  for (const auto& [key, weight] : weights_) {
    shapes_.push_back(DemandShape{std::get<0>(key), std::get<1>(key), std::get<2>(key), weight});
  }
  std::stable_sort(shapes_.begin(), shapes_.end(), [](const DemandShape& a, const DemandShape& b) {
    return std::tie(b.weight, a.gpu_milli, a.cpu_milli, a.memory_bytes) <
           std::tie(a.weight, b.gpu_milli, b.cpu_milli, b.memory_bytes);
  });
  if (shapes_.size() > kMaxShapes) shapes_.resize(kMaxShapes);
  total_weight_ = 0;
  for (const DemandShape& s : shapes_) total_weight_ += s.weight;
  // GPU milli per CPU milli in 32.32 fixed point: placement multiplies, never divides.
  gpu_per_cpu_q32_ = -1;
  if (demand_cpu_milli_ > 0) {
    const __int128 q = (static_cast<__int128>(demand_gpu_milli_) << 32) / demand_cpu_milli_;
    gpu_per_cpu_q32_ = q > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                                : static_cast<int64_t>(q);
  }
}

int64_t DemandProfile::GpuCarriedBy(int64_t cpu_milli) const {
  if (gpu_per_cpu_q32_ < 0) return std::numeric_limits<int64_t>::max();
  const __int128 carried = (static_cast<__int128>(std::max<int64_t>(cpu_milli, 0)) * gpu_per_cpu_q32_) >> 32;
  return carried > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                       : static_cast<int64_t>(carried);
}

int64_t NodeFragmentation(const NodeFree& node, const DemandProfile& profile) {
  int64_t free = 0, partial = 0, whole = 0;
  for (int64_t f : node.device_free_milli) {
    free += f;
    if (f == 1000) {
      ++whole;
    } else {
      partial += f;
    }
  }
  if (free == 0) return 0;
  // Free GPU the node's CPU cannot carry at the demand's CPU per GPU: stranded
  // for every shape, whatever comes.
  int64_t total = profile.total_weight() * std::max<int64_t>(free - profile.GpuCarriedBy(node.cpu_milli), 0);
  for (const DemandShape& s : profile.shapes()) {
    int64_t unusable = 0;
    if (node.cpu_milli < s.cpu_milli || node.memory_bytes < s.memory_bytes) {
      unusable = free;
    } else if (s.gpu_milli < 1000) {
      for (int64_t f : node.device_free_milli) {
        if (f < s.gpu_milli) unusable += f;
      }
    } else {
      unusable = whole * 1000 < s.gpu_milli ? free : partial;
    }
    total += s.weight * unusable;
  }
  return total;
}

}  // namespace tessera
