// The agent against a real server over HTTP on 127.0.0.1: submitted jobs run as
// real processes on the agent's node, report their status, and are terminated
// on preemption with SIGTERM, the grace period, then SIGKILL.
#include "agent/agent.h"
#include "agent/log_server.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "agent/pod_launch.h"
#include "cli/commands/logs_command.h"
#include "agent/spawn_report.h"
#include "api/convert.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/object_json.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_agent.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"
#include "tests/testing/read_file.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using testing::ReadFile;

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-agent");
    server_ = testing::StartLocalServer((dir_ / "server").string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
  }
  void TearDown() override {
    // A stopped agent leaves its pods running for the next one to adopt; a test ends them.
    const std::string node = agent_ ? agent_->node_name() : "";
    agent_.reset();
    if (!node.empty()) testing::KillAgentPods(dir_ / node);
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  void StartAgent(const std::string& node = "node-1", const std::string& gpus = "2xA100-80GB") {
    AgentOptions o = testing::TestAgentOptions(*server_, dir_, node, gpus);
    if (!agent_token_.empty()) o.token = agent_token_;
    o.restart_backoff = Duration::Millis(100);
    o.checkpoint_interval = Duration::Millis(50);
    o.log_retention = log_retention_;
    auto a = Agent::Start(o);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
  }
  void Create(const json& obj, const std::string& path) {
    auto r = client_->Request("POST", path, obj.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  // A batch/v1 Job on the default queue running `script` under sh.
  json Job(const std::string& name, const std::string& script, const std::string& gpus = "", int pods = 1,
           const std::string& priority = "", int grace_seconds = 30) {
    json container{{"name", "main"}, {"command", {"sh", "-c", script}}};
    if (!gpus.empty()) container["resources"] = {{"requests", {{"nvidia.com/gpu", gpus}}}, {"limits", {{"nvidia.com/gpu", gpus}}}};
    json spec{{"containers", {container}}, {"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", grace_seconds}};
    if (!priority.empty()) spec["priorityClassName"] = priority;
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec", {{"parallelism", pods}, {"completions", pods}, {"template", {{"spec", spec}}}}}};
  }
  void SubmitJob(const json& job) { Create(job, "/apis/batch/v1/namespaces/default/jobs"); }
  json WaitFor(const std::string& path, const std::function<bool(const json&)>& ready) {
    return WaitForObject(*client_, path, ready);
  }
  static std::string Condition(const json& obj, const std::string& type, const char* field) {
    return ConditionField(obj, type, field);
  }
  static std::string Phase(const json& pod) { return pod.value("status", json::object()).value("phase", ""); }
  json Pod(const std::string& name) { return WaitFor("/api/v1/namespaces/default/pods/" + name, [](const json&) { return true; }); }
  std::string PodLog(const json& pod) {
    const fs::path d = dir_ / pod["spec"].value("nodeName", "") / "pods" /
                       fmt::format("default_{}_{}", pod["metadata"].value("name", ""), pod["metadata"].value("uid", ""));
    return ReadFile(d / "pod.log");
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
  std::string agent_token_;  // the agent's credential; empty: the admin's
  Duration log_retention_ = Duration::Seconds(72 * 3600);
};

// A node's own credential (system:node:NAME), as `tessera up` mints it, so
// that what the agent does passes the server's node authorizer.
std::string MintNodeToken(ApiClient& admin, const std::string& node) {
  const json request{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}};
  auto r = admin.Request("POST", "/api/v1/nodes/" + node + "/token", request.dump());
  if (!r || r->status != 201) {
    ADD_FAILURE() << "minting the token of node " << node << ": " << (r ? r->body : r.error().ToString());
    return "";
  }
  return json::parse(r->body, nullptr, false).value("status", json::object()).value("token", "");
}

std::string Annotation(const json& obj, std::string_view key) {
  const json annotations = obj.value("metadata", json::object()).value("annotations", json::object());
  return annotations.value(std::string(key), "");
}

TEST_F(AgentTest, RegistersItsNodeWithALeaseAndTheSimulatedInventory) {
  StartAgent();
  EXPECT_NE(agent_->inventory_summary().find("simulated"), std::string::npos) << agent_->inventory_summary();
  const json node = WaitFor("/api/v1/nodes/node-1", [](const json&) { return true; });
  EXPECT_EQ(node["status"]["capacity"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(Condition(node, "Ready", "status"), "True");
  const json lease = WaitFor("/apis/coordination.k8s.io/v1/namespaces/tessera-node-lease/leases/node-1",
                             [](const json&) { return true; });
  EXPECT_EQ(lease["spec"]["holderIdentity"], "node-1");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 4);
}

TEST_F(AgentTest, ReRegisteringKeepsTheNodesPodCidr) {
  // The loop gives node-1 a pod range; a new agent for node-1 registers
  // again (POST: 409, then PUT of its Node, which may not change the range):
  // the PUT carries the stored range over, so it is applied and the range stays.
  StartAgent();
  const json node = WaitFor("/api/v1/nodes/node-1", [](const json& n) {
    return !n.value("spec", json::object()).value("podCIDR", "").empty();
  });
  const std::string cidr = node["spec"]["podCIDR"];
  EXPECT_EQ(cidr.rfind("10.244.", 0), 0u) << cidr;  // cut from the default --cluster-cidr 10.244.0.0/16
  agent_.reset();
  StartAgent();  // Start fails unless the registration's PUT was applied
  const json again = WaitFor("/api/v1/nodes/node-1", [](const json&) { return true; });
  EXPECT_EQ(again["spec"].value("podCIDR", ""), cidr) << again.dump();
  EXPECT_EQ(again["spec"]["podCIDRs"], json::array({cidr})) << again.dump();
}

TEST_F(AgentTest, AJobRunsSucceedsAndItsOutputIsKept) {
  StartAgent();
  SubmitJob(Job("hello", "echo hello from $TESSERA_POD_NAME; echo to-stderr >&2"));
  const json pod = WaitFor("/api/v1/namespaces/default/pods/job-hello-main-0", [](const json& p) { return Phase(p) == "Succeeded"; });
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  const std::string log = PodLog(pod);
  EXPECT_NE(log.find("hello from job-hello-main-0"), std::string::npos) << log;
  EXPECT_NE(log.find("to-stderr"), std::string::npos) << log;
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-hello",
                          [](const json& w) { return Condition(w, "Finished", "status") == "True"; });
  EXPECT_EQ(Condition(wl, "Finished", "reason"), "Succeeded");
  const json job = WaitFor("/apis/batch/v1/namespaces/default/jobs/hello",
                           [](const json& j) { return Condition(j, "Complete", "status") == "True"; });
  EXPECT_EQ(job["status"]["succeeded"], 1);
}

TEST_F(AgentTest, TheServerProxiesLogsFromTheAgentAndFollowEndsWithThePod) {
  StartAgent();
  SubmitJob(Job("talk", "for i in 1 2 3 4; do echo line-$i; sleep 0.2; done"));
  WaitFor("/api/v1/namespaces/default/pods/job-talk-main-0", [](const json& p) { return Phase(p) == "Running"; });
  // Follow from the start: every line, in order, and the stream ends when the pod does.
  std::vector<std::string> lines;
  ApiClient follower(server_->url(), server_->admin_token());
  Status s = follower.Stream("/api/v1/namespaces/default/pods/job-talk-main-0/log?follow=true", [&](const std::string& line) {
    lines.push_back(line);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(lines, (std::vector<std::string>{"line-1", "line-2", "line-3", "line-4"}));
  auto tail = client_->Request("GET", "/api/v1/namespaces/default/pods/job-talk-main-0/log?tailLines=1");
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(tail->status, 200);
  EXPECT_EQ(tail->body, "line-4\n");
  auto missing = client_->Request("GET", "/api/v1/namespaces/default/pods/nope/log");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["message"], "pods \"nope\" not found");
}

TEST_F(AgentTest, AFailingCommandEndsFailedWithItsExitCode) {
  StartAgent();
  json job = Job("fails", "exit 3");
  job["spec"]["backoffLimit"] = 0;  // the first failure fails the Job (the default, 6, retries it)
  SubmitJob(job);
  const json pod = WaitFor("/api/v1/namespaces/default/pods/job-fails-main-0", [](const json& p) { return Phase(p) == "Failed"; });
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-fails",
                          [](const json& w) { return Condition(w, "Finished", "status") == "True"; });
  EXPECT_EQ(Condition(wl, "Finished", "reason"), "Failed");
  EXPECT_NE(Condition(wl, "Finished", "message").find("code 3"), std::string::npos) << Condition(wl, "Finished", "message");
}

// Images from a registry nobody listens on (127.0.0.1, port 1): the tests
// reach no other address. containers_test.cc runs images from a real registry.
constexpr const char* kUnreachableImage = "127.0.0.1:1/team/trainer:v1";

TEST_F(AgentTest, APodWhoseImageCannotBePulledWaitsSayingWhy) {
  StartAgent();
  json job = Job("image-only", "unused");
  job["spec"]["template"]["spec"]["containers"][0].erase("command");
  job["spec"]["template"]["spec"]["containers"][0]["image"] = kUnreachableImage;
  SubmitJob(job);
  const auto waiting = [](const json& p) {
    const json& s = p["status"].value("containerStatuses", json::array());
    return s.empty() ? std::string() : s[0]["state"].value("waiting", json::object()).value("reason", "");
  };
  const json pod = WaitFor("/api/v1/namespaces/default/pods/job-image-only-main-0",
                           [&](const json& p) { return waiting(p) == "ErrImagePull"; });
  EXPECT_EQ(Phase(pod), "Pending");
  const std::string message = pod["status"]["containerStatuses"][0]["state"]["waiting"].value("message", "");
  EXPECT_NE(message.find("connection refused"), std::string::npos) << message;
}

TEST_F(AgentTest, APodWithAnImageAndACommandNeverRunsTheCommandOnTheHost) {
  // The command belongs to the image: run on the host it would find the host's
  // files, not the image's, and report a success that is not one.
  StartAgent();
  const fs::path marker = dir_ / "ran-on-the-host";
  json job = Job("image-and-command", "touch " + marker.string());
  job["spec"]["template"]["spec"]["containers"][0]["image"] = kUnreachableImage;
  SubmitJob(job);
  const json pod = WaitFor("/api/v1/namespaces/default/pods/job-image-and-command-main-0", [](const json& p) {
    const json& s = p["status"].value("containerStatuses", json::array());
    return !s.empty() && s[0]["state"].value("waiting", json::object()).value("reason", "") == "ErrImagePull";
  });
  EXPECT_NE(Phase(pod), "Succeeded");
  EXPECT_FALSE(fs::exists(marker)) << "the image's command ran on the host";
}

TEST_F(AgentTest, FourQuarterGpuPodsShareOneDeviceAndSeeIt) {
  StartAgent("node-1", "1xA100-80GB");
  SubmitJob(Job("quarters", "echo \"$CUDA_VISIBLE_DEVICES $TESSERA_GPU_FRACTION $NVIDIA_VISIBLE_DEVICES\"; sleep 1", "250m", 4));
  std::set<std::string> seen;
  for (int i = 0; i < 4; ++i) {
    const json pod = WaitFor("/api/v1/namespaces/default/pods/job-quarters-main-" + std::to_string(i),
                             [](const json& p) { return Phase(p) == "Succeeded"; });
    std::string line = PodLog(pod);
    seen.insert(line.substr(0, line.find('\n')));
  }
  ASSERT_EQ(seen.size(), 1u) << "every pod sees the same device";
  EXPECT_EQ(seen.begin()->substr(0, 7), "0 0.25 ") << *seen.begin();
}

// Whenever the server sees a pod Running, the agent's state file lists it: the
// fence (fence.h) kills only the pods listed there, so a pod reported before
// the write would outlive an agent killed in between, and run twice once
// placed elsewhere. Eight pods start in one pass and are reported one by one.
TEST_F(AgentTest, APodIsInTheStateFileBeforeTheServerSeesItRunning) {
  StartAgent("node-1", "8xA100-80GB");
  SubmitJob(Job("eight", "sleep 30", "1", 8));
  std::set<std::string> checked;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (checked.size() < 8 && std::chrono::steady_clock::now() < deadline) {
    auto r = client_->Request("GET", "/api/v1/namespaces/default/pods");
    ASSERT_TRUE(r.has_value());
    const json list = json::parse(r->body);
    std::vector<std::string> running;
    for (const json& pod : list.value("items", json::array())) {
      const std::string uid = pod["metadata"].value("uid", "");
      if (Phase(pod) == "Running" && !checked.count(uid)) running.push_back(uid);
    }
    if (running.empty()) continue;
    const json state = json::parse(ReadFile(dir_ / "node-1" / "agent-state.json"), nullptr, false);
    for (const std::string& uid : running) {
      EXPECT_TRUE(state.is_object() && state["pods"].contains(uid)) << "pod " << uid << " runs but is not in the state file";
      checked.insert(uid);
    }
  }
  EXPECT_EQ(checked.size(), 8u);
}

// A pod whose reaper the last agent launched and recorded, but never let run
// its command (the agent died in between: the reaper wrote "not-started" to its
// exit status file and left), is started by the next agent like a pod not yet
// started: Running again, no restart counted, not reported failed.
TEST_F(AgentTest, APodTheLastAgentNeverLetRunIsStartedByTheNext) {
  StartAgent();
  SubmitJob(Job("late", "echo started >> starts; sleep 30"));  // in the pod's working directory, kept across starts
  const json running = WaitFor("/api/v1/namespaces/default/pods/job-late-main-0", [](const json& p) { return Phase(p) == "Running"; });
  const std::string uid = running["metadata"].value("uid", "");
  const fs::path pod_dir = dir_ / "node-1" / "pods" / fmt::format("default_job-late-main-0_{}", uid);
  const fs::path starts = pod_dir / "work" / "starts";
  auto wait_for_starts = [&](const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ReadFile(starts) != text && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ReadFile(starts);
  };
  ASSERT_EQ(wait_for_starts("started\n"), "started\n");  // Running means exec'd, not yet echoed
  agent_.reset();  // its pods keep running
  const json state = json::parse(ReadFile(dir_ / "node-1" / "agent-state.json"), nullptr, false);
  ASSERT_TRUE(state.is_object() && state["pods"].contains(uid));
  const int pid = state["pods"][uid].value("pid", 0);
  ASSERT_GT(pid, 0);
  // What a reaper whose agent died before letting it go leaves behind.
  ASSERT_EQ(::kill(-pid, SIGKILL), 0);
  ASSERT_TRUE(fs::exists(pod_dir / "exit-status"));
  ::waitpid(pid, nullptr, 0);  // the agent ran in this process: the reaper was its child
  std::ofstream(pod_dir / "exit-status", std::ios::trunc)
      << pid << ' ' << state["pods"][uid].value("startTicks", uint64_t{0}) << ' ' << kNotStartedStatus << '\n';

  StartAgent();
  const json again = WaitFor("/api/v1/namespaces/default/pods/job-late-main-0", [&](const json& p) {
    const json statuses = p.value("status", json::object()).value("containerStatuses", json::array());
    return Phase(p) == "Running" && !statuses.empty() &&
           statuses[0].value("containerID", "") != fmt::format("process://{}", pid);
  });
  EXPECT_EQ(again["status"]["containerStatuses"][0].value("restartCount", -1), 0);
  EXPECT_EQ(wait_for_starts("started\nstarted\n"), "started\nstarted\n");  // once for each start
}

TEST_F(AgentTest, APreemptedPodGetsSigtermThenSigkillAndResumesFromItsCheckpoint) {
  StartAgent("node-1", "1xA100-80GB");
  // The training pod counts in its checkpoint directory, and ignores SIGTERM (noting it), so it is SIGKILLed after 1 s.
  // It replaces its checkpoint by a rename, as a training job should: a kill between a truncating write's open
  // and its write would leave an empty file.
  const std::string script =
      "trap 'echo got-term >> $TESSERA_CHECKPOINT_DIR/signals' TERM; "
      "n=$(cat $TESSERA_CHECKPOINT_DIR/step 2>/dev/null || echo 0); echo resumed-at-$n; "
      "while true; do n=$((n+1)); echo $n > $TESSERA_CHECKPOINT_DIR/step.new; "
      "mv $TESSERA_CHECKPOINT_DIR/step.new $TESSERA_CHECKPOINT_DIR/step; sleep 0.05; done";
  SubmitJob(Job("train", script, "1", 1, "training", /*grace_seconds=*/1));
  WaitFor("/api/v1/namespaces/default/pods/job-train-main-0", [](const json& p) { return Phase(p) == "Running"; });
  const fs::path checkpoint = dir_ / "checkpoints" / "default" / "job-train";
  WaitFor("/api/v1/namespaces/default/pods/job-train-main-0",
          [&](const json&) { return std::atoi(ReadFile(checkpoint / "step").c_str()) >= 5; });

  SubmitJob(Job("serve", "sleep 2", "1", 1, "production"));
  const json serving = WaitFor("/api/v1/namespaces/default/pods/job-serve-main-0", [](const json& p) { return Phase(p) == "Running"; });
  // The victim was told (SIGTERM), outlived its 1 s grace, and was killed before the preemptor ran.
  EXPECT_NE(ReadFile(checkpoint / "signals").find("got-term"), std::string::npos);
  const int step_at_kill = std::atoi(ReadFile(checkpoint / "step").c_str());
  EXPECT_GE(step_at_kill, 5);
  // Once production is done, training comes back and resumes from its checkpoint.
  const json resumed = WaitFor("/api/v1/namespaces/default/pods/job-train-main-0", [](const json& p) { return Phase(p) == "Running"; });
  WaitFor("/api/v1/namespaces/default/pods/job-train-main-0", [&](const json& p) {
    return PodLog(p).find("resumed-at-") != std::string::npos;
  });
  const std::string log = PodLog(resumed);
  const int resumed_at = std::atoi(log.substr(log.find("resumed-at-") + 11).c_str());
  EXPECT_GE(resumed_at, step_at_kill - 1) << log;
  EXPECT_NE(resumed["metadata"]["uid"], json()) << "a new pod";
  (void)serving;
}

// A pod reports a checkpoint by touching $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint.
// The agent, with its node's own credential, sets the file's time on the Pod
// as tessera.dev/last-checkpoint; a later touch moves the annotation to the
// file's new time.
TEST_F(AgentTest, APodsCheckpointFileTimeBecomesItsLastCheckpointAnnotation) {
  agent_token_ = MintNodeToken(*client_, "node-1");
  ASSERT_FALSE(agent_token_.empty());
  StartAgent();
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-ckpt-main-0";
  const fs::path checkpoint = dir_ / "checkpoints" / "default" / "job-ckpt";
  // First a checkpoint dated 1700000000 (2023-11-14T22:13:20Z); then, once
  // told (the file "go"), one now.
  SubmitJob(Job("ckpt",
                "touch -d @1700000000 $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint; "
                "while [ ! -e $TESSERA_CHECKPOINT_DIR/go ]; do sleep 0.05; done; "
                "touch $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint; sleep 30"));
  WaitFor(pod_path, [&](const json& p) { return Annotation(p, kLastCheckpointAnnotation) == "2023-11-14T22:13:20Z"; });
  EXPECT_EQ(Annotation(Pod("job-ckpt-main-0"), kLastCheckpointAnnotation), "2023-11-14T22:13:20Z");

  std::ofstream(checkpoint / "go") << "go\n";
  const json pod = WaitFor(pod_path, [&](const json& p) {
    const std::string at = Annotation(p, kLastCheckpointAnnotation);
    return !at.empty() && at != "2023-11-14T22:13:20Z";
  });
  struct stat st {};
  ASSERT_EQ(::stat((checkpoint / ".tessera-checkpoint").c_str(), &st), 0);
  // Whole seconds of the file's mtime, as Kubernetes writes times.
  EXPECT_EQ(Annotation(pod, kLastCheckpointAnnotation), FormatRfc3339(Timestamp::FromSeconds(st.st_mtim.tv_sec)));
  EXPECT_EQ(Phase(pod), "Running");
}

// A checkpoint file dated in the future (a skewed clock on shared storage) is
// reported at the agent's now, never later.
TEST_F(AgentTest, ACheckpointFileFromTheFutureIsReportedAtTheAgentsNow) {
  StartAgent();
  const Timestamp before = Timestamp::FromSeconds(SystemNow().seconds());
  // 4102444800: 2100-01-01T00:00:00Z.
  SubmitJob(Job("future", "touch -d @4102444800 $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint; sleep 30"));
  const json pod = WaitFor("/api/v1/namespaces/default/pods/job-future-main-0",
                           [](const json& p) { return !Annotation(p, kLastCheckpointAnnotation).empty(); });
  const Timestamp after = SystemNow();
  auto at = ParseRfc3339(Annotation(pod, kLastCheckpointAnnotation));
  ASSERT_TRUE(at.has_value()) << Annotation(pod, kLastCheckpointAnnotation);
  EXPECT_GE(*at, before);
  EXPECT_LE(*at, after);
}

TEST_F(AgentTest, ATrainingJobWhoseRankTwoFailsRestartsAsAGangAndResumesFromItsCheckpoint) {
  // Four real workers share the workload's checkpoint directory. The first
  // attempt writes a checkpoint, then rank 2 fails once: the whole gang is
  // stopped and queued again, and the second attempt finds the checkpoint.
  StartAgent("node-1", "4xA100-80GB");
  const std::string script =
      "ck=$TESSERA_CHECKPOINT_DIR; echo rank=$RANK world=$WORLD_SIZE nnodes=$PET_NNODES node_rank=$PET_NODE_RANK; "
      "if [ -e $ck/step ]; then echo resumed from $(cat $ck/step); else echo attempt-1 > $ck/step; fi; "
      "touch $ck/.tessera-checkpoint; "
      "if [ \"$RANK\" = 2 ] && [ ! -e $ck/failed-once ]; then touch $ck/failed-once; exit 1; fi; sleep 2";
  json container{{"name", "worker"}, {"command", {"sh", "-c", script}},
                 {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}, {"limits", {{"nvidia.com/gpu", 1}}}}}};
  const json pod_spec{{"containers", {container}}, {"terminationGracePeriodSeconds", 1}};
  const json spec{{"replicas", 4}, {"template", {{"spec", pod_spec}}}};
  Create({{"apiVersion", "tessera.dev/v1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", "ddp"}, {"namespace", "default"}}},
          {"spec", spec}},
         "/apis/tessera.dev/v1/namespaces/default/trainingjobs");
  const json done = WaitFor("/apis/tessera.dev/v1/namespaces/default/trainingjobs/ddp", [](const json& t) {
    const std::string phase = t.value("status", json::object()).value("phase", "");
    return phase == "Succeeded" || phase == "Failed";
  });
  ASSERT_EQ(done["status"]["phase"], "Succeeded") << done["status"].dump();
  EXPECT_EQ(done["status"]["restarts"], 1);
  EXPECT_EQ(done["status"]["worldSize"], 4);
  EXPECT_FALSE(done["status"].value("lastCheckpoint", "").empty()) << "the agent reported the checkpoint file";
  const std::string log = PodLog(Pod("trainingjob-ddp-worker-2"));
  EXPECT_NE(log.find("rank=2 world=4 nnodes=4 node_rank=2"), std::string::npos) << log;
  EXPECT_NE(log.find("resumed from attempt-1"), std::string::npos) << log;
}


// GETs `path` until `ready` holds for the answer (the server writes a pod's
// history asynchronously); on timeout, records a failure with the last answer.
ApiResponse WaitForAnswer(ApiClient& client, const std::string& path, const std::function<bool(const ApiResponse&)>& ready) {
  ApiResponse last;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = client.Request("GET", path);
    if (r) {
      last = *r;
      if (ready(last)) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "timed out waiting on " << path << "; last: HTTP " << last.status << ": " << last.body;
  return last;
}

std::string Message(const ApiResponse& r) {
  const json body = json::parse(r.body, nullptr, false);
  return body.is_object() ? body.value("message", "") : "";
}

// `tessera logs ARGS` in-process against the test's server.
struct LogsRun {
  int rc;
  std::string out, err;
};
LogsRun RunLogsCommand(const Server& server, LogsOptions o) {
  std::ostringstream out, err;
  CommandContext ctx;
  ctx.config.server = server.url();
  ctx.config.token = server.admin_token();
  ctx.out = &out;
  ctx.err = &err;
  const int rc = RunLogs(ctx, o);
  return {rc, out.str(), err.str()};
}

// A preempted pod is deleted, and its Workload, admitted again, gets a new pod
// of the same name: its first instance's logs stay readable with previous=true
// (and while it is gone, as the pod's logs), until the Job is deleted.
TEST_F(AgentTest, APreemptedPodsLogsStayReadableAsThePreviousInstanceUntilTheJobIsDeleted) {
  StartAgent("node-1", "1xA100-80GB");
  const std::string script =
      "n=$(cat $TESSERA_CHECKPOINT_DIR/runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > $TESSERA_CHECKPOINT_DIR/runs; "
      "echo run-$n; exec sleep 600";
  SubmitJob(Job("train", script, "1", 1, "training", /*grace_seconds=*/1));
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-train-main-0";
  const std::string log_path = pod_path + "/log";
  const json first = WaitFor(pod_path, [&](const json& p) { return Phase(p) == "Running" && PodLog(p) == "run-1\n"; });
  auto none = client_->Request("GET", log_path + "?previous=true");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->status, 400);
  EXPECT_EQ(Message(*none), "previous terminated container \"main\" in pod \"job-train-main-0\" not found");

  // Preempted: while its pod is gone, its logs are the first instance's.
  const fs::path go = dir_ / "go";
  SubmitJob(Job("serve", fmt::format("while [ ! -f {} ]; do sleep 0.05; done", go.string()), "1", 1, "production"));
  WaitFor("/api/v1/namespaces/default/pods/job-serve-main-0", [](const json& p) { return Phase(p) == "Running"; });
  const ApiResponse gone = WaitForAnswer(*client_, log_path, [](const ApiResponse& r) { return r.status == 200; });
  EXPECT_EQ(gone.body, "run-1\n");
  auto pod = client_->Request("GET", pod_path);
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->status, 404) << "the pod is gone while serve runs";
  const LogsRun job_logs = RunLogsCommand(*server_, LogsOptions{.name = "job/train"});
  EXPECT_EQ(job_logs.rc, 0) << job_logs.err;
  EXPECT_EQ(job_logs.out, "run-1\n");

  // Admitted again: a new instance under the same name.
  { std::ofstream(go) << "go\n"; }
  const json second = WaitFor(pod_path, [&](const json& p) {
    return Phase(p) == "Running" && p["metadata"]["uid"] != first["metadata"]["uid"] && PodLog(p) == "run-2\n";
  });
  const ApiResponse current = WaitForAnswer(*client_, log_path, [](const ApiResponse& r) { return r.status == 200; });
  EXPECT_EQ(current.body, "run-2\n");
  auto previous = client_->Request("GET", log_path + "?previous=true");
  ASSERT_TRUE(previous.has_value());
  EXPECT_EQ(previous->status, 200) << previous->body;
  EXPECT_EQ(previous->body, "run-1\n");
  // An ended instance is not followed: what is there comes back at once.
  auto followed = client_->Request("GET", log_path + "?previous=true&follow=true");
  ASSERT_TRUE(followed.has_value());
  EXPECT_EQ(followed->body, "run-1\n");
  const LogsRun cli_previous = RunLogsCommand(*server_, LogsOptions{.name = "job-train-main-0", .previous = true});
  EXPECT_EQ(cli_previous.rc, 0) << cli_previous.err;
  EXPECT_EQ(cli_previous.out, "run-1\n");
  const LogsRun cli_current = RunLogsCommand(*server_, LogsOptions{.name = "train"});
  EXPECT_EQ(cli_current.rc, 0) << cli_current.err;
  EXPECT_EQ(cli_current.out, "run-2\n");

  // The Job cleaned up: its Workload, and with it the pod's history, are gone.
  auto deleted = client_->Request("DELETE", "/apis/batch/v1/namespaces/default/jobs/train");
  ASSERT_TRUE(deleted.has_value());
  ASSERT_EQ(deleted->status / 100, 2) << deleted->body;
  WaitForAnswer(*client_, "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-train",
                [](const ApiResponse& r) { return r.status == 404; });
  const ApiResponse after = WaitForAnswer(*client_, log_path, [](const ApiResponse& r) { return r.status == 404; });
  EXPECT_EQ(Message(after), "pods \"job-train-main-0\" not found");
  auto after_previous = client_->Request("GET", log_path + "?previous=true");
  ASSERT_TRUE(after_previous.has_value());
  EXPECT_EQ(after_previous->status, 404);
  EXPECT_EQ(Message(*after_previous), "pods \"job-train-main-0\" not found");
  const LogsRun cli_after = RunLogsCommand(*server_, LogsOptions{.name = "job-train-main-0", .previous = true});
  EXPECT_NE(cli_after.rc, 0);
  EXPECT_NE(cli_after.err.find("no pod, workload or job named \"job-train-main-0\""), std::string::npos) << cli_after.err;
  (void)second;
}

// A finished job's pod that is deleted keeps its logs readable through the API
// (its Workload remembers where they are); it has no earlier instance.
TEST_F(AgentTest, ADeletedPodsLogsStayReadable) {
  StartAgent();
  SubmitJob(Job("hello", "echo hello; echo world"));
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-hello-main-0";
  const json pod = WaitFor(pod_path, [](const json& p) { return Phase(p) == "Succeeded"; });
  WaitFor("/apis/batch/v1/namespaces/default/jobs/hello", [](const json& j) { return Condition(j, "Complete", "status") == "True"; });
  auto deleted = client_->Request("DELETE", pod_path);
  ASSERT_TRUE(deleted.has_value());
  ASSERT_EQ(deleted->status / 100, 2) << deleted->body;
  const json workload = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-hello", [&](const json& w) {
    for (const json& r : ArrayAt(w, {"status", "podHistory"})) {
      if (r.value("uid", "") == pod["metadata"].value("uid", "")) return true;
    }
    return false;
  });
  const json record = ArrayAt(workload, {"status", "podHistory"}).back();
  EXPECT_EQ(record["name"], "job-hello-main-0");
  EXPECT_EQ(record["nodeName"], "node-1");
  EXPECT_EQ(record["phase"], "Succeeded");
  EXPECT_FALSE(record.value("deletedAt", "").empty()) << record.dump();
  auto r = client_->Request("GET", pod_path);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 404) << "a finished Job's pod is not replaced";
  auto logs = client_->Request("GET", pod_path + "/log?tailLines=1");
  ASSERT_TRUE(logs.has_value());
  EXPECT_EQ(logs->status, 200) << logs->body;
  EXPECT_EQ(logs->body, "world\n");
  auto previous = client_->Request("GET", pod_path + "/log?previous=true");
  ASSERT_TRUE(previous.has_value());
  EXPECT_EQ(previous->status, 400);
  EXPECT_EQ(Message(*previous), "previous terminated container \"main\" in pod \"job-hello-main-0\" not found");
  const LogsRun cli = RunLogsCommand(*server_, LogsOptions{.name = "job-hello-main-0"});
  EXPECT_EQ(cli.rc, 0) << cli.err;
  EXPECT_EQ(cli.out, "hello\nworld\n");
}

// The agent removes the directory of a pod gone from its node once nothing
// changed in it for --log-retention, and keeps a running pod's however old.
TEST_F(AgentTest, TheAgentRemovesAGonePodsDirectoryAfterTheRetentionAndKeepsARunningOnes) {
  log_retention_ = Duration::Millis(300);
  StartAgent();
  SubmitJob(Job("sleeper", "exec sleep 600"));
  const json sleeper = WaitFor("/api/v1/namespaces/default/pods/job-sleeper-main-0", [](const json& p) { return Phase(p) == "Running"; });
  SubmitJob(Job("brief", "echo brief"));
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-brief-main-0";
  const json brief = WaitFor(pod_path, [](const json& p) { return Phase(p) == "Succeeded"; });
  WaitFor("/apis/batch/v1/namespaces/default/jobs/brief", [](const json& j) { return Condition(j, "Complete", "status") == "True"; });
  auto pod_dir = [&](const json& p) {
    return dir_ / "node-1" / "pods" / fmt::format("default_{}_{}", p["metadata"].value("name", ""), p["metadata"].value("uid", ""));
  };
  ASSERT_TRUE(fs::exists(pod_dir(brief) / "pod.log"));
  auto deleted = client_->Request("DELETE", pod_path);
  ASSERT_TRUE(deleted.has_value());
  ASSERT_EQ(deleted->status / 100, 2) << deleted->body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fs::exists(pod_dir(brief)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(fs::exists(pod_dir(brief))) << "not removed after the retention";
  // Its record remains (the Job does): the server says the node no longer has the logs.
  const ApiResponse gone = WaitForAnswer(*client_, pod_path + "/log", [](const ApiResponse& r) {
    return r.status == 404 && Message(r).find("no longer kept on node node-1") != std::string::npos;
  });
  EXPECT_NE(Message(gone).find(brief["metadata"].value("uid", "")), std::string::npos) << gone.body;
  // The running pod's directory, older than the retention by now, stays, and so do its logs.
  EXPECT_TRUE(fs::exists(pod_dir(sleeper) / "pod.log"));
  auto running = client_->Request("GET", "/api/v1/namespaces/default/pods/job-sleeper-main-0/log");
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->status, 200) << running->body;
}

TEST(PodDirectoryTest, TheUidIsTheLastPartOfTheName) {
  EXPECT_EQ(PodDirectoryUid("default_job-a-main-0_6f1c2b3a-1234"), "6f1c2b3a-1234");
  EXPECT_EQ(PodDirectoryUid(fs::path(PodDirectory("/d", "ns", "p", "u-1")).filename().string()), "u-1");
  EXPECT_EQ(PodDirectoryUid("stray"), "");
  EXPECT_EQ(PodDirectoryUid("a_b"), "");
  EXPECT_EQ(PodDirectoryUid("a_b_"), "");
}

}  // namespace
}  // namespace tessera
