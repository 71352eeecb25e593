// v1 Service and discovery.k8s.io/v1 EndpointSlice: what validation refuses,
// in kube-apiserver's words, what an update may not change, the defaults the
// server fills in and the typed view controllers read (api/service.h).
#include "api/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/manifest.h"
#include "api/validation.h"
#include "tests/testing/manifest_checks.h"

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using testing::ErrorOf;
using testing::FromYaml;

// A valid Service that each test changes in one place.
json Web() {
  return FromYaml(R"(
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-a}
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: 8080}
    - {name: metrics, port: 9090, targetPort: metrics, protocol: TCP}
)");
}

const KindInfo& ServiceKind() { return *FindKindByStoreKey("/Service"); }

TEST(ServiceValidationTest, AValidServiceAndAHeadlessOneWithoutPortsAreAccepted) {
  EXPECT_TRUE(ValidateManifest(Web()).has_value());
  json headless = Web();
  headless["spec"]["clusterIP"] = "None";
  headless["spec"].erase("ports");
  EXPECT_TRUE(ValidateManifest(headless).has_value()) << ValidateManifest(headless).error().ToString();
}

TEST(ServiceValidationTest, PortOutOfRangeInKubernetesWords) {
  json svc = Web();
  svc["spec"]["ports"][0]["port"] = 0;
  EXPECT_EQ(ErrorOf(svc), "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive");
  svc = Web();
  svc["spec"]["ports"][1]["targetPort"] = 70000;
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive");
}

// Without ports a Service (not headless) has nothing to forward.
TEST(ServiceValidationTest, PortsAreRequiredUnlessHeadless) {
  json svc = Web();
  svc["spec"].erase("ports");
  EXPECT_EQ(ErrorOf(svc), "spec.ports: Required value");
}

// One port may be unnamed; with two, each needs a name, and no two share one.
TEST(ServiceValidationTest, PortNamesRequiredAndUniqueWhenMoreThanOne) {
  json svc = Web();
  svc["spec"]["ports"][1].erase("name");
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].name: Required value");
  svc = Web();
  svc["spec"]["ports"][1]["name"] = "http";
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].name: Duplicate value: \"http\"");
  svc = Web();
  svc["spec"]["ports"].erase(1);
  svc["spec"]["ports"][0].erase("name");
  EXPECT_TRUE(ValidateManifest(svc).has_value());
  svc["spec"]["ports"][0]["name"] = "HTTP";
  EXPECT_THAT(ErrorOf(svc), HasSubstr("spec.ports[0].name: Invalid value: \"HTTP\": a lowercase RFC 1123 label"));
}

TEST(ServiceValidationTest, SamePortAndProtocolTwiceIsRefused) {
  json svc = Web();
  svc["spec"]["ports"][1]["port"] = 80;
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1]: Duplicate value: \"80/TCP\": a port and protocol may be given once");
  svc["spec"]["ports"][1]["protocol"] = "UDP";  // DNS serves 53 on both
  EXPECT_TRUE(ValidateManifest(svc).has_value());
}

TEST(ServiceValidationTest, ProtocolIsTcpUdpOrSctp) {
  json svc = Web();
  svc["spec"]["ports"][0]["protocol"] = "ICMP";
  EXPECT_EQ(ErrorOf(svc),
            "spec.ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"");
}

// A named targetPort follows IANA_SVC_NAME, each broken rule said as kube-apiserver says it.
TEST(ServiceValidationTest, NamedTargetPortFollowsTheIanaServiceNameRules) {
  json svc = Web();
  svc["spec"]["ports"][1]["targetPort"] = "Metrics";
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].targetPort: Invalid value: \"Metrics\": must contain only alpha-numeric "
                          "characters (a-z, 0-9), and hyphens (-)");
  svc["spec"]["ports"][1]["targetPort"] = "a--b";
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].targetPort: Invalid value: \"a--b\": must not contain consecutive hyphens");
  svc["spec"]["ports"][1]["targetPort"] = "1234";
  EXPECT_EQ(ErrorOf(svc), "spec.ports[1].targetPort: Invalid value: \"1234\": must contain at least one letter (a-z)");
  svc["spec"]["ports"][1]["targetPort"] = "a-very-long-port-name";
  EXPECT_EQ(ErrorOf(svc),
            "spec.ports[1].targetPort: Invalid value: \"a-very-long-port-name\": must be no more than 15 characters");
}

TEST(ServiceValidationTest, OnlyClusterIpServicesAreServed) {
  for (const char* type : {"NodePort", "LoadBalancer", "ExternalName"}) {
    json svc = Web();
    svc["spec"]["type"] = type;
    EXPECT_EQ(ErrorOf(svc), std::string("spec.type: Unsupported value: \"") + type +
                                "\": supported values: \"ClusterIP\" (Tessera serves only ClusterIP Services; "
                                "NodePort, LoadBalancer and ExternalName are not supported)");
  }
  json svc = Web();
  svc["spec"]["type"] = "ClusterIP";
  EXPECT_TRUE(ValidateManifest(svc).has_value());
  svc["spec"]["ports"][0]["nodePort"] = 30080;
  EXPECT_EQ(ErrorOf(svc), "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'");
}

TEST(ServiceValidationTest, SessionAffinityIsNone) {
  json svc = Web();
  svc["spec"]["sessionAffinity"] = "ClientIP";
  EXPECT_EQ(ErrorOf(svc), "spec.sessionAffinity: Unsupported value: \"ClientIP\": supported values: \"None\" "
                          "(ClientIP affinity is not supported)");
  svc["spec"]["sessionAffinity"] = "None";
  EXPECT_TRUE(ValidateManifest(svc).has_value());
}

TEST(ServiceValidationTest, ClusterIpIsOneIpv4AddressOrNone) {
  json svc = Web();
  svc["spec"]["clusterIP"] = "10.96.0.300";
  EXPECT_EQ(ErrorOf(svc), "spec.clusterIP: Invalid value: \"10.96.0.300\": must be a valid IP address, (e.g. "
                          "10.9.8.7 or 2001:db8::ffff)");
  svc["spec"]["clusterIP"] = "fd00::10";
  EXPECT_EQ(ErrorOf(svc),
            "spec.clusterIP: Invalid value: \"fd00::10\": only IPv4 is supported (this cluster is IPv4 single-stack)");
  svc["spec"]["clusterIP"] = "10.96.0.10";
  svc["spec"]["clusterIPs"] = {"10.96.0.11"};
  EXPECT_EQ(ErrorOf(svc),
            "spec.clusterIPs[0]: Invalid value: \"10.96.0.11\": must match clusterIP \"10.96.0.10\" when both are given");
  svc["spec"]["clusterIPs"] = {"10.96.0.10", "10.96.0.11"};
  EXPECT_EQ(ErrorOf(svc), "spec.clusterIPs: Invalid value: [\"10.96.0.10\",\"10.96.0.11\"]: may hold no more than "
                          "one IP (this cluster is IPv4 single-stack)");
  svc["spec"]["clusterIPs"] = {"10.96.0.10"};
  EXPECT_TRUE(ValidateManifest(svc).has_value());
  svc["spec"]["ipFamilyPolicy"] = "RequireDualStack";
  EXPECT_EQ(ErrorOf(svc),
            "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack "
            "services");
}

// Service names become {NAME}_SERVICE_HOST variables: a DNS-1035 label, starting with a letter.
TEST(ServiceValidationTest, NameIsADns1035Label) {
  json svc = Web();
  svc["metadata"]["name"] = "1web";
  EXPECT_THAT(ErrorOf(svc), HasSubstr("metadata.name: \"1web\": a DNS-1035 label must consist of lower case"));
  EXPECT_TRUE(ValidateName(NameRule::kDns1035Label, "web-1").ok());
  EXPECT_FALSE(ValidateName(NameRule::kDns1035Label, "web.1").ok());
}

// Once allocated, the address stays: an update naming another is refused, one
// that leaves it out keeps it (KeepAllocatedServiceFields).
TEST(ServiceValidationTest, ClusterIpIsImmutableOnUpdate) {
  json stored = Web();
  DefaultService(stored);
  stored["spec"]["clusterIP"] = "10.96.0.10";
  stored["spec"]["clusterIPs"] = {"10.96.0.10"};
  json next = stored;
  next["spec"]["clusterIP"] = "10.96.0.5";
  next["spec"]["clusterIPs"] = {"10.96.0.5"};
  Status s = ValidateUpdate(ServiceKind(), stored, next);
  EXPECT_EQ(s.message(), "spec.clusterIP: Invalid value: \"10.96.0.5\": field is immutable");
  next["spec"]["clusterIP"] = "None";
  next["spec"]["clusterIPs"] = {"None"};
  EXPECT_EQ(ValidateUpdate(ServiceKind(), stored, next).message(),
            "spec.clusterIP: Invalid value: \"None\": field is immutable");

  json reapplied = Web();  // the manifest as written, without an address
  reapplied["spec"]["ports"][0]["port"] = 81;
  KeepAllocatedServiceFields(reapplied, stored);
  DefaultService(reapplied);
  EXPECT_TRUE(ValidateUpdate(ServiceKind(), stored, reapplied).ok());
  EXPECT_EQ(reapplied["spec"]["clusterIP"], "10.96.0.10");
  EXPECT_EQ(reapplied["spec"]["clusterIPs"], json::array({"10.96.0.10"}));
}

TEST(ServiceDefaultsTest, KubeApiserversDefaults) {
  json svc = Web();
  svc["spec"]["ports"][0].erase("targetPort");
  svc["spec"]["clusterIPs"] = {"10.96.0.7"};
  DefaultService(svc);
  const json& spec = svc["spec"];
  EXPECT_EQ(spec["type"], "ClusterIP");
  EXPECT_EQ(spec["sessionAffinity"], "None");
  EXPECT_EQ(spec["internalTrafficPolicy"], "Cluster");
  EXPECT_EQ(spec["ipFamilies"], json::array({"IPv4"}));
  EXPECT_EQ(spec["ipFamilyPolicy"], "SingleStack");
  EXPECT_EQ(spec["clusterIP"], "10.96.0.7");  // from clusterIPs
  EXPECT_EQ(spec["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["ports"][0]["targetPort"], 80);  // the port itself
  EXPECT_EQ(spec["ports"][1]["targetPort"], "metrics");
  EXPECT_TRUE(ValidateManifest(svc).has_value());
}

TEST(ServiceViewTest, ReadsPortsTargetsAndSelector) {
  json svc = Web();
  svc["metadata"]["uid"] = "u-1";
  svc["spec"]["ports"].push_back({{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}});
  auto view = ServiceViewFromJson(svc);
  ASSERT_TRUE(view.has_value()) << view.error().ToString();
  EXPECT_EQ(view->ns, "team-a");
  EXPECT_EQ(view->name, "web");
  EXPECT_EQ(view->uid, "u-1");
  EXPECT_EQ(view->selector, (std::map<std::string, std::string>{{"app", "web"}}));
  ASSERT_EQ(view->ports.size(), 3u);
  EXPECT_EQ(view->ports[0].target_number, 8080);
  EXPECT_EQ(view->ports[1].target_name, "metrics");
  EXPECT_EQ(view->ports[2].protocol, "UDP");
  EXPECT_EQ(view->ports[2].target_number, 53);  // no targetPort: the port
  EXPECT_FALSE(view->publish_not_ready_addresses);
}

TEST(EndpointSliceValidationTest, AddressTypeRequiredAndImmutable) {
  json slice = FromYaml(R"(
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abcde, namespace: team-a, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
  - addresses: [10.244.0.5]
    conditions: {ready: true, serving: true, terminating: false}
    nodeName: n1
    targetRef: {kind: Pod, namespace: team-a, name: web-0, uid: u}
ports: [{name: http, protocol: TCP, port: 8080}]
)");
  EXPECT_TRUE(ValidateManifest(slice).has_value());
  json next = slice;
  next["addressType"] = "IPv6";
  EXPECT_EQ(ValidateUpdate(*FindKindByStoreKey("discovery.k8s.io/EndpointSlice"), slice, next).message(),
            "addressType: Invalid value: \"IPv6\": field is immutable");
  slice.erase("addressType");
  EXPECT_EQ(ErrorOf(slice), "addressType: required");
}

}  // namespace
}  // namespace tessera
