// v1 Services end to end, over real HTTP on 127.0.0.1 with a real SQLite file:
// the cluster IP a create answers with (allocated from
// --service-cluster-ip-range, or the one asked for), what is refused with
// nothing stored, an address that stays on update and is freed on delete, a
// restart that forgets nothing, who may read and write Services and
// EndpointSlices, and the scheduler loop keeping a Service's EndpointSlice.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"
#include "domain/ipv4_cidr.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kServices = "/api/v1/namespaces/team-a/services";
constexpr const char* kSlices = "/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices";

// vic views team-a, erin edits it; team-b is somebody else's.
constexpr const char* kTokenFileText =
    "vic-token,vic,uid-vic\n"
    "erin-token,erin,uid-erin\n";

json Body(const ApiResponse& r) {
  json parsed = json::parse(r.body, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}
std::string Message(const ApiResponse& r) { return Body(r).value("message", std::string()); }
std::string ClusterIp(const json& service) {
  return service.value("spec", json::object()).value("clusterIP", std::string());
}

json Service(const std::string& name, const std::string& cluster_ip = "") {
  json svc{{"apiVersion", "v1"},
           {"kind", "Service"},
           {"metadata", {{"name", name}}},
           {"spec", {{"selector", {{"app", name}}}, {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}}}};
  if (!cluster_ip.empty()) svc["spec"]["clusterIP"] = cluster_ip;
  return svc;
}

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-services");
    std::ofstream(dir_ / "tokens.csv") << kTokenFileText;
    Start();
    for (const char* ns : {"team-a", "team-b"}) {
      ASSERT_EQ(Send("POST", "/api/v1/namespaces", json{{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                        {"metadata", {{"name", ns}}}})
                    .status,
                201);
    }
    for (const auto& [user, role] : {std::pair{"vic", "view"}, std::pair{"erin", "edit"}}) {
      const json binding{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                         {"kind", "RoleBinding"},
                         {"metadata", {{"name", std::string(user) + "-" + role}}},
                         {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                         {"subjects", {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user}}}}};
      ASSERT_EQ(Send("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", binding).status, 201);
    }
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // (Re)starts the server on the same data directory.
  void Start() {
    client_.reset();
    server_.reset();
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
  }
  ApiResponse Send(const std::string& method, const std::string& path, const json& body = json(),
                   const std::string& token = "", const std::string& type = "application/json") {
    ApiClient as_user(server_->url(), token);
    ApiClient& client = token.empty() ? *client_ : as_user;
    auto r = client.Request(method, path, body.is_null() ? "" : body.dump(), type);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
    return r.value_or(ApiResponse{});
  }
  // Creates `svc` in team-a and returns the stored object from the answer.
  json Create(const json& svc) {
    const ApiResponse r = Send("POST", kServices, svc);
    EXPECT_EQ(r.status, 201) << r.body;
    return Body(r);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
};

// The create's own answer carries the address, from the default range, with
// kube-apiserver's defaults; a second Service gets another.
TEST_F(ServicesTest, ACreateAnswersWithItsClusterIpAndTheDefaults) {
  const json web = Create(Service("web"));
  const Ipv4Cidr range = *ParseIpv4Cidr("10.96.0.0/12");
  const auto ip = ParseIpv4Address(ClusterIp(web));
  ASSERT_TRUE(ip.has_value()) << web.dump();
  EXPECT_TRUE(range.Contains(*ip)) << ClusterIp(web);
  EXPECT_NE(ClusterIp(web), "10.96.0.1") << "the kubernetes Service's";
  const json& spec = web["spec"];
  EXPECT_EQ(spec["clusterIPs"], json::array({ClusterIp(web)}));
  EXPECT_EQ(spec["type"], "ClusterIP");
  EXPECT_EQ(spec["sessionAffinity"], "None");
  EXPECT_EQ(spec["ipFamilies"], json::array({"IPv4"}));
  EXPECT_EQ(spec["ipFamilyPolicy"], "SingleStack");
  EXPECT_EQ(spec["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(web["status"], (json{{"loadBalancer", json::object()}}));
  // What the answer said is what is stored.
  EXPECT_EQ(ClusterIp(Body(Send("GET", std::string(kServices) + "/web"))), ClusterIp(web));
  EXPECT_NE(ClusterIp(Create(Service("api"))), ClusterIp(web));
}

// 4 clients x 10 creates at once: 40 Services, 40 addresses.
TEST_F(ServicesTest, CreatesAtOnceNeverShareAnAddress) {
  std::mutex mu;
  std::set<std::string> ips;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ApiClient client(server_->url(), server_->admin_token());
      for (int i = 0; i < 10; ++i) {
        auto r = client.Request("POST", kServices, Service("s" + std::to_string(t) + "-" + std::to_string(i)).dump());
        ASSERT_TRUE(r.has_value());
        ASSERT_EQ(r->status, 201) << r->body;
        std::lock_guard lock(mu);
        ips.insert(ClusterIp(Body(*r)));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ips.size(), 40u);
}

TEST_F(ServicesTest, AnAddressAskedForIsHonouredAndATakenOrOutOfRangeOneRefusedWithNothingStored) {
  EXPECT_EQ(ClusterIp(Create(Service("dns", "10.96.0.10"))), "10.96.0.10");

  ApiResponse taken = Send("POST", kServices, Service("dns2", "10.96.0.10"));
  EXPECT_EQ(taken.status, 422);
  EXPECT_EQ(Message(taken), "spec.clusterIP: Invalid value: \"10.96.0.10\": failed to allocate IP 10.96.0.10: "
                            "provided IP is already allocated");
  EXPECT_EQ(Send("GET", std::string(kServices) + "/dns2").status, 404);

  ApiResponse outside = Send("POST", kServices, Service("far", "10.0.0.1"));
  EXPECT_EQ(outside.status, 422);
  EXPECT_EQ(Message(outside), "spec.clusterIP: Invalid value: \"10.0.0.1\": failed to allocate IP 10.0.0.1: provided "
                              "IP (10.0.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12");
  EXPECT_EQ(Send("GET", std::string(kServices) + "/far").status, 404);

  // A create the store refuses (its name is taken) holds no address afterwards.
  ApiResponse again = Send("POST", kServices, Service("dns", "10.96.0.11"));
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(ClusterIp(Create(Service("dns3", "10.96.0.11"))), "10.96.0.11");
  // So does one in a namespace that does not exist.
  ApiResponse nowhere = Send("POST", "/api/v1/namespaces/team-z/services", Service("x", "10.96.0.12"));
  EXPECT_EQ(nowhere.status, 404) << nowhere.body;
  EXPECT_EQ(ClusterIp(Create(Service("dns4", "10.96.0.12"))), "10.96.0.12");
}

TEST_F(ServicesTest, OnlyClusterIpServicesAreServed) {
  json svc = Service("lb");
  svc["spec"]["type"] = "LoadBalancer";
  const ApiResponse r = Send("POST", kServices, svc);
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r), "Service \"lb\" is invalid: spec.type: Unsupported value: \"LoadBalancer\": supported values: \"ClusterIP\" (Tessera "
                        "serves only ClusterIP Services; NodePort, LoadBalancer and ExternalName are not supported)");
}

// A headless Service holds no address: the one it would have had stays free.
TEST_F(ServicesTest, AHeadlessServiceHoldsNoAddress) {
  const json headless = Create(Service("peers", "None"));
  EXPECT_EQ(ClusterIp(headless), "None");
  EXPECT_EQ(headless["spec"]["clusterIPs"], json::array({"None"}));
}

// PUT with another address is refused; the manifest applied again (no
// address) keeps the stored one; a merge patch cannot move it either.
TEST_F(ServicesTest, TheAddressIsImmutableOnUpdate) {
  const json web = Create(Service("web", "10.96.0.20"));
  json moved = web;
  moved["spec"]["clusterIP"] = "10.96.0.21";
  moved["spec"]["clusterIPs"] = {"10.96.0.21"};
  ApiResponse refused = Send("PUT", std::string(kServices) + "/web", moved);
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(Message(refused), "spec.clusterIP: Invalid value: \"10.96.0.21\": field is immutable");

  json manifest = Service("web");
  manifest["spec"]["ports"][0]["port"] = 81;
  ApiResponse updated = Send("PUT", std::string(kServices) + "/web", manifest);
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(ClusterIp(Body(updated)), "10.96.0.20");
  EXPECT_EQ(Body(updated)["spec"]["ports"][0]["port"], 81);

  ApiResponse patched = Send("PATCH", std::string(kServices) + "/web", json{{"spec", {{"clusterIP", "10.96.0.22"}}}},
                             "", "application/merge-patch+json");
  EXPECT_EQ(patched.status, 422);
  EXPECT_EQ(Message(patched), "spec.clusterIP: Invalid value: \"10.96.0.22\": field is immutable");
  EXPECT_EQ(ClusterIp(Body(Send("GET", std::string(kServices) + "/web"))), "10.96.0.20");
}

// Deleting frees the address; after a restart, the stored Services' addresses
// are held again (and a deleted one's is not).
TEST_F(ServicesTest, AddressesAreFreedOnDeleteAndKeptAcrossARestart) {
  Create(Service("a", "10.96.0.30"));
  ASSERT_EQ(Send("DELETE", std::string(kServices) + "/a").status, 200);
  Create(Service("b", "10.96.0.30"));  // free again

  const std::string kept = ClusterIp(Create(Service("c")));
  Create(Service("d", "10.96.0.31"));
  ASSERT_EQ(Send("DELETE", std::string(kServices) + "/d").status, 200);
  Start();
  for (const std::string& held : {std::string("10.96.0.30"), kept}) {
    const ApiResponse r = Send("POST", kServices, Service("again", held));
    EXPECT_EQ(r.status, 422) << held << ": " << r.body;
    EXPECT_EQ(Message(r), "spec.clusterIP: Invalid value: \"" + held + "\": failed to allocate IP " + held +
                              ": provided IP is already allocated");
  }
  EXPECT_EQ(ClusterIp(Create(Service("e", "10.96.0.31"))), "10.96.0.31");
  EXPECT_NE(ClusterIp(Create(Service("f"))), kept);
}

TEST_F(ServicesTest, TheRangeFlagIsCheckedAtStart) {
  ServerOptions options;
  options.service_cluster_ip_range = "10.244.0.0/16";  // the pods' --cluster-cidr
  auto overlapping = Server::Start(options);
  ASSERT_FALSE(overlapping.has_value());
  EXPECT_EQ(overlapping.error().message(),
            "--service-cluster-ip-range 10.244.0.0/16 overlaps --cluster-cidr 10.244.0.0/16: Services' addresses and "
            "pods' must not meet; choose ranges apart (the defaults are 10.96.0.0/12 and 10.244.0.0/16)");
  options.service_cluster_ip_range = "10.96.0.0";
  auto malformed = Server::Start(options);
  ASSERT_FALSE(malformed.has_value());
  EXPECT_EQ(malformed.error().message().rfind("--service-cluster-ip-range \"10.96.0.0\" is not a CIDR", 0), 0u)
      << malformed.error().message();
}

// A smaller range, as an admin sets it: addresses come from it.
TEST_F(ServicesTest, AddressesComeFromTheConfiguredRange) {
  client_.reset();
  server_.reset();
  ServerOptions options;
  options.service_cluster_ip_range = "10.0.0.0/24";
  server_ = testing::StartLocalServer((dir_ / "data").string(), options);
  ASSERT_NE(server_, nullptr);
  client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
  // A /24: a static band of 16 above the reserved 10.0.0.1, so the first is 10.0.0.17.
  EXPECT_EQ(ClusterIp(Create(Service("web"))), "10.0.0.17");
}

// view reads Services and EndpointSlices but writes neither; edit writes
// Services, never EndpointSlices (only the server's controller does); neither
// reads another team's.
TEST_F(ServicesTest, WhoMayReadAndWriteServicesAndEndpointSlices) {
  Create(Service("web"));
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/team-b/services", Service("theirs")).status, 201);
  const json slice{{"apiVersion", "discovery.k8s.io/v1"},
                   {"kind", "EndpointSlice"},
                   {"metadata", {{"name", "by-hand"}}},
                   {"addressType", "IPv4"},
                   {"endpoints", json::array()}};
  ASSERT_EQ(Send("POST", kSlices, slice).status, 201);

  EXPECT_EQ(Send("GET", std::string(kServices) + "/web", json(), "vic-token").status, 200);
  EXPECT_EQ(Send("GET", kSlices, json(), "vic-token").status, 200);
  EXPECT_EQ(Send("GET", std::string(kSlices) + "/by-hand", json(), "vic-token").status, 200);
  const ApiResponse create = Send("POST", kServices, Service("vics"), "vic-token");
  EXPECT_EQ(create.status, 403);
  EXPECT_EQ(Message(create), "services is forbidden: User \"vic\" cannot create resource \"services\" in API group \"\" "
                             "in the namespace \"team-a\"");
  EXPECT_EQ(Send("DELETE", std::string(kServices) + "/web", json(), "vic-token").status, 403);

  EXPECT_EQ(Send("POST", kServices, Service("erins"), "erin-token").status, 201);
  EXPECT_EQ(Send("DELETE", std::string(kServices) + "/erins", json(), "erin-token").status, 200);
  json erins_slice = slice;
  erins_slice["metadata"]["name"] = "erins";
  const ApiResponse slice_create = Send("POST", kSlices, erins_slice, "erin-token");
  EXPECT_EQ(slice_create.status, 403);
  EXPECT_EQ(Message(slice_create), "endpointslices.discovery.k8s.io is forbidden: User \"erin\" cannot create resource "
                                   "\"endpointslices\" in API group \"discovery.k8s.io\" in the namespace \"team-a\"");
  EXPECT_EQ(Send("DELETE", std::string(kSlices) + "/by-hand", json(), "erin-token").status, 403);

  for (const char* token : {"vic-token", "erin-token"}) {
    EXPECT_EQ(Send("GET", "/api/v1/namespaces/team-b/services/theirs", json(), token).status, 403) << token;
    EXPECT_EQ(Send("GET", "/api/v1/namespaces/team-b/services", json(), token).status, 403) << token;
    EXPECT_EQ(Send("GET", "/apis/discovery.k8s.io/v1/namespaces/team-b/endpointslices", json(), token).status, 403)
        << token;
  }
}

// The scheduler loop keeps the Service's EndpointSlice: the pod appears once
// it has an IP, turns unready with its Ready condition, and the slice goes
// with the Service.
TEST_F(ServicesTest, TheLoopKeepsAServicesEndpointSlice) {
  Create(Service("web"));
  const json pod{{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "web-0"}, {"labels", {{"app", "web"}}}}},
                 {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}},
                 {"status",
                  {{"phase", "Running"},
                   {"podIP", "10.244.0.5"},
                   {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/team-a/pods", pod).status, 201);
  const std::string by_service = std::string(kSlices) + "?labelSelector=kubernetes.io/service-name=web";
  auto ready = [](bool want) {
    return [want](const json& list) {
      const json items = list.value("items", json::array());
      if (items.size() != 1) return false;
      const json endpoints = items[0].value("endpoints", json::array());
      return endpoints.size() == 1 && endpoints[0]["addresses"][0] == "10.244.0.5" &&
             endpoints[0]["conditions"]["ready"] == want;
    };
  };
  const json list = WaitForObject(*client_, by_service, ready(true));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["ports"], json::array({{{"name", "http"}, {"protocol", "TCP"}, {"port", 8080}}}));

  const ApiResponse unready = Send(
      "PATCH", "/api/v1/namespaces/team-a/pods/web-0/status",
      json{{"status", {{"conditions", {{{"type", "Ready"}, {"status", "False"}}}}}}}, "", "application/merge-patch+json");
  ASSERT_EQ(unready.status, 200) << unready.body;
  WaitForObject(*client_, by_service, ready(false));

  ASSERT_EQ(Send("DELETE", std::string(kServices) + "/web").status, 200);
  WaitForObject(*client_, by_service, [](const json& l) { return l.value("items", json::array()).empty(); });
}

}  // namespace
}  // namespace tessera
