// Node pod ranges end to end: a real server on 127.0.0.1 whose scheduler loop
// gives each Node a spec.podCIDR cut from --cluster-cidr, as
// kube-controller-manager's nodeipam does, and whose API keeps a range once set.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "agent/node_registration.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "domain/ipv4_cidr.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kForbidden =
    "spec.podCIDR: Forbidden: node updates may not change podCIDR except from \"\" to valid";

class NodeIpamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-ipam");
    // 10.100.0.0/22 in /24s: four node ranges, 10.100.0.0/24 to 10.100.3.0/24.
    ServerOptions options;
    options.cluster_cidr = "10.100.0.0/22";
    options.node_cidr_mask_size = 24;
    options.service_cluster_ip_range = "10.96.0.0/16";  // the default /12 holds 10.100.0.0/22: ranges must not meet
    server_ = testing::StartLocalServer(dir_.string(), options);
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  static json NodeManifest(const std::string& name) {
    Node n{.name = name, .cpu_milli = 8000, .memory_bytes = int64_t{32} << 30};
    return NodeObject(n, true, Rfc3339Now());
  }
  ApiResponse Send(const std::string& method, const std::string& path, const json& body = json()) {
    auto r = client_->Request(method, path, body.is_null() ? "" : body.dump());
    EXPECT_TRUE(r.has_value());
    return r.value_or(ApiResponse{});
  }
  void CreateNode(const json& node) {
    const ApiResponse r = Send("POST", "/api/v1/nodes", node);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  static std::string PodCidr(const json& node) {
    return node.value("spec", json::object()).value("podCIDR", "");
  }
  // Creates the node and waits for the loop to give it a range.
  std::string CreateNodeWithRange(const std::string& name) {
    CreateNode(NodeManifest(name));
    return PodCidr(WaitForObject(*client_, "/api/v1/nodes/" + name, [](const json& n) { return !PodCidr(n).empty(); }));
  }
  json GetNode(const std::string& name) {
    const ApiResponse r = Send("GET", "/api/v1/nodes/" + name);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  // The Events about node `name` with `reason`, once there is one.
  json WaitForNodeEvent(const std::string& name, const std::string& reason) {
    const json list = WaitForObject(*client_, "/api/v1/namespaces/default/events", [&](const json& l) {
      for (const json& e : l.value("items", json::array())) {
        if (e["involvedObject"].value("name", "") == name && e.value("reason", "") == reason) return true;
      }
      return false;
    });
    for (const json& e : list.value("items", json::array())) {
      if (e["involvedObject"].value("name", "") == name && e.value("reason", "") == reason) return e;
    }
    return json::object();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
};

// Four nodes get the four /24s of the /22, each its own, as spec.podCIDR and
// spec.podCIDRs; a fifth gets none and a Warning Event that says why and
// what to do.
TEST_F(NodeIpamTest, FourNodesGetTheFourRangesAndAFifthIsToldThereIsNoneLeft) {
  const Ipv4Cidr cluster = *ParseIpv4Cidr("10.100.0.0/22");
  std::set<std::string> ranges;
  for (const std::string name : {"node-1", "node-2", "node-3", "node-4"}) {
    const std::string cidr = CreateNodeWithRange(name);
    auto parsed = ParseIpv4Cidr(cidr);
    ASSERT_TRUE(parsed.has_value()) << name << ": " << cidr;
    EXPECT_EQ(parsed->prefix, 24) << cidr;
    EXPECT_TRUE(cluster.Contains(*parsed)) << cidr;
    EXPECT_EQ(GetNode(name)["spec"]["podCIDRs"], json::array({cidr})) << "podCIDRs holds the same range";
    ranges.insert(cidr);
  }
  EXPECT_EQ(ranges, (std::set<std::string>{"10.100.0.0/24", "10.100.1.0/24", "10.100.2.0/24", "10.100.3.0/24"}));

  CreateNode(NodeManifest("node-5"));
  const json event = WaitForNodeEvent("node-5", "CIDRNotAvailable");
  EXPECT_EQ(event.value("type", ""), "Warning");
  EXPECT_EQ(event.value("message", ""),
            "Node node-5 status is now: CIDRNotAvailable: all 4 /24 pod ranges of the cluster range 10.100.0.0/22 "
            "are held by other nodes; widen --cluster-cidr, raise --node-cidr-mask-size (smaller ranges, more of "
            "them) or delete a node");
  // The pass that wrote the event gave node-5 nothing.
  const json node5 = GetNode("node-5");
  EXPECT_EQ(PodCidr(node5), "") << node5.dump();
  EXPECT_FALSE(node5.value("spec", json::object()).contains("podCIDRs")) << node5.dump();

  // An admin may still give it one by hand: "" may become a valid range.
  json by_hand = node5;
  by_hand["spec"]["podCIDR"] = "10.200.0.0/24";
  const ApiResponse set = Send("PUT", "/api/v1/nodes/node-5", by_hand);
  EXPECT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(PodCidr(GetNode("node-5")), "10.200.0.0/24");
}

// A deleted node's range is free again: the next node gets exactly it (the
// lowest free range), though it is not the last of the cluster range.
TEST_F(NodeIpamTest, ADeletedNodesRangeGoesToTheNextNode) {
  std::string freed;
  for (const std::string name : {"node-1", "node-2", "node-3", "node-4"}) {
    const std::string cidr = CreateNodeWithRange(name);
    if (name == "node-2") freed = cidr;
  }
  ASSERT_FALSE(freed.empty());
  const ApiResponse deleted = Send("DELETE", "/api/v1/nodes/node-2");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(CreateNodeWithRange("node-5"), freed);
}

// A range set on create (by an admin, of any size) is kept and taken: a /23
// holds two /24s, so the next node gets the third.
TEST_F(NodeIpamTest, ARangeSetByHandIsKeptAndTaken) {
  json manual = NodeManifest("manual");
  manual["spec"]["podCIDR"] = "10.100.0.0/23";  // 10.100.0.0/24 and 10.100.1.0/24
  CreateNode(manual);
  EXPECT_EQ(CreateNodeWithRange("node-1"), "10.100.2.0/24");
  EXPECT_EQ(PodCidr(GetNode("manual")), "10.100.0.0/23");
}

// A PUT that changes or drops a node's range is 422 in Kubernetes' words; one
// that keeps it (and changes a label) is applied.
TEST_F(NodeIpamTest, AnUpdateMayNotChangeARangeOnceSet) {
  const std::string cidr = CreateNodeWithRange("node-1");
  json node = GetNode("node-1");

  json moved = node;
  moved["spec"]["podCIDR"] = "10.100.3.0/24";
  moved["spec"]["podCIDRs"] = json::array({"10.100.3.0/24"});
  const ApiResponse changed = Send("PUT", "/api/v1/nodes/node-1", moved);
  EXPECT_EQ(changed.status, 422) << changed.body;
  EXPECT_EQ(json::parse(changed.body).value("message", ""), kForbidden);

  json dropped = node;
  dropped["spec"].erase("podCIDR");
  dropped["spec"].erase("podCIDRs");
  const ApiResponse wiped = Send("PUT", "/api/v1/nodes/node-1", dropped);
  EXPECT_EQ(wiped.status, 422) << wiped.body;
  EXPECT_EQ(json::parse(wiped.body).value("message", ""), kForbidden);

  const ApiResponse patched = Send("PATCH", "/api/v1/nodes/node-1", json{{"spec", {{"podCIDR", "10.100.3.0/24"}}}});
  EXPECT_EQ(patched.status, 422) << patched.body;

  json kept = node;
  kept["metadata"]["labels"]["zone"] = "a";
  const ApiResponse applied = Send("PUT", "/api/v1/nodes/node-1", kept);
  ASSERT_EQ(applied.status, 200) << applied.body;
  const json after = GetNode("node-1");
  EXPECT_EQ(PodCidr(after), cidr);
  EXPECT_EQ(after["metadata"]["labels"].value("zone", ""), "a");
}

// A range that is not an IPv4 network is refused on create, naming the field
// and what to write.
TEST_F(NodeIpamTest, ABadRangeIsRefusedNamingTheField) {
  json host_bits = NodeManifest("bad-1");
  host_bits["spec"]["podCIDR"] = "10.100.1.5/24";
  const ApiResponse a = Send("POST", "/api/v1/nodes", host_bits);
  EXPECT_EQ(a.status, 422) << a.body;
  EXPECT_EQ(json::parse(a.body).value("message", ""),
            "Node \"bad-1\" is invalid: spec.podCIDR: Invalid value: \"10.100.1.5/24\" has host bits set: the /24 "
            "network that holds 10.100.1.5 is 10.100.1.0/24; write that");
  json garbage = NodeManifest("bad-2");
  garbage["spec"]["podCIDRs"] = json::array({"garbage"});
  const ApiResponse b = Send("POST", "/api/v1/nodes", garbage);
  EXPECT_EQ(b.status, 422) << b.body;
  EXPECT_EQ(json::parse(b.body).value("message", "").rfind("Node \"bad-2\" is invalid: spec.podCIDRs[0]: Invalid value: \"garbage\"", 0), 0u)
      << b.body;
  json mismatch = NodeManifest("bad-3");
  mismatch["spec"]["podCIDR"] = "10.100.1.0/24";
  mismatch["spec"]["podCIDRs"] = json::array({"10.100.2.0/24"});
  const ApiResponse c = Send("POST", "/api/v1/nodes", mismatch);
  EXPECT_EQ(c.status, 422) << c.body;
  EXPECT_EQ(json::parse(c.body).value("message", ""),
            "Node \"bad-3\" is invalid: spec.podCIDR: Invalid value: \"10.100.1.0/24\": must be the first of "
            "spec.podCIDRs (\"10.100.2.0/24\")");
  EXPECT_EQ(Send("GET", "/api/v1/nodes/bad-1").status, 404);
}

// Bad --cluster-cidr or --node-cidr-mask-size values stop the server at start,
// saying which flag and what to use.
TEST(NodeIpamFlagsTest, BadRangesFailAtStart) {
  const std::filesystem::path dir = testing::FreshTestDir("tessera-ipam-flags");
  auto start = [&](const std::string& cidr, int mask) {
    ServerOptions o;
    o.data_dir = dir.string();
    o.http.port = 0;
    o.cluster_cidr = cidr;
    o.node_cidr_mask_size = mask;
    auto server = Server::Start(o);
    return server ? std::string() : server.error().message();
  };
  EXPECT_EQ(start("10.100.1.0/22", 24),
            "--cluster-cidr \"10.100.1.0/22\" has host bits set: the /22 network that holds 10.100.1.0 is "
            "10.100.0.0/22; write that");
  EXPECT_EQ(start("10.100.0.0/22", 16),
            "--node-cidr-mask-size 16: a node range of /16 is larger than the cluster range 10.100.0.0/22: use a node "
            "mask size from 22 to 30");
  EXPECT_EQ(start("10.100.0.0/22", 31),
            "--node-cidr-mask-size 31: a node range of /31 leaves no addresses for pods: use a node mask size of at "
            "most 30");
  EXPECT_NE(start("pods", 24).find("--cluster-cidr \"pods\" is not a CIDR"), std::string::npos) << start("pods", 24);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
