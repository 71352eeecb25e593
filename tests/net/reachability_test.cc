// Allowed against truth tables: the cases of upstream's NetworkPolicy e2e
// suite (k8s.io/kubernetes/test/e2e/network/netpol) that need no DNS, on its
// cluster of x, y, z by a, b, c, and the spec's rules they do not cover.
#include "net/reachability.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/manifest.h"
#include "tests/net/net_testing.h"
#include "tests/testing/seed_dir.h"

namespace tessera::net {
namespace {

using testing::AllowedMatches;
using testing::Policy;
using testing::Reachability;
using testing::ThreeByThree;

constexpr Protocol kTCP = Protocol::kTCP;
constexpr Protocol kUDP = Protocol::kUDP;

const PodInfo& PodOf(const ClusterView& view, const std::string& key) {
  for (const PodInfo& p : view.pods) {
    if (testing::Key(p) == key) return p;
  }
  throw std::runtime_error("no pod " + key);
}

TEST(Allowed, NoPolicyAllowsEverything) {
  ClusterView view = ThreeByThree();
  Reachability want(view);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, want, 81, kUDP));
}

TEST(Allowed, DefaultDenyIngress) {
  // "should support a 'default-deny-ingress' policy": nothing enters x.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-ingress","namespace":"x"},"spec":{"podSelector":{},"ingress":[]}})"));
  Reachability want(view);
  want.ExpectPeer("", "", "x", "", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, want, 81, kUDP));
}

TEST(Allowed, DefaultDenyAll) {
  // "should support a 'default-deny-all' policy": nothing enters or leaves x.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-all","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Ingress","Egress"]}})"));
  Reachability want(view);
  want.ExpectPeer("", "", "x", "", false);
  want.ExpectPeer("x", "", "", "", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, SeedDenyOtherNamespacesAllowsOnlyItsOwnNamespace) {
  // "should deny ingress from pods on other namespaces", which is the seed's policy.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-other-namespaces","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Ingress"],"ingress":[{"from":[{"podSelector":{}}]}]}})"));
  Reachability want(view);
  want.ExpectPeer("y", "", "x", "", false);
  want.ExpectPeer("z", "", "x", "", false);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, want, 81, kUDP));
}

TEST(Allowed, SeedFileParsesToTheSamePolicy) {
  // The seed's own YAML (examples/seed/04-networkpolicy.yaml), when the seed is there.
  std::filesystem::path file;
  for (const auto& f : tessera::testing::SeedManifestFiles()) {
    if (f.filename().string().find("networkpolicy") != std::string::npos) file = f;
  }
  if (file.empty()) GTEST_SKIP() << "no seed directory next to the repository";
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  auto docs = ParseManifests(text.str());
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 1u);
  auto seed = ParseNetworkPolicy(docs->at(0).object);
  ASSERT_TRUE(seed.has_value()) << seed.error().ToString();
  EXPECT_EQ(seed->name, "deny-other-namespaces");
  EXPECT_TRUE(seed->ingress_type);
  EXPECT_FALSE(seed->egress_type);
  ASSERT_EQ(seed->ingress.size(), 1u);
  ASSERT_EQ(seed->ingress[0].peers.size(), 1u);
  EXPECT_TRUE(seed->ingress[0].peers[0].pod_selector.has_value() && seed->ingress[0].peers[0].pod_selector->empty());
  EXPECT_FALSE(seed->ingress[0].peers[0].namespace_selector.has_value());
}

TEST(Allowed, PodSelectorAllowsPodsOfThePolicysNamespaceOnly) {
  // "should enforce policy to allow traffic from pods within server namespace based on PodSelector".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"x-a-allows-x-b","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"ingress":[{"from":[{"podSelector":{"matchLabels":{"pod":"b"}}}]}]}})"));
  Reachability want(view);
  want.ExpectAllIngress("x/a", false);
  want.Expect("x/b", "x/a", true);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, NamespaceSelectorAloneAllowsEveryPodOfTheNamespaces) {
  // "should enforce policy to allow traffic only from a different namespace, based on NamespaceSelector".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"p","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"y"}}}]}]}})"));
  Reachability want(view);
  want.ExpectPeer("x", "", "x", "a", false);
  want.ExpectPeer("z", "", "x", "a", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, PodAndNamespaceSelectorsInOnePeerAreAnd) {
  // "should enforce policy based on PodSelector and NamespaceSelector": pod=b in ns != x.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"p","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchExpressions":[{"key":"ns","operator":"NotIn","values":["x"]}]},
                                   "podSelector":{"matchLabels":{"pod":"b"}}}]}]}})"));
  Reachability want(view);
  want.ExpectAllIngress("x/a", false);
  want.Expect("y/b", "x/a", true);
  want.Expect("z/b", "x/a", true);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, PodAndNamespaceSelectorsInTwoPeersAreOr) {
  // "should enforce policy based on PodSelector or NamespaceSelector": ns != x, or x/b.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"p","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchExpressions":[{"key":"ns","operator":"NotIn","values":["x"]}]}},
                                  {"podSelector":{"matchLabels":{"pod":"b"}}}]}]}})"));
  Reachability want(view);
  want.Expect("x/c", "x/a", false);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, EmptyNamespaceSelectorWithEmptyPodSelectorIsEveryPod) {
  // "should enforce policy to allow ingress traffic for a target": deny-all plus allow-all-to-a.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-all","namespace":"x"},"spec":{"podSelector":{}}})"));
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-all-to-a","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"ingress":[{"from":[{"podSelector":{},"namespaceSelector":{}}]}]}})"));
  Reachability want(view);
  want.ExpectAllIngress("x/b", false);
  want.ExpectAllIngress("x/c", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, PortsRestrictAndStackedPoliciesUnion) {
  // "should enforce multiple, stacked policies with overlapping podSelectors".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-81","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}],"ports":[{"port":81,"protocol":"TCP"}]}]}})"));
  Reachability only_y(view);
  only_y.ExpectPeer("x", "", "x", "a", false);
  only_y.ExpectPeer("z", "", "x", "a", false);
  only_y.AllowLoopback();
  Reachability deny(view);
  deny.ExpectAllIngress("x/a", false);
  deny.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, only_y, 81, kTCP));
  EXPECT_TRUE(AllowedMatches(view, deny, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, deny, 81, kUDP));  // protocol matters too
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-80","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}],"ports":[{"port":80,"protocol":"TCP"}]}]}})"));
  EXPECT_TRUE(AllowedMatches(view, only_y, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, only_y, 81, kTCP));
}

TEST(Allowed, AnEmptyRuleAllowsEverything) {
  // "should support allow-all policy" and "...with ingress allow-all policy taking precedence".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-80","namespace":"x"},
      "spec":{"podSelector":{},"ingress":[{"ports":[{"port":80}]}]}})"));
  Reachability deny81(view);
  deny81.ExpectPeer("", "", "x", "", false);
  deny81.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, deny81, 81, kTCP));
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-all","namespace":"x"},"spec":{"podSelector":{},"ingress":[{}]}})"));
  EXPECT_TRUE(AllowedMatches(view, Reachability(view), 81, kTCP));
}

TEST(Allowed, NamedPortsResolveOnTheDestinationPod) {
  // "should allow ingress access on one named port" and "...egress access on one named port".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"in","namespace":"x"},
      "spec":{"podSelector":{},"ingress":[{"ports":[{"port":"serve-81-tcp"}]}]}})"));
  Reachability open(view);
  Reachability closed(view);
  closed.ExpectPeer("", "", "x", "", false);
  closed.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, open, 81, kTCP));
  EXPECT_TRUE(AllowedMatches(view, closed, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, closed, 81, kUDP));  // serve-81-tcp is TCP's

  ClusterView egress = ThreeByThree();
  egress.policies.push_back(Policy(R"({"metadata":{"name":"out","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Egress"],"egress":[{"ports":[{"port":"serve-80-tcp"}]}]}})"));
  Reachability out_closed(egress);
  out_closed.ExpectPeer("x", "", "", "", false);
  out_closed.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(egress, Reachability(egress), 80, kTCP));
  EXPECT_TRUE(AllowedMatches(egress, out_closed, 81, kTCP));
  // A named port is nothing on a destination that is no pod.
  EXPECT_FALSE(Allowed(egress, Peer::Pod(PodOf(egress, "x/a")), Peer::Ip("192.0.2.1"), 80, kTCP));
}

TEST(Allowed, NamedPortOfAnotherNumberOnEachPod) {
  // A named port means each destination's own number for it.
  ClusterView view = ThreeByThree();
  for (PodInfo& p : view.pods) {
    if (p.name == "b") p.ports = {ContainerPort{"web", 81, kTCP}};
    if (p.name == "a") p.ports = {ContainerPort{"web", 80, kTCP}};
  }
  view.policies.push_back(Policy(R"({"metadata":{"name":"in","namespace":"x"},
      "spec":{"podSelector":{},"ingress":[{"ports":[{"port":"web"}]}]}})"));
  const PodInfo& from = PodOf(view, "y/a");
  EXPECT_TRUE(Allowed(view, Peer::Pod(from), PodOf(view, "x/a"), 80, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(from), PodOf(view, "x/a"), 81, kTCP));
  EXPECT_TRUE(Allowed(view, Peer::Pod(from), PodOf(view, "x/b"), 81, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(from), PodOf(view, "x/b"), 80, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(from), PodOf(view, "x/c"), 80, kTCP));  // x/c has no "web"
}

TEST(Allowed, EndPortAllowsTheWholeRange) {
  // "should allow ingress access from namespace on a port range" style: 80..81 from y.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"range","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}],"ports":[{"port":79,"endPort":81}]}]}})"));
  Reachability want(view);
  want.ExpectPeer("x", "", "x", "a", false);
  want.ExpectPeer("z", "", "x", "a", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, want, 81, kTCP));
  const PodInfo& ya = PodOf(view, "y/a");
  EXPECT_FALSE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/a"), 82, kTCP));
  EXPECT_TRUE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/a"), 79, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/a"), 80, kUDP));
}

TEST(Allowed, EgressDenyWithACidrAllow) {
  // "should allow egress access to server in CIDR block": x/a reaches y/b's /32 only.
  ClusterView view = ThreeByThree();
  const std::string yb = PodOf(view, "y/b").ip;
  view.policies.push_back(Policy(R"({"metadata":{"name":"cidr","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress"],
              "egress":[{"to":[{"ipBlock":{"cidr":")" + yb + R"(/32"}}]}]}})"));
  Reachability want(view);
  want.ExpectAllEgress("x/a", false);
  want.Expect("x/a", "y/b", true);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  // And to bare IPs: the block's only.
  EXPECT_TRUE(Allowed(view, Peer::Pod(PodOf(view, "x/a")), Peer::Ip(yb), 80, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(PodOf(view, "x/a")), Peer::Ip("192.0.2.1"), 80, kTCP));
}

TEST(Allowed, IpBlockExceptAndAnOverlappingAllowUnion) {
  // "should enforce except clause ..." then "should ensure an IP overlapping both
  // IPBlock.CIDR and IPBlock.Except is allowed" (by a second policy).
  ClusterView view = ThreeByThree();
  const std::string xb = PodOf(view, "x/b").ip;
  view.policies.push_back(Policy(R"({"metadata":{"name":"except","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress"],
              "egress":[{"to":[{"ipBlock":{"cidr":"10.213.0.0/24","except":[")" + xb + R"(/32"]}}]}]}})"));
  Reachability want(view);
  want.Expect("x/a", "x/b", false);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-b","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress"],
              "egress":[{"to":[{"ipBlock":{"cidr":")" + xb + R"(/32"}}]}]}})"));
  EXPECT_TRUE(AllowedMatches(view, Reachability(view), 80, kTCP));
}

TEST(Allowed, EgressIsCheckedOnTheClientEvenWhenTheServerAllows) {
  // "should support denying of egress traffic on the client side (even if the server explicitly allows this traffic)".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"to-y-a","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress"],
              "egress":[{"to":[{"namespaceSelector":{"matchLabels":{"ns":"y"}},"podSelector":{"matchLabels":{"pod":"a"}}}]}]}})"));
  for (const char* target : {"a", "b"}) {
    view.policies.push_back(Policy(std::string(R"({"metadata":{"name":"from-x-a-)") + target + R"(","namespace":"y"},
        "spec":{"podSelector":{"matchLabels":{"pod":")" + target + R"("}},
                "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"x"}},"podSelector":{"matchLabels":{"pod":"a"}}}]}]}})"));
  }
  Reachability want(view);
  want.ExpectAllEgress("x/a", false);
  want.ExpectAllIngress("y/a", false);
  want.ExpectAllIngress("y/b", false);
  want.Expect("x/a", "y/a", true);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, IngressAndEgressTogether) {
  // "should work with Ingress, Egress specified together".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"both","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress","Ingress"],
              "ingress":[{"from":[{"podSelector":{"matchLabels":{"pod":"b"}}}]}],
              "egress":[{"ports":[{"port":80}]}]}})"));
  Reachability p80(view);
  p80.ExpectAllIngress("x/a", false);
  p80.Expect("x/b", "x/a", true);
  p80.AllowLoopback();
  Reachability p81(view);
  p81.ExpectAllIngress("x/a", false);
  p81.ExpectAllEgress("x/a", false);
  p81.Expect("x/b", "x/a", true);
  p81.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, p80, 80, kTCP));
  EXPECT_TRUE(AllowedMatches(view, p81, 81, kTCP));
}

TEST(Allowed, EgressOnlyPolicyLeavesIngressOpen) {
  // policyTypes: [Egress] with no rules: x/a sends nothing, receives everything.
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-egress-a","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"policyTypes":["Egress"]}})"));
  Reachability want(view);
  want.ExpectAllEgress("x/a", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, ProtocolOnlyPortAndSctpNeverMeanTcp) {
  // "should enforce ingress policy allowing any port traffic to a server on a specific protocol"
  // and "should not mistakenly treat 'protocol: SCTP' as 'protocol: TCP'".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"tcp","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"ingress":[{"ports":[{"protocol":"TCP"}]}]}})"));
  view.policies.push_back(Policy(R"({"metadata":{"name":"sctp","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"b"}},"ingress":[{"ports":[{"protocol":"SCTP","port":81}]}]}})"));
  const PodInfo& ya = PodOf(view, "y/a");
  EXPECT_TRUE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/a"), 12345, kTCP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/a"), 80, kUDP));
  EXPECT_FALSE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/b"), 81, kTCP));
  EXPECT_TRUE(Allowed(view, Peer::Pod(ya), PodOf(view, "x/b"), 81, Protocol::kSCTP));
}

TEST(Allowed, PolicyInOneNamespaceDoesNotPickPodsOfAnother) {
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny","namespace":"y"},"spec":{"podSelector":{"matchLabels":{"pod":"a"}}}})"));
  Reachability want(view);
  want.ExpectAllIngress("y/a", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, TheNodeReachesItsPodsAndHostNetworkPodsArePlainAddresses) {
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"deny-all","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Ingress","Egress"],
              "ingress":[{"from":[{"podSelector":{}}, {"ipBlock":{"cidr":"192.0.2.0/24"}}]}]}})"));
  PodInfo host;
  host.ns = "x";
  host.name = "h";
  host.ip = "192.0.2.7";
  host.host_network = true;
  host.labels = {{"pod", "a"}};
  view.pods.push_back(host);
  const PodInfo& xa = PodOf(view, "x/a");
  EXPECT_TRUE(Allowed(view, Peer::Node(), xa, 80, kTCP));
  // A host-network pod of x is not picked by podSelector {} (as a peer or target) ...
  EXPECT_TRUE(Allowed(view, Peer::Pod(view.pods.back()), Peer::Pod(PodOf(view, "y/a")), 80, kTCP));
  // ... but its address can be allowed by an ipBlock.
  EXPECT_TRUE(Allowed(view, Peer::Pod(view.pods.back()), xa, 80, kTCP));
  view.pods.back().ip = "198.51.100.7";
  EXPECT_FALSE(Allowed(view, Peer::Pod(view.pods.back()), xa, 80, kTCP));
  // Egress from x/a to a bare address: denied (deny-all egress).
  EXPECT_FALSE(Allowed(view, Peer::Pod(xa), Peer::Ip("10.213.0.1"), 80, kTCP));
}

TEST(Allowed, AnUnparsedPolicyIsolatesItsNamespaceBothWays) {
  // Fail closed: a policy we could not read might select any pod of x.
  ClusterView view = ThreeByThree();
  view.unparsed_policies.push_back(UnparsedPolicy{"x", "broken", "spec.ingress[0]: ..."});
  view.policies.push_back(Policy(R"({"metadata":{"name":"allow-y-to-a","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},"ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}]}]}})"));
  Reachability want(view);
  want.ExpectPeer("", "", "x", "", false);
  want.ExpectPeer("x", "", "", "", false);
  want.ExpectPeer("y", "", "x", "a", true);  // what the parsed policy allows still passes
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

TEST(Allowed, UpdatedLabelsChangeTheAnswer) {
  // "should allow ingress access from updated namespace" and "...from updated pod".
  ClusterView view = ThreeByThree();
  view.policies.push_back(Policy(R"({"metadata":{"name":"p","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"a"}},
              "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns2":"updated"}}},
                                  {"podSelector":{"matchLabels":{"pod":"b","pod2":"updated"}}}]}]}})"));
  Reachability want(view);
  want.ExpectAllIngress("x/a", false);
  want.AllowLoopback();
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  view.namespaces[1].labels["ns2"] = "updated";  // y
  want.ExpectPeer("y", "", "x", "a", true);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
  view.pods[1].labels["pod2"] = "updated";  // x/b
  want.Expect("x/b", "x/a", true);
  EXPECT_TRUE(AllowedMatches(view, want, 80, kTCP));
}

}  // namespace
}  // namespace tessera::net
