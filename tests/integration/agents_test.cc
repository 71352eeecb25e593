// Three `tessera agent` processes with their own node names and simulated
// inventories, against a real `tessera server`: a gang starts across them with
// consistent ranks, and when one agent is killed with -9 its node turns
// NotReady, its pod is placed elsewhere, and the two copies never overlap.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using testing::ReadFile;

class AgentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-agents");
    server_ = StartServer((dir_ / "server").string());
    ASSERT_FALSE(server_.url.empty());
    token_ = ReadToken((dir_ / "server").string());
    client_ = std::make_unique<ApiClient>(server_.url, token_);
  }
  void TearDown() override {
    for (pid_t pid : agents_) {
      KillProcess(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    KillProcess(server_.pid, SIGKILL);
    waitpid(server_.pid, nullptr, 0);
    fs::remove_all(dir_);  // the fences see their directories go and exit
  }
  pid_t Agent(const std::string& node, int lease_seconds) {
    const pid_t pid = StartAgent(server_.url, token_, node, (dir_ / node).string(),
                                 {"--gpus", "1xA100-80GB", "--checkpoint-root", (dir_ / "shared").string(),
                                  "--lease-duration", std::to_string(lease_seconds)});
    agents_.push_back(pid);
    return pid;
  }
  void SubmitJob(const std::string& name, int pods, const std::string& script) {
    json container{{"name", "main"}, {"command", {"sh", "-c", script}}};
    container["resources"]["requests"] = {{"nvidia.com/gpu", "1"}};
    json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
    job["spec"] = {{"parallelism", pods}, {"completions", pods}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 1},
                                       {"containers", json::array({container})}};
    auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  bool WaitUntil(const std::function<bool()>& ready, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  fs::path dir_;
  ServerProcess server_;
  std::string token_;
  std::unique_ptr<ApiClient> client_;
  std::vector<pid_t> agents_;
};

TEST_F(AgentsTest, AGangOfThreeStartsOnThreeNodesWithConsistentRanks) {
  for (const char* node : {"node-a", "node-b", "node-c"}) Agent(node, 10);
  SubmitJob("gang", 3,
            "echo $RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $TESSERA_NODE_NAME > $TESSERA_CHECKPOINT_DIR/rank-$RANK");
  const fs::path out = dir_ / "shared" / "default" / "job-gang";
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(out / "rank-0") && fs::exists(out / "rank-1") && fs::exists(out / "rank-2"); }, 20));
  std::set<std::string> masters, nodes;
  for (int rank = 0; rank < 3; ++rank) {
    std::istringstream line(ReadFile(out / ("rank-" + std::to_string(rank))));
    std::string r, world, addr, port, node;
    line >> r >> world >> addr >> port >> node;
    EXPECT_EQ(r, std::to_string(rank));
    EXPECT_EQ(world, "3");
    masters.insert(addr + ":" + port);
    nodes.insert(node);
  }
  EXPECT_EQ(masters.size(), 1u) << "every rank agrees on the master";
  EXPECT_EQ(nodes.size(), 3u) << "one pod per node (each has one GPU)";
}

TEST_F(AgentsTest, AKilledAgentsPodIsPlacedElsewhereAndNeverRunsTwiceAtOnce) {
  const pid_t a = Agent("node-a", 2);
  const pid_t b = Agent("node-b", 2);
  // The pod appends "<node> <ms>" to a shared file every 50 ms.
  SubmitJob("ticker", 1,
            "while true; do echo $TESSERA_NODE_NAME $(date +%s%3N) >> $TESSERA_CHECKPOINT_DIR/ticks; sleep 0.05; done");
  std::string first;
  ASSERT_TRUE(WaitUntil([&] {
    const json pod = Get("/api/v1/namespaces/default/pods/job-ticker-main-0");
    if (pod.is_null() || pod["status"].value("phase", "") != "Running") return false;
    first = pod["spec"].value("nodeName", "");
    return true;
  }, 20));
  const pid_t victim = first == "node-a" ? a : b;
  const std::string other = first == "node-a" ? "node-b" : "node-a";
  KillProcess(victim, SIGKILL);
  waitpid(victim, nullptr, 0);

  ASSERT_TRUE(WaitUntil([&] {
    const json node = Get("/api/v1/nodes/" + first);
    for (const json& c : node["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") return c.value("status", "") == "False";
    }
    return false;
  }, 20)) << first << " never turned NotReady";
  const fs::path ticks = dir_ / "shared" / "default" / "job-ticker" / "ticks";
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(ticks).find(other) != std::string::npos; }, 30))
      << "the pod never ran on " << other;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  // Every tick of the first node comes before every tick of the second.
  int64_t last_first = 0, first_other = INT64_MAX;
  std::istringstream lines(ReadFile(ticks));
  std::string node;
  int64_t ms = 0;
  while (lines >> node >> ms) {
    if (node == first) last_first = std::max(last_first, ms);
    if (node == other) first_other = std::min(first_other, ms);
  }
  EXPECT_GT(last_first, 0);
  EXPECT_LT(last_first, first_other) << "the pod ran on " << first << " and " << other << " at the same time";
}

}  // namespace
}  // namespace tessera
