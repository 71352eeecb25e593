#include "domain/ipv4_cidr.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera {
namespace {

Ipv4Cidr Cidr(std::string_view text) {
  auto parsed = ParseIpv4Cidr(text);
  EXPECT_TRUE(parsed.has_value()) << text << ": " << parsed.error().message();
  return parsed.value_or(Ipv4Cidr{});
}

NodeCidrSet Set(std::string_view cluster, int node_prefix) {
  auto set = MakeNodeCidrSet(Cidr(cluster), node_prefix);
  EXPECT_TRUE(set.has_value()) << cluster << " /" << node_prefix << ": " << set.error().message();
  return set.value_or(NodeCidrSet{});
}

std::vector<std::string> Texts(const std::vector<Ipv4Cidr>& cidrs) {
  std::vector<std::string> out;
  for (const Ipv4Cidr& c : cidrs) out.push_back(c.ToString());
  return out;
}

// ============================================================================
// Parsing.
// ============================================================================

// A network parses to its address and prefix, and prints back as written.
TEST(Ipv4CidrTest, ParsesAndPrintsBack) {
  const Ipv4Cidr c = Cidr("10.244.0.0/16");
  EXPECT_EQ(c.network, 0x0AF40000u);  // 10 << 24 | 244 << 16
  EXPECT_EQ(c.prefix, 16);
  EXPECT_EQ(c.ToString(), "10.244.0.0/16");
  EXPECT_EQ(c.Size(), 65536u);  // 2^(32 - 16)
  EXPECT_EQ(FormatIpv4(c.Last()), "10.244.255.255");
  for (const char* text : {"0.0.0.0/0", "192.168.1.0/24", "10.0.0.1/32", "255.255.255.252/30"}) {
    EXPECT_EQ(Cidr(text).ToString(), text);
  }
}

// Host bits set: refused, and the message names the network to write instead.
TEST(Ipv4CidrTest, HostBitsSetNamesTheNetworkToUse) {
  auto parsed = ParseIpv4Cidr("10.244.1.5/16");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.error().message(),
            "\"10.244.1.5/16\" has host bits set: the /16 network that holds 10.244.1.5 is 10.244.0.0/16; write that");
}

// A prefix that is missing, not a number, or over 32 is refused, saying the range.
TEST(Ipv4CidrTest, BadPrefixIsRefused) {
  for (const char* text : {"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/-1", "10.0.0.0/024", "10.0.0.0/16/2"}) {
    auto parsed = ParseIpv4Cidr(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_NE(parsed.error().message().find("must be a number from 0 to 32"), std::string::npos)
        << text << ": " << parsed.error().message();
  }
  auto bare = ParseIpv4Cidr("10.244.0.0");
  ASSERT_FALSE(bare.has_value());
  EXPECT_EQ(bare.error().message(),
            "\"10.244.0.0\" is not a CIDR: expected an IPv4 network and prefix length, such as 10.244.0.0/16");
}

// Addresses that are not four octets 0..255 are refused, naming the address part.
TEST(Ipv4CidrTest, GarbageIsRefused) {
  for (const char* text : {"", "/16", "garbage/8", "10.244.0/16", "10.244.0.0.0/16", "256.0.0.0/8", "10..0.0/16",
                           "010.0.0.0/8", "1e1.0.0.0/8", " 10.0.0.0/8", "fd00::/8"}) {
    auto parsed = ParseIpv4Cidr(text);
    ASSERT_FALSE(parsed.has_value()) << "\"" << text << "\"";
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  }
  auto parsed = ParseIpv4Cidr("10.300.0.0/16");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message(),
            "\"10.300.0.0/16\": \"10.300.0.0\" is not an IPv4 address: expected four numbers 0-255 separated by dots, "
            "such as 10.244.0.0 (IPv6 is not supported)");
}

// Contains and Overlaps: a network holds its own addresses and subnets; two
// networks overlap exactly when one contains the other.
TEST(Ipv4CidrTest, ContainsAndOverlaps) {
  const Ipv4Cidr cluster = Cidr("10.100.0.0/22");  // 10.100.0.0 - 10.100.3.255
  EXPECT_TRUE(cluster.Contains(Cidr("10.100.3.0/24")));
  EXPECT_TRUE(cluster.Contains(cluster));
  EXPECT_FALSE(cluster.Contains(Cidr("10.100.4.0/24")));
  EXPECT_FALSE(cluster.Contains(Cidr("10.100.0.0/16")));  // larger
  EXPECT_TRUE(cluster.Overlaps(Cidr("10.100.0.0/16")));
  EXPECT_TRUE(Cidr("10.100.2.128/25").Overlaps(cluster));
  EXPECT_FALSE(cluster.Overlaps(Cidr("10.100.4.0/22")));
  EXPECT_TRUE(Cidr("0.0.0.0/0").Overlaps(cluster));
  EXPECT_TRUE(cluster.Contains(Cidr("10.100.3.255/32").network));
}

// ============================================================================
// Node ranges.
// ============================================================================

// A /16 cut into /24s: 256 ranges, the first 10.244.0.0/24, the last 10.244.255.0/24.
TEST(NodeCidrSetTest, CutsTheClusterRangeIntoNodeRanges) {
  const NodeCidrSet set = Set("10.244.0.0/16", 24);
  EXPECT_EQ(set.count(), 256u);  // 2^(24 - 16)
  EXPECT_EQ(set.At(0).ToString(), "10.244.0.0/24");
  EXPECT_EQ(set.At(1).ToString(), "10.244.1.0/24");
  EXPECT_EQ(set.At(255).ToString(), "10.244.255.0/24");
  EXPECT_EQ(Set("10.100.0.0/24", 24).count(), 1u);  // one node may hold the whole range
}

// Mask sizes shorter than the cluster's prefix, over 30, or cutting into more
// than 2^16 ranges are refused, each saying what to use instead.
TEST(NodeCidrSetTest, RefusesMaskSizesThatCannotWork) {
  auto larger = MakeNodeCidrSet(Cidr("10.244.0.0/16"), 8);
  ASSERT_FALSE(larger.has_value());
  EXPECT_EQ(larger.error().message(),
            "a node range of /8 is larger than the cluster range 10.244.0.0/16: use a node mask size from 16 to 30");
  auto tiny = MakeNodeCidrSet(Cidr("10.244.0.0/16"), 31);
  ASSERT_FALSE(tiny.has_value());
  EXPECT_EQ(tiny.error().message(), "a node range of /31 leaves no addresses for pods: use a node mask size of at most 30");
  auto many = MakeNodeCidrSet(Cidr("10.0.0.0/8"), 30);  // 2^22 ranges
  ASSERT_FALSE(many.has_value());
  EXPECT_EQ(many.error().message(),
            "10.0.0.0/8 cut into /30 ranges makes 4194304 node ranges, more than the 65536 allowed: use a node mask "
            "size of at most 24, or a cluster range of /14 or longer");
  EXPECT_TRUE(MakeNodeCidrSet(Cidr("10.0.0.0/8"), 24).has_value());  // 2^16 ranges: the most allowed
}

// With nothing taken, ranges are handed out lowest first.
TEST(NodeCidrSetTest, AllocatesLowestFirst) {
  const NodeCidrSet set = Set("10.100.0.0/22", 24);
  EXPECT_EQ(Texts(FreeNodeCidrs(set, {}, 3)),
            (std::vector<std::string>{"10.100.0.0/24", "10.100.1.0/24", "10.100.2.0/24"}));
  EXPECT_EQ(FirstFreeNodeCidr(set, {})->ToString(), "10.100.0.0/24");
}

// Ranges nodes hold are skipped; a freed one (not in `taken` any more) is the
// first handed out again.
TEST(NodeCidrSetTest, SkipsTakenRangesAndReusesFreedOnes) {
  const NodeCidrSet set = Set("10.100.0.0/22", 24);
  const std::vector<Ipv4Cidr> taken{Cidr("10.100.0.0/24"), Cidr("10.100.2.0/24")};
  EXPECT_EQ(Texts(FreeNodeCidrs(set, taken, 4)), (std::vector<std::string>{"10.100.1.0/24", "10.100.3.0/24"}));
  const std::vector<Ipv4Cidr> after_delete{Cidr("10.100.2.0/24")};  // the node on .0 was deleted
  EXPECT_EQ(FirstFreeNodeCidr(set, after_delete)->ToString(), "10.100.0.0/24");
}

// Ranges an admin set by hand, of any size, take every node range they touch:
// a /23 takes two /24s, a /26 inside one /24 takes that /24, a /8 around the
// cluster takes all of it, and ranges outside the cluster take nothing.
TEST(NodeCidrSetTest, AdminSetRangesOfAnySizeTakeWhatTheyOverlap) {
  const NodeCidrSet set = Set("10.100.0.0/22", 24);
  EXPECT_EQ(Texts(FreeNodeCidrs(set, std::vector<Ipv4Cidr>{Cidr("10.100.0.0/23")}, 4)),
            (std::vector<std::string>{"10.100.2.0/24", "10.100.3.0/24"}));
  EXPECT_EQ(Texts(FreeNodeCidrs(set, std::vector<Ipv4Cidr>{Cidr("10.100.1.64/26"), Cidr("192.168.0.0/16")}, 4)),
            (std::vector<std::string>{"10.100.0.0/24", "10.100.2.0/24", "10.100.3.0/24"}));
  EXPECT_EQ(FirstFreeNodeCidr(set, std::vector<Ipv4Cidr>{Cidr("10.0.0.0/8")}), std::nullopt);
  // Overlapping and duplicate taken ranges, in any order.
  EXPECT_EQ(Texts(FreeNodeCidrs(set,
                                std::vector<Ipv4Cidr>{Cidr("10.100.2.0/24"), Cidr("10.100.0.0/23"), Cidr("10.100.1.0/24"),
                                                      Cidr("10.100.2.0/24")},
                                4)),
            (std::vector<std::string>{"10.100.3.0/24"}));
}

// Four /24s in a /22: once all four are held there is none for a fifth node.
TEST(NodeCidrSetTest, ExhaustedRangeHasNoneLeft) {
  const NodeCidrSet set = Set("10.100.0.0/22", 24);
  const std::vector<Ipv4Cidr> all = FreeNodeCidrs(set, {}, 10);
  ASSERT_EQ(all.size(), 4u);  // 2^(24 - 22)
  EXPECT_EQ(FirstFreeNodeCidr(set, all), std::nullopt);
  EXPECT_TRUE(FreeNodeCidrs(set, all, 1).empty());
}

// The ends of the address space: 0.0.0.0/0 cut into /16s, and the top range.
TEST(NodeCidrSetTest, WorksAtTheEndsOfTheAddressSpace) {
  const NodeCidrSet set = Set("0.0.0.0/0", 16);
  EXPECT_EQ(set.count(), 65536u);
  EXPECT_EQ(set.At(65535).ToString(), "255.255.0.0/16");
  std::vector<Ipv4Cidr> taken{Cidr("0.0.0.0/1")};  // the lower half
  EXPECT_EQ(FirstFreeNodeCidr(set, taken)->ToString(), "128.0.0.0/16");
  const NodeCidrSet top = Set("255.255.255.0/24", 30);
  EXPECT_EQ(Texts(FreeNodeCidrs(top, std::vector<Ipv4Cidr>{Cidr("255.255.255.0/25")}, 100)).back(), "255.255.255.252/30");
  EXPECT_EQ(FreeNodeCidrs(top, std::vector<Ipv4Cidr>{Cidr("255.255.255.0/25")}, 100).size(), 32u);  // 64 - 32
}

}  // namespace
}  // namespace tessera
