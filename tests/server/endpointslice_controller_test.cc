// The EndpointSlice controller (server/endpointslice_controller.h) against a
// real SQLite store, driven pass by pass as the scheduler loop drives it: what
// a Service's slice holds, how it follows its pods (Ready or not, labels,
// deletion, a named targetPort), that an unchanged slice is not written again,
// and that the slices go with their Service.
#include "server/controllers/endpointslice_controller.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/object_json.h"
#include "tests/testing/fresh_store.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kNs = "team-a";
constexpr const char* kNow = "2026-01-01T00:00:00Z";

json Service(const std::string& name, json spec) {
  return json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", name}, {"namespace", kNs}}},
              {"spec", std::move(spec)}};
}

// A running pod of app=web on node n1 with `ip`, Ready or not; its container
// serves 8080 named "http".
json Pod(const std::string& name, const std::string& ip, bool ready) {
  json pod{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", name}, {"namespace", kNs}, {"labels", {{"app", "web"}}}}},
           {"spec",
            {{"nodeName", "n1"},
             {"containers", {{{"name", "main"}, {"ports", {{{"name", "http"}, {"containerPort", 8080}}}}}}}}},
           {"status", {{"phase", "Running"}}}};
  if (!ip.empty()) pod["status"]["podIP"] = ip;
  pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
  return pod;
}

class EndpointSliceControllerTest : public testing::FreshStoreTest {
 protected:
  void SetUp() override {
    FreshStoreTest::SetUp();
    cache_ = std::make_unique<ObjectCache>(*store_, std::vector<std::string>{"/Pod", "/Service",
                                                                             "discovery.k8s.io/EndpointSlice"});
    controller_ = std::make_unique<EndpointSliceController>(*cache_);
  }
  void TearDown() override {
    controller_.reset();
    cache_.reset();
    FreshStoreTest::TearDown();
  }

  // One pass: sync, reconcile, flush. Returns how many writes it made.
  size_t Pass() {
    EXPECT_TRUE(cache_->Sync().ok());
    BatchedWriter writer(*store_, *cache_);
    controller_->Reconcile(*cache_, kNow, writer);
    return writer.Flush();
  }
  std::string Put(const std::string& kind, const json& object) {
    const ObjectKey key{kind, kNs, object.at("metadata").at("name").get<std::string>()};
    auto current = store_->Get(key);
    auto written = current ? store_->Update(key, object, current->revision) : store_->Create(key, object);
    EXPECT_TRUE(written.has_value()) << written.error().ToString();
    return written ? StringAt(written->object, {"metadata", "uid"}) : "";
  }
  std::vector<json> Slices() {
    auto list = store_->List("discovery.k8s.io/EndpointSlice", kNs);
    EXPECT_TRUE(list.has_value());
    std::vector<json> out;
    for (const StoredObject& o : list->items) out.push_back(o.object);
    return out;
  }
  // The one slice there is, or a failure.
  json OnlySlice() {
    const std::vector<json> slices = Slices();
    EXPECT_EQ(slices.size(), 1u);
    return slices.empty() ? json::object() : slices[0];
  }
  static std::vector<std::string> Addresses(const json& slice, bool ready_only = false) {
    std::vector<std::string> out;
    for (const json& e : slice.value("endpoints", json::array())) {
      if (ready_only && !e["conditions"].value("ready", false)) continue;
      out.push_back(e["addresses"][0]);
    }
    return out;
  }

  std::unique_ptr<ObjectCache> cache_;
  std::unique_ptr<EndpointSliceController> controller_;
};

json WebSpec() {
  return json{{"selector", {{"app", "web"}}},
              {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}, {"protocol", "TCP"}}}}};
}

// The whole slice, field by field: what the agent reads.
TEST_F(EndpointSliceControllerTest, OneSliceNamedLabelledAndOwnedWithTheReadyPods) {
  const std::string uid = Put("/Service", Service("web", WebSpec()));
  json pod = Pod("web-0", "10.244.0.5", true);
  const std::string pod_uid = Put("/Pod", pod);
  Put("/Pod", Pod("web-1", "", true));  // no IP yet: not an endpoint
  json other = Pod("db-0", "10.244.0.9", true);
  other["metadata"]["labels"]["app"] = "db";
  Put("/Pod", other);
  EXPECT_EQ(Pass(), 1u);

  const json slice = OnlySlice();
  const std::string name = slice["metadata"]["name"];
  EXPECT_EQ(name.substr(0, 4), "web-");
  EXPECT_EQ(name.size(), 9u);  // web- and 5 characters
  EXPECT_EQ(slice["apiVersion"], "discovery.k8s.io/v1");
  EXPECT_EQ(slice["metadata"]["labels"],
            (json{{"kubernetes.io/service-name", "web"},
                  {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.tessera.dev"}}));
  EXPECT_EQ(slice["metadata"]["ownerReferences"],
            json::array({{{"apiVersion", "v1"}, {"kind", "Service"}, {"name", "web"}, {"uid", uid},
                          {"controller", true}, {"blockOwnerDeletion", true}}}));
  EXPECT_EQ(slice["metadata"]["creationTimestamp"], kNow);
  EXPECT_EQ(slice["addressType"], "IPv4");
  EXPECT_EQ(slice["endpoints"],
            json::array({{{"addresses", {"10.244.0.5"}},
                          {"conditions", {{"ready", true}, {"serving", true}, {"terminating", false}}},
                          {"nodeName", "n1"},
                          {"targetRef", {{"kind", "Pod"}, {"namespace", kNs}, {"name", "web-0"}, {"uid", pod_uid}}}}}));
  EXPECT_EQ(slice["ports"], json::array({{{"name", "http"}, {"protocol", "TCP"}, {"port", 8080}}}));
}

// Nothing changed, nothing written: the store's revision stays.
TEST_F(EndpointSliceControllerTest, AnUnchangedSliceIsNotWrittenAgain) {
  Put("/Service", Service("web", WebSpec()));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  EXPECT_EQ(Pass(), 1u);
  const int64_t revision = store_->Revision();
  EXPECT_EQ(Pass(), 0u);
  EXPECT_EQ(Pass(), 0u);
  EXPECT_EQ(store_->Revision(), revision);
  // A pod change that does not touch the endpoint (an annotation) writes nothing either.
  json pod = Pod("web-0", "10.244.0.5", true);
  pod["metadata"]["annotations"]["note"] = "x";
  Put("/Pod", pod);
  EXPECT_EQ(Pass(), 0u);
}

TEST_F(EndpointSliceControllerTest, APodTurningReadyAndUnreadyIsFollowed) {
  Put("/Service", Service("web", WebSpec()));
  Put("/Pod", Pod("web-0", "10.244.0.5", false));
  Pass();
  json slice = OnlySlice();
  ASSERT_EQ(slice["endpoints"].size(), 1u);
  EXPECT_EQ(slice["endpoints"][0]["conditions"],
            (json{{"ready", false}, {"serving", false}, {"terminating", false}}));

  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  EXPECT_EQ(Pass(), 1u);
  EXPECT_EQ(Addresses(OnlySlice(), /*ready_only=*/true), std::vector<std::string>{"10.244.0.5"});

  Put("/Pod", Pod("web-0", "10.244.0.5", false));
  EXPECT_EQ(Pass(), 1u);
  EXPECT_TRUE(Addresses(OnlySlice(), /*ready_only=*/true).empty());
}

// A pod being deleted stays while it has an IP, terminating: serving as its
// readiness says, never ready (Kubernetes' rule).
TEST_F(EndpointSliceControllerTest, ATerminatingPodIsServingButNotReady) {
  Put("/Service", Service("web", WebSpec()));
  json pod = Pod("web-0", "10.244.0.5", true);
  pod["metadata"]["deletionTimestamp"] = kNow;
  Put("/Pod", pod);
  Pass();
  EXPECT_EQ(OnlySlice()["endpoints"][0]["conditions"],
            (json{{"ready", false}, {"serving", true}, {"terminating", true}}));
}

TEST_F(EndpointSliceControllerTest, ALabelChangeAddsOrDropsThePod) {
  Put("/Service", Service("web", WebSpec()));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  Put("/Pod", Pod("web-1", "10.244.0.6", true));
  Pass();
  EXPECT_EQ(Addresses(OnlySlice()), (std::vector<std::string>{"10.244.0.5", "10.244.0.6"}));
  json moved = Pod("web-1", "10.244.0.6", true);
  moved["metadata"]["labels"]["app"] = "canary";
  Put("/Pod", moved);
  EXPECT_EQ(Pass(), 1u);
  EXPECT_EQ(Addresses(OnlySlice()), std::vector<std::string>{"10.244.0.5"});
  Put("/Pod", Pod("web-1", "10.244.0.6", true));
  EXPECT_EQ(Pass(), 1u);
  EXPECT_EQ(Addresses(OnlySlice()), (std::vector<std::string>{"10.244.0.5", "10.244.0.6"}));
}

// The last endpoint gone, the slice goes (no empty placeholder).
TEST_F(EndpointSliceControllerTest, ADeletedPodLeavesTheSlice) {
  Put("/Service", Service("web", WebSpec()));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  Put("/Pod", Pod("web-1", "10.244.0.6", true));
  Pass();
  ASSERT_TRUE(store_->Delete(ObjectKey{"/Pod", kNs, "web-1"}, 0).has_value());
  EXPECT_EQ(Pass(), 1u);
  EXPECT_EQ(Addresses(OnlySlice()), std::vector<std::string>{"10.244.0.5"});
  ASSERT_TRUE(store_->Delete(ObjectKey{"/Pod", kNs, "web-0"}, 0).has_value());
  EXPECT_EQ(Pass(), 1u);
  EXPECT_TRUE(Slices().empty());
}

// A pod a restart policy has finished serves nothing.
TEST_F(EndpointSliceControllerTest, FinishedPodsAreLeftOut) {
  Put("/Service", Service("web", WebSpec()));
  json done = Pod("web-0", "10.244.0.5", false);
  done["spec"]["restartPolicy"] = "Never";
  done["status"]["phase"] = "Succeeded";
  Put("/Pod", done);
  Pass();
  EXPECT_TRUE(Slices().empty());
}

// targetPort "http" is 8080 on web-0 and 9000 on web-1 (containers say so):
// two port sets, two slices; web-2 has no port of that name and is left out.
TEST_F(EndpointSliceControllerTest, ANamedTargetPortIsResolvedPerPod) {
  json spec = WebSpec();
  spec["ports"][0]["targetPort"] = "http";
  Put("/Service", Service("web", spec));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  json other = Pod("web-1", "10.244.0.6", true);
  other["spec"]["containers"][0]["ports"][0]["containerPort"] = 9000;
  Put("/Pod", other);
  json unnamed = Pod("web-2", "10.244.0.7", true);
  unnamed["spec"]["containers"][0]["ports"][0]["name"] = "grpc";
  Put("/Pod", unnamed);
  json udp = Pod("web-3", "10.244.0.8", true);  // "http" over UDP is another port
  udp["spec"]["containers"][0]["ports"][0]["protocol"] = "UDP";
  Put("/Pod", udp);
  EXPECT_EQ(Pass(), 2u);
  std::map<int, std::vector<std::string>> by_port;
  for (const json& slice : Slices()) {
    ASSERT_EQ(slice["ports"].size(), 1u) << slice.dump();
    EXPECT_EQ(slice["ports"][0]["name"], "http");
    by_port[slice["ports"][0]["port"].get<int>()] = Addresses(slice);
  }
  EXPECT_EQ(by_port, (std::map<int, std::vector<std::string>>{{8080, {"10.244.0.5"}}, {9000, {"10.244.0.6"}}}));
  EXPECT_EQ(Pass(), 0u);
}

// A Service changed (another target port), the slice follows; a selector
// dropped or the Service deleted, its slices go. A slice someone else wrote
// (no managed-by label) is left alone.
TEST_F(EndpointSliceControllerTest, SlicesFollowTheServiceAndGoWithIt) {
  Put("/Service", Service("web", WebSpec()));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  Put("discovery.k8s.io/EndpointSlice",
      json{{"apiVersion", "discovery.k8s.io/v1"},
           {"kind", "EndpointSlice"},
           {"metadata", {{"name", "web-by-hand"}, {"namespace", kNs}, {"labels", {{"kubernetes.io/service-name", "web"}}}}},
           {"addressType", "IPv4"},
           {"endpoints", json::array()}});
  Pass();
  json spec = WebSpec();
  spec["ports"][0]["targetPort"] = 8081;
  Put("/Service", Service("web", spec));
  EXPECT_EQ(Pass(), 1u);
  ASSERT_EQ(Slices().size(), 2u);
  for (const json& slice : Slices()) {
    if (slice["metadata"]["name"] == "web-by-hand") continue;
    EXPECT_EQ(slice["ports"][0]["port"], 8081);
  }
  ASSERT_TRUE(store_->Delete(ObjectKey{"/Service", kNs, "web"}, 0).has_value());
  EXPECT_EQ(Pass(), 1u);
  ASSERT_EQ(Slices().size(), 1u);
  EXPECT_EQ(Slices()[0]["metadata"]["name"], "web-by-hand");
}

// A Service without a selector (endpoints managed by hand) gets no slice.
TEST_F(EndpointSliceControllerTest, AServiceWithoutASelectorGetsNone) {
  json spec = WebSpec();
  spec.erase("selector");
  Put("/Service", Service("web", spec));
  Put("/Pod", Pod("web-0", "10.244.0.5", true));
  EXPECT_EQ(Pass(), 0u);
  EXPECT_TRUE(Slices().empty());
}

// publishNotReadyAddresses: every endpoint is ready, as Kubernetes reads it.
TEST_F(EndpointSliceControllerTest, PublishNotReadyAddressesMakesEveryEndpointReady) {
  json spec = WebSpec();
  spec["publishNotReadyAddresses"] = true;
  Put("/Service", Service("web", spec));
  Put("/Pod", Pod("web-0", "10.244.0.5", false));
  Pass();
  EXPECT_EQ(OnlySlice()["endpoints"][0]["conditions"], (json{{"ready", true}, {"serving", true}, {"terminating", false}}));
}

// 250 pods: slices of at most 100 endpoints (100 + 100 + 50), every pod once.
TEST_F(EndpointSliceControllerTest, AtMostAHundredEndpointsASlice) {
  Put("/Service", Service("web", WebSpec()));
  for (int i = 0; i < 250; ++i) {
    Put("/Pod", Pod(fmt::format("web-{:03}", i), fmt::format("10.244.{}.{}", i / 200, i % 200 + 2), true));
  }
  EXPECT_EQ(Pass(), 3u);
  std::set<std::string> all;
  std::multiset<size_t> sizes;
  for (const json& slice : Slices()) {
    sizes.insert(slice["endpoints"].size());
    for (const std::string& a : Addresses(slice)) all.insert(a);
  }
  EXPECT_EQ(sizes, (std::multiset<size_t>{50, 100, 100}));
  EXPECT_EQ(all.size(), 250u);
}

}  // namespace
}  // namespace tessera
