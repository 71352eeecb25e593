// A node as its agent registers it, for server tests without an agent: `gpus`
// simulated GPUs of `model` (80 GiB each, one NVLink domain, UUIDs
// "<name>-gpu<i>"), 64 cores and 512 GiB.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "agent/node_registration.h"
#include "server/api/api_handler.h"

namespace tessera::testing {

inline nlohmann::json GpuNodeObject(const std::string& name, int gpus, const std::string& model) {
  Node n{.name = name, .cpu_milli = 64000, .memory_bytes = int64_t{512} << 30};
  for (int g = 0; g < gpus; ++g) {
    n.gpus.push_back(GpuDevice{.index = g, .uuid = name + "-gpu" + std::to_string(g), .model = model,
                               .memory_bytes = int64_t{80} << 30, .nvlink_domain = 0});
  }
  return NodeObject(n, true, Rfc3339Now());
}

}  // namespace tessera::testing
