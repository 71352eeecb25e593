// Failures around running pods, with the real `tessera server` and `tessera agent`
// processes (DESIGN.md section 6):
// - the server is killed with -9 and started again on the same data directory and
//   address while a pod runs: nothing is lost, the pod keeps running untouched,
//   and the agent reconciles (new work runs on it; the node stays Ready);
// - the agent is stopped and started again within its lease: the new agent adopts
//   the running pod (same process, no second copy) and reports its end;
// - the seed's Volcano job, which names only a container image, waits for it
//   (from a registry this test cannot reach) saying why, and runs as a gang of 4
//   once its containers are process pods (a command, no image).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "api/kinds.h"
#include "api/manifest.h"
#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/seed_dir.h"
#include "tests/testing/api_polling.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class AgentFailuresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = testing::FreshTestDir("tessera-agentfail");
    // A fixed address, so that a restarted server is where the agents look for it.
    listen_ = "127.0.0.1:" + std::to_string(FreeLocalPort());
    // Unique to this test run: the pods' command lines carry it, so that their
    // processes can be counted (and, at the end, found if anything leaked).
    marker_ = "tessera-it-" + std::to_string(getpid()) + "-" + test;
    StartTheServer();
  }

  void TearDown() override {
    // Fences watch the agents' data directories: read who they are before those go.
    const std::vector<pid_t> fences = AgentFences(dir_, agents_);
    for (const auto& [node, pid] : agents_) {
      KillProcess(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    agents_.clear();
    StopServer(SIGKILL);
    // The pods' process groups (a pod's shell is not its group's leader: its reaper is).
    for (pid_t pid : pods_) {
      if (const pid_t group = getpgid(pid); group > 0) kill(-group, SIGKILL);
    }
    RemoveAndExpectFencesGone(dir_, marker_, fences);
  }

  void StartTheServer() {
    server_ = StartServer((dir_ / "server").string(), listen_);
    ASSERT_FALSE(server_.url.empty()) << testing::ReadFile((dir_ / "server" / "server.out").string());
    token_ = ReadToken((dir_ / "server").string());
    client_ = std::make_unique<ApiClient>(server_.url, token_);
  }
  void StopServer(int sig) {
    if (server_.pid <= 0) return;
    KillProcess(server_.pid, sig);
    waitpid(server_.pid, nullptr, 0);
    server_.pid = -1;
  }

  // An agent on `node` with its data directory under the test's, a shared
  // checkpoint root and a 10 s lease.
  pid_t Agent(const std::string& node, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--checkpoint-root", (dir_ / "checkpoints").string(), "--lease-duration", "10"};
    args.insert(args.end(), extra.begin(), extra.end());
    const pid_t pid = StartAgent(server_.url, token_, node, (dir_ / node).string(), args);
    if (pid > 0) agents_[node] = pid;
    return pid;
  }
  std::string AgentOutput(const std::string& node) { return testing::ReadFile((dir_ / (node + ".out")).string()); }

  // A pod's script, tagged with the marker (`:` does nothing). Commands expand
  // $(VAR) as in Kubernetes, where $$ stands for $: the shell's $$ is written $$$$.
  std::string Script(const std::string& body) const { return ": " + marker_ + "; " + body; }

  // A batch/v1 Job of one pod in namespace default (its default queue).
  void SubmitJob(const std::string& name, const std::string& gpus, const std::string& script) {
    json container{{"name", "main"}, {"command", {"sh", "-c", script}}};
    container["resources"]["requests"] = {{"nvidia.com/gpu", gpus}};
    json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
    job["spec"] = {{"parallelism", 1}, {"completions", 1}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 1},
                                       {"containers", json::array({container})}};
    auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }

  static std::string Path(const json& obj, bool item) { return ObjectPath(obj, item); }
  void Create(const json& obj) {
    auto r = client_->Request("POST", Path(obj, false), obj.dump());
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    ASSERT_EQ(r->status, 201) << obj.dump() << "\n" << r->body;
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  }

  static std::string Phase(const json& pod) {
    return pod.is_object() ? pod.value("status", json::object()).value("phase", "") : "";
  }
  static std::string Uid(const json& obj) {
    return obj.is_object() ? obj.value("metadata", json::object()).value("uid", "") : "";
  }
  static std::string ContainerId(const json& pod) {
    if (!pod.is_object()) return "";
    const json statuses = pod.value("status", json::object()).value("containerStatuses", json::array());
    return statuses.empty() ? "" : statuses[0].value("containerID", "");
  }
  static pid_t PidOf(const std::string& container_id) {
    const std::string prefix = "process://";
    return container_id.starts_with(prefix) ? std::atoi(container_id.c_str() + prefix.size()) : 0;
  }
  // The value of condition `type` of an object (status, reason or message).
  static std::string Condition(const json& obj, const std::string& type, const std::string& field) {
    if (!obj.is_object()) return "";
    for (const json& c : obj.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == type) return c.value(field, "");
    }
    return "";
  }
  std::string NodeReady(const std::string& node) { return Condition(Get("/api/v1/nodes/" + node), "Ready", "status"); }
  static pid_t ReadPid(const fs::path& file) {
    std::ifstream in(file);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }
  // How many copies of the pods' shells run (their forked children are not copies).
  size_t Copies() const { return ProcessesWithMarker(marker_, /*top_level=*/true).size(); }
  static std::string DescribeProcesses(const std::vector<pid_t>& pids) {
    std::string out;
    for (pid_t pid : pids) out += "\n  " + testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
    return out;
  }
  // A child of ours has not exited.
  static bool ChildRuns(pid_t pid) { return pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0; }

  // Submits Job `name` (one pod, 1 GPU) whose shell writes its pid to
  // $TESSERA_CHECKPOINT_DIR/pid and then runs `body`; waits until the pod is
  // Running (left in `pod`) and the pid is written. Returns the pid; 0, with a
  // failure recorded, when that did not happen.
  pid_t StartPidWritingPod(const std::string& name, const std::string& body, json& pod) {
    SubmitJob(name, "1", Script("echo $$$$ > $TESSERA_CHECKPOINT_DIR/pid; " + body));
    if (HasFatalFailure()) return 0;
    const std::string pod_path = "/api/v1/namespaces/default/pods/job-" + name + "-main-0";
    if (!WaitUntil([&] { return Phase(pod = Get(pod_path)) == "Running"; }, 15)) {
      ADD_FAILURE() << "the pod never ran: " << pod.dump(2);
      return 0;
    }
    const fs::path pid_file = dir_ / "checkpoints" / "default" / ("job-" + name) / "pid";
    pid_t pid = 0;
    if (!WaitUntil([&] { return (pid = ReadPid(pid_file)) > 0; }, 10)) {
      ADD_FAILURE() << "the pod never wrote " << pid_file;
      return 0;
    }
    pods_.push_back(pid);
    return pid;
  }

  fs::path dir_;
  std::string listen_;
  std::string marker_;
  ServerProcess server_;
  std::string token_;
  std::unique_ptr<ApiClient> client_;
  std::map<std::string, pid_t> agents_;  // by node
  std::vector<pid_t> pods_;              // pod process groups to kill at the end
};

TEST_F(AgentFailuresTest, ServerKilledWhilePodsRunLosesNothing) {
  const pid_t agent = Agent("node-a", {"--gpus", "2xA100-80GB"});
  ASSERT_GT(agent, 0) << AgentOutput("node-a");
  json pod;
  const pid_t pid = StartPidWritingPod("sleeper", "i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done", pod);
  ASSERT_GT(pid, 0);
  const std::string job_path = "/apis/batch/v1/namespaces/default/jobs/sleeper";
  const std::string workload_path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-sleeper";
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-sleeper-main-0";
  const fs::path pid_file = dir_ / "checkpoints" / "default" / "job-sleeper" / "pid";
  const std::string container_id = ContainerId(pod);
  ASSERT_GT(PidOf(container_id), 0) << pod.dump(2);
  EXPECT_EQ(getpgid(pid), PidOf(container_id)) << "the pod's shell runs in the process group the pod status names";
  const std::string job_uid = Uid(Get(job_path));
  const std::string workload_uid = Uid(Get(workload_path));
  const std::string pod_uid = Uid(pod);
  ASSERT_FALSE(job_uid.empty());
  ASSERT_FALSE(workload_uid.empty());
  EXPECT_EQ(NodeReady("node-a"), "True");
  const std::string lease_path = "/apis/coordination.k8s.io/v1/namespaces/tessera-node-lease/leases/node-a";
  const auto renew_time = [&] {
    const json lease = Get(lease_path);
    return lease.is_object() ? lease.value("spec", json::object()).value("renewTime", "") : "";
  };
  const std::string renewed_before = renew_time();
  ASSERT_FALSE(renewed_before.empty());

  const std::string url = server_.url;
  StopServer(SIGKILL);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // part of the scenario: the server stays down a while
  StartTheServer();
  ASSERT_EQ(server_.url, url) << "the server must come back where the agent looks for it";

  // The same objects (not recreated), and the pod untouched: still Running, same process.
  EXPECT_EQ(Uid(Get(job_path)), job_uid) << "the Job is gone or was recreated";
  const json workload = Get(workload_path);
  EXPECT_EQ(Uid(workload), workload_uid) << "the Workload is gone or was recreated";
  EXPECT_EQ(Condition(workload, "Admitted", "status"), "True") << workload.dump(2);
  pod = Get(pod_path);
  EXPECT_EQ(Uid(pod), pod_uid) << "the Pod is gone or was recreated: " << pod.dump(2);
  EXPECT_EQ(Phase(pod), "Running") << pod.dump(2);
  EXPECT_EQ(ContainerId(pod), container_id);
  EXPECT_EQ(ReadPid(pid_file), pid);
  EXPECT_TRUE(ProcessAlive(pid)) << "the pod's process " << pid << " died with the server";
  EXPECT_TRUE(ChildRuns(agent)) << "the agent died with the server:\n" << AgentOutput("node-a");

  // The agent reconciles with the new server: new work bound to node-a runs and succeeds.
  bool ever_not_ready = false;
  const auto ready_sample = [&] {
    const std::string ready = NodeReady("node-a");
    if (!ready.empty() && ready != "True") ever_not_ready = true;
  };
  SubmitJob("after", "1", Script("echo after-restart > $TESSERA_CHECKPOINT_DIR/out"));
  const std::string after_path = "/api/v1/namespaces/default/pods/job-after-main-0";
  json after;
  ASSERT_TRUE(WaitUntil(
      [&] {
        ready_sample();
        return Phase(after = Get(after_path)) == "Succeeded";
      },
      15))
      << after.dump(2) << "\nagent:\n" << AgentOutput("node-a");
  EXPECT_EQ(after["spec"].value("nodeName", ""), "node-a");
  EXPECT_EQ(testing::ReadFile((dir_ / "checkpoints" / "default" / "job-after" / "out").string()), "after-restart\n");
  EXPECT_TRUE(WaitUntil([&] {
    return Condition(Get("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-after"), "Finished", "reason") ==
           "Succeeded";
  }, 10));

  // The heartbeat reached the new server too (every 2.5 s for a 10 s lease).
  std::string renewed_after;
  EXPECT_TRUE(WaitUntil([&] { return (renewed_after = renew_time()) > renewed_before; }, 8))
      << "the Lease was not renewed after the restart: " << renewed_before << " -> " << renewed_after;

  // Through all of it: the node Ready, the first pod still Running as the same process.
  ready_sample();
  EXPECT_FALSE(ever_not_ready) << "node-a turned NotReady around the server restart";
  EXPECT_EQ(NodeReady("node-a"), "True");
  pod = Get(pod_path);
  EXPECT_EQ(Phase(pod), "Running") << pod.dump(2);
  EXPECT_EQ(ContainerId(pod), container_id);
  EXPECT_TRUE(ProcessAlive(pid));
  EXPECT_EQ(Copies(), 1u) << "only the first pod's shell still runs";
}

TEST_F(AgentFailuresTest, AgentRestartAdoptsRunningPods) {
  const std::vector<std::string> flags{"--gpus", "1xA100-80GB"};
  const pid_t first = Agent("node-a", flags);
  ASSERT_GT(first, 0) << AgentOutput("node-a");
  json pod;
  const pid_t pid = StartPidWritingPod("adoptee", "while [ ! -f $TESSERA_CHECKPOINT_DIR/stop ]; do sleep 0.1; done; exit 0", pod);
  ASSERT_GT(pid, 0);
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-adoptee-main-0";
  const fs::path checkpoint = dir_ / "checkpoints" / "default" / "job-adoptee";
  const std::string container_id = ContainerId(pod);
  const std::string pod_uid = Uid(pod);
  EXPECT_EQ(getpgid(pid), PidOf(container_id));
  EXPECT_EQ(Copies(), 1u);

  // SIGTERM: the agent stops, cleanly, and its pod keeps running.
  ASSERT_EQ(KillProcess(first, SIGTERM), 0);
  int status = 0;
  const bool exited = WaitUntil([&] { return waitpid(first, &status, WNOHANG) == first; }, 10);
  if (!exited) {
    KillProcess(first, SIGKILL);
    waitpid(first, &status, 0);
  }
  agents_.erase("node-a");
  ASSERT_TRUE(exited) << "the agent did not stop on SIGTERM:\n" << AgentOutput("node-a");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the agent did not exit cleanly (status " << status << "):\n" << AgentOutput("node-a");
  EXPECT_TRUE(ProcessAlive(pid)) << "the pod died with its agent";

  // A new agent, same node and data directory, well within the 10 s lease.
  const pid_t second = Agent("node-a", flags);
  ASSERT_GT(second, 0) << AgentOutput("node-a");
  EXPECT_NE(AgentOutput("node-a").find("adopted pod default/job-adoptee-main-0"), std::string::npos)
      << AgentOutput("node-a");
  // For a while (the new agent's loop runs every 50 ms): one copy, the same process, still Running.
  const auto watch_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < watch_until) {
    ASSERT_EQ(Copies(), 1u) << "a second copy of the pod started: " << DescribeProcesses(ProcessesWithMarker(marker_));
    pod = Get(pod_path);
    ASSERT_EQ(Phase(pod), "Running") << pod.dump(2);
    ASSERT_EQ(ContainerId(pod), container_id);
    ASSERT_EQ(Uid(pod), pod_uid);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(ProcessAlive(pid));
  EXPECT_EQ(ReadPid(checkpoint / "pid"), pid);

  // The pod ends by itself with code 0; only the new agent can tell the server.
  std::ofstream(checkpoint / "stop") << "stop\n";
  ASSERT_TRUE(WaitUntil([&] { return !ProcessAlive(pid); }, 10)) << "the pod did not see the stop file";
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::string phase = Phase(pod = Get(pod_path));
        return phase == "Succeeded" || phase == "Failed";
      },
      10))
      << "the new agent never reported the pod's end: " << pod.dump(2) << "\n" << AgentOutput("node-a");
  EXPECT_TRUE(ChildRuns(second));
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty());
  // The new agent is not the pod's parent: it learns the exit code from what the
  // pod's reaper recorded (ProcessSpec::exit_status_path).
  EXPECT_EQ(Phase(pod), "Succeeded") << pod.dump(2);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0) << pod.dump(2);
}

// A pod that ends while the server is down, on an agent killed before the server
// is back: the end is still owed to the API, so the agent's state file keeps the
// pod, and the next agent reports it from the exit status file, once, instead of
// taking the pod (still Running in the API) for one to start.
TEST_F(AgentFailuresTest, APodThatEndsWhileTheServerIsDownIsReportedByTheNextAgentAndNotRunAgain) {
  const std::vector<std::string> flags{"--gpus", "1xA100-80GB"};
  const pid_t first = Agent("node-a", flags);
  ASSERT_GT(first, 0) << AgentOutput("node-a");
  json pod;
  const pid_t pid = StartPidWritingPod(
      "ender", "echo ran >> $TESSERA_CHECKPOINT_DIR/runs; while [ ! -f $TESSERA_CHECKPOINT_DIR/stop ]; do sleep 0.1; done; exit 3",
      pod);
  ASSERT_GT(pid, 0);
  const std::string pod_path = "/api/v1/namespaces/default/pods/job-ender-main-0";
  const fs::path checkpoint = dir_ / "checkpoints" / "default" / "job-ender";

  StopServer(SIGKILL);
  std::ofstream(checkpoint / "stop") << "stop\n";
  ASSERT_TRUE(WaitUntil([&] { return !ProcessAlive(pid); }, 10)) << "the pod did not see the stop file";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the agent sees the end and cannot report it
  ASSERT_EQ(KillProcess(first, SIGKILL), 0);
  waitpid(first, nullptr, 0);
  agents_.erase("node-a");

  StartTheServer();
  const pid_t second = Agent("node-a", flags);
  ASSERT_GT(second, 0) << AgentOutput("node-a");
  ASSERT_TRUE(WaitUntil([&] { return Phase(pod = Get(pod_path)) == "Failed"; }, 15))
      << "the end was never reported: " << pod.dump(2) << "\n" << AgentOutput("node-a");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3) << pod.dump(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the new agent's loop runs every 50 ms
  EXPECT_EQ(testing::ReadFile((checkpoint / "runs").string()), "ran\n") << "the pod ran again";
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty());
}

TEST_F(AgentFailuresTest, SeedVolcanoJobWaitsForItsImageAndRunsAsProcessPods) {
  const std::vector<fs::path> files = testing::SeedManifestFiles();
  ASSERT_FALSE(files.empty()) << "no ../shared/examples/seed beside the repository";
  json volcano;  // the seed's Volcano job, as written
  for (const fs::path& f : files) {
    auto docs = ParseManifests(testing::ReadFile(f.string()));
    ASSERT_TRUE(docs.has_value()) << f << ": " << docs.error().ToString();
    for (const ManifestDocument& d : *docs) {
      json object = d.object;
      if (object.value("apiVersion", "").starts_with("batch.volcano.sh/")) {
        for (json& t : object["spec"]["tasks"]) {
          for (json& c : t["template"]["spec"]["containers"]) {
            const std::string image = c.value("image", "");
            c["image"] = "127.0.0.1:1" + image.substr(image.find('/'));
          }
        }
        volcano = object;
      }
      Create(object);
    }
  }
  ASSERT_TRUE(volcano.is_object()) << "the seed has no Volcano job";
  const std::string ns = volcano["metadata"].value("namespace", "default");
  const std::string name = volcano["metadata"].value("name", "");
  ASSERT_EQ(ns, "team-nlp");
  int64_t replicas = 0;
  for (const json& t : volcano["spec"]["tasks"]) replicas += t.value("replicas", 0);
  ASSERT_EQ(replicas, 4);
  // The ClusterQueue's flavors, defined by the admin for the agents' labels.
  for (const char* tier : {"spot", "ondemand"}) {
    Create(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "ResourceFlavor"},
                {"metadata", {{"name", std::string("a100-") + tier}}},
                {"spec", {{"nodeLabels", {{"tier", tier}}}}}});
  }
  // 4 pods x 4 GPUs: two spot nodes of 8.
  for (const char* node : {"spot-1", "spot-2"}) {
    ASSERT_GT(Agent(node, {"--gpus", "8xA100-80GB", "--label", "tier=spot"}), 0) << AgentOutput(node);
  }
  const auto pods_of = [&](const std::string& job) {
    std::vector<json> out;
    for (int i = 0; i < 4; ++i) out.push_back(Get("/api/v1/namespaces/" + ns + "/pods/vcjob-" + job + "-worker-" + std::to_string(i)));
    return out;
  };
  const auto all_in = [](const std::vector<json>& pods, const std::string& phase) {
    return std::all_of(pods.begin(), pods.end(), [&](const json& p) { return Phase(p) == phase; });
  };

  // Its image, from a registry this test cannot reach (its name kept, its host
  // made 127.0.0.1, port 1): the 4 pods wait for it, saying why, and none runs.
  std::vector<json> pods;
  const auto pull_failed = [](const json& p) {
    const json s = p.is_object() ? p.value("status", json::object()).value("containerStatuses", json::array()) : json::array();
    return !s.empty() && s[0]["state"].value("waiting", json::object()).value("reason", "") == "ErrImagePull";
  };
  ASSERT_TRUE(WaitUntil([&] {
    pods = pods_of(name);
    return std::all_of(pods.begin(), pods.end(), pull_failed);
  }, 20)) << ::testing::PrintToString(pods) << "\n" << AgentOutput("spot-1") << AgentOutput("spot-2");
  for (const json& p : pods) {
    EXPECT_EQ(Phase(p), "Pending") << p.dump(2);
    EXPECT_NE(p["status"]["containerStatuses"][0]["state"]["waiting"].value("message", "").find("connection refused"),
              std::string::npos)
        << p.dump(2);
  }
  const std::string job_path = "/apis/batch.volcano.sh/v1alpha1/namespaces/" + ns + "/jobs/";
  const std::string workload_path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/" + ns + "/workloads/vcjob-";
  json wl;
  json job;
  // It holds the spot nodes' GPUs while it waits: deleted, it gives them back.
  auto deleted = client_->Request("DELETE", job_path + name);
  ASSERT_TRUE(deleted && deleted->status / 100 == 2) << (deleted ? deleted->body : deleted.error().ToString());
  ASSERT_TRUE(WaitUntil([&] {
    pods = pods_of(name);
    return std::none_of(pods.begin(), pods.end(), [](const json& p) { return p.is_object(); });
  }, 20)) << ::testing::PrintToString(pods);

  // The same job as process pods (a command instead of the image; an image
  // with a command would fail as above: the command is the image's): a gang of
  // 4 that succeeds.
  json copy = volcano;
  const std::string copy_name = name + "-cmd";
  copy["metadata"]["name"] = copy_name;
  for (json& t : copy["spec"]["tasks"]) {
    for (json& c : t["template"]["spec"]["containers"]) {
      c.erase("image");
      c["command"] = {"sh", "-c", Script("echo $RANK/$WORLD_SIZE")};
    }
  }
  Create(copy);
  ASSERT_TRUE(WaitUntil([&] { return all_in(pods = pods_of(copy_name), "Succeeded"); }, 15))
      << ::testing::PrintToString(pods) << "\n" << AgentOutput("spot-1") << AgentOutput("spot-2");
  std::set<std::string> ranks;
  std::map<std::string, int> per_node;
  for (const json& p : pods) {
    const json& annotations = p["metadata"]["annotations"];
    EXPECT_EQ(annotations.value("tessera.dev/world-size", ""), "4");
    const std::string rank = annotations.value("tessera.dev/rank", "");
    ranks.insert(rank);
    const std::string node = p["spec"].value("nodeName", "");
    ++per_node[node];
    const std::string devices = annotations.value("tessera.dev/gpu-devices", "");
    EXPECT_EQ(std::count(devices.begin(), devices.end(), ','), 3) << "4 GPUs each: " << devices;
    // What the pod printed, in its log on its node.
    const fs::path log = dir_ / node / "pods" / (ns + "_" + p["metadata"].value("name", "") + "_" + Uid(p)) / "pod.log";
    EXPECT_TRUE(WaitUntil([&] { return testing::ReadFile(log.string()) == rank + "/4\n"; }, 5))
        << log << ": \"" << testing::ReadFile(log.string()) << "\"";
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"spot-1", 2}, {"spot-2", 2}}));
  EXPECT_TRUE(WaitUntil([&] { return Condition(wl = Get(workload_path + copy_name), "Finished", "reason") == "Succeeded"; }, 10))
      << wl.dump(2);
  EXPECT_TRUE(WaitUntil([&] {
    job = Get(job_path + copy_name);
    return job.is_object() &&
           job.value("status", json::object()).value("state", json::object()).value("phase", "") == "Completed";
  }, 10)) << job.dump(2);
}

}  // namespace
}  // namespace tessera
