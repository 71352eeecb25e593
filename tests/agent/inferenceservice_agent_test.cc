// An InferenceService end to end: a real server, two real agents (node-1 at
// 127.0.0.1, node-2 at 127.0.0.2, host network), and replicas that are real
// python3 HTTP servers answering with their pod's address. Two replicas land
// on distinct nodes, answer through services/NAME:http/proxy, and a replica
// whose process is killed is replaced by a new one that answers again.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "agent/agent.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_agent.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A free TCP port on both 127.0.0.1 and 127.0.0.2 (bound, then closed, for the replicas to take).
int FreePort() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    int port = 0;
    bool ok = true;
    for (const char* host : {"127.0.0.1", "127.0.0.2"}) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, host, &addr.sin_addr);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) ok = false;
      socklen_t len = sizeof(addr);
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
      if (port == 0) port = ntohs(addr.sin_port);
      ::close(fd);
    }
    if (ok) return port;
  }
  return 0;
}

// argv: address, port. Answers every GET with "served by ADDRESS".
constexpr const char* kReplica = R"(import http.server, sys
host, port = sys.argv[1], int(sys.argv[2])
class Replica(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        data = ("served by " + host).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.HTTPServer((host, port), Replica).serve_forever()
)";

class InferenceServiceAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-isvc-agent");
    server_ = testing::StartLocalServer((dir_ / "server").string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    for (const auto& [node, address] : {std::pair{"node-1", "127.0.0.1"}, std::pair{"node-2", "127.0.0.2"}}) {
      AgentOptions o = testing::TestAgentOptions(*server_, dir_, node, "1xA100-80GB");
      o.address = address;
      auto a = Agent::Start(o);
      ASSERT_TRUE(a.has_value()) << a.error().ToString();
      agents_.push_back(std::move(*a));
    }
  }
  void TearDown() override {
    agents_.clear();
    for (const char* node : {"node-1", "node-2"}) testing::KillAgentPods(dir_ / node);
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  json WaitFor(const std::string& path, const std::function<bool(const json&)>& ready) {
    return WaitForObject(*client_, path, ready, std::chrono::seconds(30));
  }
  // The bodies answered through the Service's proxy, until `want` distinct ones were seen (at most 400 tries).
  std::set<std::string> CallUntil(const std::string& isvc, size_t want) {
    std::set<std::string> seen;
    for (int i = 0; i < 400 && seen.size() < want; ++i) {
      auto r = client_->Request("GET", "/api/v1/namespaces/default/services/" + isvc + ":http/proxy/");
      if (r && r->status == 200) {
        seen.insert(r->body);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the replica's server is starting
      }
    }
    return seen;
  }
  std::map<std::string, json> Pods(const std::string& isvc) {
    auto r = client_->Request("GET", "/api/v1/namespaces/default/pods?labelSelector=tessera.dev/inferenceservice%3D" + isvc);
    std::map<std::string, json> out;
    if (!r || r->status != 200) return out;
    const json list = json::parse(r->body);  // named: a range over a temporary's member would dangle
    for (const json& p : list["items"]) out[p["metadata"]["name"]] = p;
    return out;
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::vector<std::unique_ptr<Agent>> agents_;
};

TEST_F(InferenceServiceAgentTest, TwoReplicasOnDistinctNodesAnswerAndAKilledOneIsReplaced) {
  const fs::path script = dir_ / "replica.py";
  std::ofstream(script) << kReplica;
  const int port = FreePort();
  ASSERT_NE(port, 0);
  json container{{"name", "server"},
                 {"command", {"sh", "-c", "exec python3 " + script.string() + " \"$POD_IP\" \"$PORT\""}},
                 {"env", {{{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}}},
                 {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}};
  const json isvc{{"apiVersion", "tessera.dev/v1"},
                  {"kind", "InferenceService"},
                  {"metadata", {{"name", "echo"}, {"namespace", "default"}}},
                  {"spec", {{"replicas", 2}, {"port", port}, {"template", {{"spec", {{"containers", {container}}}}}}}}};
  auto created = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/default/inferenceservices", isvc.dump());
  ASSERT_TRUE(created.has_value());
  ASSERT_EQ(created->status, 201) << created->body;
  const std::string path = "/apis/tessera.dev/v1/namespaces/default/inferenceservices/echo";
  WaitFor(path, [](const json& o) { return o.value("status", json::object()).value("readyReplicas", 0) == 2; });
  // On distinct nodes (spread), so each answers at its own node's address.
  std::set<std::string> nodes;
  for (const auto& [name, pod] : Pods("echo")) nodes.insert(pod["spec"].value("nodeName", ""));
  EXPECT_EQ(nodes, (std::set<std::string>{"node-1", "node-2"}));
  EXPECT_EQ(CallUntil("echo", 2), (std::set<std::string>{"served by 127.0.0.1", "served by 127.0.0.2"}));

  // Kill node-2's replica's process: its pod fails, a new replica replaces it.
  std::string victim, victim_uid;
  for (const auto& [name, pod] : Pods("echo")) {
    if (pod["spec"].value("nodeName", "") == "node-2") {
      victim = name;
      victim_uid = pod["metadata"]["uid"];
    }
  }
  ASSERT_FALSE(victim.empty());
  std::ifstream in(dir_ / "node-2" / "agent-state.json");
  const json state = json::parse(in, nullptr, false);
  ASSERT_TRUE(state.is_object() && state["pods"].contains(victim_uid)) << state.dump();
  ASSERT_EQ(::kill(-state["pods"][victim_uid].value("pid", 0), SIGKILL), 0);
  WaitFor("/api/v1/namespaces/default/pods?labelSelector=tessera.dev/inferenceservice%3Decho", [&](const json& l) {
    bool gone = true;
    int running = 0;
    for (const json& p : l["items"]) {
      gone = gone && p["metadata"]["name"] != victim;
      running += p.value("status", json::object()).value("phase", "") == "Running" ? 1 : 0;
    }
    return gone && running == 2;
  });
  WaitFor(path, [](const json& o) { return o.value("status", json::object()).value("readyReplicas", 0) == 2; });
  EXPECT_EQ(CallUntil("echo", 2), (std::set<std::string>{"served by 127.0.0.1", "served by 127.0.0.2"}));
}

}  // namespace
}  // namespace tessera
