#include "domain/ipv4_cidr.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>

namespace tessera {
namespace {

constexpr int kMaxNodePrefix = 30;      // a /30 leaves two addresses for pods
constexpr int kMaxNodeRangeBits = 16;   // at most 65536 node ranges, as Kubernetes' cidrset

// A decimal number of at most `max_digits` digits with no leading zero, up to `max`.
std::optional<uint32_t> Decimal(std::string_view s, size_t max_digits, uint32_t max) {
  if (s.empty() || s.size() > max_digits || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

// Four octets separated by exactly three dots.
std::optional<uint32_t> ParseAddress(std::string_view s) {
  if (std::count(s.begin(), s.end(), '.') != 3) return std::nullopt;
  uint32_t address = 0;
  for (int octet = 0; octet < 4; ++octet) {
    const size_t dot = std::min(s.find('.'), s.size());
    auto v = Decimal(s.substr(0, dot), 3, 255);
    if (!v) return std::nullopt;
    address = (address << 8) | *v;
    s.remove_prefix(std::min(s.size(), dot + 1));
  }
  return address;
}

}  // namespace

std::string FormatIpv4(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xFF, (a >> 8) & 0xFF, a & 0xFF);
}

std::optional<uint32_t> ParseIpv4Address(std::string_view text) { return ParseAddress(text); }

std::string Ipv4Cidr::ToString() const { return fmt::format("{}/{}", FormatIpv4(network), prefix); }

Result<Ipv4Cidr> ParseIpv4Cidr(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return Err(Status::InvalidArgument(fmt::format(
        "\"{}\" is not a CIDR: expected an IPv4 network and prefix length, such as 10.244.0.0/16", text)));
  }
  const std::string_view address_text = text.substr(0, slash);
  const std::string_view prefix_text = text.substr(slash + 1);
  const std::optional<uint32_t> address = ParseAddress(address_text);
  if (!address) {
    return Err(Status::InvalidArgument(fmt::format(
        "\"{}\": \"{}\" is not an IPv4 address: expected four numbers 0-255 separated by dots, such as 10.244.0.0 "
        "(IPv6 is not supported)",
        text, address_text)));
  }
  const auto prefix = Decimal(prefix_text, 2, 32);
  if (!prefix) {
    return Err(Status::InvalidArgument(
        fmt::format("\"{}\": the prefix length \"{}\" must be a number from 0 to 32", text, prefix_text)));
  }
  Ipv4Cidr cidr{*address, static_cast<uint8_t>(*prefix)};
  if ((cidr.network & ~cidr.Mask()) != 0) {
    Ipv4Cidr network{cidr.network & cidr.Mask(), cidr.prefix};
    return Err(Status::InvalidArgument(fmt::format(
        "\"{}\" has host bits set: the /{} network that holds {} is {}; write that", text, cidr.prefix,
        FormatIpv4(cidr.network), network.ToString())));
  }
  return cidr;
}

Result<NodeCidrSet> MakeNodeCidrSet(const Ipv4Cidr& cluster, int node_prefix) {
  if (node_prefix < cluster.prefix) {
    return Err(Status::InvalidArgument(fmt::format(
        "a node range of /{} is larger than the cluster range {}: use a node mask size from {} to {}", node_prefix,
        cluster.ToString(), cluster.prefix, std::min(kMaxNodePrefix, cluster.prefix + kMaxNodeRangeBits))));
  }
  if (node_prefix > kMaxNodePrefix) {
    return Err(Status::InvalidArgument(fmt::format(
        "a node range of /{} leaves no addresses for pods: use a node mask size of at most {}", node_prefix,
        kMaxNodePrefix)));
  }
  if (node_prefix - cluster.prefix > kMaxNodeRangeBits) {
    return Err(Status::InvalidArgument(fmt::format(
        "{} cut into /{} ranges makes {} node ranges, more than the {} allowed: use a node mask size of at most {}, "
        "or a cluster range of /{} or longer",
        cluster.ToString(), node_prefix, uint64_t{1} << (node_prefix - cluster.prefix), 1 << kMaxNodeRangeBits,
        cluster.prefix + kMaxNodeRangeBits, node_prefix - kMaxNodeRangeBits)));
  }
  return NodeCidrSet{cluster, static_cast<uint8_t>(node_prefix)};
}

std::vector<Ipv4Cidr> FreeNodeCidrs(const NodeCidrSet& set, std::span<const Ipv4Cidr> taken, size_t count) {
  // 1. Each taken range that overlaps the cluster range, as the interval of
  //    node range indices it touches: [first address - base, last address - base]
  //    shifted right by the node range's host bits.
  const int shift = 32 - set.node_prefix;
  std::vector<std::pair<uint32_t, uint32_t>> blocked;  // [lo, hi] indices, inclusive
  for (const Ipv4Cidr& t : taken) {
    if (!t.Overlaps(set.cluster)) continue;
    const uint32_t first = std::max(t.network, set.cluster.network);
    const uint32_t last = std::min(t.Last(), set.cluster.Last());
    const auto index = [&](uint32_t a) { return static_cast<uint32_t>((uint64_t{a} - set.cluster.network) >> shift); };
    blocked.emplace_back(index(first), index(last));
  }
  std::sort(blocked.begin(), blocked.end());
  // 2. Walk the indices from 0, jumping over each blocked interval.
  std::vector<Ipv4Cidr> out;
  uint64_t next = 0;
  size_t b = 0;
  while (out.size() < count && next < set.count()) {
    while (b < blocked.size() && blocked[b].second < next) ++b;
    if (b < blocked.size() && blocked[b].first <= next) {
      next = uint64_t{blocked[b].second} + 1;
      continue;
    }
    out.push_back(set.At(static_cast<uint32_t>(next)));
    ++next;
  }
  return out;
}

std::optional<Ipv4Cidr> FirstFreeNodeCidr(const NodeCidrSet& set, std::span<const Ipv4Cidr> taken) {
  std::vector<Ipv4Cidr> free = FreeNodeCidrs(set, taken, 1);
  if (free.empty()) return std::nullopt;
  return free.front();
}

}  // namespace tessera
