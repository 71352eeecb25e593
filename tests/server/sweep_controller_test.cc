// The Sweep kind through the API, with the test as the node's agent: it
// registers a node, puts each trial pod's observations on it (the
// tessera.dev/metrics annotation the agent writes) and ends the pods; the
// server's loop (sweep_controller) creates the trials' Jobs, stops the bad
// ones, reports the best and ends the sweep.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <thread>

#include "agent/node_registration.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/team_cluster.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPods = "/api/v1/namespaces/team/pods/";
constexpr const char* kJobs = "/apis/batch/v1/namespaces/team/jobs/";
constexpr const char* kSweeps = "/apis/tessera.dev/v1/namespaces/team/sweeps/";

class SweepControllerTest : public testing::TeamClusterTest {
 protected:
  SweepControllerTest() : TeamClusterTest("tessera-sweepctl") {}

  // A random sweep over lr in [0.01, 0.1], minimizing loss.
  static json Sweep(const std::string& name, int parallel, int max_trials) {
    json container{{"name", "main"},
                   {"command", {"sh", "-c", "echo lr=${params.lr}"}},
                   {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}, {"limits", {{"nvidia.com/gpu", 1}}}}}};
    return json{{"apiVersion", "tessera.dev/v1"},
                {"kind", "Sweep"},
                {"metadata", {{"name", name}, {"namespace", "team"}}},
                {"spec",
                 {{"objective", {{"type", "minimize"}, {"objectiveMetricName", "loss"}}},
                  {"algorithm", {{"algorithmName", "random"}}},
                  {"parallelTrialCount", parallel},
                  {"maxTrialCount", max_trials},
                  {"parameters",
                   {{{"name", "lr"},
                     {"parameterType", "double"},
                     {"feasibleSpace", {{"min", "0.01"}, {"max", "0.1"}}}}}},
                  {"trialTemplate", {{"template", {{"spec", {{"containers", {container}}}}}}}}}}};
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  bool Exists(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200;
  }
  // Polls until `path` answers 404 (no timed assertion: fails after 20 s).
  void WaitForGone(const std::string& path) {
    for (int i = 0; i < 2000 && Exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(Exists(path)) << path << " still exists";
  }
  // The pod of trial `trial` (the Job's one pod).
  static std::string PodOf(const std::string& trial) { return "job-" + trial + "-main-0"; }
  json WaitForPod(const std::string& trial) {
    return WaitFor(kPods + PodOf(trial), [](const json& p) { return p.contains("metadata"); });
  }
  // As the agent reports metrics: the observations annotation, loss per step.
  void Report(const std::string& trial, const std::vector<double>& losses) {
    json points = json::array();
    for (size_t i = 0; i < losses.size(); ++i) points.push_back({static_cast<int>(i + 1), losses[i]});
    double lo = losses[0], hi = losses[0];
    size_t lo_i = 0, hi_i = 0;
    for (size_t i = 0; i < losses.size(); ++i) {
      if (losses[i] < lo) lo = losses[i], lo_i = i;
      if (losses[i] > hi) hi = losses[i], hi_i = i;
    }
    json obs{{"loss",
              {{"points", points},
               {"min", {static_cast<int>(lo_i + 1), lo}},
               {"max", {static_cast<int>(hi_i + 1), hi}},
               {"reported", static_cast<int>(losses.size())}}}};
    for (int attempt = 0; attempt < 20; ++attempt) {
      json pod = WaitForPod(trial);
      pod["metadata"]["annotations"]["tessera.dev/metrics"] = obs.dump();
      auto r = client_->Request("PUT", std::string(kPods) + PodOf(trial), pod.dump());
      ASSERT_TRUE(r.has_value());
      if (r->status == 200) return;
      ASSERT_EQ(r->status, 409) << r->body;
    }
    FAIL() << "could not annotate " << trial;
  }
  void EndPod(const std::string& trial, int exit_code) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      json pod = WaitForPod(trial);
      pod["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
      pod["status"]["containerStatuses"] = {
          {{"name", "main"}, {"state", {{"terminated", {{"exitCode", exit_code}, {"finishedAt", Rfc3339Now()}}}}}}};
      auto r = client_->Request("PUT", std::string(kPods) + PodOf(trial) + "/status", pod.dump());
      ASSERT_TRUE(r.has_value());
      if (r->status == 200) return;
      ASSERT_EQ(r->status, 409) << r->body;
    }
    FAIL() << "could not end " << trial;
  }
  // A count of the Sweep's status; 0 before it has one.
  static int Count(const json& sweep, const char* key) {
    const json status = sweep.value("status", json::object());
    return status.is_object() ? status.value(key, 0) : 0;
  }
  static json TrialEntry(const json& sweep, const std::string& trial) {
    for (const json& t : sweep.value("status", json::object()).value("trialList", json::array())) {
      if (t.value("name", "") == trial) return t;
    }
    return json();
  }

};

TEST_F(SweepControllerTest, ASweepRunsNoMoreThanParallelTrialCountTrialsAtOnce) {
  // parallelTrialCount 2 of maxTrialCount 4: two trials' Jobs, and the third
  // only once one of the first two ended.
  Create(Sweep("s", 2, 4));
  const json sw = WaitFor(std::string(kSweeps) + "s", [](const json& s) { return Count(s, "trials") == 2; });
  EXPECT_EQ(sw["status"]["trialsRunning"], 2);
  const json job = Get(std::string(kJobs) + "s-1");
  EXPECT_EQ(job["metadata"]["labels"]["tessera.dev/sweep"], "s");
  EXPECT_EQ(job["metadata"]["labels"]["tessera.dev/trial"], "s-1");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["kind"], "Sweep");
  EXPECT_TRUE(job["metadata"]["annotations"].contains("tessera.dev/trial-assignment"));
  const std::string command = job["spec"]["template"]["spec"]["containers"][0]["command"][2];
  EXPECT_EQ(command.rfind("echo lr=0.", 0), 0u) << command;
  WaitForPod("s-1");
  WaitForPod("s-2");
  EXPECT_FALSE(Exists(std::string(kJobs) + "s-3"));
  Report("s-1", {0.5});
  EndPod("s-1", 0);
  WaitFor(std::string(kJobs) + "s-3", [](const json& j) { return j.contains("metadata"); });
  EXPECT_FALSE(Exists(std::string(kJobs) + "s-4"));
}

TEST_F(SweepControllerTest, ASweepSucceedsAfterMaxTrialCountTrialsAndReportsTheBest) {
  // Three trials one at a time with losses 0.5, 0.2, 0.7: the sweep ends
  // Succeeded (MaxTrialsReached) with trial s-2 the best, and creates no fourth.
  Create(Sweep("s", 1, 3));
  const std::vector<double> losses{0.5, 0.2, 0.7};
  for (int i = 1; i <= 3; ++i) {
    const std::string trial = "s-" + std::to_string(i);
    Report(trial, {losses[i - 1] + 0.3, losses[i - 1]});
    EndPod(trial, 0);
  }
  const json sw = WaitFor(std::string(kSweeps) + "s",
                          [](const json& s) { return ConditionField(s, "Succeeded", "status") == "True"; });
  EXPECT_EQ(ConditionField(sw, "Succeeded", "reason"), "MaxTrialsReached");
  EXPECT_EQ(sw["status"]["trials"], 3);
  EXPECT_EQ(sw["status"]["trialsSucceeded"], 3);
  EXPECT_EQ(sw["status"]["currentOptimalTrial"]["bestTrialName"], "s-2");
  EXPECT_DOUBLE_EQ(sw["status"]["currentOptimalTrial"]["objectiveValue"].get<double>(), 0.2);
  EXPECT_EQ(sw["status"]["currentOptimalTrial"]["parameterAssignments"][0]["name"], "lr");
  EXPECT_DOUBLE_EQ(TrialEntry(sw, "s-3")["objectiveValue"].get<double>(), 0.7);
  EXPECT_FALSE(Exists(std::string(kJobs) + "s-4"));
}

TEST_F(SweepControllerTest, AshaStopsTheWorseOfTwoTrialsAtItsFirstRung) {
  // ASHA with eta 2 from step 1: of two trials at step 1, the worse is
  // stopped (its Job deleted, its state EarlyStopped) and the better runs on.
  json sweep = Sweep("s", 2, 2);
  sweep["spec"]["earlyStopping"] = {{"algorithmName", "asha"},
                                    {"algorithmSettings",
                                     {{{"name", "eta"}, {"value", "2"}}, {{"name", "min_resource"}, {"value", "1"}}}}};
  Create(sweep);
  WaitForPod("s-1");
  WaitForPod("s-2");
  Report("s-1", {0.9});
  Report("s-2", {0.1});
  const json sw =
      WaitFor(std::string(kSweeps) + "s", [](const json& s) { return Count(s, "trialsEarlyStopped") == 1; });
  EXPECT_EQ(TrialEntry(sw, "s-1")["state"], "EarlyStopped");
  EXPECT_EQ(TrialEntry(sw, "s-2")["state"], "Running");
  WaitForGone(std::string(kJobs) + "s-1");
  EXPECT_TRUE(Exists(std::string(kJobs) + "s-2"));
}

TEST_F(SweepControllerTest, ASweepFailsBeyondMaxFailedTrialCountAndStopsWhatRuns) {
  // maxFailedTrialCount 0: the first trial that fails fails the sweep
  // (MaxFailedTrialsReached); the other running trial is stopped.
  json sweep = Sweep("s", 2, 5);
  sweep["spec"]["maxFailedTrialCount"] = 0;
  Create(sweep);
  WaitForPod("s-1");
  WaitForPod("s-2");
  EndPod("s-1", 1);
  const json sw = WaitFor(std::string(kSweeps) + "s",
                          [](const json& s) { return ConditionField(s, "Failed", "status") == "True"; });
  EXPECT_EQ(ConditionField(sw, "Failed", "reason"), "MaxFailedTrialsReached");
  EXPECT_EQ(TrialEntry(sw, "s-1")["state"], "Failed");
  EXPECT_EQ(TrialEntry(sw, "s-2")["state"], "Stopped");
  EXPECT_EQ(Count(sw, "trialsRunning"), 0);
  EXPECT_EQ(Count(sw, "trialsStopped"), 1);
  WaitForGone(std::string(kJobs) + "s-2");
  EXPECT_FALSE(Exists(std::string(kJobs) + "s-3"));
}

TEST_F(SweepControllerTest, ABadSpecIsRefusedWithItsFieldPathAndNothingIsStored) {
  // min above max: ParseSweepSpec's error, at its path, through the API.
  json sweep = Sweep("bad", 1, 2);
  sweep["spec"]["parameters"][0]["feasibleSpace"]["min"] = "0.5";
  auto r = client_->Request("POST", std::string("/apis/tessera.dev/v1/namespaces/team/sweeps"), sweep.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec.parameters[0].feasibleSpace"), std::string::npos) << r->body;
  EXPECT_FALSE(Exists(std::string(kSweeps) + "bad"));
}

TEST_F(SweepControllerTest, ATrialTemplateWithoutAJobFormIsRefused) {
  // trialTemplate with none of trialSpec, jobSpec and template.
  json sweep = Sweep("bad", 1, 2);
  sweep["spec"]["trialTemplate"] = {{"primaryContainerName", "main"}};
  auto r = client_->Request("POST", std::string("/apis/tessera.dev/v1/namespaces/team/sweeps"), sweep.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec.trialTemplate"), std::string::npos) << r->body;
  EXPECT_FALSE(Exists(std::string(kSweeps) + "bad"));
}

TEST_F(SweepControllerTest, DeletingASweepDeletesItsTrialsJobs) {
  // A running sweep deleted: its trials' Jobs follow.
  Create(Sweep("s", 2, 4));
  WaitFor(std::string(kJobs) + "s-1", [](const json& j) { return j.contains("metadata"); });
  auto r = client_->Request("DELETE", std::string(kSweeps) + "s");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  WaitForGone(std::string(kJobs) + "s-1");
}

}  // namespace
}  // namespace tessera
