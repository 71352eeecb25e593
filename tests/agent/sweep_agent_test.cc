// A Sweep end to end: a real server, a real agent, and per trial a real `sh`
// script printing `tessera-metric loss=... step=N` lines computed from its
// parameter (loss = 10 (lr - 0.3)^2 + 0.5 / step): the 30-trial random sweep. The agent collects the lines
// onto each trial's Pod, the sweep controller reads them, ASHA stops the bad
// trials early, and the best trial is the one whose lr is nearest 0.3.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

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

class SweepAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-sweep-agent");
    server_ = testing::StartLocalServer((dir_ / "server").string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    AgentOptions o = testing::TestAgentOptions(*server_, dir_, "node-1", "2xA100-80GB");
    auto a = Agent::Start(o);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
  }
  void TearDown() override {
    agent_.reset();
    testing::KillAgentPods(dir_ / "node-1");
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
};

double Lr(const json& trial) {
  for (const json& p : trial["parameterAssignments"]) {
    if (p.value("name", "") == "lr") return std::stod(p.value("value", "nan"));
  }
  return NAN;
}

TEST_F(SweepAgentTest, ARandomSweepWithAshaStopsBadTrialsAndFindsTheBestLearningRate) {
  // The test: 30 trials, 4 at a time, 9 steps of 0.4 s each; ASHA (eta 3, rungs at
  // steps 1 and 3 below max_resource 9). Seeded (random_state), so the draws
  // are the same each run.
  const std::string script =
      "for s in 1 2 3 4 5 6 7 8 9; do "
      "awk -v lr=${params.lr} -v s=$s 'BEGIN { printf \"tessera-metric loss=%.6f step=%d\\n\", "
      "10 * (lr - 0.3) * (lr - 0.3) + 0.5 / s, s }'; sleep 0.4; done";
  const json sweep{
      {"apiVersion", "tessera.dev/v1"},
      {"kind", "Sweep"},
      {"metadata", {{"name", "lr"}, {"namespace", "default"}}},
      {"spec",
       {{"objective", {{"type", "minimize"}, {"objectiveMetricName", "loss"}}},
        {"algorithm",
         {{"algorithmName", "random"}, {"algorithmSettings", {{{"name", "random_state"}, {"value", "7"}}}}}},
        {"earlyStopping",
         {{"algorithmName", "asha"},
          {"algorithmSettings",
           {{{"name", "eta"}, {"value", "3"}},
            {{"name", "min_resource"}, {"value", "1"}},
            {{"name", "max_resource"}, {"value", "9"}}}}}},
        {"parallelTrialCount", 4},
        {"maxTrialCount", 30},
        {"parameters",
         {{{"name", "lr"}, {"parameterType", "double"}, {"feasibleSpace", {{"min", "0.0"}, {"max", "1.0"}}}}}},
        {"trialTemplate",
         {{"template",
           {{"spec",
             {{"terminationGracePeriodSeconds", 1},
              {"containers", {{{"name", "main"}, {"command", {"sh", "-c", script}}}}}}}}}}}}}};
  auto r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/default/sweeps", sweep.dump());
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 201) << r->body;
  const json done = WaitForObject(
      *client_, "/apis/tessera.dev/v1/namespaces/default/sweeps/lr",
      [](const json& s) {
        return ConditionField(s, "Succeeded", "status") == "True" || ConditionField(s, "Failed", "status") == "True";
      },
      std::chrono::seconds(120));
  ASSERT_EQ(ConditionField(done, "Succeeded", "status"), "True") << done.dump(2);
  const json& status = done["status"];
  EXPECT_EQ(status["trials"], 30);
  EXPECT_GE(status["trialsEarlyStopped"].get<int>(), 1) << status.dump(2);
  std::cout << "trials: " << status["trialsSucceeded"] << " succeeded, " << status["trialsEarlyStopped"]
            << " stopped early, " << status["trialsFailed"] << " failed; best " << status["currentOptimalTrial"].dump()
            << "\n";
  // Every stopped trial reported fewer steps than the 9 of a full run.
  std::string nearest;
  double nearest_distance = 1e9;
  for (const json& t : status["trialList"]) {
    if (t["state"] == "EarlyStopped") {
      EXPECT_LT(t["observations"]["loss"]["reported"].get<int>(), 9) << t.dump();
    }
    const double d = std::abs(Lr(t) - 0.3);
    if (d < nearest_distance) nearest_distance = d, nearest = t["name"];
  }
  EXPECT_EQ(status["currentOptimalTrial"]["bestTrialName"], nearest) << status.dump(2);
  EXPECT_LT(nearest_distance, 0.15) << "the best lr found is far from 0.3";
}

}  // namespace
}  // namespace tessera
