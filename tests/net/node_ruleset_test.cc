// RenderNodeRuleset's text: its structure (sets, one chain per isolated local
// pod, Services' maps), determinism, fail-closed cases, and that nft takes it
// in a fresh network namespace, with and without Tessera's tables present.
// What the rules *do* to packets is dataplane_test.cc's.
#include "net/node_ruleset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "net/nftables.h"
#include "tests/net/net_testing.h"
#include "tests/testing/netns.h"

namespace tessera::net {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Policy;
using testing::ThreeByThree;

NodeNetwork NodeOf(const ClusterView& view, bool with_veths = false) {
  NodeNetwork node;
  node.bridge = "tsr0";
  node.pod_cidr = *ParseIpv4Cidr("10.213.0.0/24");
  node.cluster_cidr = *ParseIpv4Cidr("10.213.0.0/16");
  for (const PodInfo& p : view.pods) {
    node.pods.push_back(LocalPod{*ParseIpv4(p.ip), with_veths ? "veth-" + p.ns + p.name : ""});
  }
  return node;
}

std::string Render(const ClusterView& view, const NodeNetwork& node) {
  auto text = RenderNodeRuleset(view, node);
  EXPECT_TRUE(text.has_value()) << text.error().ToString();
  return text.value_or("");
}

TEST(RenderNodeRuleset, NoPolicyIsolatesNoPod) {
  ClusterView view = ThreeByThree();
  const std::string text = Render(view, NodeOf(view));
  EXPECT_THAT(text, HasSubstr("table inet tessera {}\ndelete table inet tessera\n"));
  EXPECT_THAT(text, HasSubstr("ct state established,related accept"));
  EXPECT_THAT(text, Not(HasSubstr("chain pod_")));
  EXPECT_THAT(text, Not(HasSubstr("table bridge tessera {\n")));  // no veth names given
}

TEST(RenderNodeRuleset, OneSharedPeerSetPerRuleAndOneChainPerIsolatedPod) {
  // deny-other-namespaces in x: each of x's 3 pods gets an ingress chain with
  // one rule naming the same set of x's 3 addresses.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-other-namespaces","namespace":"x"},
      "spec":{"podSelector":{},"ingress":[{"from":[{"podSelector":{}}]}]}})"));
  const std::string text = Render(view, NodeOf(view));
  EXPECT_THAT(text, HasSubstr("set p0_in0 {\n\t\ttype ipv4_addr; flags interval;\n\t\tcomment \"x/deny-other-namespaces ingress[0]\"\n"
                              "\t\telements = { 10.213.0.10-10.213.0.12 }\n"));
  for (const char* ip : {"10_213_0_10", "10_213_0_11", "10_213_0_12"}) {
    EXPECT_THAT(text, HasSubstr(fmt::format("chain pod_{}_ingress {{", ip)));
  }
  EXPECT_THAT(text, HasSubstr("\t\tip saddr @p0_in0 accept\n\t\tdrop\n"));
  EXPECT_THAT(text, Not(HasSubstr("pod_10_213_0_13_ingress")));  // y/a is not isolated
  EXPECT_THAT(text, Not(HasSubstr("_egress {")));
  EXPECT_THAT(text, HasSubstr("10.213.0.10 : jump pod_10_213_0_10_ingress"));
}

TEST(RenderNodeRuleset, PortsIpBlocksAndNamedPortsCompileToSets) {
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"p","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Ingress","Egress"],
              "ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.213.0.0/24","10.0.0.0/16"]}}],
                          "ports":[{"port":81,"endPort":90},{"port":80},{"port":85,"protocol":"UDP"},{"port":"serve-80-udp","protocol":"UDP"}]}],
              "egress":[{"to":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}],"ports":[{"port":"serve-81-tcp"}]}]}})"));
  const std::string text = Render(view, NodeOf(view));
  // 10/8 minus 10.0/16 and 10.213.0/24: two ranges.
  EXPECT_THAT(text, HasSubstr("elements = { 10.1.0.0-10.212.255.255, 10.213.1.0-10.255.255.255 }"));
  // Port entries merged per protocol (80 and 81-90 meet), the named one resolved on x/a.
  EXPECT_THAT(text, HasSubstr("ip saddr @p0_in0 meta l4proto . th dport { tcp . 80-90, udp . 80, udp . 85 } accept"));
  // Egress named port: y's pods with serve-81-tcp, as (ip . proto . port).
  EXPECT_THAT(text, HasSubstr("elements = { 10.213.0.13 . tcp . 81, 10.213.0.14 . tcp . 81, 10.213.0.15 . tcp . 81 }"));
  EXPECT_THAT(text, HasSubstr("ip daddr . meta l4proto . th dport @p0_eg0_named return"));
}

TEST(RenderNodeRuleset, ServicesAreDnatMapsAndRejectedWithoutEndpoints) {
  ClusterView view = ThreeByThree();
  view.services.push_back(ServiceInfo{"x", "web", "10.96.0.10", {{"http", Protocol::kTCP, 80, 8080}}, {"10.213.0.11", "10.213.0.10"}});
  view.services.push_back(ServiceInfo{"x", "empty", "10.96.0.11", {{"http", Protocol::kTCP, 80, 80}}, {}});
  const std::string text = Render(view, NodeOf(view));
  EXPECT_THAT(text, HasSubstr("elements = { 10.96.0.10 . tcp . 80 : goto svc_10_96_0_10_tcp_80 }"));
  EXPECT_THAT(text, HasSubstr("meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.213.0.10 . 8080, 1 : 10.213.0.11 . 8080 }"));
  EXPECT_THAT(text, HasSubstr("set cluster_ips {\n\t\ttype ipv4_addr;\n\t\telements = { 10.96.0.10, 10.96.0.11 }"));
  EXPECT_THAT(text, HasSubstr("ip daddr @cluster_ips reject with icmpx type port-unreachable"));
  EXPECT_THAT(text, HasSubstr("ct status dnat ip saddr . ip daddr @hairpin masquerade"));
}

TEST(RenderNodeRuleset, IsDeterministicWhateverTheOrderOfTheView) {
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"b","namespace":"x"},"spec":{"podSelector":{},"ingress":[{"from":[{"podSelector":{}}]}]}})"));
  view.policies.push_back(Policy(R"({"metadata":{"name":"a","namespace":"y"},"spec":{"podSelector":{},"policyTypes":["Egress"]}})"));
  view.services.push_back(ServiceInfo{"x", "web", "10.96.0.10", {{"http", Protocol::kTCP, 80, 80}}, {"10.213.0.11", "10.213.0.10"}});
  view.services.push_back(ServiceInfo{"x", "db", "10.96.0.9", {{"", Protocol::kTCP, 5432, 5432}}, {"10.213.0.12"}});
  const NodeNetwork node = NodeOf(view, /*with_veths=*/true);
  const std::string first = Render(view, node);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    ClusterView shuffled = view;
    NodeNetwork shuffled_node = node;
    std::shuffle(shuffled.pods.begin(), shuffled.pods.end(), rng);
    std::shuffle(shuffled.policies.begin(), shuffled.policies.end(), rng);
    std::shuffle(shuffled.services.begin(), shuffled.services.end(), rng);
    std::shuffle(shuffled_node.pods.begin(), shuffled_node.pods.end(), rng);
    EXPECT_EQ(Render(shuffled, shuffled_node), first);
  }
}

TEST(RenderNodeRuleset, FailsClosedForUnknownAndAmbiguousLocalPods) {
  ClusterView view = ThreeByThree();
  NodeNetwork node = NodeOf(view);
  node.pods.push_back(LocalPod{*ParseIpv4("10.213.0.99"), ""});  // no pod of the view has it
  view.pods[4].ip = view.pods[3].ip;                           // y/a and y/b share an address
  const std::string text = Render(view, node);
  EXPECT_THAT(text, HasSubstr("chain pod_10_213_0_99_ingress {\n\t\tcomment \"no pod of the view has this address: isolated\"\n\t\tdrop\n"));
  EXPECT_THAT(text, HasSubstr("chain pod_10_213_0_99_egress {"));
  EXPECT_THAT(text, HasSubstr("chain pod_10_213_0_13_ingress {"));
  EXPECT_THAT(text, Not(HasSubstr("chain pod_10_213_0_10_ingress {")));
}

TEST(RenderNodeRuleset, RefusesABadNodeNetwork) {
  ClusterView view = ThreeByThree();
  NodeNetwork node = NodeOf(view);
  node.bridge = "tsr0\"; flush ruleset";
  EXPECT_FALSE(RenderNodeRuleset(view, node).has_value());
  node = NodeOf(view);
  node.pods.push_back(LocalPod{*ParseIpv4("10.9.0.1"), ""});
  auto outside = RenderNodeRuleset(view, node);
  ASSERT_FALSE(outside.has_value());
  EXPECT_THAT(outside.error().message(), HasSubstr("10.9.0.1 is outside the node's pod CIDR 10.213.0.0/24"));
  node = NodeOf(view);
  node.pods[0].veth = "a-name-far-too-long";
  EXPECT_FALSE(RenderNodeRuleset(view, node).has_value());
}

// nft takes each script in a namespace of its own, whether Tessera's tables
// are there or not, and replaces them as a whole.
TEST(ApplyRuleset, AppliesWithAndWithoutTheTablesAndReplacesThem) {
  if (!tessera::testing::CanMakeNetns()) GTEST_SKIP() << "needs root and network namespaces";
  tessera::testing::ScopedNetns ns("nft");
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny","namespace":"x"},"spec":{"podSelector":{},"policyTypes":["Ingress","Egress"]}})"));
  view.services.push_back(ServiceInfo{"x", "web", "10.96.0.10", {{"http", Protocol::kTCP, 80, 80}}, {"10.213.0.11"}});
  const std::string full = Render(view, NodeOf(view, /*with_veths=*/true));
  const std::string bare = Render(ThreeByThree(), NodeOf(view));
  auto deny = RenderDenyAllRuleset(NodeOf(view));
  ASSERT_TRUE(deny.has_value());
  ns.RunIn([&] {
    EXPECT_TRUE(ListTesseraTable("inet").error().code() == StatusCode::kNotFound);
    Status first = ApplyRuleset(full);  // no table yet
    ASSERT_TRUE(first.ok()) << first.ToString() << "\n" << full;
    Status again = ApplyRuleset(full);  // the tables exist
    ASSERT_TRUE(again.ok()) << again.ToString();
    auto listed = ListTesseraTable("inet");
    ASSERT_TRUE(listed.has_value());
    EXPECT_THAT(*listed, HasSubstr("chain pod_10_213_0_10_egress"));
    EXPECT_TRUE(ListTesseraTable("bridge").has_value());
    // Replaced as a whole: the pods' chains and the bridge table go.
    ASSERT_TRUE(ApplyRuleset(bare).ok());
    EXPECT_THAT(*ListTesseraTable("inet"), Not(HasSubstr("chain pod_")));
    EXPECT_FALSE(ListTesseraTable("bridge").has_value());
    Status d = ApplyRuleset(*deny);
    ASSERT_TRUE(d.ok()) << d.ToString() << "\n" << *deny;
    ASSERT_TRUE(DeleteTesseraTables().ok());
    EXPECT_FALSE(ListTesseraTable("inet").has_value());
    ASSERT_TRUE(DeleteTesseraTables().ok());  // nothing to delete: fine too
  });
}

TEST(ApplyRuleset, ReportsNftsOwnError) {
  if (!tessera::testing::CanMakeNetns()) GTEST_SKIP() << "needs root and network namespaces";
  tessera::testing::ScopedNetns ns("nfterr");
  ns.RunIn([&] {
    // The error names the line and quotes it, with a mark under the token.
    Status s = ApplyRuleset("table inet tessera {\n\tchain c {\n\t\tip saddr 10.0.0.1 dorp\n\t}\n}\n");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_THAT(s.message(), HasSubstr("line 3:"));
    EXPECT_THAT(s.message(), HasSubstr("syntax error"));
    EXPECT_THAT(s.message(), HasSubstr("ip saddr 10.0.0.1 dorp"));
    // Nothing of a refused script is applied.
    EXPECT_FALSE(ListTesseraTable("inet").has_value());
  });
}

}  // namespace
}  // namespace tessera::net
