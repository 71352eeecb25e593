// Annotations the node agent writes on its Node object (and its pods) and the server reads:
// the one place both sides take their names from (the agent may not include the
// api layer, where the rest of the API's names live).
#pragma once

#include <string_view>

namespace tessera {

// A JSON array, one entry per GPU: {"index": 0, "utilizationPercent": 37,
// "memoryUsedBytes": 12884901888}, sampled every usage interval (NVML, or the
// simulated inventory's model).
inline constexpr std::string_view kGpuUsageAnnotation = "tessera.dev/gpu-usage";
// When that sample was taken (RFC 3339).
inline constexpr std::string_view kGpuUsageTimeAnnotation = "tessera.dev/gpu-usage-time";

// On a notebook's Pod (agent/notebook_activity.h): its kernels' last activity
// (Jupyter's /api/status, or now while a kernel is busy), RFC 3339.
inline constexpr std::string_view kLastActivityAnnotation = "tessera.dev/last-activity";

}  // namespace tessera
