// Node: a machine's schedulable inventory as the scheduler sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "domain/labels.h"
#include "domain/resources.h"

namespace tessera {

struct GpuDevice {
  int32_t index = 0;          // the device's index on its node (CUDA ordinal)
  std::string uuid;           // "GPU-..." as NVML reports it
  std::string model;          // "H100-80GB"
  int64_t memory_bytes = 0;   // total device memory
  int32_t nvlink_domain = 0;  // devices with the same value are NVLink-connected
  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

struct Node {
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  std::string rack;       // topology: gangs prefer to stay within one rack
  int64_t cpu_milli = 0;  // allocatable
  int64_t memory_bytes = 0;
  std::vector<GpuDevice> gpus;
  bool ready = true;          // heartbeat current
  bool unschedulable = false; // cordoned: keeps its work, takes no new work

  bool Schedulable() const { return ready && !unschedulable; }
  int64_t GpuMilli() const { return static_cast<int64_t>(gpus.size()) * 1000; }
};

}  // namespace tessera
