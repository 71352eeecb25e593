// `tessera up` as a new user runs it: the real binary, this machine as its node,
// the CLI finding the server through the config file `up` writes; a submitted
// command runs, its output is in `tessera logs`, and it ends Succeeded; a
// failing command ends Failed with its exit code; a pod, in its own network,
// reaches the server with its own token. The machine is a network namespace
// of the test's (root can make one), so the pod network's bridge and rules
// are made there, not on the test host.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/integration/tessera_processes.h"
#include "tests/testing/netns.h"
#include "tests/testing/read_file.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class UpTest : public ::testing::Test {
 protected:
  // Runs `fn` in the machine's network (the test's namespace when it could make one).
  template <typename Fn>
  auto InMachine(Fn&& fn) {
    return machine_ ? machine_->RunIn(std::forward<Fn>(fn)) : fn();
  }
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-up");
    // The CLI config `up` writes, and the CLI reads, lives under this test's directory.
    setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
    unsetenv("TESSERA_SERVER");
    unsetenv("TESSERA_TOKEN");
    if (testing::CanMakeNetns()) machine_ = std::make_unique<testing::ScopedNetns>("up");
    const std::string line = InMachine([&] {
      return SpawnAndWaitForLine({TESSERA_BINARY, "up", "--listen", "127.0.0.1:0", "--data-dir", (dir_ / "data").string(),
                                  "--gpus", "2xA100-80GB"},
                                 (dir_ / "up.out").string(), "Tessera is up at", &up_pid_);
    });
    ASSERT_FALSE(line.empty()) << testing::ReadFile((dir_ / "up.out").string());
  }
  void TearDown() override {
    if (up_pid_ > 0) {
      KillProcess(up_pid_, SIGTERM);
      waitpid(up_pid_, nullptr, 0);
    }
    fs::remove_all(dir_);  // the node's fence sees it go and ends what is left
    machine_.reset();
  }
  // Runs the CLI; returns its exit code and standard output.
  std::pair<int, std::string> Cli(const std::string& args) { return Shell(std::string(TESSERA_BINARY) + " " + args); }
  // Runs a command in the machine; its exit code and its output (stderr too).
  std::pair<int, std::string> Shell(const std::string& line) {
    const std::string command = line + " 2>&1";
    return InMachine([&] {
      FILE* pipe = popen(command.c_str(), "r");
      std::string out;
      std::array<char, 4096> buf{};
      size_t n;
      while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
      const int status = pclose(pipe);
      return std::pair<int, std::string>{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
    });
  }
  json PodWhen(const std::string& name, const std::function<bool(const json&)>& ready) {
    json pod;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto [rc, out] = Cli("get pod " + name + " -o json");
      if (rc == 0) {
        pod = json::parse(out, nullptr, false);
        if (pod.is_object() && ready(pod)) return pod;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "pod " << name << " never got there; last: " << pod.dump();
    return pod;
  }
  static std::string Phase(const json& pod) { return pod.value("status", json::object()).value("phase", ""); }

  fs::path dir_;
  pid_t up_pid_ = -1;
  std::unique_ptr<testing::ScopedNetns> machine_;
};

TEST_F(UpTest, ASubmittedCommandRunsItsOutputIsInLogsAndItSucceeds) {
  auto [rc, out] = Cli("submit hello --queue default -- sh -c 'echo hello from tessera up'");
  ASSERT_EQ(rc, 0) << out;
  const json pod = PodWhen("job-hello-main-0", [](const json& p) { return Phase(p) == "Succeeded"; });
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
  auto [logs_rc, logs] = Cli("logs hello");
  EXPECT_EQ(logs_rc, 0) << logs;
  EXPECT_EQ(logs, "hello from tessera up\n");
  auto [get_rc, table] = Cli("get pods");
  EXPECT_NE(table.find("Completed"), std::string::npos) << table;
}

TEST_F(UpTest, AFailingCommandEndsFailedWithItsExitCode) {
  auto [rc, out] = Cli("submit broken --queue default -- sh -c 'echo about to fail; exit 4'");
  ASSERT_EQ(rc, 0) << out;
  const json pod = PodWhen("job-broken-main-0", [](const json& p) { return Phase(p) == "Failed"; });
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 4);
  EXPECT_EQ(Cli("logs job-broken-main-0").second, "about to fail\n");
  auto [describe_rc, described] = Cli("describe workload job-broken");
  EXPECT_NE(described.find("exited with code 4"), std::string::npos) << described;
}

// `up` speaks HTTPS with a CA it made, and writes the admin's kubeconfig: the
// real kubectl works with it and nothing else (and the CLI's context, which
// the other tests use, is that HTTPS side too).
TEST_F(UpTest, KubectlWorksWithTheKubeconfigUpWrote) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) GTEST_SKIP() << "kubectl is not installed";
  const std::string up_out = testing::ReadFile((dir_ / "up.out").string());
  EXPECT_NE(up_out.find("export KUBECONFIG=" + (dir_ / "data" / "kubeconfig").string()), std::string::npos) << up_out;
  EXPECT_NE(up_out.find("and at https://127.0.0.1:"), std::string::npos) << up_out;
  auto [rc, out] = Cli("submit hello --queue default -- sh -c 'echo hello over kubectl'");
  ASSERT_EQ(rc, 0) << out;
  PodWhen("job-hello-main-0", [](const json& p) { return Phase(p) == "Succeeded"; });
  const std::string kubectl = "kubectl --kubeconfig " + (dir_ / "data" / "kubeconfig").string();
  auto run = [&](const std::string& args) { return Shell(kubectl + " " + args); };
  auto [nodes_rc, nodes] = run("get nodes");
  EXPECT_EQ(nodes_rc, 0) << nodes;
  EXPECT_NE(nodes.find("Ready"), std::string::npos) << nodes;
  auto [logs_rc, logs] = run("logs job/hello");
  EXPECT_EQ(logs_rc, 0) << logs;
  EXPECT_EQ(logs, "hello over kubectl\n");
  auto [cli_rc, contexts] = Cli("config get-contexts");
  EXPECT_NE(contexts.find("https://127.0.0.1:"), std::string::npos) << contexts;
}

TEST_F(UpTest, APodInItsOwnNetworkReachesTheServerWithItsOwnToken) {
  if (!machine_) GTEST_SKIP() << "needs root and network namespaces (the pod network)";
  // The server listens on 127.0.0.1; a pod, in a network of its own, reaches
  // it at its gateway (TESSERA_SERVER), and is who its token says.
  auto [rc, out] = Cli(
      "submit callhome --queue default -- sh -c 'echo $TESSERA_SERVER; busybox wget -qO- $TESSERA_SERVER/healthz; echo; "
      "busybox wget -qO- --header \"Authorization: Bearer $(cat $TESSERA_TOKEN_FILE)\" "
      "$TESSERA_SERVER/api/v1/namespaces/default/pods 2>&1 | head -c 200'");
  ASSERT_EQ(rc, 0) << out;
  const json pod = PodWhen("job-callhome-main-0", [](const json& p) { return Phase(p) == "Succeeded"; });
  const std::string ip = pod["status"].value("podIP", "");
  EXPECT_TRUE(ip.starts_with("10.244.")) << pod["status"].dump();
  EXPECT_NE(ip, pod["status"].value("hostIP", ""));
  auto [logs_rc, logs] = Cli("logs job-callhome-main-0");
  EXPECT_TRUE(logs.starts_with("http://10.244.0.1:")) << "TESSERA_SERVER is the pod's gateway: " << logs;
  EXPECT_NE(logs.find("\nok\n"), std::string::npos) << "the pod reached /healthz: " << logs;
  EXPECT_NE(logs.find("403 Forbidden"), std::string::npos) << "its ServiceAccount may not list pods: " << logs;
}

}  // namespace
}  // namespace tessera
