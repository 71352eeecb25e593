// ServiceIpAllocator: the virtual addresses of Services (spec.clusterIP), cut
// from --service-cluster-ip-range as kube-apiserver's allocator cuts its
// range, at create time, so that the create's answer carries the address.
//
// The range (an IPv4 network of /12 to /29; /12 is kube-apiserver's bound for
// the large end): its network and broadcast addresses are never given; its first
// host address (10.96.0.1 of 10.96.0.0/12) is reserved for the `kubernetes`
// Service, as in Kubernetes. As kube-apiserver since 1.26, the range's first
// min(max(16, size/16), 256) addresses are a static band: addresses asked for
// by name are taken from anywhere, addresses left to the allocator come from
// above the band first, next-fit from the last one given (so that a freed
// address is not handed out again at once), and from the band only when the
// rest is full.
//
// Atomicity: Allocate/AllocateNext reserve under a lock, before the Service
// is written; the caller releases the address when the write fails, and when
// the Service is deleted. A restart loses nothing: Restore marks every stored
// Service's address as held, so the held set is always derived from the
// stored Services. Services must be deleted through the API (which releases);
// nothing else in the server deletes them.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "domain/ipv4_cidr.h"

namespace tessera {

class ServiceIpAllocator {
 public:
  // The range of --service-cluster-ip-range `text`; InvalidArgument naming
  // the flag and what to write instead (not a CIDR, host bits set, larger
  // than /12 or smaller than /29).
  static Result<Ipv4Cidr> ParseRange(std::string_view text);

  explicit ServiceIpAllocator(Ipv4Cidr range);

  const Ipv4Cidr& range() const { return range_; }
  // The address reserved for the `kubernetes` Service: the range's first host.
  uint32_t KubernetesServiceIp() const { return range_.network + 1; }

  // Marks the addresses of `services` (stored v1 Services) as held; a
  // headless one, or one outside the range (stored under another range),
  // holds none. Call before serving.
  void Restore(std::span<const nlohmann::json> services);

  // The next free address (see above). Internal, in kube-apiserver's words
  // and with what to do, when the range is full.
  Result<uint32_t> AllocateNext();
  // `ip` as asked for. InvalidArgument, as kube-apiserver words it for
  // spec.clusterIP, when it lies outside the range (or is its network,
  // broadcast or reserved address) or is held already.
  Status Allocate(uint32_t ip);
  // Frees `ip`; an address outside the range, or not held, is ignored.
  void Release(uint32_t ip);

  bool Held(uint32_t ip) const;
  size_t held() const;  // addresses held by Services (not counting the reserved one)

 private:
  // Offsets count from the network address + 1; offset 0 is the reserved one.
  bool InRange(uint32_t ip) const { return range_.Contains(ip) && ip != range_.network && ip != range_.Last(); }
  size_t OffsetOf(uint32_t ip) const { return ip - range_.network - 1; }

  Ipv4Cidr range_;
  size_t band_;  // the static band: offsets [0, band_)
  mutable std::mutex mu_;
  std::vector<bool> used_;  // by offset; guarded by mu_
  size_t held_ = 0;         // guarded by mu_
  size_t next_ = 0;         // where the next dynamic search starts; guarded by mu_
};

}  // namespace tessera
