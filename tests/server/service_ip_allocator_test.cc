// The Services' address allocator (server/service_ip_allocator.h) on its own:
// which addresses it gives, in what order, what it refuses, and that many
// threads asking at once never get the same one.
#include "server/api/service_ip_allocator.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace tessera {
namespace {

using nlohmann::json;

uint32_t Ip(const char* text) { return *ParseIpv4Address(text); }
ServiceIpAllocator Make(const char* range) { return ServiceIpAllocator(*ParseIpv4Cidr(range)); }

TEST(ServiceIpAllocatorTest, RangeFlagBounds) {
  EXPECT_TRUE(ServiceIpAllocator::ParseRange("10.96.0.0/12").has_value());
  EXPECT_TRUE(ServiceIpAllocator::ParseRange("10.96.0.0/29").has_value());
  EXPECT_EQ(ServiceIpAllocator::ParseRange("10.0.0.0/8").error().message(),
            "--service-cluster-ip-range 10.0.0.0/8: the range is too large; for IPv4 the prefix must be /12 or longer "
            "(such as the default 10.96.0.0/12)");
  EXPECT_EQ(ServiceIpAllocator::ParseRange("10.96.0.0/30").error().message(),
            "--service-cluster-ip-range 10.96.0.0/30: the range is too small; give at least a /29 (its first address "
            "is the kubernetes Service's, and its network and broadcast addresses are never given)");
  EXPECT_EQ(ServiceIpAllocator::ParseRange("10.96.0.1/12").error().message(),
            "--service-cluster-ip-range \"10.96.0.1/12\" has host bits set: the /12 network that holds 10.96.0.1 is "
            "10.96.0.0/12; write that");
}

// 10.96.0.0/12 holds 2^20 addresses: a static band of min(max(16, 2^20/16), 256)
// = 256 at the bottom, so the first address given is 10.96.0.1 + 256 = 10.96.1.1,
// then the next ones up.
TEST(ServiceIpAllocatorTest, DynamicAddressesComeFromAboveTheStaticBandInOrder) {
  ServiceIpAllocator ips = Make("10.96.0.0/12");
  EXPECT_EQ(ips.KubernetesServiceIp(), Ip("10.96.0.1"));
  EXPECT_TRUE(ips.Held(Ip("10.96.0.1")));  // reserved for the kubernetes Service
  EXPECT_EQ(FormatIpv4(*ips.AllocateNext()), "10.96.1.1");
  EXPECT_EQ(FormatIpv4(*ips.AllocateNext()), "10.96.1.2");
  EXPECT_EQ(ips.held(), 2u);
}

// A freed address is not handed out again at once: the search goes on from
// the last one given (next fit).
TEST(ServiceIpAllocatorTest, AFreedAddressIsNotTheNextOneGiven) {
  ServiceIpAllocator ips = Make("10.96.0.0/12");
  const uint32_t first = *ips.AllocateNext();
  ips.Release(first);
  EXPECT_NE(*ips.AllocateNext(), first);
  EXPECT_FALSE(ips.Held(first));
}

TEST(ServiceIpAllocatorTest, AnAddressAskedForIsHonouredOnceAndInTheRangeOnly) {
  ServiceIpAllocator ips = Make("10.96.0.0/12");
  ASSERT_TRUE(ips.Allocate(Ip("10.96.0.10")).ok());  // in the static band: fine when asked for
  EXPECT_TRUE(ips.Held(Ip("10.96.0.10")));
  EXPECT_EQ(ips.Allocate(Ip("10.96.0.10")).message(),
            "spec.clusterIP: Invalid value: \"10.96.0.10\": failed to allocate IP 10.96.0.10: provided IP is already "
            "allocated");
  EXPECT_EQ(ips.Allocate(Ip("10.0.0.1")).message(),
            "spec.clusterIP: Invalid value: \"10.0.0.1\": failed to allocate IP 10.0.0.1: provided IP (10.0.0.1) is "
            "not in the valid range. The range of valid IPs is 10.96.0.0/12");
  // The network and broadcast addresses are in the CIDR but never given.
  EXPECT_EQ(ips.Allocate(Ip("10.96.0.0")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ips.Allocate(Ip("10.111.255.255")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ips.Allocate(Ip("10.96.0.1")).message(),
            "spec.clusterIP: Invalid value: \"10.96.0.1\": failed to allocate IP 10.96.0.1: provided IP is already "
            "allocated (the range's first address is reserved for the kubernetes Service)");
  ips.Release(Ip("10.96.0.10"));
  EXPECT_TRUE(ips.Allocate(Ip("10.96.0.10")).ok()) << "freed, it may be asked for again";
}

// A /29 holds 8 addresses: network, broadcast and the reserved one leave 5.
TEST(ServiceIpAllocatorTest, AFullRangeSaysSoAndWhatToDo) {
  ServiceIpAllocator ips = Make("10.96.0.0/29");
  std::set<std::string> given;
  for (int i = 0; i < 5; ++i) {
    auto ip = ips.AllocateNext();
    ASSERT_TRUE(ip.has_value()) << i;
    given.insert(FormatIpv4(*ip));
  }
  EXPECT_EQ(given, (std::set<std::string>{"10.96.0.2", "10.96.0.3", "10.96.0.4", "10.96.0.5", "10.96.0.6"}));
  auto full = ips.AllocateNext();
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code(), StatusCode::kInternal);
  EXPECT_EQ(full.error().message(),
            "Internal error occurred: failed to allocate a serviceIP: range is full: all 5 addresses of "
            "--service-cluster-ip-range 10.96.0.0/29 are held by Services; delete a Service, make one headless "
            "(clusterIP: None), or restart the server with a larger range");
  ips.Release(*ParseIpv4Address("10.96.0.4"));
  EXPECT_EQ(FormatIpv4(*ips.AllocateNext()), "10.96.0.4");
}

// When everything above the band is taken, the band's addresses are given.
TEST(ServiceIpAllocatorTest, TheStaticBandIsUsedLast) {
  // 10.96.0.0/24: 256 addresses, a band of max(16, 256/16) = 16 (offsets 0..15,
  // 10.96.0.1-10.96.0.16); 254 - 16 = 238 addresses above it.
  ServiceIpAllocator ips = Make("10.96.0.0/24");
  for (int i = 0; i < 238; ++i) {
    const uint32_t ip = *ips.AllocateNext();
    ASSERT_GE(ip, Ip("10.96.0.17")) << FormatIpv4(ip);
  }
  EXPECT_EQ(FormatIpv4(*ips.AllocateNext()), "10.96.0.2");  // .1 is the kubernetes Service's
}

TEST(ServiceIpAllocatorTest, RestoreHoldsWhatStoredServicesHold) {
  ServiceIpAllocator ips = Make("10.96.0.0/12");
  const std::vector<json> services = {
      json{{"spec", {{"clusterIP", "10.96.1.1"}}}},
      json{{"spec", {{"clusterIP", "None"}}}},      // headless: holds nothing
      json{{"spec", {{"clusterIP", "10.0.0.9"}}}},  // of another range: holds nothing here
      json{{"metadata", {{"name", "no-spec"}}}},
  };
  ips.Restore(services);
  EXPECT_EQ(ips.held(), 1u);
  EXPECT_TRUE(ips.Held(Ip("10.96.1.1")));
  EXPECT_EQ(FormatIpv4(*ips.AllocateNext()), "10.96.1.2");
}

// 8 threads x 500 addresses at once: 4,000 addresses, all different.
TEST(ServiceIpAllocatorTest, ConcurrentCallersNeverShareAnAddress) {
  ServiceIpAllocator ips = Make("10.96.0.0/16");
  std::mutex mu;
  std::set<uint32_t> all;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::vector<uint32_t> mine;
      for (int i = 0; i < 500; ++i) mine.push_back(*ips.AllocateNext());
      std::lock_guard lock(mu);
      all.insert(mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(all.size(), 4000u);
  EXPECT_EQ(ips.held(), 4000u);
}

}  // namespace
}  // namespace tessera
