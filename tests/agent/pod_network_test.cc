// The pod network's plumbing against the real kernel: a node made as a
// network namespace of the test's, pods' namespaces, veths on the node's
// bridge, traffic between pods, and the host-gw routes.
#include "agent/pod_network.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "tests/testing/netns.h"

namespace tessera {
namespace {

using testing::ScopedNetns;

std::string Output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  std::array<char, 512> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

// Opens a TCP listener in `netns` on port 7000, then connects to it from
// `from` at `ip`: true when the connection is made.
bool TcpReaches(const std::string& from, const std::string& netns, uint32_t ip) {
  const int listener = ScopedNetns::RunInPath(netns, [] {
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{.sin_family = AF_INET, .sin_port = htons(7000), .sin_addr = {htonl(INADDR_ANY)}, .sin_zero = {}};
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(s, 4) != 0) {
      ::close(s);
      return -1;
    }
    return s;
  });
  if (listener < 0) return false;
  const bool ok = ScopedNetns::RunInPath(from, [ip] {
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{.tv_sec = 2, .tv_usec = 0};
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in a{.sin_family = AF_INET, .sin_port = htons(7000), .sin_addr = {htonl(ip)}, .sin_zero = {}};
    const bool connected = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(s);
    return connected;
  });
  ::close(listener);
  return ok;
}

class PodNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::CanMakeNetns()) GTEST_SKIP() << "needs root and network namespaces (CAP_SYS_ADMIN)";
    node_ = std::make_unique<ScopedNetns>("node");
  }

  // This node's pod network (10.244.7.0/24), or another range's, in `netns` (default: the node's).
  std::unique_ptr<PodNetwork> Open(const char* cidr = "10.244.7.0/24", ScopedNetns* netns = nullptr) {
    return (netns ? netns : node_.get())->RunIn([cidr] {
      auto net = PodNetwork::Open({.pod_cidr = *ParseIpv4Cidr(cidr), .netns_dir = "/run/netns"});
      EXPECT_TRUE(net) << net.error().message();
      return net ? std::move(*net) : nullptr;
    });
  }

  std::string InNode(const std::string& command) {
    return node_->RunIn([&] { return Output(command); });
  }

  std::unique_ptr<ScopedNetns> node_;
};

TEST_F(PodNetworkTest, PodsGetANamespaceAnAddressAndReachEachOtherOverTheBridge) {
  auto net = Open();
  ASSERT_TRUE(net);
  EXPECT_EQ(FormatIpv4(net->gateway()), "10.244.7.1");
  EXPECT_NE(InNode("ip -4 addr show dev tsr0").find("10.244.7.1/24"), std::string::npos);
  EXPECT_EQ(InNode("cat /proc/sys/net/ipv4/ip_forward"), "1\n");

  const std::string a_id = "t" + std::to_string(::getpid()) + "-a";
  const std::string b_id = "t" + std::to_string(::getpid()) + "-b";
  auto a = net->Attach(a_id);
  ASSERT_TRUE(a) << a.error().message();
  auto b = net->Attach(b_id);
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(FormatIpv4(a->ip), "10.244.7.2");
  EXPECT_EQ(FormatIpv4(b->ip), "10.244.7.3");
  EXPECT_EQ(a->netns_path, "/run/netns/tsr-" + a_id);
  EXPECT_EQ(a->host_veth, HostVethName(a_id));
  EXPECT_LE(a->host_veth.size(), 15u);

  // Inside: eth0 with the address, the default route through the bridge.
  const std::string inside = Output("ip -n tsr-" + a_id + " -4 addr show dev eth0; ip -n tsr-" + a_id + " route");
  EXPECT_NE(inside.find("10.244.7.2/24"), std::string::npos) << inside;
  EXPECT_NE(inside.find("default via 10.244.7.1 dev eth0"), std::string::npos) << inside;
  EXPECT_NE(InNode("ip link show " + a->host_veth).find("master tsr0"), std::string::npos);
  EXPECT_NE(InNode("ip -d link show " + a->host_veth).find("hairpin on"), std::string::npos)
      << InNode("ip -d link show " + a->host_veth);

  EXPECT_TRUE(TcpReaches(a->netns_path, b->netns_path, b->ip));
  EXPECT_TRUE(TcpReaches(b->netns_path, a->netns_path, a->ip));
  EXPECT_TRUE(TcpReaches(a->netns_path, node_->path(), net->gateway())) << "pod to its node";

  // Attach again (a container's restart): the same attachment.
  auto again = net->Attach(a_id);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->ip, a->ip);

  // Detach: the namespace and veth go; the address is not handed out again at once.
  ASSERT_TRUE(net->Detach(b_id).ok());
  EXPECT_FALSE(std::filesystem::exists(b->netns_path));
  EXPECT_EQ(InNode("ip -o link show " + b->host_veth + " 2>/dev/null"), "");
  const std::string c_id = "t" + std::to_string(::getpid()) + "-c";
  auto c = net->Attach(c_id);
  ASSERT_TRUE(c);
  EXPECT_EQ(FormatIpv4(c->ip), "10.244.7.4");
  EXPECT_TRUE(net->Detach(b_id).ok()) << "detaching twice is no error";

  // A new agent (the same node, the bridge already there) adopts what runs.
  auto restarted = Open();
  ASSERT_TRUE(restarted);
  EXPECT_TRUE(restarted->Adopt(a_id, *a));
  EXPECT_FALSE(restarted->Adopt(b_id, *b)) << "its namespace is gone";
  auto adopted = restarted->Attach(a_id);
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->ip, a->ip);
  EXPECT_TRUE(restarted->allocated().contains(a->ip));
  EXPECT_TRUE(TcpReaches(c->netns_path, a->netns_path, a->ip));

  for (const auto& id : {a_id, c_id}) ASSERT_TRUE(restarted->Detach(id).ok());
  EXPECT_FALSE(std::filesystem::exists(a->netns_path));
}

TEST_F(PodNetworkTest, WhatAKilledAgentLeftOnTheBridgeIsRemovedByTheNextOneAndNothingElse) {
  auto killed = Open();
  ASSERT_TRUE(killed);
  const std::string stale_id = "t" + std::to_string(::getpid()) + "-stale";
  auto stale = killed->Attach(stale_id);
  ASSERT_TRUE(stale) << stale.error().message();
  // Another node's pod, its namespace file in the same directory: not this bridge's.
  ScopedNetns other_node("other");
  auto other = Open("10.244.8.0/24", &other_node);
  ASSERT_TRUE(other);
  const std::string other_id = "t" + std::to_string(::getpid()) + "-other";
  auto kept = other->Attach(other_id);
  ASSERT_TRUE(kept) << kept.error().message();
  // A second node on the same bridge, with its own range (two agents on one machine).
  auto neighbour = Open("10.244.9.0/24");
  ASSERT_TRUE(neighbour);
  const std::string neighbour_id = "t" + std::to_string(::getpid()) + "-neighbour";
  auto theirs = neighbour->Attach(neighbour_id);
  ASSERT_TRUE(theirs) << theirs.error().message();
  killed.reset();  // its agent and its data are gone; the pod's namespace and veth stay

  auto next = Open();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->RemoveStale(), 1);
  EXPECT_FALSE(std::filesystem::exists(stale->netns_path));
  EXPECT_EQ(InNode("ip -o link show " + stale->host_veth + " 2>/dev/null"), "");
  EXPECT_TRUE(std::filesystem::exists(kept->netns_path)) << "another node's pod is left alone";
  EXPECT_TRUE(std::filesystem::exists(theirs->netns_path)) << "the neighbour's pod on the same bridge is left alone";
  EXPECT_NE(InNode("ip -o link show " + theirs->host_veth), "");
  EXPECT_EQ(next->RemoveStale(), 0);
  ASSERT_TRUE(other->Detach(other_id).ok());
  ASSERT_TRUE(neighbour->Detach(neighbour_id).ok());
}

TEST_F(PodNetworkTest, RefusesBadIdsAndTooSmallRanges) {
  auto net = Open();
  ASSERT_TRUE(net);
  auto bad = net->Attach("../etc");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("cannot name a network namespace"), std::string::npos);
  auto tiny = PodNetwork::Open({.pod_cidr = *ParseIpv4Cidr("10.244.7.0/31"), .netns_dir = "/run/netns"});
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.error().message().find("too small"), std::string::npos);
}

TEST_F(PodNetworkTest, SyncRoutesKeepsExactlyTheRoutesToOtherNodes) {
  auto net = Open();
  ASSERT_TRUE(net);
  // The fabric the other nodes sit on.
  InNode("ip link add fab0 type veth peer name fab1 && ip addr add 192.168.250.1/24 dev fab0 && ip link set fab1 up && ip link set fab0 up");
  const auto make = [](const char* dst, const char* gw) {
    return PodRoute{.destination = *ParseIpv4Cidr(dst), .gateway = ParseIpv4Cidr(std::string(gw) + "/32")->network};
  };
  ASSERT_TRUE(net->SyncRoutes({make("10.244.8.0/24", "192.168.250.2"), make("10.244.9.0/24", "192.168.250.3")}).ok());
  std::string routes = InNode("ip route show proto 231");
  EXPECT_NE(routes.find("10.244.8.0/24 via 192.168.250.2"), std::string::npos) << routes;
  EXPECT_NE(routes.find("10.244.9.0/24 via 192.168.250.3"), std::string::npos) << routes;

  // A node moved, another left.
  ASSERT_TRUE(net->SyncRoutes({make("10.244.8.0/24", "192.168.250.4")}).ok());
  routes = InNode("ip route show proto 231");
  EXPECT_NE(routes.find("10.244.8.0/24 via 192.168.250.4"), std::string::npos) << routes;
  EXPECT_EQ(routes.find("10.244.9.0/24"), std::string::npos) << routes;

  auto overlap = net->SyncRoutes({make("10.244.7.0/24", "192.168.250.2")});
  EXPECT_FALSE(overlap.ok());
  EXPECT_NE(overlap.message().find("overlaps this node's podCIDR"), std::string::npos);

  ASSERT_TRUE(net->SyncRoutes({}).ok());
  EXPECT_EQ(InNode("ip route show proto 231"), "");
  // Routes the agent did not make stay.
  EXPECT_NE(InNode("ip route").find("192.168.250.0/24 dev fab0"), std::string::npos);
}

}  // namespace
}  // namespace tessera
