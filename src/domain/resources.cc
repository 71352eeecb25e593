#include "domain/resources.h"

#include <fmt/format.h>

#include <algorithm>

#include "domain/quantity.h"

namespace tessera {

std::string_view ResourceName(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kCpu: return "cpu";
    case ResourceKind::kMemory: return "memory";
    case ResourceKind::kGpu: return "nvidia.com/gpu";
    case ResourceKind::kGpuMemory: return "tessera.dev/gpu-memory";
    case ResourceKind::kPods: return "pods";
  }
  return "unknown";
}

std::optional<ResourceKind> ParseResourceName(std::string_view name) {
  for (ResourceKind k : kAllResourceKinds) {
    if (ResourceName(k) == name) return k;
  }
  return std::nullopt;
}

std::string FormatAmount(ResourceKind kind, int64_t amount) {
  switch (kind) {
    case ResourceKind::kCpu: return FormatMilli(amount);
    case ResourceKind::kGpu: return FormatMilliDecimal(amount);
    case ResourceKind::kMemory:
    case ResourceKind::kGpuMemory: return FormatBytes(amount);
    case ResourceKind::kPods: return fmt::format("{}", amount);
  }
  return fmt::format("{}", amount);
}

int64_t Resources::DominantShareMilli(const Resources& capacity) const {
  int64_t share = 0;
  for (int i = 0; i < kResourceKinds; ++i) {
    if (capacity.v_[i] <= 0) continue;
    // used * 1000 / capacity, in 128 bits: memory in bytes times 1000 overflows int64.
    auto s = static_cast<int64_t>(static_cast<__int128>(v_[i]) * 1000 / capacity.v_[i]);
    share = std::max(share, s);
  }
  return share;
}

std::string Resources::ToString() const {
  std::string out;
  for (ResourceKind k : kAllResourceKinds) {
    if (get(k) == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{}={}", ResourceName(k), FormatAmount(k, get(k)));
  }
  return out.empty() ? "none" : out;
}

}  // namespace tessera
