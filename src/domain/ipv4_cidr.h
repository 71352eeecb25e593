// Ipv4Cidr: an IPv4 network, "10.244.0.0/16"; NodeCidrSet: a cluster's pod
// network cut into one range per node, as kube-controller-manager's nodeipam
// range allocator cuts --cluster-cidr into ranges of --node-cidr-mask-size
// and gives each Node one as spec.podCIDR.
//
// Invariants: an Ipv4Cidr's host bits are zero (ParseIpv4Cidr refuses text
// with host bits set and names the network address to write instead), and
// its prefix is 0..32. A NodeCidrSet's node prefix is at least the cluster's,
// at most 30 (a /31 or /32 leaves no address for a pod), and cuts the cluster
// range into at most 2^16 node ranges (Kubernetes' limit too).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tessera {

struct Ipv4Cidr {
  uint32_t network = 0;  // host order; host bits zero
  uint8_t prefix = 0;    // 0..32

  // The network's mask: prefix one bits, then zeros (0 for /0).
  uint32_t Mask() const { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }
  uint32_t Last() const { return network | ~Mask(); }  // the highest address inside
  uint64_t Size() const { return uint64_t{1} << (32 - prefix); }  // addresses inside
  bool Contains(uint32_t address) const { return (address & Mask()) == network; }
  // True when `other` lies wholly inside this network.
  bool Contains(const Ipv4Cidr& other) const { return other.prefix >= prefix && Contains(other.network); }
  // True when the two share an address (for networks: one contains the other).
  bool Overlaps(const Ipv4Cidr& other) const { return Contains(other) || other.Contains(*this); }
  std::string ToString() const;  // "10.244.0.0/16"
  friend auto operator<=>(const Ipv4Cidr&, const Ipv4Cidr&) = default;
};

// "A.B.C.D" in dotted decimal, host order.
std::string FormatIpv4(uint32_t address);

// "A.B.C.D" (four decimal octets 0..255, no leading zeros) in host order;
// nullopt for anything else (IPv6, a CIDR, "").
std::optional<uint32_t> ParseIpv4Address(std::string_view text);

// "A.B.C.D/P": four decimal octets 0..255 (no leading zeros, which some tools
// read as octal) and a prefix 0..32. InvalidArgument that quotes the text and
// says what to fix; with host bits set ("10.244.1.5/16") it names the
// network to write instead ("10.244.0.0/16").
Result<Ipv4Cidr> ParseIpv4Cidr(std::string_view text);

// A cluster range and the size of each node's share of it.
struct NodeCidrSet {
  Ipv4Cidr cluster;
  uint8_t node_prefix = 24;

  // Node ranges the cluster range holds: 2^(node_prefix - cluster.prefix).
  uint32_t count() const { return uint32_t{1} << (node_prefix - cluster.prefix); }
  // The i-th node range, lowest first. REQUIRES: i < count().
  Ipv4Cidr At(uint32_t i) const {
    return Ipv4Cidr{static_cast<uint32_t>(cluster.network + (uint64_t{i} << (32 - node_prefix))), node_prefix};
  }
};

// InvalidArgument unless `node_prefix` is at least cluster.prefix, at most
// 30, and at most 16 more than cluster.prefix; the message says which bound
// and what to use instead.
Result<NodeCidrSet> MakeNodeCidrSet(const Ipv4Cidr& cluster, int node_prefix);

// The first `count` node ranges of `set` that overlap none of `taken`, lowest
// first (fewer when the set runs out). `taken` may hold ranges of any size,
// inside the cluster range or not (an admin may set a node's podCIDR by hand):
// a node range is taken when it shares an address with any of them.
// Cost: O(t log t + count) for t taken ranges.
std::vector<Ipv4Cidr> FreeNodeCidrs(const NodeCidrSet& set, std::span<const Ipv4Cidr> taken, size_t count);

// The lowest free node range; nullopt when all are taken.
std::optional<Ipv4Cidr> FirstFreeNodeCidr(const NodeCidrSet& set, std::span<const Ipv4Cidr> taken);

}  // namespace tessera
