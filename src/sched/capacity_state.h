// CapacityState: free GPU, CPU and memory per device and node during one cycle,
// with the indexes that make placement fast at fleet scale.
//
// Indexes, per flavor (a node can belong to several flavors):
//   - nodes bucketed by their count of whole free devices, so "the fullest node
//     that still has k free GPUs" (best fit) is a short walk from bucket k up;
//   - partly used devices ordered by free milli-GPU, so the tightest device a
//     fraction fits on is a lower_bound;
//   - totals of free and whole-free GPUs, for fast "cannot fit" answers.
// Only schedulable nodes are indexed; the rest keep their usage but offer nothing.
//
// Not thread-safe. Mutate only through Take* (used by ClusterState's op log, which
// makes every change undoable).
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

class CapacityState {
 public:
  struct Device {
    int64_t free_milli = 1000;
    int64_t memory_bytes = 0;
    int32_t node = 0;
    int32_t local = 0;  // position in Node::gpus
    int32_t nvlink_domain = 0;
  };
  struct NodeState {
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    int32_t first_device = 0;
    int32_t num_devices = 0;
    int32_t whole_free = 0;
    int32_t rack = -1;
    bool schedulable = true;
    bool tainted = false;
    std::vector<int32_t> flavors;  // flavor ids whose labels the node matches
  };
  struct FlavorIndex {
    std::vector<int32_t> members;                   // schedulable nodes, ascending id
    std::vector<std::set<int32_t>> by_whole_free;   // [k]: nodes with k whole free devices
    std::set<std::pair<int64_t, int32_t>> partial;  // (free milli, device), 0 < free < 1000
    std::vector<int64_t> rack_whole_free;           // per rack id
    int64_t free_milli = 0;
    int64_t whole_free = 0;
    int64_t max_device_memory = 0;
    bool any_tainted = false;
  };

  explicit CapacityState(const ClusterSnapshot& snapshot);

  // Takes `milli` from a device (negative gives back) and keeps every index current.
  void TakeDevice(int32_t device, int64_t milli);
  void TakeNodeResources(int32_t node, int64_t cpu_milli, int64_t memory_bytes);

  const Device& device(int32_t d) const { return devices_[d]; }
  const NodeState& node(int32_t n) const { return nodes_[n]; }
  const FlavorIndex& flavor(int32_t f) const { return flavors_[f]; }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }
  int32_t num_devices() const { return static_cast<int32_t>(devices_.size()); }
  int32_t num_racks() const { return num_racks_; }
  const std::vector<int32_t>& rack_members(int32_t rack) const { return rack_members_[rack]; }

  // Largest count of whole free devices on one node of the flavor.
  int32_t LargestWholeBlock(int32_t flavor) const;

  FragmentationReport Fragmentation() const;

 private:
  void IndexNode(int32_t node, bool insert);
  void IndexDevice(int32_t device, bool insert);

  std::vector<Device> devices_;
  std::vector<NodeState> nodes_;
  std::vector<FlavorIndex> flavors_;
  std::vector<std::vector<int32_t>> rack_members_;
  int32_t num_racks_ = 0;
};

}  // namespace tessera
