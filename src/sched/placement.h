// Placer: puts the pods of one pod set onto the nodes of one flavor.
//
// Rules (DESIGN.md section 5.6):
//   - a pod asking for k >= 1 GPUs gets k whole devices on one node, from the
//     fullest node that has k free (best fit keeps large blocks whole), and within
//     it from the tightest NVLink domain that holds all k;
//   - a fraction goes to the partly used device with the least room that fits
//     (best fit), else to a whole device of the fullest node, so whole GPUs stay free;
//   - a GPU-memory request becomes the fraction of the device it lands on;
//   - multi-pod whole-GPU pod sets try to stay within one rack (best-fitting rack
//     first), spread pod sets go to distinct nodes where possible, same-node pod
//     sets share one node;
//   - node selectors, taints (with the flavor's and the pod's tolerations), CPU and
//     memory always apply.
// Every pod is charged to its queue's quota as it is placed, so a pod set stops
// where quota or capacity ends; the caller decides whether that meets the gang.
//
// All changes go through ClusterState's log: the caller checkpoints and rolls back.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/config.h"
#include "sched/demand_profile.h"

namespace tessera {

class Placer {
 public:
  Placer(ClusterState& state, const SchedulerConfig& config) : state_(state), config_(config) {}

  // Places between MinCount() and count pods of pod set `p` of `w` in `flavor`,
  // charging queue `cq`. Returns true when at least MinCount() pods were placed;
  // otherwise fills the capacity or quota fields of `why` (state is left for the
  // caller to roll back).
  bool PlacePodSet(const Workload& w, int p, int32_t cq, int32_t flavor, PodSetAssignment* out,
                   FlavorAttempt* why);

  int64_t placement_attempts() const { return attempts_; }

  // The work placement should leave room for (fragmentation-aware scoring);
  // nullptr or empty: plain best fit. Must outlive the Placer's use.
  void SetDemandProfile(const DemandProfile* profile) { profile_ = profile; }

 private:
  struct Context;

  bool Accepts(const Context& ctx, int32_t node, int64_t pods_on_node) const;
  int32_t PickWholeNode(const Context& ctx, int32_t k, int64_t pods_on_node) const;
  bool HasNvlinkBlock(int32_t node, int32_t k) const;
  // The most whole free devices of the node within one NVLink domain.
  int32_t LargestNvlinkBlock(int32_t node) const;
  std::vector<int32_t> ChooseWholeDevices(int32_t node, int32_t k, int64_t min_memory) const;
  // Fragmentation scores read a node's free milli-GPU per device into a table;
  // devices past kMaxScoredDevices are left out.
  static constexpr int32_t kMaxScoredDevices = 64;
  using FreeTable = std::array<int64_t, kMaxScoredDevices>;
  std::span<const int64_t> FreeMilli(int32_t node, FreeTable& table) const;
  int32_t PickCpuOnlyNode(const Context& ctx) const;
  // Fragmentation-aware choice of node and devices for one pod; false when no
  // candidate accepts it.
  bool PickByFragmentation(const Context& ctx, int32_t* node, std::vector<std::pair<int32_t, int64_t>>* takes) const;
  int64_t NeedOn(const Context& ctx, int32_t device) const;
  bool PlaceOnePod(Context& ctx, PodSetAssignment* out);
  int32_t PlaceLoop(Context& ctx, int32_t count, PodSetAssignment* out);
  bool PlaceSameNode(Context& ctx, int32_t count, PodSetAssignment* out);
  void ExplainCapacity(const Context& ctx, int32_t placed, FlavorAttempt* why) const;

  ClusterState& state_;
  const SchedulerConfig& config_;
  int64_t attempts_ = 0;
  const DemandProfile* profile_ = nullptr;
};

// GPU milli a pod needs on a device with `device_memory` bytes, for a pod set
// that asks by GPU memory; > 1000 when it does not fit one device.
int64_t GpuMemoryToMilli(int64_t gpu_memory, int64_t device_memory);

}  // namespace tessera
