#include "server/api/service_ip_allocator.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/object_json.h"

namespace tessera {
namespace {

constexpr int kLargestPrefix = 12;   // kube-apiserver: "the mask must be >= 12"
constexpr int kSmallestPrefix = 29;  // 6 host addresses: the reserved one and 5 for Services

// kube-apiserver's calculateRangeOffset: the static band's size, in addresses.
size_t StaticBand(uint64_t size) {
  constexpr uint64_t kMin = 16, kMax = 256, kStep = 16;
  if (size < kMin) return 0;
  return static_cast<size_t>(std::clamp(size / kStep, kMin, kMax));
}

}  // namespace

Result<Ipv4Cidr> ServiceIpAllocator::ParseRange(std::string_view text) {
  auto range = ParseIpv4Cidr(text);
  if (!range) return Err(Status::InvalidArgument(fmt::format("--service-cluster-ip-range {}", range.error().message())));
  if (range->prefix < kLargestPrefix) {
    return Err(Status::InvalidArgument(
        fmt::format("--service-cluster-ip-range {}: the range is too large; for IPv4 the prefix must be /{} or longer "
                    "(such as the default 10.96.0.0/12)",
                    text, kLargestPrefix)));
  }
  if (range->prefix > kSmallestPrefix) {
    return Err(Status::InvalidArgument(fmt::format(
        "--service-cluster-ip-range {}: the range is too small; give at least a /{} (its first address is the "
        "kubernetes Service's, and its network and broadcast addresses are never given)",
        text, kSmallestPrefix)));
  }
  return *range;
}

ServiceIpAllocator::ServiceIpAllocator(Ipv4Cidr range)
    : range_(range), band_(StaticBand(range.Size())), used_(static_cast<size_t>(range.Size() - 2), false) {
  used_[0] = true;  // the kubernetes Service's
  next_ = std::min(band_, used_.size());
}

void ServiceIpAllocator::Restore(std::span<const nlohmann::json> services) {
  std::lock_guard lock(mu_);
  for (const nlohmann::json& service : services) {
    const auto ip = ParseIpv4Address(StringAt(service, {"spec", "clusterIP"}));
    if (!ip || !InRange(*ip) || used_[OffsetOf(*ip)]) continue;
    used_[OffsetOf(*ip)] = true;
    ++held_;
  }
}

Result<uint32_t> ServiceIpAllocator::AllocateNext() {
  std::lock_guard lock(mu_);
  // Above the band, next-fit from next_, wrapping within [band_, size); then the band.
  const size_t size = used_.size();
  auto take = [&](size_t offset) {
    used_[offset] = true;
    ++held_;
    return static_cast<uint32_t>(range_.network + 1 + offset);
  };
  const size_t upper = size - std::min(band_, size);
  for (size_t i = 0; i < upper; ++i) {
    const size_t offset = band_ + (next_ - band_ + i) % upper;
    if (!used_[offset]) {
      next_ = offset + 1 < size ? offset + 1 : band_;
      return take(offset);
    }
  }
  for (size_t offset = 0; offset < std::min(band_, size); ++offset) {
    if (!used_[offset]) return take(offset);
  }
  return Err(Status::Internal(fmt::format(
      "Internal error occurred: failed to allocate a serviceIP: range is full: all {} addresses of "
      "--service-cluster-ip-range {} are held by Services; delete a Service, make one headless (clusterIP: None), "
      "or restart the server with a larger range",
      size - 1, range_.ToString())));
}

Status ServiceIpAllocator::Allocate(uint32_t ip) {
  const std::string text = FormatIpv4(ip);
  if (!InRange(ip)) {
    return Status::InvalidArgument(
        fmt::format("spec.clusterIP: Invalid value: \"{}\": failed to allocate IP {}: provided IP ({}) is not in the "
                    "valid range. The range of valid IPs is {}",
                    text, text, text, range_.ToString()));
  }
  if (ip == KubernetesServiceIp()) {
    return Status::InvalidArgument(fmt::format(
        "spec.clusterIP: Invalid value: \"{}\": failed to allocate IP {}: provided IP is already allocated (the "
        "range's first address is reserved for the kubernetes Service)",
        text, text));
  }
  std::lock_guard lock(mu_);
  if (used_[OffsetOf(ip)]) {
    return Status::InvalidArgument(fmt::format(
        "spec.clusterIP: Invalid value: \"{}\": failed to allocate IP {}: provided IP is already allocated", text, text));
  }
  used_[OffsetOf(ip)] = true;
  ++held_;
  return Status::Ok();
}

void ServiceIpAllocator::Release(uint32_t ip) {
  if (!InRange(ip) || ip == KubernetesServiceIp()) return;
  std::lock_guard lock(mu_);
  if (!used_[OffsetOf(ip)]) return;
  used_[OffsetOf(ip)] = false;
  --held_;
}

bool ServiceIpAllocator::Held(uint32_t ip) const {
  if (!InRange(ip)) return false;
  std::lock_guard lock(mu_);
  return used_[OffsetOf(ip)];
}

size_t ServiceIpAllocator::held() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace tessera
