// Resources: a small fixed vector of integer quantities, one per ResourceKind.
//
// Units: CPU in millicores, memory and GPU memory in bytes, GPU in milli-GPU
// (1000 = one device), pods as a count. All arithmetic is exact; overflow is a
// bug (quantities are validated at the edge to stay far below int64 range).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class ResourceKind : uint8_t {
  kCpu = 0,
  kMemory,
  kGpu,        // nvidia.com/gpu
  kGpuMemory,  // tessera.dev/gpu-memory
  kPods,
};
inline constexpr int kResourceKinds = 5;
inline constexpr std::array<ResourceKind, kResourceKinds> kAllResourceKinds = {
    ResourceKind::kCpu, ResourceKind::kMemory, ResourceKind::kGpu, ResourceKind::kGpuMemory,
    ResourceKind::kPods};

// "cpu", "memory", "nvidia.com/gpu", "tessera.dev/gpu-memory", "pods".
std::string_view ResourceName(ResourceKind kind);
std::optional<ResourceKind> ParseResourceName(std::string_view name);

// Formats an amount of `kind` in the unit users write it in: "2", "500m", "64Gi", "0.25".
std::string FormatAmount(ResourceKind kind, int64_t amount);

class Resources {
 public:
  constexpr Resources() = default;

  static Resources Of(ResourceKind kind, int64_t amount) {
    Resources r;
    r.set(kind, amount);
    return r;
  }

  constexpr int64_t get(ResourceKind k) const { return v_[static_cast<int>(k)]; }
  constexpr void set(ResourceKind k, int64_t amount) { v_[static_cast<int>(k)] = amount; }
  constexpr int64_t& at(ResourceKind k) { return v_[static_cast<int>(k)]; }

  int64_t gpu() const { return get(ResourceKind::kGpu); }
  int64_t cpu() const { return get(ResourceKind::kCpu); }
  int64_t memory() const { return get(ResourceKind::kMemory); }

  bool IsZero() const {
    for (int64_t x : v_) {
      if (x != 0) return false;
    }
    return true;
  }

  // True when every component is <= the other's.
  bool FitsIn(const Resources& capacity) const {
    for (int i = 0; i < kResourceKinds; ++i) {
      if (v_[i] > capacity.v_[i]) return false;
    }
    return true;
  }

  Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kResourceKinds; ++i) v_[i] += o.v_[i];
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kResourceKinds; ++i) v_[i] -= o.v_[i];
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  Resources operator*(int64_t n) const {
    Resources r = *this;
    for (auto& x : r.v_) x *= n;
    return r;
  }

  // Dominant share in thousandths: max over kinds with capacity > 0 of
  // used * 1000 / capacity. Kinds without capacity are ignored.
  int64_t DominantShareMilli(const Resources& capacity) const;

  // "cpu=2, memory=64Gi, nvidia.com/gpu=0.25" (zero components omitted).
  std::string ToString() const;

  friend bool operator==(const Resources&, const Resources&) = default;

 private:
  std::array<int64_t, kResourceKinds> v_{};
};

}  // namespace tessera
