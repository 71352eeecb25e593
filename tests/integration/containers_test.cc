// Container pods with the real `tessera server` and `tessera agent`, runc,
// skopeo and umoci, and a registry (Debian's docker-registry) that the test
// starts on 127.0.0.1 (docs/agent.md, "Containers"). The image is built here
// from Debian's busybox-static with umoci, so nothing comes from the network.
#include <crypt.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "api/manifest.h"
#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/seed_dir.h"
#include "tests/testing/netns.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Runs a shell command of the test's own (building and pushing the image);
// its output, for a failure's message.
std::string Sh(const std::string& command, int* rc) {
  std::string output;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    *rc = -1;
    return "popen failed";
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  const int status = pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

#define SH(command)                                           \
  do {                                                        \
    int rc_ = 0;                                              \
    const std::string out_ = Sh(command, &rc_);               \
    ASSERT_EQ(rc_, 0) << (command) << "\n" << out_;           \
  } while (0)

class ContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "runc and the pods' overlay mounts need root";
    for (const char* tool : {"runc", "skopeo", "umoci", "docker-registry", "busybox"}) {
      int rc = 0;
      Sh(std::string("command -v ") + tool, &rc);
      ASSERT_EQ(rc, 0) << tool << " is not installed: scripts/install-deps.sh installs it";
    }
    dir_ = testing::FreshTestDir("tessera-containers");
    // The test's own machine: this thread (and all it starts: the registry, the
    // server, the agents, their pods) in a network namespace of the test's, where
    // the node's pod network (bridge, rules) is made; left again in TearDown.
    if (testing::CanMakeNetns()) {
      machine_ = std::make_unique<testing::ScopedNetns>("ctr");
      host_netns_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      const int fd = ::open(machine_->path().c_str(), O_RDONLY | O_CLOEXEC);
      ASSERT_TRUE(fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0) << "cannot enter " << machine_->path();
      ::close(fd);
    }
    StartRegistry();
    if (HasFatalFailure()) return;
    BuildAndPushImage("v1", "cat /data/greeting");
    if (HasFatalFailure()) return;
    // Claims live on a "shared filesystem" of the test's: the server and the agents given it.
    server_ = StartServer((dir_ / "server").string(), "127.0.0.1:0", {"--volume-root", (dir_ / "volumes").string()});
    ASSERT_FALSE(server_.url.empty()) << testing::ReadFile((dir_ / "server" / "server.out").string());
    token_ = ReadToken((dir_ / "server").string());
    client_ = std::make_unique<ApiClient>(server_.url, token_);
    // Its pods on the pod network (docs/agent.md): each in a namespace of its own.
    agent_ = StartAgent(server_.url, token_, "node-c", (dir_ / "node-c").string(),
                        {"--gpus", "2xA100-80GB", "--pod-network", machine_ ? "bridge" : "host"});
    ASSERT_GT(agent_, 0) << testing::ReadFile((dir_ / "node-c.out").string());
  }

  void TearDown() override {
    // The pods' network namespaces, to remove once their agents are gone.
    if (client_) {
      auto pods = client_->Request("GET", "/api/v1/pods");
      const json list = pods && pods->status == 200 ? json::parse(pods->body, nullptr, false) : json();
      for (const json& p : list.is_object() ? list.value("items", json::array()) : json::array()) {
        pod_uids_.insert("tsr-" + p["metadata"].value("uid", ""));
      }
    }
    for (pid_t pid : more_agents_) {
      KillProcess(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (agent_ > 0) {
      KillProcess(agent_, SIGKILL);
      waitpid(agent_, nullptr, 0);
    }
    if (server_.pid > 0) {
      KillProcess(server_.pid, SIGKILL);
      waitpid(server_.pid, nullptr, 0);
    }
    if (dir_.empty()) return;
    // The containers the agent left (none, when it did its work), then their overlays.
    int rc = 0;
    std::error_code ec;
    for (const auto& node : fs::directory_iterator(dir_, ec)) {
    const std::string runc_root = (node.path() / "runc").string();
    if (fs::exists(runc_root)) {
      const std::string left = Sh("runc --root " + runc_root + " list -q", &rc);
      EXPECT_TRUE(left.empty()) << "containers left behind: " << left;
      Sh("for c in $(runc --root " + runc_root + " list -q); do runc --root " + runc_root + " delete --force $c; done",
         &rc);
    }
    }
    std::ifstream mounts("/proc/self/mounts");
    std::string line;
    while (std::getline(mounts, line)) {
      std::istringstream fields(line);
      std::string source, target;
      fields >> source >> target;
      if (target.starts_with(dir_.string())) ::umount2(target.c_str(), MNT_DETACH);
    }
    for (pid_t pid : {registry_, secure_registry_}) {
      if (pid <= 0) continue;
      KillProcess(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    fs::remove_all(dir_, ec);
    // The pods' network namespaces the agent (killed) left, then the machine's.
    for (const std::string& name : pod_uids_) {
      const fs::path netns = fs::path("/run/netns") / name;
      ::umount2(netns.c_str(), MNT_DETACH);
      fs::remove(netns, ec);
    }
    if (host_netns_ >= 0) {
      ::setns(host_netns_, CLONE_NEWNET);
      ::close(host_netns_);
    }
    machine_.reset();
  }
  std::unique_ptr<testing::ScopedNetns> machine_;
  int host_netns_ = -1;
  std::set<std::string> pod_uids_;  // tsr-<uid>: the pods' namespace files

  void StartRegistry() { StartRegistryAt("registry", registry_port_, registry_); }

  // A registry on a free port of 127.0.0.1, its files under <dir>/<name>; with
  // `htpasswd`, one that wants those users (basic auth, as docker-registry's htpasswd).
  void StartRegistryAt(const std::string& name, int& port, pid_t& pid, const std::string& htpasswd = "") {
    port = FreeLocalPort();
    const fs::path config = dir_ / (name + ".yml");
    std::ofstream out_config(config);
    out_config << "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: " << (dir_ / name).string()
               << "\nhttp:\n  addr: 127.0.0.1:" << port << "\n";
    if (!htpasswd.empty()) {
      std::ofstream(dir_ / (name + ".htpasswd")) << htpasswd;
      out_config << "auth:\n  htpasswd:\n    realm: test\n    path: " << (dir_ / (name + ".htpasswd")).string() << "\n";
    }
    out_config.close();
    pid = fork();
    if (pid == 0) {
      const int out = open((dir_ / (name + ".out")).c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
      execlp("docker-registry", "docker-registry", "serve", config.c_str(), nullptr);
      _exit(127);
    }
    ApiClient registry("http://127.0.0.1:" + std::to_string(port), "");
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto r = registry.Request("GET", "/v2/");
          return r && (r->status == 200 || (!htpasswd.empty() && r->status == 401));
        },
        15))
        << testing::ReadFile((dir_ / (name + ".out")).string());
  }

  std::string Image(const std::string& tag) const {
    return "127.0.0.1:" + std::to_string(registry_port_) + "/test/busybox:" + tag;
  }

  // An image of busybox-static, a file /data/greeting and `cmd` as its Cmd, pushed as test/busybox:TAG.
  void BuildAndPushImage(const std::string& tag, const std::string& cmd) {
    const std::string layout = (dir_ / "build").string();
    const std::string bundle = (dir_ / ("build-" + tag)).string();
    if (!fs::exists(layout)) SH("umoci init --layout " + layout);
    SH("umoci new --image " + layout + ":" + tag);
    SH("umoci unpack --image " + layout + ":" + tag + " " + bundle);
    SH("set -e; r=" + bundle + "/rootfs; mkdir -p $r/bin $r/data $r/tmp; cp $(command -v busybox) $r/bin/busybox; "
       "for a in sh cat echo id ls sleep test true false nc; do ln -sf busybox $r/bin/$a; done; "
       "echo 'hello from the image' > $r/data/greeting; chmod 1777 $r/tmp; "
       // For a listener's -e: the line it was sent to its log, and "ok" back.
       "printf '#!/bin/sh\\nread line\\necho \"$line\" >&2\\necho ok\\n' > $r/bin/ack; chmod 755 $r/bin/ack");
    SH("umoci repack --image " + layout + ":" + tag + " " + bundle);
    SH("umoci config --image " + layout + ":" + tag + " --config.env PATH=/bin --config.cmd /bin/sh --config.cmd -c "
       "--config.cmd '" + cmd + "'");
    SH("skopeo copy --quiet --dest-tls-verify=false oci:" + layout + ":" + tag + " docker://" + Image(tag));
  }

  // A batch/v1 Job of one pod whose container runs `image` (with `command` when given).
  void SubmitJob(const std::string& name, const std::string& image, const json& command = json(),
                 const std::string& policy = "") {
    json container{{"name", "main"}, {"image", image}};
    if (!command.is_null()) container["command"] = command;
    if (!policy.empty()) container["imagePullPolicy"] = policy;
    json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
    job["spec"] = {{"parallelism", 1}, {"completions", 1}, {"backoffLimit", 0}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 5},
                                       {"containers", json::array({container})}};
    auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }

  json Pod(const std::string& job) {
    auto r = client_->Request("GET", "/api/v1/namespaces/default/pods/job-" + job + "-main-0");
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  }
  static json Status(const json& pod) {
    const json status = pod.is_object() ? pod.value("status", json::object()) : json::object();
    return status.is_object() ? status : json::object();
  }
  static std::string Phase(const json& pod) { return Status(pod).value("phase", ""); }
  static json ContainerStatus(const json& pod) {
    const json statuses = Status(pod).value("containerStatuses", json::array());
    return statuses.is_array() && !statuses.empty() && statuses[0].is_object() ? statuses[0] : json::object();
  }
  static std::string WaitingReason(const json& pod) {
    return ContainerStatus(pod).value("state", json::object()).value("waiting", json::object()).value("reason", "");
  }
  std::string Log(const json& pod) {
    const std::string name = pod["metadata"].value("name", "");
    const std::string node = pod.value("spec", json::object()).value("nodeName", "node-c");
    const std::string ns = pod["metadata"].value("namespace", "default");
    return testing::ReadFile(
        (dir_ / node / "pods" / (ns + "_" + name + "_" + pod["metadata"].value("uid", "")) / "pod.log").string());
  }
  json WaitForPhase(const std::string& job, const std::string& phase, int seconds = 30) {
    json pod;
    EXPECT_TRUE(WaitUntil([&] { return Phase(pod = Pod(job)) == phase; }, seconds))
        << pod.dump(2) << "\n" << testing::ReadFile((dir_ / "node-c.out").string());
    return pod;
  }

  fs::path dir_;
  pid_t registry_ = -1;
  int registry_port_ = 0;
  pid_t secure_registry_ = -1;
  ServerProcess server_;
  std::string token_;
  std::unique_ptr<ApiClient> client_;
  pid_t agent_ = -1;
  std::vector<pid_t> more_agents_;
};

TEST_F(ContainersTest, AnImageFromALocalRegistryRunsItsOwnProgramAndFiles) {
  SubmitJob("greet", Image("v1"));
  const json pod = WaitForPhase("greet", "Succeeded");
  EXPECT_EQ(Log(pod), "hello from the image\n");
  const json status = ContainerStatus(pod);
  EXPECT_EQ(status.value("image", ""), Image("v1"));
  EXPECT_TRUE(status.value("imageID", "").starts_with("127.0.0.1:" + std::to_string(registry_port_) + "/test/busybox@sha256:"))
      << status.dump(2);
  EXPECT_TRUE(status.value("containerID", "").starts_with("runc://")) << status.dump(2);
  EXPECT_EQ(status["state"]["terminated"].value("exitCode", -1), 0);
  // The node lists the image it holds.
  json node;
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = client_->Request("GET", "/api/v1/nodes/node-c");
        node = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
        for (const json& image : node.value("status", json::object()).value("images", json::array())) {
          for (const json& name : image.value("names", json::array())) {
            if (name == "127.0.0.1:" + std::to_string(registry_port_) + "/test/busybox:v1") return image.value("sizeBytes", 0) > 0;
          }
        }
        return false;
      },
      10))
      << node.dump(2);
}

TEST_F(ContainersTest, ACommandRunsInsideTheImageAsItsNamespacesUserAndItsExitCodeIsKept) {
  // In the image: its greeting is there, the host's files are not, and it is not root.
  SubmitJob("inside", Image("v1"),
            {"/bin/sh", "-c", "cat /data/greeting; test -e /etc/debian_version || echo no-host-files; id -u; "
                              "test -r $TESSERA_TOKEN_FILE && echo token; exit 3"});
  const json pod = WaitForPhase("inside", "Failed");
  const std::string log = Log(pod);
  EXPECT_NE(log.find("hello from the image\n"), std::string::npos) << log;
  EXPECT_NE(log.find("no-host-files\n"), std::string::npos) << log;
  EXPECT_NE(log.find("token\n"), std::string::npos) << log;
  const std::string uid = log.substr(log.find("no-host-files\n") + 14, 10);
  EXPECT_TRUE(uid.starts_with("10000")) << "runs as its namespace's uid, not root: " << log;
  EXPECT_EQ(ContainerStatus(pod)["state"]["terminated"].value("exitCode", -1), 3) << pod.dump(2);
}

TEST_F(ContainersTest, AContainerPastItsMemoryLimitEndsOomKilled) {
  // dd's 64 MiB buffer in a 32 MiB limit: the OOM killer ends it, and the pod
  // says so as the kubelet does (reason OOMKilled, exit code 137).
  json container{{"name", "main"},
                 {"image", Image("v1")},
                 {"command", {"/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"}}};
  container["resources"]["limits"] = {{"memory", "32Mi"}};
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "oom"}}}};
  job["spec"] = {{"parallelism", 1}, {"completions", 1}, {"backoffLimit", 0}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json pod = WaitForPhase("oom", "Failed");
  const json terminated = ContainerStatus(pod).value("state", json::object()).value("terminated", json::object());
  EXPECT_EQ(terminated.value("reason", ""), "OOMKilled") << pod.dump(2);
  EXPECT_EQ(terminated.value("exitCode", -1), 137) << pod.dump(2);
  EXPECT_EQ(Status(pod).value("reason", ""), "OOMKilled") << pod.dump(2);
}

TEST_F(ContainersTest, PullFailuresReadAsTheKubeletShowsThem) {
  // A tag the registry lacks: ErrImagePull with the registry's words, then ImagePullBackOff.
  SubmitJob("missing", Image("nope"));
  json pod;
  ASSERT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("missing")) == "ErrImagePull"; }, 20)) << pod.dump(2);
  const std::string message = ContainerStatus(pod)["state"]["waiting"].value("message", "");
  EXPECT_NE(message.find("manifest unknown"), std::string::npos) << message;
  EXPECT_TRUE(message.starts_with("Failed to pull image \"" + Image("nope") + "\": ")) << message;
  EXPECT_EQ(Phase(pod), "Pending");
  EXPECT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("missing")) == "ImagePullBackOff"; }, 20)) << pod.dump(2);
  EXPECT_EQ(ContainerStatus(pod)["state"]["waiting"].value("message", ""), "Back-off pulling image \"" + Image("nope") + "\"");

  // A registry nobody listens on.
  const std::string closed = "127.0.0.1:" + std::to_string(FreeLocalPort()) + "/test/busybox:v1";
  SubmitJob("unreachable", closed);
  ASSERT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("unreachable")) == "ErrImagePull"; }, 20)) << pod.dump(2);
  EXPECT_NE(ContainerStatus(pod)["state"]["waiting"].value("message", "").find("connection refused"), std::string::npos)
      << pod.dump(2);

  // Not a reference at all, and an image that may not be pulled.
  SubmitJob("badname", "Not:A/Valid Name");
  EXPECT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("badname")) == "InvalidImageName"; }, 20)) << pod.dump(2);
  SubmitJob("never", Image("v2"), json(), "Never");
  EXPECT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("never")) == "ErrImageNeverPull"; }, 20)) << pod.dump(2);
  EXPECT_EQ(ContainerStatus(pod)["state"]["waiting"].value("message", ""),
            "Container image \"" + Image("v2") + "\" is not present with pull policy of Never");
}

TEST_F(ContainersTest, DeletingARunningContainerPodStopsItWithSigtermAndLeavesNothing) {
  SubmitJob("sleeper", Image("v1"),
            {"/bin/sh", "-c", "trap 'echo got TERM; exit 0' TERM; echo up; while true; do sleep 0.1; done"});
  json pod = WaitForPhase("sleeper", "Running");
  ASSERT_TRUE(WaitUntil([&] { return Log(pod).find("up\n") != std::string::npos; }, 10)) << Log(pod);
  auto r = client_->Request("DELETE", "/apis/batch/v1/namespaces/default/jobs/sleeper?propagationPolicy=Foreground");
  ASSERT_TRUE(r && r->status / 100 == 2) << (r ? r->body : r.error().ToString());
  const std::string log_path = (dir_ / "node-c" / "pods" /
                                ("default_" + pod["metadata"].value("name", "") + "_" + pod["metadata"].value("uid", "")) /
                                "pod.log")
                                   .string();
  EXPECT_TRUE(WaitUntil([&] { return testing::ReadFile(log_path).find("got TERM") != std::string::npos; }, 15))
      << testing::ReadFile(log_path);
  const std::string runc_root = (dir_ / "node-c" / "runc").string();
  int rc = 0;
  EXPECT_TRUE(WaitUntil([&] { return Sh("runc --root " + runc_root + " list -q", &rc).empty(); }, 15))
      << Sh("runc --root " + runc_root + " list", &rc);
}

// The container's PID 1, as the agent recorded it in its state file (0 until then).
pid_t ContainerInit(const fs::path& node_dir) {
  std::ifstream in(node_dir / "agent-state.json");
  const json state = json::parse(in, nullptr, false);
  if (!state.is_object()) return 0;
  const json pods = state.value("pods", json::object());
  for (const auto& [uid, p] : pods.items()) {
    const json c = p.is_object() ? p.value("container", json::object()) : json::object();
    if (c.is_object() && c.contains("init") && c["init"].is_object()) return c["init"].value("pid", 0);
  }
  return 0;
}

TEST_F(ContainersTest, ARuncKilledWithSigkillTakesItsContainerWithIt) {
  // runc puts the container in a session of its own, so killing runc's group
  // would leave it running: the agent ends the container's PID 1 (and with it
  // its PID namespace).
  SubmitJob("orphan", Image("v1"), {"/bin/sh", "-c", "while true; do sleep 0.1; done"});
  WaitForPhase("orphan", "Running");
  pid_t init = 0;
  ASSERT_TRUE(WaitUntil([&] { return (init = ContainerInit(dir_ / "node-c")) > 0; }, 10));
  ASSERT_TRUE(ProcessAlive(init));
  // runc is the container's parent.
  const std::string stat = testing::ReadFile("/proc/" + std::to_string(init) + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t runc = 0;
  rest >> state >> runc;
  ASSERT_NE(testing::ReadFile("/proc/" + std::to_string(runc) + "/cmdline").find("runc"), std::string::npos);
  ASSERT_EQ(kill(runc, SIGKILL), 0);
  const json pod = WaitForPhase("orphan", "Failed");
  EXPECT_EQ(ContainerStatus(pod)["state"]["terminated"].value("exitCode", 0), 137) << pod.dump(2);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(init); }, 10)) << "the container outlived runc";
}

TEST_F(ContainersTest, AContainerOutlivesItsAgentAndTheNextOneAdoptsAndStopsIt) {
  SubmitJob("kept", Image("v1"), {"/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.1; done"});
  json pod = WaitForPhase("kept", "Running");
  pid_t init = 0;
  ASSERT_TRUE(WaitUntil([&] { return (init = ContainerInit(dir_ / "node-c")) > 0; }, 10));
  KillProcess(agent_, SIGKILL);
  waitpid(agent_, nullptr, 0);
  agent_ = StartAgent(server_.url, token_, "node-c", (dir_ / "node-c").string(), {"--gpus", "2xA100-80GB"});
  ASSERT_GT(agent_, 0) << testing::ReadFile((dir_ / "node-c.out").string());
  EXPECT_TRUE(ProcessAlive(init)) << "the container was restarted, not kept";
  EXPECT_NE(testing::ReadFile((dir_ / "node-c.out").string()).find("adopted pod default/job-kept-main-0"), std::string::npos)
      << testing::ReadFile((dir_ / "node-c.out").string());
  auto r = client_->Request("DELETE", "/apis/batch/v1/namespaces/default/jobs/kept");
  ASSERT_TRUE(r && r->status / 100 == 2) << (r ? r->body : r.error().ToString());
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(init); }, 15)) << "the adopted container was not stopped";
  // Then the agent deletes runc's state of it (runc runs with --keep).
  int rc = 0;
  EXPECT_TRUE(WaitUntil([&] { return Sh("runc --root " + (dir_ / "node-c" / "runc").string() + " list -q", &rc).empty(); }, 15));
}

TEST_F(ContainersTest, TheSeedsVolcanoJobRunsItsFourRanksTogetherAndTheyReachRankZero) {
  // Its image pointed at the local registry: rank 0 listens on MASTER_PORT and
  // hears from the other three, which connect to MASTER_ADDR.
  BuildAndPushImage("llm-trainer",
                    "if [ $RANK = 0 ]; then for i in 1 2 3; do nc -l -p $MASTER_PORT -e /bin/ack; done; echo heard all; "
                    "else until [ \"$(echo rank $RANK of $WORLD_SIZE | nc -w 2 $MASTER_ADDR $MASTER_PORT)\" = ok ]; "
                    "do sleep 0.2; done; fi");
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<fs::path> files = testing::SeedManifestFiles();
  ASSERT_FALSE(files.empty()) << "no ../shared/examples/seed beside the repository";
  std::string name;
  for (const fs::path& f : files) {
    auto docs = ParseManifests(testing::ReadFile(f.string()));
    ASSERT_TRUE(docs.has_value()) << f << ": " << docs.error().ToString();
    for (const ManifestDocument& d : *docs) {
      json object = d.object;
      if (object.value("apiVersion", "").starts_with("batch.volcano.sh/")) {
        name = object["metadata"].value("name", "");
        for (json& t : object["spec"]["tasks"]) {
          for (json& c : t["template"]["spec"]["containers"]) {
            ASSERT_EQ(c.value("image", ""), "myregistry.azurecr.io/llm-trainer:v1.0");
            c["image"] = Image("llm-trainer");
          }
        }
      }
      auto r = client_->Request("POST", ObjectPath(object, false), object.dump());
      ASSERT_TRUE(r && r->status == 201) << object.dump() << "\n" << (r ? r->body : r.error().ToString());
    }
  }
  ASSERT_FALSE(name.empty()) << "the seed has no Volcano job";
  for (const char* tier : {"spot", "ondemand"}) {
    const json flavor{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                      {"kind", "ResourceFlavor"},
                      {"metadata", {{"name", std::string("a100-") + tier}}},
                      {"spec", {{"nodeLabels", {{"tier", tier}}}}}};
    auto r = client_->Request("POST", ObjectPath(flavor, false), flavor.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  for (const char* node : {"spot-1", "spot-2"}) {
    // Two nodes sharing the test machine's network, and so one bridge: each
    // with its own pod range on it (docs/agent.md, "Pod network").
    const pid_t pid = StartAgent(server_.url, token_, node, (dir_ / node).string(),
                                 {"--gpus", "8xA100-80GB", "--label", "tier=spot", "--pod-network",
                                  machine_ ? "bridge" : "host"});
    ASSERT_GT(pid, 0) << testing::ReadFile((dir_ / (std::string(node) + ".out")).string());
    more_agents_.push_back(pid);
  }
  std::vector<json> pods(4);
  const auto pod = [&](int rank) {
    auto r = client_->Request("GET", "/api/v1/namespaces/team-nlp/pods/vcjob-" + name + "-worker-" + std::to_string(rank));
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  };
  ASSERT_TRUE(WaitUntil([&] {
    for (int rank = 0; rank < 4; ++rank) pods[rank] = pod(rank);
    return std::all_of(pods.begin(), pods.end(), [](const json& p) { return Phase(p) == "Succeeded"; });
  }, 60)) << ::testing::PrintToString(pods);
  const std::string zero = Log(pods[0]);
  for (const char* line : {"rank 1 of 4\n", "rank 2 of 4\n", "rank 3 of 4\n", "heard all\n"}) {
    EXPECT_NE(zero.find(line), std::string::npos) << "rank 0's log: " << zero;
  }
  std::map<std::string, int> per_node;
  for (const json& p : pods) ++per_node[p["spec"].value("nodeName", "")];
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"spot-1", 2}, {"spot-2", 2}}));
  if (machine_) {
    // Over the pod network: each rank had an IP of its own, and rank 0's was their MASTER_ADDR.
    std::set<std::string> ips;
    for (const json& p : pods) ips.insert(Status(p).value("podIP", ""));
    EXPECT_EQ(ips.size(), 4u) << ::testing::PrintToString(pods);
    EXPECT_TRUE(Status(pods[0]).value("podIP", "").starts_with("10.244.")) << pods[0].dump(2);
  }
}

TEST_F(ContainersTest, AnEmptyDirIsTheContainersOwnAndEndsWithIt) {
  json container{{"name", "main"},
                 {"image", Image("v1")},
                 {"command", {"/bin/sh", "-c",
                              "echo kept > /scratch/f && cat /scratch/f; echo x > /frozen/f || echo read-only"}},
                 {"volumeMounts", {{{"name", "scratch"}, {"mountPath", "/scratch"}},
                                   {{"name", "frozen"}, {"mountPath", "/frozen"}, {"readOnly", true}}}}};
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "vols"}}}};
  job["spec"]["template"]["spec"] = {
      {"restartPolicy", "Never"},
      {"containers", json::array({container})},
      {"volumes", {{{"name", "scratch"}, {"emptyDir", json::object()}},
                   {{"name", "frozen"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "1Mi"}}}}}}};
  auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json pod = WaitForPhase("vols", "Succeeded");
  // (Seen once in ~6 runs: the shell's error line ahead of cat's "kept"; the order is not what this checks.)
  EXPECT_NE(Log(pod).find("kept\n"), std::string::npos) << Log(pod);
  EXPECT_NE(Log(pod).find("read-only\n"), std::string::npos) << Log(pod);
  const fs::path volumes = dir_ / "node-c" / "pods" /
                           ("default_" + pod["metadata"].value("name", "") + "_" + pod["metadata"].value("uid", "")) /
                           "volumes";
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(volumes); }, 10)) << "the emptyDir outlived its pod";

  // A kind of volume Tessera does not serve: the pod fails saying so, and runs nothing.
  job["metadata"]["name"] = "nfs";
  job["spec"]["template"]["spec"]["volumes"] = {{{"name", "scratch"}, {"nfs", {{"server", "x"}, {"path", "/"}}}},
                                                {{"name", "frozen"}, {"emptyDir", json::object()}}};
  r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json refused = WaitForPhase("nfs", "Failed");
  EXPECT_NE(Status(refused).value("message", "").find("nfs volumes are not supported"), std::string::npos)
      << refused.dump(2);
}

// An htpasswd line for `user` (bcrypt, which docker-registry wants), made with crypt(3).
std::string HtpasswdLine(const std::string& user, const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 10, nullptr, 0, salt, sizeof salt) == nullptr) return "";
  crypt_data data{};
  const char* hash = crypt_r(password.c_str(), salt, &data);
  return hash == nullptr ? "" : user + ":" + hash + "\n";
}

// A kubernetes.io/dockerconfigjson Secret for `registry`, as `kubectl create secret docker-registry` makes it.
json PullSecret(const std::string& name, const std::string& registry, const std::string& user, const std::string& password) {
  const auto b64 = [](const std::string& text) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < text.size(); i += 3) {
      uint32_t n = static_cast<uint8_t>(text[i]) << 16;
      if (i + 1 < text.size()) n |= static_cast<uint8_t>(text[i + 1]) << 8;
      if (i + 2 < text.size()) n |= static_cast<uint8_t>(text[i + 2]);
      out += kAlphabet[(n >> 18) & 63];
      out += kAlphabet[(n >> 12) & 63];
      out += i + 1 < text.size() ? kAlphabet[(n >> 6) & 63] : '=';
      out += i + 2 < text.size() ? kAlphabet[n & 63] : '=';
    }
    return out;
  };
  const json config{{"auths", {{registry, {{"username", user}, {"password", password}, {"auth", b64(user + ":" + password)}}}}}};
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"type", "kubernetes.io/dockerconfigjson"},
              {"data", {{".dockerconfigjson", b64(config.dump())}}}};
}

TEST_F(ContainersTest, APrivateRegistryIsPulledFromWithThePodsPullSecretAndAWrongOneReadsUnauthorized) {
  int port = 0;
  StartRegistryAt("secure", port, secure_registry_, HtpasswdLine("ci", "s3cret"));
  ASSERT_FALSE(HasFatalFailure());
  const std::string registry = "127.0.0.1:" + std::to_string(port);
  SH("skopeo copy --quiet --dest-tls-verify=false --dest-creds ci:s3cret oci:" + (dir_ / "build").string() +
     ":v1 docker://" + registry + "/team/private:v1");
  for (const auto& [name, password] : {std::pair{"good", "s3cret"}, std::pair{"bad", "guess"}}) {
    const json secret = PullSecret(std::string(name) + "-pull", registry, "ci", password);
    auto r = client_->Request("POST", "/api/v1/namespaces/default/secrets", secret.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  const auto submit = [&](const std::string& job_name, const std::string& secret) {
    json container{{"name", "main"}, {"image", registry + "/team/private:v1"}};
    json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", job_name}}}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"},
                                       {"containers", json::array({container})},
                                       {"imagePullSecrets", {{{"name", secret}}}}};
    auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  };
  submit("wrong", "bad-pull");
  json pod;
  ASSERT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("wrong")) == "ErrImagePull"; }, 20)) << pod.dump(2);
  EXPECT_NE(ContainerStatus(pod)["state"]["waiting"].value("message", "").find("unauthorized"), std::string::npos)
      << pod.dump(2);
  submit("right", "good-pull");
  pod = WaitForPhase("right", "Succeeded");
  EXPECT_EQ(Log(pod), "hello from the image\n");
  // A variable from a Secret: the container sees its value; a missing one waits saying so.
  const json env_secret{{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", {{"name", "db"}, {"namespace", "default"}}},
                        {"data", {{"password", "aHVudGVyMg=="}}}};  // hunter2
  auto made = client_->Request("POST", "/api/v1/namespaces/default/secrets", env_secret.dump());
  ASSERT_TRUE(made && made->status == 201) << (made ? made->body : made.error().ToString());
  json with_env{{"name", "main"}, {"image", Image("v1")}, {"command", {"/bin/sh", "-c", "echo password=$PASSWORD"}},
                {"env", {{{"name", "PASSWORD"}, {"valueFrom", {{"secretKeyRef", {{"name", "db"}, {"key", "password"}}}}}}}}};
  json env_job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "env"}}}};
  env_job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({with_env})}};
  made = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", env_job.dump());
  ASSERT_TRUE(made && made->status == 201) << (made ? made->body : made.error().ToString());
  EXPECT_EQ(Log(WaitForPhase("env", "Succeeded")), "password=hunter2\n");
  env_job["metadata"]["name"] = "noenv";
  env_job["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]["name"] = "absent";
  made = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", env_job.dump());
  ASSERT_TRUE(made && made->status == 201) << (made ? made->body : made.error().ToString());
  EXPECT_TRUE(WaitUntil([&] { return WaitingReason(pod = Pod("noenv")) == "CreateContainerConfigError"; }, 20))
      << pod.dump(2);
  EXPECT_EQ(ContainerStatus(pod)["state"]["waiting"].value("message", ""), "secret \"absent\" not found");
  // The node may read the secrets its pods name, and no other.
  const std::string node_token = testing::ReadFile((dir_ / "node-c.token").string());
  ApiClient node(server_.url, node_token);
  auto named = node.Request("GET", "/api/v1/namespaces/default/secrets/good-pull");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->status, 200) << named->body;
  const json other = PullSecret("unused", registry, "ci", "s3cret");
  auto created = client_->Request("POST", "/api/v1/namespaces/default/secrets", other.dump());
  ASSERT_TRUE(created && created->status == 201);
  auto refused = node.Request("GET", "/api/v1/namespaces/default/secrets/unused");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403) << refused->body;
}

// A Job of one container pod in `ns` running `script` with `spec` merged into its pod spec.
json ScriptJob(const std::string& name, const std::string& image, const std::string& script, const json& spec,
               const json& container_fields = json::object()) {
  json container{{"name", "main"}, {"image", image}, {"command", {"/bin/sh", "-c", script}}};
  container.update(container_fields);
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
  job["spec"] = {{"parallelism", 1}, {"completions", 1}, {"backoffLimit", 0}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 5},
                                     {"containers", json::array({container})}};
  job["spec"]["template"]["spec"].update(spec);
  return job;
}

TEST_F(ContainersTest, ConfigMapsAndSecretsReachTheContainerAsVariablesAndReadOnlyFiles) {
  const json config_map{{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata", {{"name", "app"}}},
                        {"data", {{"mode", "fast"}, {"app.conf", "level=3\n"}}},
                        {"binaryData", {{"blob", "AAEC"}}}};  // 00 01 02
  auto r = client_->Request("POST", "/api/v1/namespaces/default/configmaps", config_map.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json secret{{"apiVersion", "v1"},
                    {"kind", "Secret"},
                    {"metadata", {{"name", "db"}}},
                    {"data", {{"password", "aHVudGVyMg=="}}}};  // hunter2
  r = client_->Request("POST", "/api/v1/namespaces/default/secrets", secret.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const std::string script =
      "echo mode=$MODE cm_mode=$CM_mode; cat /etc/app/conf/app.conf; ls /etc/app/conf; "
      "stat -c %a /etc/app/conf/app.conf; wc -c < /etc/app/blob; cat /run/db/password; echo; "
      "stat -c %a /run/db/password; grep -q ' /run/db tmpfs ' /proc/mounts && echo secret-on-tmpfs; "
      "(echo x > /etc/app/new) 2>/dev/null || echo cm-read-only; cat /pw; echo; "
      "echo kept > /scratch/f; ls /work-area; echo done";
  const json spec{{"volumes",
                   {{{"name", "cfg"},
                     {"configMap", {{"name", "app"}, {"items", {{{"key", "app.conf"}, {"path", "conf/app.conf"}, {"mode", 0440}},
                                                               {{"key", "blob"}, {"path", "blob"}}}}}}},
                    {{"name", "creds"}, {"secret", {{"secretName", "db"}, {"defaultMode", 0400}}}},
                    {{"name", "scratch"}, {"emptyDir", json::object()}}}}};
  const json fields{
      {"envFrom", {{{"configMapRef", {{"name", "app"}}}, {"prefix", "CM_"}}}},
      {"env", {{{"name", "MODE"}, {"valueFrom", {{"configMapKeyRef", {{"name", "app"}, {"key", "mode"}}}}}}}},
      {"volumeMounts", {{{"name", "cfg"}, {"mountPath", "/etc/app"}},
                        {{"name", "creds"}, {"mountPath", "/run/db"}},
                        {{"name", "creds"}, {"mountPath", "/pw"}, {"subPath", "password"}},
                        {{"name", "scratch"}, {"mountPath", "/scratch"}},
                        {{"name", "scratch"}, {"mountPath", "/work-area"}, {"subPath", "run-1/area"}}}}};
  r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", ScriptJob("files", Image("v1"), script, spec, fields).dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json pod = WaitForPhase("files", "Succeeded");
  EXPECT_EQ(Log(pod),
            "mode=fast cm_mode=fast\nlevel=3\napp.conf\n440\n3\nhunter2\n400\nsecret-on-tmpfs\ncm-read-only\nhunter2\n"
            "done\n");

  // A ConfigMap the pod names that is not there: it waits, in the kubelet's words, and runs once it is made.
  json missing = ScriptJob("later", Image("v1"), "cat /etc/late/k",
                           {{"volumes", {{{"name", "late"}, {"configMap", {{"name", "late"}}}}}}},
                           {{"volumeMounts", {{{"name", "late"}, {"mountPath", "/etc/late"}}}}});
  r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", missing.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  json waiting;
  ASSERT_TRUE(WaitUntil([&] { return WaitingReason(waiting = Pod("later")) == "ContainerCreating" &&
                                     ContainerStatus(waiting)["state"]["waiting"].contains("message"); }, 20))
      << waiting.dump(2);
  EXPECT_EQ(ContainerStatus(waiting)["state"]["waiting"].value("message", ""),
            "MountVolume.SetUp failed for volume \"late\" : configmap \"late\" not found");
  const json late{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "late"}}}, {"data", {{"k", "made"}}}};
  r = client_->Request("POST", "/api/v1/namespaces/default/configmaps", late.dump());
  ASSERT_TRUE(r && r->status == 201);
  EXPECT_EQ(Log(WaitForPhase("later", "Succeeded", 30)), "made");

  // A variable from a ConfigMap key that is not there: CreateContainerConfigError.
  json no_key = ScriptJob("nokey", Image("v1"), "true", json::object(),
                          {{"env", {{{"name", "X"}, {"valueFrom", {{"configMapKeyRef", {{"name", "app"}, {"key", "nope"}}}}}}}}});
  r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", no_key.dump());
  ASSERT_TRUE(r && r->status == 201);
  json pod_no_key;
  EXPECT_TRUE(WaitUntil([&] { return WaitingReason(pod_no_key = Pod("nokey")) == "CreateContainerConfigError"; }, 20))
      << pod_no_key.dump(2);
  EXPECT_EQ(ContainerStatus(pod_no_key)["state"]["waiting"].value("message", ""),
            "couldn't find key nope in ConfigMap default/app");

  // The node reads the ConfigMaps its pods name, and no other.
  ApiClient node(server_.url, testing::ReadFile((dir_ / "node-c.token").string()));
  auto named = node.Request("GET", "/api/v1/namespaces/default/configmaps/app");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->status, 200) << named->body;
  const json other{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "other"}}}, {"data", {{"k", "v"}}}};
  r = client_->Request("POST", "/api/v1/namespaces/default/configmaps", other.dump());
  ASSERT_TRUE(r && r->status == 201);
  auto refused = node.Request("GET", "/api/v1/namespaces/default/configmaps/other");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403) << refused->body;
}

TEST_F(ContainersTest, PodSecurityKeepsHostPathAndPrivilegedToNamespacesAnAdminLabelsPrivileged) {
  const fs::path host = dir_ / "host-share";
  fs::create_directories(host);
  std::ofstream(host / "note") << "from the host\n";
  const std::string script = "cat /host/note; grep CapBnd /proc/self/status";
  const json spec{{"volumes", {{{"name", "share"}, {"hostPath", {{"path", host.string()}, {"type", "Directory"}}}}}}};
  const json fields{{"volumeMounts", {{{"name", "share"}, {"mountPath", "/host"}, {"readOnly", true}}}},
                    {"securityContext", {{"privileged", true}}}};
  // default is unlabeled: baseline. The Job is refused whole, and nothing is stored.
  auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", ScriptJob("host", Image("v1"), script, spec, fields).dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(json::parse(r->body, nullptr, false).value("message", ""),
            "jobs.batch \"host\" is forbidden: spec.template.spec violates PodSecurity \"baseline:latest\": hostPath "
            "volumes (volume \"share\"), privileged (container \"main\" must not set securityContext.privileged=true)");
  auto none = client_->Request("GET", "/apis/batch/v1/namespaces/default/jobs/host");
  ASSERT_TRUE(none && none->status == 404);
  // A bare pod too, in Kubernetes' words.
  json bare{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "bare"}}}, {"spec", spec}};
  bare["spec"]["hostNetwork"] = true;
  bare["spec"]["containers"] = {{{"name", "main"}, {"image", Image("v1")}}};
  r = client_->Request("POST", "/api/v1/namespaces/default/pods", bare.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(json::parse(r->body, nullptr, false).value("message", ""),
            "pods \"bare\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true), "
            "hostPath volumes (volume \"share\")");
  // A level Kubernetes does not know is refused on the namespace itself.
  const json bad_ns{{"apiVersion", "v1"}, {"kind", "Namespace"},
                    {"metadata", {{"name", "ops"}, {"labels", {{"pod-security.kubernetes.io/enforce", "lax"}}}}}};
  r = client_->Request("POST", "/api/v1/namespaces", bad_ns.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  // The admin labels a namespace privileged: there it runs, with every capability.
  json ns = bad_ns;
  ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "privileged";
  r = client_->Request("POST", "/api/v1/namespaces", ns.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json queue{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "LocalQueue"},
                   {"metadata", {{"name", "default"}, {"namespace", "ops"}}}, {"spec", {{"clusterQueue", "default"}}}};
  r = client_->Request("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/localqueues", queue.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  r = client_->Request("POST", "/apis/batch/v1/namespaces/ops/jobs", ScriptJob("host", Image("v1"), script, spec, fields).dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  json pod;
  const auto ops_pod = [&](const std::string& job) {
    auto got = client_->Request("GET", "/api/v1/namespaces/ops/pods/job-" + job + "-main-0");
    return got && got->status == 200 ? json::parse(got->body, nullptr, false) : json();
  };
  ASSERT_TRUE(WaitUntil([&] { return Phase(pod = ops_pod("host")) == "Succeeded"; }, 30))
      << pod.dump(2) << testing::ReadFile((dir_ / "node-c.out").string());
  // Every capability the node has (this one's bounding set may lack some).
  std::string bounding;
  std::istringstream status(testing::ReadFile("/proc/self/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("CapBnd:")) bounding = line;
  }
  EXPECT_EQ(Log(pod), "from the host\n" + bounding + "\n");

  // The agent checks again before a start: a Job accepted while ops was
  // privileged, whose queue is made only after the admin made ops baseline,
  // fails saying why.
  json held = ScriptJob("held", Image("v1"), script, spec, fields);
  held["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "later";
  r = client_->Request("POST", "/apis/batch/v1/namespaces/ops/jobs", held.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  r = client_->Request("PATCH", "/api/v1/namespaces/ops",
                       R"({"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}})");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error().ToString());
  ::sleep(6);  // past the agent's 5 s reuse of what it read of the namespace
  json later = queue;
  later["metadata"]["name"] = "later";
  r = client_->Request("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/localqueues", later.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  EXPECT_TRUE(WaitUntil([&] { return Phase(pod = ops_pod("held")) == "Failed"; }, 30))
      << pod.dump(2) << client_->Request("GET", "/api/v1/namespaces/ops")->body;
  EXPECT_NE(Status(pod).value("message", "").find("violates PodSecurity \"baseline:latest\""), std::string::npos)
      << pod.dump(2);
}

TEST_F(ContainersTest, AClaimWrittenByAPodOnOneNodeIsReadByTheNextOnAnotherAndCountsAgainstQuota) {
  const std::string volumes = (dir_ / "volumes").string();
  for (const char* node : {"disk-a", "disk-b"}) {
    const pid_t pid = StartAgent(server_.url, token_, node, (dir_ / node).string(),
                                 {"--gpus", "1xA100-80GB", "--label", std::string("disk=") + node, "--volume-root", volumes});
    ASSERT_GT(pid, 0) << testing::ReadFile((dir_ / (std::string(node) + ".out")).string());
    more_agents_.push_back(pid);
  }
  const json quota{{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", "storage"}}},
                   {"spec", {{"hard", {{"persistentvolumeclaims", "2"}, {"requests.storage", "10Gi"}}}}}};
  auto r = client_->Request("POST", "/api/v1/namespaces/default/resourcequotas", quota.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const auto claim = [](const std::string& name, const std::string& size) {
    return json{{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}, {"metadata", {{"name", name}}},
                {"spec", {{"accessModes", {"ReadWriteMany"}}, {"resources", {{"requests", {{"storage", size}}}}}}}};
  };
  r = client_->Request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim("data", "4Gi").dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json data = json::parse(r->body, nullptr, false);
  const std::string uid = data["metadata"].value("uid", "");
  EXPECT_EQ(data["status"].value("phase", ""), "Bound") << data.dump(2);
  EXPECT_EQ(data["spec"].value("volumeName", ""), "pvc-" + uid);
  EXPECT_EQ(data["status"]["capacity"].value("storage", ""), "4Gi");
  // Past requests.storage: refused in Kubernetes' words, and nothing stored.
  r = client_->Request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim("big", "7Gi").dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(json::parse(r->body, nullptr, false).value("message", ""),
            "persistentvolumeclaims \"big\" is forbidden: exceeded quota: storage, requested: requests.storage=7Gi, "
            "used: requests.storage=4Gi, limited: requests.storage=10Gi");
  auto big = client_->Request("GET", "/api/v1/namespaces/default/persistentvolumeclaims/big");
  ASSERT_TRUE(big && big->status == 404);
  // A bad claim names its field.
  json bad = claim("bad", "1Gi");
  bad["spec"]["volumeMode"] = "Block";
  r = client_->Request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", bad.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec.volumeMode"), std::string::npos) << r->body;
  // The quota's status counts the claim.
  json used;
  EXPECT_TRUE(WaitUntil([&] {
    auto got = client_->Request("GET", "/api/v1/namespaces/default/resourcequotas/storage");
    used = got && got->status == 200 ? json::parse(got->body, nullptr, false).value("status", json::object()) : json();
    return used.is_object() && used.value("used", json::object()) ==
                                   json{{"persistentvolumeclaims", "1"}, {"requests.storage", "4Gi"}};
  }, 15)) << used.dump();

  // One pod writes on disk-a; the next, on disk-b, reads it.
  const auto on = [&](const std::string& job, const std::string& node, const std::string& script, bool read_only = false) {
    json mount{{"name", "data"}, {"mountPath", "/data"}};
    if (read_only) mount["readOnly"] = true;
    json j = ScriptJob(job, Image("v1"), script,
                       {{"nodeSelector", {{"disk", node}}},
                        {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}}}},
                       {{"volumeMounts", {mount}}});
    auto made = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", j.dump());
    ASSERT_TRUE(made && made->status == 201) << (made ? made->body : made.error().ToString());
  };
  on("writer", "disk-a", "echo written-on-a > /data/f && echo ok");
  json writer = WaitForPhase("writer", "Succeeded");
  EXPECT_EQ(writer["spec"].value("nodeName", ""), "disk-a");
  EXPECT_EQ(Log(writer), "ok\n");
  EXPECT_TRUE(fs::exists(dir_ / "volumes" / ("default-data-" + uid) / "f"));
  on("reader", "disk-b", "cat /data/f; (echo x > /data/g) 2>/dev/null || echo read-only", true);
  json reader = WaitForPhase("reader", "Succeeded");
  EXPECT_EQ(reader["spec"].value("nodeName", ""), "disk-b");
  EXPECT_EQ(Log(reader), "written-on-a\nread-only\n");

  // A pod whose claim does not exist waits, saying so.
  json orphan = ScriptJob("orphan", Image("v1"), "true",
                          {{"volumes", {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "nope"}}}}}}},
                          {{"volumeMounts", {{{"name", "d"}, {"mountPath", "/d"}}}}});
  r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", orphan.dump());
  ASSERT_TRUE(r && r->status == 201);
  json waiting;
  EXPECT_TRUE(WaitUntil([&] {
    waiting = Pod("orphan");
    return ContainerStatus(waiting).value("state", json::object()).value("waiting", json::object()).value("message", "") ==
           "persistentvolumeclaim \"nope\" not found";
  }, 20)) << waiting.dump(2);
  EXPECT_EQ(Phase(waiting), "Pending");

  // The claim outlives its pods; deleted, its data goes (reclaimPolicy Delete).
  for (const char* job : {"writer", "reader", "orphan"}) {
    client_->Request("DELETE", std::string("/apis/batch/v1/namespaces/default/jobs/") + job);
  }
  EXPECT_TRUE(fs::exists(dir_ / "volumes" / ("default-data-" + uid)));
  r = client_->Request("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error().ToString());
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(dir_ / "volumes" / ("default-data-" + uid)); }, 30))
      << testing::ReadFile((dir_ / "server" / "server.out").string());
}

TEST_F(ContainersTest, AGpuContainerSeesExactlyItsOwnDeviceNodesAndVariables) {
  // Stand-in device nodes (/dev/null's numbers) for 8 GPUs and the control nodes, where the agent is told to look.
  const fs::path dev = dir_ / "gpu-dev";
  fs::create_directories(dev);
  struct stat null {};
  ASSERT_EQ(::stat("/dev/null", &null), 0);
  std::vector<std::string> names{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"};
  for (int i = 0; i < 8; ++i) names.push_back("nvidia" + std::to_string(i));
  for (const std::string& name : names) ASSERT_EQ(::mknod((dev / name).c_str(), S_IFCHR | 0666, null.st_rdev), 0) << name;
  const pid_t pid = StartAgent(server_.url, token_, "gpu-node", (dir_ / "gpu-node").string(),
                               {"--gpus", "8xA100-80GB", "--label", "gpus=stand-in", "--device-root", dev.string()});
  ASSERT_GT(pid, 0) << testing::ReadFile((dir_ / "gpu-node.out").string());
  more_agents_.push_back(pid);
  EXPECT_NE(testing::ReadFile((dir_ / "gpu-node.out").string()).find("no NVIDIA driver libraries"), std::string::npos)
      << "no driver libraries here, and it says so";
  const std::string script =
      "for n in nvidiactl nvidia-uvm nvidia-uvm-tools nvidia0 nvidia1 nvidia2 nvidia3 nvidia4 nvidia5 nvidia6 nvidia7; "
      "do test -c /dev/$n && echo $n; done; echo CUDA=$CUDA_VISIBLE_DEVICES; echo NVIDIA=$NVIDIA_VISIBLE_DEVICES";
  json job = ScriptJob("gpus", Image("v1"), script, {{"nodeSelector", {{"gpus", "stand-in"}}}},
                       {{"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}});
  auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const json pod = WaitForPhase("gpus", "Succeeded");
  EXPECT_EQ(pod["spec"].value("nodeName", ""), "gpu-node");
  const json annotations = pod["metadata"].value("annotations", json::object());
  const std::string devices = annotations.value("tessera.dev/gpu-devices", "");
  const std::string uuids = annotations.value("tessera.dev/gpu-uuids", "");
  ASSERT_EQ(std::count(devices.begin(), devices.end(), ','), 1) << devices;
  std::string expected = "nvidiactl\nnvidia-uvm\nnvidia-uvm-tools\n";
  const std::string first = devices.substr(0, devices.find(',')), second = devices.substr(devices.find(',') + 1);
  for (int i = 0; i < 8; ++i) {
    if (std::to_string(i) == first || std::to_string(i) == second) expected += "nvidia" + std::to_string(i) + "\n";
  }
  expected += "CUDA=" + uuids + "\nNVIDIA=" + uuids + "\n";
  EXPECT_EQ(Log(pod), expected);
}

}  // namespace
}  // namespace tessera
