// ParseNetworkPolicy: Kubernetes' defaults and checks, and errors that name
// the field to fix.
#include "net/network_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>


#include <nlohmann/json.hpp>

#include "net/cluster_view.h"

namespace tessera::net {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

json WithSpec(const std::string& spec) {
  return json::parse(R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy",
                         "metadata":{"name":"p","namespace":"x"},"spec":)" +
                     spec + "}");
}

std::string ErrorOf(const std::string& spec) {
  auto p = ParseNetworkPolicy(WithSpec(spec));
  EXPECT_FALSE(p.has_value()) << spec;
  return p.has_value() ? "" : p.error().message();
}

TEST(ParseNetworkPolicy, SeedDenyOtherNamespacesIsIngressOnlyFromPodsOfItsNamespace) {
  // The seed's policy as its YAML says (examples/seed/04-networkpolicy.yaml), in JSON.
  auto p = ParseNetworkPolicy(json::parse(R"({
    "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
    "metadata": {"namespace": "team-data-science", "name": "deny-other-namespaces"},
    "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]}})"));
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  EXPECT_EQ(p->ns, "team-data-science");
  EXPECT_EQ(p->name, "deny-other-namespaces");
  EXPECT_TRUE(p->pod_selector.empty());
  EXPECT_TRUE(p->ingress_type);
  EXPECT_FALSE(p->egress_type);
  ASSERT_EQ(p->ingress.size(), 1u);
  ASSERT_EQ(p->ingress[0].peers.size(), 1u);
  EXPECT_TRUE(p->ingress[0].peers[0].pod_selector.has_value());
  EXPECT_FALSE(p->ingress[0].peers[0].namespace_selector.has_value());
  EXPECT_TRUE(p->ingress[0].ports.empty());
}

TEST(ParseNetworkPolicy, PolicyTypesDefaultToIngressAndToEgressWhenEgressRulesExist) {
  // SetDefaults_NetworkPolicySpec: Ingress always; Egress when spec.egress has a rule.
  auto none = ParseNetworkPolicy(WithSpec(R"({"podSelector":{}})"));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->ingress_type);
  EXPECT_FALSE(none->egress_type);

  auto egress = ParseNetworkPolicy(WithSpec(R"({"podSelector":{},"egress":[{}]})"));
  ASSERT_TRUE(egress.has_value());
  EXPECT_TRUE(egress->ingress_type);
  EXPECT_TRUE(egress->egress_type);

  // `egress: []` is no rule: Go cannot tell it from absent, so no Egress type.
  auto empty_egress = ParseNetworkPolicy(WithSpec(R"({"podSelector":{},"egress":[],"policyTypes":[]})"));
  ASSERT_TRUE(empty_egress.has_value());
  EXPECT_TRUE(empty_egress->ingress_type);
  EXPECT_FALSE(empty_egress->egress_type);

  auto egress_only = ParseNetworkPolicy(WithSpec(R"({"podSelector":{},"policyTypes":["Egress"]})"));
  ASSERT_TRUE(egress_only.has_value());
  EXPECT_FALSE(egress_only->ingress_type);
  EXPECT_TRUE(egress_only->egress_type);
}

TEST(ParseNetworkPolicy, MissingPodSelectorPicksEveryPod) {
  auto p = ParseNetworkPolicy(WithSpec("{}"));
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->pod_selector.empty());
  auto no_spec = ParseNetworkPolicy(json::parse(R"({"kind":"NetworkPolicy","metadata":{"name":"p","namespace":"x"}})"));
  ASSERT_TRUE(no_spec.has_value());
  EXPECT_TRUE(no_spec->ingress_type);
}

TEST(ParseNetworkPolicy, PeersPortsAndIpBlocksAreKept) {
  auto p = ParseNetworkPolicy(WithSpec(R"({
    "podSelector": {"matchLabels": {"pod": "a"}},
    "ingress": [{
      "from": [{"namespaceSelector": {"matchExpressions": [{"key": "ns", "operator": "In", "values": ["y"]}]},
                "podSelector": {"matchLabels": {"pod": "b"}}},
               {"ipBlock": {"cidr": "10.0.0.7/8", "except": ["10.1.0.0/16"]}}],
      "ports": [{"port": 80}, {"protocol": "UDP", "port": 1000, "endPort": 2000}, {"port": "serve-81-tcp"},
                {"protocol": "SCTP"}]}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  const PolicyRule& rule = p->ingress.at(0);
  ASSERT_EQ(rule.peers.size(), 2u);
  EXPECT_TRUE(rule.peers[0].namespace_selector && rule.peers[0].pod_selector);
  ASSERT_TRUE(rule.peers[1].ip_block.has_value());
  // Host bits are cleared, as Kubernetes reads "10.0.0.7/8".
  EXPECT_EQ(rule.peers[1].ip_block->cidr.ToString(), "10.0.0.0/8");
  EXPECT_EQ(rule.peers[1].ip_block->except.at(0).ToString(), "10.1.0.0/16");
  EXPECT_TRUE(rule.peers[1].ip_block->Contains(*ParseIpv4("10.2.3.4")));
  EXPECT_FALSE(rule.peers[1].ip_block->Contains(*ParseIpv4("10.1.3.4")));  // except
  EXPECT_FALSE(rule.peers[1].ip_block->Contains(*ParseIpv4("11.0.0.1")));
  ASSERT_EQ(rule.ports.size(), 4u);
  EXPECT_EQ(rule.ports[0], (PolicyPort{Protocol::kTCP, 80, "", std::nullopt}));
  EXPECT_EQ(rule.ports[1], (PolicyPort{Protocol::kUDP, 1000, "", 2000}));
  EXPECT_EQ(rule.ports[2], (PolicyPort{Protocol::kTCP, std::nullopt, "serve-81-tcp", std::nullopt}));
  EXPECT_EQ(rule.ports[3], (PolicyPort{Protocol::kSCTP, std::nullopt, "", std::nullopt}));
}

TEST(ParseNetworkPolicy, Ipv6BlocksAreAcceptedAndMatchNoIpv4Address) {
  auto p = ParseNetworkPolicy(WithSpec(R"({"egress":[{"to":[{"ipBlock":{"cidr":"fd00::/64","except":["fd00::/80"]}}]}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  const IpBlock& block = *p->egress.at(0).peers.at(0).ip_block;
  EXPECT_TRUE(block.ipv6);
  EXPECT_FALSE(block.Contains(0));
  EXPECT_FALSE(block.Contains(*ParseIpv4("10.0.0.1")));
}

TEST(ParseNetworkPolicy, EveryErrorNamesItsField) {
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{}, {"ipBlock":{"cidr":"10.0.0.0/33"}}]}]})"),
              HasSubstr("spec.ingress[0].from[0]: must specify a peer"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{"podSelector":{}}, {"ipBlock":{"cidr":"10.0.0.0/33"}}]}]})"),
              HasSubstr("spec.ingress[0].from[1].ipBlock.cidr: \"10.0.0.0/33\" is not a CIDR"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/16","except":["10.1.0.0/24"]}}]}]})"),
              HasSubstr("spec.ingress[0].from[0].ipBlock.except[0]: 10.1.0.0/24 must be a strict subset of cidr 10.0.0.0/16"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/16","except":["10.0.0.0/16"]}}]}]})"),
              HasSubstr("strict subset"));
  EXPECT_THAT(ErrorOf(R"({"egress":[{"to":[{"ipBlock":{"cidr":"10.0.0.0/8"},"podSelector":{}}]}]})"),
              HasSubstr("spec.egress[0].to[0]: may not specify more than 1 peer type"));
  EXPECT_THAT(ErrorOf(R"({"egress":[{"to":[{"ipBlock":{}}]}]})"), HasSubstr("spec.egress[0].to[0].ipBlock.cidr: is required"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"protocol":"tcp"}]}]})"),
              HasSubstr("spec.ingress[0].ports[0].protocol: must be TCP, UDP or SCTP, not \"tcp\""));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"port":0}]}]})"),
              HasSubstr("spec.ingress[0].ports[0].port: must be between 1 and 65535, not 0"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"port":"80"}]}]})"),
              HasSubstr("spec.ingress[0].ports[0].port: \"80\" is neither a number nor a port name"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"port":"Http"}]}]})"), HasSubstr("spec.ingress[0].ports[0].port"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"port":"http","endPort":90}]}]})"),
              HasSubstr("spec.ingress[0].ports[0].endPort: needs a numeric port"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"ports":[{"port":80,"endPort":70}]}]})"),
              HasSubstr("spec.ingress[0].ports[0].endPort: must be at least port (80), not 70"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{},{"ports":[{"port":80}, {"port":1.5}]}]})"),
              HasSubstr("spec.ingress[1].ports[1].port: must be an integer or a port name, not number"));
  EXPECT_THAT(ErrorOf(R"({"policyTypes":["Ingress","Sideways"]})"),
              HasSubstr("spec.policyTypes[1]: must be Ingress or Egress, not \"Sideways\""));
  EXPECT_THAT(ErrorOf(R"({"podSelector":{"matchExpressions":[{"key":"a","operator":"Equals"}]}})"),
              HasSubstr("spec.podSelector.matchExpressions[0].operator: must be In, NotIn, Exists or DoesNotExist"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"a":1}}}]}]})"),
              HasSubstr("spec.ingress[0].from[0].namespaceSelector.matchLabels.a: must be a string"));
  EXPECT_THAT(ErrorOf(R"({"ingress":{}})"), HasSubstr("spec.ingress: must be a list"));
  EXPECT_THAT(ErrorOf(R"({"ingress":[{"from":[{"podSelector":{}}]}],"egress":[{"to":"all"}]})"),
              HasSubstr("spec.egress[0].to: must be a list"));
  // The policy is named too, for a log line.
  EXPECT_THAT(ErrorOf(R"({"ingress":{}})"), HasSubstr("NetworkPolicy x/p: "));

  auto no_ns = ParseNetworkPolicy(json::parse(R"({"kind":"NetworkPolicy","metadata":{"name":"p"}})"));
  ASSERT_FALSE(no_ns.has_value());
  EXPECT_THAT(no_ns.error().message(), HasSubstr("metadata.namespace: is required"));
}

TEST(ClusterViewAddPolicyJson, AnUnparsablePolicyIsRecordedToFailClosed) {
  ClusterView view;
  EXPECT_TRUE(view.AddPolicyJson(WithSpec(R"({"podSelector":{}})")).ok());
  Status bad = view.AddPolicyJson(WithSpec(R"({"ingress":[{"ports":[{"port":"80"}]}]})"));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(view.policies.size(), 1u);
  ASSERT_EQ(view.unparsed_policies.size(), 1u);
  EXPECT_EQ(view.unparsed_policies[0].ns, "x");
  EXPECT_EQ(view.unparsed_policies[0].name, "p");
  EXPECT_THAT(view.unparsed_policies[0].error, HasSubstr("spec.ingress[0].ports[0].port"));
}

TEST(PodInfoFromJson, ReadsLabelsAddressPortsAndHostNetwork) {
  auto pod = PodInfoFromJson(json::parse(R"({
    "metadata": {"namespace": "x", "name": "a", "labels": {"pod": "a"}},
    "spec": {"containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080},
                                                   {"containerPort": 53, "protocol": "UDP"}]}],
             "initContainers": [{"name": "sidecar", "restartPolicy": "Always", "ports": [{"name": "m", "containerPort": 9090}]},
                                {"name": "init", "ports": [{"name": "gone", "containerPort": 1}]}]},
    "status": {"phase": "Running", "podIP": "10.244.1.5"}})"));
  ASSERT_TRUE(pod.has_value()) << pod.error().ToString();
  EXPECT_EQ(pod->ns, "x");
  EXPECT_EQ(pod->name, "a");
  EXPECT_EQ(pod->labels.at("pod"), "a");
  EXPECT_EQ(pod->ip, "10.244.1.5");
  EXPECT_FALSE(pod->host_network);
  ASSERT_EQ(pod->ports.size(), 3u);  // the plain init container's port is not served
  EXPECT_EQ(pod->ports[0], (ContainerPort{"http", 8080, Protocol::kTCP}));
  EXPECT_EQ(pod->ports[1], (ContainerPort{"", 53, Protocol::kUDP}));
  EXPECT_EQ(pod->ports[2], (ContainerPort{"m", 9090, Protocol::kTCP}));

  // A finished pod's address may be someone else's now: it has none.
  auto done = PodInfoFromJson(json::parse(
      R"({"metadata":{"namespace":"x","name":"a"},"status":{"phase":"Succeeded","podIP":"10.244.1.5"}})"));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->ip, "");
  // Dual stack: the IPv4 one of podIPs.
  auto dual = PodInfoFromJson(json::parse(
      R"({"metadata":{"namespace":"x","name":"a"},"spec":{"hostNetwork":true},
          "status":{"podIP":"fd00::5","podIPs":[{"ip":"fd00::5"},{"ip":"10.244.1.6"}]}})"));
  ASSERT_TRUE(dual.has_value());
  EXPECT_EQ(dual->ip, "10.244.1.6");
  EXPECT_TRUE(dual->host_network);

  auto bad = PodInfoFromJson(json::parse(
      R"({"metadata":{"namespace":"x","name":"a"},"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message(), HasSubstr("spec.containers[0].ports[0].containerPort: must be an integer"));
}

TEST(NamespaceInfoFromJson, EveryNamespaceHasItsNameLabel) {
  auto ns = NamespaceInfoFromJson(json::parse(R"({"metadata":{"name":"team-nlp","labels":{"team":"nlp"}}})"));
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(ns->labels.at("team"), "nlp");
  EXPECT_EQ(ns->labels.at("kubernetes.io/metadata.name"), "team-nlp");
  // And one the view lacks still has it.
  EXPECT_EQ(NamespaceLabels(ClusterView{}, "y").at("kubernetes.io/metadata.name"), "y");
}

TEST(ServiceInfoFromJson, ReadyEndpointsAndTargetPortsComeFromItsSlices) {
  json service = json::parse(R"({"metadata":{"namespace":"x","name":"web"},
    "spec":{"clusterIP":"10.96.0.10","ports":[{"name":"http","port":80,"targetPort":"http"},
                                              {"name":"dns","port":53,"protocol":"UDP","targetPort":5353}]}})");
  std::vector<json> slices = {
      json::parse(R"({"metadata":{"namespace":"x","name":"web-1","labels":{"kubernetes.io/service-name":"web"}},
        "addressType":"IPv4","ports":[{"name":"http","port":8080},{"name":"dns","port":5353,"protocol":"UDP"}],
        "endpoints":[{"addresses":["10.244.1.7"],"conditions":{"ready":true}},
                     {"addresses":["10.244.1.5"]},
                     {"addresses":["10.244.1.9"],"conditions":{"ready":false}}]})"),
      json::parse(R"({"metadata":{"namespace":"x","name":"other","labels":{"kubernetes.io/service-name":"db"}},
        "endpoints":[{"addresses":["10.244.1.8"]}]})")};
  auto s = ServiceInfoFromJson(service, slices);
  ASSERT_TRUE(s.has_value()) << s.error().ToString();
  EXPECT_EQ(s->cluster_ip, "10.96.0.10");
  EXPECT_EQ(s->ready_endpoint_ips, (std::vector<std::string>{"10.244.1.5", "10.244.1.7"}));
  ASSERT_EQ(s->ports.size(), 2u);
  EXPECT_EQ(s->ports[0], (ServicePort{"http", Protocol::kTCP, 80, 8080}));
  EXPECT_EQ(s->ports[1], (ServicePort{"dns", Protocol::kUDP, 53, 5353}));

  auto headless = ServiceInfoFromJson(json::parse(R"({"metadata":{"namespace":"x","name":"h"},"spec":{"clusterIP":"None"}})"), {});
  ASSERT_TRUE(headless.has_value());
  EXPECT_EQ(headless->cluster_ip, "");
}

}  // namespace
}  // namespace tessera::net
