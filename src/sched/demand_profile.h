// DemandProfile: the shapes of work a cluster expects (per-pod requests, with how
// often each occurs), for fragmentation-aware placement in the spirit of FGD
// (Weng et al., ATC'23): free GPU on a node is "fragmented" for a shape when that
// shape could not use it (too little room on a device, too few whole devices, or
// too little CPU or memory left beside them). Placement prefers the node and
// device where the expected fragmentation grows least.
//
// Beyond FGD's one-pod-ahead view, the profile also knows the demand's CPU per
// GPU (all pods, CPU-only ones included): free GPU beyond what the node's free CPU
// can carry at that ratio will most likely be stranded, whichever pods come, and
// counts as fragmented for every shape. This steers CPU-hungry pods to CPU-rich
// nodes and CPU-light ones to CPU-poor nodes before any node runs out.
//
// Integers throughout: fragmentation is milli-GPU x occurrences.
#pragma once

#include <cstdint>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace tessera {

struct DemandShape {
  int64_t gpu_milli = 0;  // per pod: < 1000 a fraction of one device, else whole devices
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t weight = 0;     // occurrences
};

class DemandProfile {
 public:
  // The most frequent shapes kept (Finish); rarer ones change little and cost a
  // score evaluation each.
  static constexpr size_t kMaxShapes = 12;

  // Adds `weight` pods of this request. Pods without GPUs are not GPU shapes (they
  // count only towards the CPU per GPU). Requests are grouped: fractions by 10
  // milli, CPU by whole cores, memory by GiB (rounded up, so a shape never asks
  // for less than its pods).
  void Add(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_bytes, int64_t weight = 1);
  // Keeps the kMaxShapes heaviest shapes, heaviest first. Call before use.
  void Finish();

  bool empty() const { return shapes_.empty(); }
  const std::vector<DemandShape>& shapes() const { return shapes_; }
  // The kept shapes' weights, summed (Finish).
  int64_t total_weight() const { return total_weight_; }
  // GPU milli the demand asks for with `cpu_milli` of CPU beside it (its CPU per
  // GPU, over every pod added; Finish); unbounded (INT64_MAX) when it asks for no CPU.
  int64_t GpuCarriedBy(int64_t cpu_milli) const;

 private:
  struct KeyHash {
    size_t operator()(const std::tuple<int64_t, int64_t, int64_t>& k) const {
      return static_cast<size_t>(std::get<0>(k) * 1000003 ^ std::get<1>(k) * 10007 ^ (std::get<2>(k) >> 20));
    }
  };
  // (gpu, cpu, memory) -> weight, until Finish.
  std::unordered_map<std::tuple<int64_t, int64_t, int64_t>, int64_t, KeyHash> weights_;
  std::vector<DemandShape> shapes_;
  int64_t total_weight_ = 0;
  int64_t demand_gpu_milli_ = 0;  // over every pod added, weights applied
  int64_t demand_cpu_milli_ = 0;
  int64_t gpu_per_cpu_q32_ = -1;  // demand GPU / demand CPU, 32.32 fixed point; -1: no CPU demand
};

// A node's free capacity, as placement sees it, for scoring a tentative choice.
struct NodeFree {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::span<const int64_t> device_free_milli;  // per device, 0..1000
};

// Sum over the profile's shapes of weight x the free GPU milli on the node that
// the shape could not use, plus total_weight x the free GPU milli beyond what the
// node's free CPU carries at the demand's CPU per GPU.
int64_t NodeFragmentation(const NodeFree& node, const DemandProfile& profile);

}  // namespace tessera
