// Pods of two teams, run by a real `tessera agent` against a real `tessera
// server` whose users come from a token file (ann in group team-a, bob in
// team-b), try to reach what is not theirs (DESIGN.md section 12, Isolation).
// The agent runs as root, as on a real node, so that each pod runs as the first
// uid of its namespace's block and in a mount namespace of its own.
// - Team-a's pod, while team-b's runs, tries the server's secrets (admin token,
//   signing key, store), the agent's credential and state, team-b's pod
//   directory, files, logs, token and checkpoints, and team-b's process
//   (/proc/PID/environ, cwd, root, kill -0): every attempt fails, while its own
//   working and checkpoint directories work.
// - A pod's TESSERA_TOKEN_FILE names its ServiceAccount, which may not read
//   another team's pods.
// - A pod's logs are the API's to give to its team only.
// - One node's credential can neither change, delete, read nor list another
//   node's pods.
// - A pod asking to run as root fails with its namespace's uid range and never runs.
//
// A pod records what it tried as lines "NAME rc=STATUS OUTPUT" in
// $TESSERA_CHECKPOINT_DIR/out (which the test reads as root) and in its log.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/read_file.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using testing::ReadFile;

// A fresh random string of `bytes` bytes, in hex: tokens and secrets no one can guess.
std::string RandomHex(size_t bytes) {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    char b = 0;
    in.read(&b, 1);
    static constexpr char kHex[] = "0123456789abcdef";
    out += kHex[(static_cast<unsigned char>(b) >> 4) & 0xf];
    out += kHex[static_cast<unsigned char>(b) & 0xf];
  }
  return out;
}

// `text` as a pod command gives it to the shell: Kubernetes expands $(VAR) in
// commands and turns $$ into $, so every $ is doubled.
std::string KeepDollars(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '$') out += '$';
  }
  return out;
}

// A shell word for `text`, in single quotes.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The shell functions of a probing pod: `rec LINE` appends LINE to the pod's
// findings (its checkpoint directory's "out") and prints it to its log;
// `try NAME COMMAND...` runs COMMAND and records "NAME rc=STATUS OUTPUT", its
// output on one line, printable characters only, at most 300 of them.
constexpr const char* kProbeFunctions = R"(rec() { printf '%s\n' "$*" >> "$TESSERA_CHECKPOINT_DIR/out"; printf '%s\n' "$*"; }
try() { n=$1; shift; o=$("$@" 2>&1 </dev/null); r=$?; o=$(printf '%s' "$o" | tr -c '[:print:]' ' ' | head -c 300); rec "$n rc=$r $o"; }
)";

// What a probing pod recorded for one attempt.
struct Outcome {
  int rc = -1;
  std::string output;
};

// The findings file of a probing pod, by attempt name.
std::map<std::string, Outcome> ParseOutcomes(const std::string& text) {
  std::map<std::string, Outcome> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, rc;
    words >> name >> rc;
    if (!rc.starts_with("rc=")) continue;
    Outcome o;
    o.rc = std::atoi(rc.c_str() + 3);
    std::getline(words, o.output);
    while (!o.output.empty() && o.output.front() == ' ') o.output.erase(0, 1);
    while (!o.output.empty() && o.output.back() == ' ') o.output.pop_back();
    out[name] = o;
  }
  return out;
}

// A namespace's block of uids (annotation tessera.dev/uid-range, "FIRST/SIZE").
struct UidBlock {
  uint64_t first = 0;
  uint64_t size = 0;
  uint64_t last() const { return first + size - 1; }
};

class PodIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the pod isolation tests must run as root (CI runs them so): the agent needs root "
                                  "to run each pod as its namespace's uid and in a mount namespace of its own";
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = testing::FreshTestDir("tessera-podiso");
    // Every pod's command line carries it, so that the test finds its processes (and, at the end, any left).
    marker_ = "tessera-iso-" + std::to_string(getpid()) + "-" + test;
    ann_token_ = "ann-" + RandomHex(16);
    bob_token_ = "bob-" + RandomHex(16);
    users_file_ = (dir_ / "users.csv").string();
    {
      const int fd = ::open(users_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ASSERT_GE(fd, 0) << users_file_;
      const std::string users = ann_token_ + ",ann,u-ann,team-a\n" + bob_token_ + ",bob,u-bob,team-b\n";
      ASSERT_EQ(::write(fd, users.data(), users.size()), static_cast<ssize_t>(users.size()));
      ::close(fd);
    }
    StartTheServer();
    ASSERT_FALSE(HasFatalFailure());
    admin_ = std::make_unique<ApiClient>(server_.url, admin_token_);
    ann_ = std::make_unique<ApiClient>(server_.url, ann_token_);
    bob_ = std::make_unique<ApiClient>(server_.url, bob_token_);
    CreateTeam("team-a", "team-a");
    CreateTeam("team-b", "team-b");
  }

  void TearDown() override {
    // Fences watch the agents' data directories: read who they are before those go.
    const std::vector<pid_t> fences = AgentFences(dir_, agents_);
    for (const auto& [node, pid] : agents_) {
      KillProcess(pid, SIGKILL);
      if (pid > 0) waitpid(pid, nullptr, 0);
    }
    agents_.clear();
    if (server_.pid > 0) {
      KillProcess(server_.pid, SIGKILL);
      waitpid(server_.pid, nullptr, 0);
      server_.pid = -1;
    }
    if (marker_.empty()) return;  // SetUp stopped before anything was started
    // The pods' processes: each carries this run's marker.
    for (pid_t pid : ProcessesWithMarker(marker_)) KillProcess(pid, SIGKILL);
    RemoveAndExpectFencesGone(dir_, marker_, fences);
  }

  // `tessera server` on a free port of 127.0.0.1 with the users of users.csv;
  // its output goes to <dir>/server/server.out.
  void StartTheServer() {
    const fs::path data = dir_ / "server";
    fs::create_directories(data);
    const std::string out = (data / "server.out").string();
    const std::string line =
        SpawnAndWaitForLine({TESSERA_BINARY, "server", "--listen", "127.0.0.1:0", "--data-dir", data.string(),
                             "--token-auth-file", users_file_},
                            out, "listening on", &server_.pid);
    const auto at = line.find("http://");
    ASSERT_NE(at, std::string::npos) << "server said: " << line << "\n" << ReadFile(out);
    server_.url = line.substr(at, line.find(' ', at) - at);
    admin_token_ = ReadToken(data.string());
    ASSERT_FALSE(admin_token_.empty());
  }

  // Namespace `ns` whose group `group` has ClusterRole edit in it, with a
  // LocalQueue "queue" on ClusterQueue default; waits for its uid block and
  // its default ServiceAccount (the server's namespace controller gives both).
  void CreateTeam(const std::string& ns, const std::string& group) {
    Create(*admin_, "/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    Create(*admin_, "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", "RoleBinding"},
            {"metadata", {{"name", group + "-edit"}, {"namespace", ns}}},
            {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "edit"}}},
            {"subjects", {{{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", group}}}}});
    Create(*admin_, "/apis/kueue.x-k8s.io/v1beta1/namespaces/" + ns + "/localqueues",
           {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
            {"kind", "LocalQueue"},
            {"metadata", {{"name", "queue"}, {"namespace", ns}}},
            {"spec", {{"clusterQueue", "default"}}}});
    std::string range;
    ASSERT_TRUE(WaitUntil(
        [&] {
          const json n = Get(*admin_, "/api/v1/namespaces/" + ns);
          range = n.is_object() ? n["metadata"].value("annotations", json::object()).value("tessera.dev/uid-range", "")
                                : "";
          return !range.empty();
        },
        20))
        << "namespace " << ns << " never got its uid block";
    const auto slash = range.find('/');
    ASSERT_NE(slash, std::string::npos) << range;
    UidBlock block{std::stoull(range.substr(0, slash)), std::stoull(range.substr(slash + 1))};
    ASSERT_GT(block.first, 0u) << "a namespace's block never holds root: " << range;
    ASSERT_GT(block.size, 0u) << range;
    blocks_[ns] = block;
    ASSERT_TRUE(WaitUntil([&] { return Get(*admin_, "/api/v1/namespaces/" + ns + "/serviceaccounts/default").is_object(); },
                          20))
        << "namespace " << ns << " never got its default ServiceAccount";
  }

  // `tessera agent` for node `node` (data directory <dir>/<node>, credential
  // <dir>/<node>.token), one simulated A100, the checkpoints under <dir>/checkpoints.
  pid_t Agent(const std::string& node) {
    const pid_t pid = StartAgent(server_.url, admin_token_, node, (dir_ / node).string(),
                                 {"--gpus", "1xA100-80GB", "--checkpoint-root", (dir_ / "checkpoints").string(),
                                  "--lease-duration", "10"});
    if (pid > 0) agents_[node] = pid;
    return pid;
  }
  std::string AgentOutput(const std::string& node) const { return ReadFile(dir_ / (node + ".out")); }

  // A pod's command: the marker (`:` does nothing, `tag` tells the pods apart), then `body`.
  std::string Script(const std::string& tag, const std::string& body) const {
    return KeepDollars(": " + marker_ + "-" + tag + "\n" + body);
  }

  // Submits, as `who`, a batch/v1 Job `name` of one pod in `ns` (its LocalQueue
  // "queue", or default's in namespace default) running `sh -c script`.
  // `container_security` becomes the container's securityContext,
  // `pod_security` the pod's.
  void SubmitJob(ApiClient& who, const std::string& ns, const std::string& name, const std::string& script,
                 const json& container_security = json(), const json& pod_security = json()) {
    json container{{"name", "main"}, {"command", {"sh", "-c", script}}};
    container["resources"]["requests"] = {{"cpu", "100m"}};
    if (!container_security.is_null()) container["securityContext"] = container_security;
    json job{{"apiVersion", "batch/v1"},
             {"kind", "Job"},
             {"metadata",
              {{"name", name},
               {"namespace", ns},
               {"labels", {{"kueue.x-k8s.io/queue-name", ns == "default" ? "default" : "queue"}}}}}};
    job["spec"] = {{"parallelism", 1}, {"completions", 1}, {"backoffLimit", 0}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 1},
                                       {"containers", json::array({container})}};
    if (!pod_security.is_null()) job["spec"]["template"]["spec"]["securityContext"] = pod_security;
    auto r = who.Request("POST", "/apis/batch/v1/namespaces/" + ns + "/jobs", job.dump());
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    ASSERT_EQ(r->status, 201) << r->body;
  }

  static std::string PodPath(const std::string& ns, const std::string& job) {
    return "/api/v1/namespaces/" + ns + "/pods/job-" + job + "-main-0";
  }
  // The Job's pod once it is in `phase` (or, for "Ended", Succeeded or Failed); null, with a failure, if it never was.
  json WaitForPod(const std::string& ns, const std::string& job, const std::string& phase, int seconds = 30) {
    json pod;
    const bool ok = WaitUntil(
        [&] {
          pod = Get(*admin_, PodPath(ns, job));
          const std::string p = Phase(pod);
          return phase == "Ended" ? (p == "Succeeded" || p == "Failed") : p == phase;
        },
        seconds);
    if (!ok) {
      ADD_FAILURE() << ns << "/job-" << job << "-main-0 never reached " << phase << ": " << pod.dump(2);
      return json();
    }
    return pod;
  }

  // Where the agent of `node` keeps a pod's files (src/agent/log_server.h PodDirectory).
  fs::path PodDir(const std::string& node, const json& pod) const {
    const json& m = pod["metadata"];
    return dir_ / node / "pods" /
           (m.value("namespace", "") + "_" + m.value("name", "") + "_" + m.value("uid", ""));
  }
  fs::path CheckpointDir(const std::string& ns, const std::string& job) const {
    return dir_ / "checkpoints" / ns / ("job-" + job);
  }

  void Create(ApiClient& who, const std::string& path, const json& obj) {
    auto r = who.Request("POST", path, obj.dump());
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    ASSERT_EQ(r->status, 201) << obj.dump() << "\n" << r->body;
  }
  static json Get(ApiClient& who, const std::string& path) {
    auto r = who.Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  }
  static int Call(ApiClient& who, const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& type = "application/json", std::string* response = nullptr) {
    auto r = who.Request(method, path, body, type);
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": " << r.error().ToString();
      return 0;
    }
    if (response != nullptr) *response = r->body;
    return r->status;
  }
  static std::string Phase(const json& pod) {
    return pod.is_object() ? pod.value("status", json::object()).value("phase", "") : "";
  }
  // The shell of a pod (its command line has `marker_-tag`; comm "sh"), or 0.
  pid_t PodShell(const std::string& tag) const {
    for (pid_t pid : ProcessesWithMarker(marker_ + "-" + tag)) {
      std::string comm = ReadFile("/proc/" + std::to_string(pid) + "/comm");
      while (!comm.empty() && comm.back() == '\n') comm.pop_back();
      if (comm == "sh") return pid;
    }
    return 0;
  }
  // The real uid of a process (/proc/PID/status "Uid:" line), or -1.
  static int64_t ProcessUid(pid_t pid) {
    std::istringstream lines(ReadFile("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.starts_with("Uid:")) return std::atoll(line.c_str() + 4);
    }
    return -1;
  }

  fs::path dir_;
  std::string marker_;
  std::string users_file_;
  std::string ann_token_, bob_token_, admin_token_;
  ServerProcess server_;
  std::unique_ptr<ApiClient> admin_, ann_, bob_;
  std::map<std::string, UidBlock> blocks_;  // by namespace
  std::map<std::string, pid_t> agents_;     // by node
};

TEST_F(PodIsolationTest, ATeamsPodCannotReadTheNodesSecretsNorAnotherTeamsPod) {
  // Team-b's pod makes a secret of its own (never on a command line nor in the
  // API), keeps it in its working and checkpoint directories and logs it, then
  // waits; team-a's pod, submitted by ann, tries to reach it and the node's
  // secrets, and records each outcome.
  const pid_t agent = Agent("node");
  ASSERT_GT(agent, 0) << AgentOutput("node");
  SubmitJob(*bob_, "team-b", "keeper",
            Script("b", "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' > secret.txt\n"
                        "cp secret.txt \"$TESSERA_CHECKPOINT_DIR/secret.txt\"\n"
                        "echo \"team-b log: $(cat secret.txt)\"\n"
                        "i=0; while [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\n"));
  ASSERT_FALSE(HasFatalFailure());
  const json b_pod = WaitForPod("team-b", "keeper", "Running");
  ASSERT_TRUE(b_pod.is_object());
  const fs::path b_dir = PodDir("node", b_pod);
  std::string b_secret;
  ASSERT_TRUE(WaitUntil([&] { return (b_secret = ReadFile(b_dir / "work" / "secret.txt")).size() == 32; }, 15))
      << "team-b's pod never wrote its secret (16 bytes, 32 hex digits) in " << b_dir / "work";
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(b_dir / "pod.log").find(b_secret) != std::string::npos; }, 15))
      << "team-b's log never held its secret: " << ReadFile(b_dir / "pod.log");
  const std::string b_token = ReadFile(b_dir / "serviceaccount" / "token");
  ASSERT_FALSE(b_token.empty()) << "team-b's pod has a ServiceAccount token in " << b_dir / "serviceaccount";
  const pid_t b_pid = PodShell("b");
  ASSERT_GT(b_pid, 0) << "team-b's shell is not running";
  EXPECT_EQ(ProcessUid(b_pid), static_cast<int64_t>(blocks_["team-b"].first))
      << "team-b's pod runs as the first uid of team-b's block";

  // Every path tried exists: what is read as root here, the pod must not read.
  const fs::path server_dir = dir_ / "server";
  const fs::path node_dir = dir_ / "node";
  const std::string node_token = ReadFile(dir_ / "node.token");
  const std::string signing_key = ReadFile(server_dir / "service-account.key");
  ASSERT_FALSE(node_token.empty());
  ASSERT_FALSE(signing_key.empty());
  ASSERT_FALSE(ReadFile(server_dir / "tessera.db").empty());
  ASSERT_FALSE(ReadFile(node_dir / "agent-state.json").empty());
  ASSERT_EQ(ReadFile(CheckpointDir("team-b", "keeper") / "secret.txt"), b_secret);
  ASSERT_FALSE(ReadFile("/proc/" + std::to_string(b_pid) + "/environ").empty());

  const std::string b = b_dir.string(), pid = std::to_string(b_pid), agent_pid = std::to_string(agent);
  const std::string probe =
      std::string(kProbeFunctions) +
      "try uid id -u\n"
      "try server-dir ls " + Quote(server_dir.string()) + "\n"
      "try admin-token cat " + Quote((server_dir / "admin.token").string()) + "\n"
      "try signing-key cat " + Quote((server_dir / "service-account.key").string()) + "\n"
      "try store cat " + Quote((server_dir / "tessera.db").string()) + "\n"
      "try users-file cat " + Quote(users_file_) + "\n"
      "try node-credential cat " + Quote((dir_ / "node.token").string()) + "\n"
      "try agent-state cat " + Quote((node_dir / "agent-state.json").string()) + "\n"
      "try agent-pods ls " + Quote((node_dir / "pods").string()) + "\n"
      "try b-pod-dir ls " + Quote(b) + "\n"
      "try b-secret cat " + Quote(b + "/work/secret.txt") + "\n"
      "try b-log cat " + Quote(b + "/pod.log") + "\n"
      "try b-token cat " + Quote(b + "/serviceaccount/token") + "\n"
      "try b-checkpoint cat " + Quote((CheckpointDir("team-b", "keeper") / "secret.txt").string()) + "\n"
      "try b-checkpoints ls " + Quote((dir_ / "checkpoints" / "team-b").string()) + "\n"
      "try b-environ cat /proc/" + pid + "/environ\n"
      "try b-cwd ls /proc/" + pid + "/cwd/\n"
      "try b-cwd-secret cat /proc/" + pid + "/cwd/secret.txt\n"
      "try b-root-secret cat " + Quote("/proc/" + pid + "/root" + b + "/work/secret.txt") + "\n"
      "try b-signal kill -0 " + pid + "\n"
      "try agent-environ cat /proc/" + agent_pid + "/environ\n"
      "try agent-root-state cat " + Quote("/proc/" + agent_pid + "/root" + (node_dir / "agent-state.json").string()) + "\n"
      "try own-work sh -c 'echo written > own.txt && cat own.txt'\n"
      "try own-checkpoint ls \"$TESSERA_CHECKPOINT_DIR\"\n"
      "rec done\n";
  SubmitJob(*ann_, "team-a", "prober", Script("a", probe));
  ASSERT_FALSE(HasFatalFailure());
  const json a_pod = WaitForPod("team-a", "prober", "Succeeded");
  ASSERT_TRUE(a_pod.is_object()) << ReadFile(CheckpointDir("team-a", "prober") / "out");
  const std::string findings = ReadFile(CheckpointDir("team-a", "prober") / "out");
  const std::string a_log = ReadFile(PodDir("node", a_pod) / "pod.log");
  const std::map<std::string, Outcome> got = ParseOutcomes(findings);
  ASSERT_NE(findings.find("\ndone\n"), std::string::npos) << "the probe did not finish:\n" << findings;

  const auto outcome = [&](const std::string& name) {
    auto it = got.find(name);
    EXPECT_NE(it, got.end()) << "no outcome recorded for " << name << ":\n" << findings;
    return it == got.end() ? Outcome{} : it->second;
  };
  // Its uid: the first of team-a's block, never root nor team-b's.
  const Outcome uid = outcome("uid");
  EXPECT_EQ(uid.rc, 0);
  EXPECT_EQ(uid.output, std::to_string(blocks_["team-a"].first)) << "team-a's pod runs as its block's first uid";
  EXPECT_NE(uid.output, "0");
  EXPECT_NE(blocks_["team-a"].first, blocks_["team-b"].first) << "two namespaces never share a block";

  for (const char* name : {"server-dir", "admin-token", "signing-key", "store", "users-file", "node-credential",
                           "agent-state", "b-pod-dir", "b-secret", "b-log", "b-token", "b-checkpoint",
                           "b-checkpoints", "b-environ", "b-cwd", "b-cwd-secret", "b-root-secret", "b-signal",
                           "agent-environ", "agent-root-state"}) {
    const Outcome o = outcome(name);
    EXPECT_NE(o.rc, 0) << name << " succeeded from team-a's pod: " << o.output;
  }
  // The agent's pods directory, as team-a's pod sees it, holds team-a's own directory alone.
  EXPECT_EQ(outcome("agent-pods").output.find("team-b"), std::string::npos)
      << "team-a's pod sees team-b's pod directory: " << outcome("agent-pods").output;
  // What it may use works.
  EXPECT_EQ(outcome("own-work").rc, 0) << outcome("own-work").output;
  EXPECT_EQ(outcome("own-work").output, "written") << "its working directory is writable";
  EXPECT_EQ(outcome("own-checkpoint").rc, 0) << outcome("own-checkpoint").output;
  EXPECT_NE(outcome("own-checkpoint").output.find("out"), std::string::npos)
      << "its checkpoint directory is readable and holds its findings: " << outcome("own-checkpoint").output;

  // Nothing secret reached its findings or its log.
  const std::string key_line = [&] {  // the key's longest line: its body, not a PEM header
    std::istringstream lines(signing_key);
    std::string line, longest;
    while (std::getline(lines, line)) longest = line.size() > longest.size() ? line : longest;
    return longest;
  }();
  for (const auto& [what, secret] : std::vector<std::pair<std::string, std::string>>{
           {"the admin token", admin_token_},
           {"ann's token", ann_token_},
           {"bob's token", bob_token_},
           {"the node's credential", node_token},
           {"the signing key", key_line},
           {"team-b's secret", b_secret},
           {"team-b's ServiceAccount token", b_token}}) {
    EXPECT_EQ(findings.find(secret), std::string::npos) << what << " is in team-a's findings:\n" << findings;
    EXPECT_EQ(a_log.find(secret), std::string::npos) << what << " is in team-a's log";
  }
  // Team-b's pod was left alone: still running, as before.
  EXPECT_TRUE(ProcessAlive(b_pid));
  EXPECT_EQ(Phase(Get(*admin_, PodPath("team-b", "keeper"))), "Running");
}

TEST_F(PodIsolationTest, APodsTokenIsItsServiceAccountsAndCannotReadAnotherTeamsPods) {
  // Team-a's pod calls the API with the token the agent gave it
  // (TESSERA_TOKEN_FILE): the server takes it for team-a's default
  // ServiceAccount, which may not list team-b's pods.
  ASSERT_GT(Agent("node"), 0) << AgentOutput("node");
  const std::string cli = std::string(TESSERA_BINARY) + " --server " + server_.url + " --token-file \"$TESSERA_TOKEN_FILE\"";
  SubmitJob(*ann_, "team-a", "caller",
            Script("a", std::string(kProbeFunctions) +
                            "try token-file test -r \"$TESSERA_TOKEN_FILE\"\n"
                            "try whoami " + cli + " auth whoami\n"
                            "try team-b-pods " + cli + " get pods -n team-b\n"
                            "rec done\n"));
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(WaitForPod("team-a", "caller", "Ended").is_object());
  const std::string findings = ReadFile(CheckpointDir("team-a", "caller") / "out");
  ASSERT_NE(findings.find("\ndone\n"), std::string::npos) << "the pod did not finish:\n" << findings;
  std::map<std::string, Outcome> got = ParseOutcomes(findings);
  EXPECT_EQ(got["token-file"].rc, 0) << "TESSERA_TOKEN_FILE names a file the pod reads:\n" << findings;
  EXPECT_EQ(got["whoami"].rc, 0) << got["whoami"].output;
  EXPECT_NE(got["whoami"].output.find("system:serviceaccount:team-a:default"), std::string::npos)
      << "the pod's token is team-a's default ServiceAccount's: " << got["whoami"].output;
  EXPECT_EQ(got["team-b-pods"].rc, 1) << "the server refused (exit code 1): " << got["team-b-pods"].output;
  EXPECT_NE(got["team-b-pods"].output.find("Forbidden"), std::string::npos)
      << "listing team-b's pods is forbidden (403): " << got["team-b-pods"].output;
}

TEST_F(PodIsolationTest, APodsLogsAreGivenToItsTeamOnly) {
  // Team-a's pod prints a line; ann (team-a) reads it through the API, bob (team-b) is refused.
  ASSERT_GT(Agent("node"), 0) << AgentOutput("node");
  const std::string line = "team-a says " + RandomHex(8);
  SubmitJob(*ann_, "team-a", "talker", Script("a", "echo " + Quote(line) + "\n"));
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(WaitForPod("team-a", "talker", "Succeeded").is_object());
  const std::string log_path = PodPath("team-a", "talker") + "/log";
  std::string body;
  EXPECT_EQ(Call(*bob_, "GET", log_path, "", "application/json", &body), 403) << body;
  EXPECT_EQ(body.find(line), std::string::npos) << "bob's refusal carries the log: " << body;
  EXPECT_EQ(Call(*bob_, "GET", PodPath("team-a", "talker"), "", "application/json", &body), 403)
      << "nor may bob read the pod: " << body;
  std::string logs;
  ASSERT_TRUE(WaitUntil([&] { return Call(*ann_, "GET", log_path, "", "application/json", &logs) == 200 &&
                                     logs.find(line) != std::string::npos; },
                        10))
      << "ann never read her pod's log (200 with its line): " << logs;
}

TEST_F(PodIsolationTest, AnAgentsCredentialCannotTouchAnotherNodesPods) {
  // A pod runs on node nb; node na's agent credential tries to change its
  // status, delete it, read it and get its ServiceAccount's token: all 403,
  // and the pod runs on, untouched; listing nb's pods shows only their network view.
  ASSERT_GT(Agent("nb"), 0) << AgentOutput("nb");
  SubmitJob(*admin_, "default", "onb", Script("nb", "i=0; while [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\n"));
  ASSERT_FALSE(HasFatalFailure());
  const json before = WaitForPod("default", "onb", "Running");
  ASSERT_TRUE(before.is_object());
  ASSERT_EQ(before["spec"].value("nodeName", ""), "nb");
  ASSERT_GT(Agent("na"), 0) << AgentOutput("na");
  std::string na_token = ReadFile(dir_ / "na.token");
  ASSERT_FALSE(na_token.empty());
  ApiClient na(server_.url, na_token);
  const std::string pod = PodPath("default", "onb");

  // The credential works for what is na's own: its pods, none yet (200).
  std::string body;
  ASSERT_EQ(Call(na, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dna", "", "application/json", &body), 200)
      << body;
  EXPECT_TRUE(json::parse(body, nullptr, false).value("items", json::array()).empty()) << body;

  json changed = before;
  changed["status"]["phase"] = "Failed";
  changed["status"]["message"] = "changed by na";
  const json patch{{"status", {{"phase", "Failed"}, {"message", "patched by na"}}}};
  EXPECT_EQ(Call(na, "PATCH", pod + "/status", patch.dump(), "application/merge-patch+json", &body), 403) << body;
  EXPECT_EQ(Call(na, "PATCH", pod, patch.dump(), "application/merge-patch+json", &body), 403) << body;
  EXPECT_EQ(Call(na, "PUT", pod + "/status", changed.dump(), "application/json", &body), 403) << body;
  EXPECT_EQ(Call(na, "DELETE", pod, "", "application/json", &body), 403) << body;
  EXPECT_EQ(Call(na, "GET", pod, "", "application/json", &body), 403) << body;
  // Lists of other nodes' pods (the pod network's peers) give only their
  // network view: not the command, variables or image of nb's pod.
  for (const char* list : {"/api/v1/pods?fieldSelector=spec.nodeName%3Dnb",
                           "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnb", "/api/v1/pods"}) {
    ASSERT_EQ(Call(na, "GET", list, "", "application/json", &body), 200) << list << ": " << body;
    const json items = json::parse(body, nullptr, false).value("items", json::array());
    ASSERT_FALSE(items.empty()) << list;
    for (const json& item : items) {
      for (const json& c : item["spec"].value("containers", json::array())) {
        EXPECT_FALSE(c.contains("command") || c.contains("env") || c.contains("image")) << list << ": " << item.dump();
      }
    }
  }
  const json token_request{{"apiVersion", "authentication.k8s.io/v1"},
                           {"kind", "TokenRequest"},
                           {"spec",
                            {{"expirationSeconds", 600},
                             {"boundObjectRef",
                              {{"kind", "Pod"},
                               {"apiVersion", "v1"},
                               {"name", before["metadata"].value("name", "")},
                               {"uid", before["metadata"].value("uid", "")}}}}}};
  EXPECT_EQ(Call(na, "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", token_request.dump(),
                   "application/json", &body),
            403)
      << "a token for nb's pod: " << body;

  // Untouched: the same object, Running on nb, not being deleted, its process alive.
  const json after = Get(*admin_, pod);
  ASSERT_TRUE(after.is_object());
  EXPECT_EQ(after["metadata"].value("uid", ""), before["metadata"].value("uid", ""));
  EXPECT_FALSE(after["metadata"].contains("deletionTimestamp")) << after.dump(2);
  EXPECT_EQ(Phase(after), "Running") << after.dump(2);
  EXPECT_EQ(after["spec"].value("nodeName", ""), "nb");
  EXPECT_EQ(after["status"].value("message", "").find("by na"), std::string::npos) << after.dump(2);
  EXPECT_GT(PodShell("nb"), 0) << "the pod's process still runs";
}

TEST_F(PodIsolationTest, APodAskingToRunAsRootFailsWithItsNamespacesUidRange) {
  // Team-a's pods ask for uid 0, in the container's securityContext and in the
  // pod's: each fails with a StartError naming team-a's block
  // (FIRST-LAST), and its command never runs (it would leave "ran" behind).
  ASSERT_GT(Agent("node"), 0) << AgentOutput("node");
  const std::string ran = "touch \"$TESSERA_CHECKPOINT_DIR/ran\"\n";
  SubmitJob(*ann_, "team-a", "root-container", Script("a", ran), json{{"runAsUser", 0}});
  SubmitJob(*ann_, "team-a", "root-pod", Script("a", ran), json(), json{{"runAsUser", 0}});
  ASSERT_FALSE(HasFatalFailure());
  const UidBlock block = blocks_["team-a"];
  const std::string range = std::to_string(block.first) + "-" + std::to_string(block.last());
  for (const char* job : {"root-container", "root-pod"}) {
    const json pod = WaitForPod("team-a", job, "Failed");
    ASSERT_TRUE(pod.is_object()) << job;
    const json& status = pod["status"];
    EXPECT_EQ(status.value("reason", ""), "StartError") << job << ": " << status.dump(2);
    const std::string message = status.value("message", "");
    EXPECT_NE(message.find("runAsUser 0"), std::string::npos) << job << ": " << message;
    EXPECT_NE(message.find(range), std::string::npos)
        << job << ": the message names team-a's uid range " << range << ": " << message;
    const json statuses = status.value("containerStatuses", json::array());
    ASSERT_FALSE(statuses.empty()) << status.dump(2);
    EXPECT_EQ(statuses[0]["state"]["terminated"].value("reason", ""), "StartError") << statuses.dump(2);
    EXPECT_FALSE(fs::exists(CheckpointDir("team-a", job) / "ran")) << job << "'s command ran";
  }
  EXPECT_TRUE(ProcessesWithMarker(marker_ + "-a").empty()) << "a refused pod has a process";
}

}  // namespace
}  // namespace tessera
