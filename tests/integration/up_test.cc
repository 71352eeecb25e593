// `tessera up` as a new user runs it: the real binary, this machine as its node,
// the CLI finding the server through the config file `up` writes; a submitted
// command runs, its output is in `tessera logs`, and it ends Succeeded; a
// failing command ends Failed with its exit code.
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
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class UpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-up");
    // The CLI config `up` writes, and the CLI reads, lives under this test's directory.
    setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
    unsetenv("TESSERA_SERVER");
    unsetenv("TESSERA_TOKEN");
    const std::string line =
        SpawnAndWaitForLine({TESSERA_BINARY, "up", "--listen", "127.0.0.1:0", "--data-dir", (dir_ / "data").string(),
                             "--gpus", "2xA100-80GB"},
                            (dir_ / "up.out").string(), "Tessera is up at", &up_pid_);
    ASSERT_FALSE(line.empty()) << testing::ReadFile((dir_ / "up.out").string());
  }
  void TearDown() override {
    if (up_pid_ > 0) {
      KillProcess(up_pid_, SIGTERM);
      waitpid(up_pid_, nullptr, 0);
    }
    fs::remove_all(dir_);  // the node's fence sees it go and ends what is left
  }
  // Runs the CLI; returns its exit code and standard output.
  std::pair<int, std::string> Cli(const std::string& args) {
    const std::string command = std::string(TESSERA_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
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

}  // namespace
}  // namespace tessera
