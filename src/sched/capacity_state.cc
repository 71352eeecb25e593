#include "sched/capacity_state.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "common/check.h"

namespace tessera {

CapacityState::CapacityState(const ClusterSnapshot& snapshot) {
  const auto& nodes = snapshot.nodes;
  nodes_.resize(nodes.size());
  std::unordered_map<std::string, int32_t> rack_ids;
  size_t total_devices = 0;
  for (const Node& n : nodes) total_devices += n.gpus.size();
  devices_.reserve(total_devices);

  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    NodeState& s = nodes_[i];
    s.free_cpu = n.cpu_milli;
    s.free_memory = n.memory_bytes;
    s.first_device = static_cast<int32_t>(devices_.size());
    s.num_devices = static_cast<int32_t>(n.gpus.size());
    s.schedulable = n.Schedulable();
    s.tainted = std::any_of(n.taints.begin(), n.taints.end(),
                            [](const Taint& t) { return t.effect != TaintEffect::kPreferNoSchedule; });
    if (!n.rack.empty()) {
      auto [it, inserted] = rack_ids.emplace(n.rack, static_cast<int32_t>(rack_ids.size()));
      s.rack = it->second;
      if (inserted) rack_members_.emplace_back();
      rack_members_[s.rack].push_back(static_cast<int32_t>(i));
    }
    for (size_t g = 0; g < n.gpus.size(); ++g) {
      devices_.push_back(Device{.free_milli = 1000,
                                .memory_bytes = n.gpus[g].memory_bytes,
                                .node = static_cast<int32_t>(i),
                                .local = static_cast<int32_t>(g),
                                .nvlink_domain = n.gpus[g].nvlink_domain});
    }
  }
  num_racks_ = static_cast<int32_t>(rack_members_.size());

  // Usage of admitted work, before anything is indexed.
  for (const Workload& w : snapshot.workloads) {
    if (!w.admission) continue;
    for (size_t p = 0; p < w.admission->pod_sets.size(); ++p) {
      const PodSet& ps = w.pod_sets[p];
      for (const PodPlacement& pod : w.admission->pod_sets[p].pods) {
        NodeState& s = nodes_[pod.node.value()];
        s.free_cpu -= ps.requests.cpu();
        s.free_memory -= ps.requests.memory();
        for (const DeviceShare& share : pod.gpus) devices_[s.first_device + share.device].free_milli -= share.milli;
      }
    }
  }
  for (NodeState& s : nodes_) {
    for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
      if (devices_[d].free_milli == 1000) ++s.whole_free;
    }
  }

  flavors_.resize(snapshot.flavors.size());
  for (size_t f = 0; f < snapshot.flavors.size(); ++f) {
    FlavorIndex& idx = flavors_[f];
    idx.rack_whole_free.assign(num_racks_, 0);
    int32_t max_devices = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes_[i].schedulable || !nodes[i].labels.Matches(snapshot.flavors[f].node_labels)) continue;
      idx.members.push_back(static_cast<int32_t>(i));
      nodes_[i].flavors.push_back(static_cast<int32_t>(f));
      max_devices = std::max(max_devices, nodes_[i].num_devices);
      idx.any_tainted = idx.any_tainted || nodes_[i].tainted;
    }
    idx.by_whole_free.resize(max_devices + 1);
  }
  for (int32_t i = 0; i < num_nodes(); ++i) {
    if (nodes_[i].flavors.empty()) continue;
    IndexNode(i, true);
    for (int32_t d = nodes_[i].first_device; d < nodes_[i].first_device + nodes_[i].num_devices; ++d) {
      IndexDevice(d, true);
      for (int32_t f : nodes_[i].flavors) {
        flavors_[f].max_device_memory = std::max(flavors_[f].max_device_memory, devices_[d].memory_bytes);
      }
    }
  }
}

void CapacityState::IndexNode(int32_t node, bool insert) {
  const NodeState& s = nodes_[node];
  for (int32_t f : s.flavors) {
    FlavorIndex& idx = flavors_[f];
    if (insert) {
      idx.by_whole_free[s.whole_free].insert(node);
      idx.whole_free += s.whole_free;
      if (s.rack >= 0) idx.rack_whole_free[s.rack] += s.whole_free;
    } else {
      idx.by_whole_free[s.whole_free].erase(node);
      idx.whole_free -= s.whole_free;
      if (s.rack >= 0) idx.rack_whole_free[s.rack] -= s.whole_free;
    }
  }
}

void CapacityState::IndexDevice(int32_t device, bool insert) {
  const Device& d = devices_[device];
  int64_t free = std::max<int64_t>(d.free_milli, 0);
  for (int32_t f : nodes_[d.node].flavors) {
    FlavorIndex& idx = flavors_[f];
    idx.free_milli += insert ? free : -free;
    if (free > 0 && free < 1000) {
      if (insert) {
        idx.partial.emplace(free, device);
      } else {
        idx.partial.erase({free, device});
      }
    }
  }
}

void CapacityState::TakeDevice(int32_t device, int64_t milli) {
  Device& d = devices_[device];
  NodeState& s = nodes_[d.node];
  const int64_t old_free = std::max<int64_t>(d.free_milli, 0);
  const bool was_whole = d.free_milli == 1000;
  d.free_milli -= milli;
  TESSERA_CHECK(d.free_milli <= 1000, "device {} of node {} would have {}m free", d.local, d.node, d.free_milli);
  const int64_t new_free = std::max<int64_t>(d.free_milli, 0);
  const bool now_whole = d.free_milli == 1000;
  // Only the node's bucket changes when a device turns whole or stops being whole.
  if (was_whole != now_whole) IndexNode(d.node, false);
  s.whole_free += static_cast<int32_t>(now_whole) - static_cast<int32_t>(was_whole);
  for (int32_t f : s.flavors) {
    FlavorIndex& idx = flavors_[f];
    idx.free_milli += new_free - old_free;
    if (old_free > 0 && old_free < 1000) idx.partial.erase({old_free, device});
    if (new_free > 0 && new_free < 1000) idx.partial.emplace(new_free, device);
  }
  if (was_whole != now_whole) IndexNode(d.node, true);
}

void CapacityState::TakeNodeResources(int32_t node, int64_t cpu_milli, int64_t memory_bytes) {
  nodes_[node].free_cpu -= cpu_milli;
  nodes_[node].free_memory -= memory_bytes;
}

int32_t CapacityState::LargestWholeBlock(int32_t flavor) const {
  const auto& buckets = flavors_[flavor].by_whole_free;
  for (int32_t k = static_cast<int32_t>(buckets.size()) - 1; k > 0; --k) {
    if (!buckets[k].empty()) return k;
  }
  return 0;
}

FragmentationReport CapacityState::Fragmentation() const {
  FragmentationReport r;
  for (const NodeState& s : nodes_) {
    if (!s.schedulable) continue;
    for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
      int64_t free = std::max<int64_t>(devices_[d].free_milli, 0);
      r.total_gpu_milli += 1000;
      r.free_gpu_milli += free;
      if (free == 1000) {
        ++r.whole_free_gpus;
      } else if (free > 0) {
        r.stranded_gpu_milli += free;
        ++r.partly_used_devices;
      }
    }
  }
  return r;
}

}  // namespace tessera
