// `tessera exec` and pods/exec end to end: a real server (users from a token
// file: erin edits "default", vic views it, bob edits team-b), a real agent
// running a process pod, and the command run in the pod through the server's
// WebSocket relay and the agent's exec endpoint: its stdout, stderr and exit
// code, stdin piped in, the CLI's own command, RBAC's refusals, and the real
// kubectl (when installed) against the same server.
#include "client/exec_client.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "agent/agent.h"
#include "cli/commands/exec_command.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_agent.h"
#include "tests/testing/team_users.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kPod = "job-shell-main-0";

class ExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-exec");
    std::ofstream(dir_ / "tokens.csv") << testing::kTeamUsersTokenFile;
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    options.audit.path = (dir_ / "audit.log").string();
    // HTTPS, as kubectl sends its bearer token over nothing else.
    cert_ = testing::WriteSelfSignedCert(dir_, "server");
    options.http.tls_cert_file = cert_.cert;
    options.http.tls_key_file = cert_.key;
    server_ = testing::StartLocalServer((dir_ / "server").string(), options);
    ASSERT_NE(server_, nullptr);
    tls_.certificate_authority = cert_.cert;
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token(), tls_);
    ASSERT_NO_FATAL_FAILURE(testing::CreateTeamUsers(*client_, "default"));
    AgentOptions agent_options = testing::TestAgentOptions(*server_, dir_, "node-1", "2xA100-80GB");
    agent_options.tls = tls_;
    auto a = Agent::Start(agent_options);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
    const json job{{"apiVersion", "batch/v1"},
                   {"kind", "Job"},
                   {"metadata", {{"name", "shell"}, {"namespace", "default"}}},
                   {"spec",
                    {{"template",
                      {{"spec",
                        {{"containers", {{{"name", "main"}, {"command", {"sh", "-c", "exec sleep 600"}}}}},
                         {"restartPolicy", "Never"},
                         {"terminationGracePeriodSeconds", 1}}}}}}}};
    Create(job, "/apis/batch/v1/namespaces/default/jobs");
    WaitForObject(*client_, std::string("/api/v1/namespaces/default/pods/") + kPod, [](const json& p) {
      return p.value("status", json::object()).value("phase", "") == "Running";
    });
  }
  void TearDown() override {
    agent_.reset();
    testing::KillAgentPods(dir_ / "node-1");
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  void Create(const json& obj, const std::string& path) {
    auto r = client_->Request("POST", path, obj.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  ClientConfig As(const std::string& token) const {
    ClientConfig c;
    c.server = server_->url();
    c.token = token;
    c.tls = tls_;
    return c;
  }
  static std::string Target(const std::vector<std::string>& command, bool with_stdin = false) {
    auto t = ExecTarget("default", ExecOptions{.pod = std::string("pod/") + kPod, .stdin_open = with_stdin, .command = command});
    EXPECT_TRUE(t.has_value());
    return t.value_or("");
  }

  fs::path dir_;
  testing::CertFiles cert_;
  TlsClientOptions tls_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(ExecTest, ACommandRunsInThePodWithItsOutputStreamsAndExitCode) {
  std::ostringstream out, err;
  auto code = ExecInPod(As("erin-token"),
                        Target({"sh", "-c", "echo \"out of $TESSERA_POD_NAME in $(pwd)\"; echo to-stderr >&2; exit 3"}),
                        ExecStreams{.out = &out, .err = &err});
  ASSERT_TRUE(code.has_value()) << code.error().ToString();
  EXPECT_EQ(*code, 3) << "the command's exit code, from the NonZeroExitCode Status";
  EXPECT_EQ(out.str().rfind(std::string("out of ") + kPod + " in " + dir_.string(), 0), 0u)
      << out.str() << " (its variables, and its working directory under the agent's data directory)";
  EXPECT_EQ(err.str(), "to-stderr\n");
  std::ostringstream ok;
  code = ExecInPod(As("erin-token"), Target({"true"}), ExecStreams{.out = &ok, .err = &ok});
  ASSERT_TRUE(code.has_value()) << code.error().ToString();
  EXPECT_EQ(*code, 0);
}

TEST_F(ExecTest, StdinIsPipedToTheCommandUntilItsEnd) {
  std::istringstream in("hello\nworld\n");
  std::ostringstream out, err;
  auto code = ExecInPod(As("erin-token"), Target({"sh", "-c", "cat > piped.txt; wc -l < piped.txt; cat piped.txt"}, true),
                        ExecStreams{.in = &in, .out = &out, .err = &err});
  ASSERT_TRUE(code.has_value()) << code.error().ToString();
  EXPECT_EQ(*code, 0) << err.str();
  EXPECT_EQ(out.str(), "2\nhello\nworld\n");
}

TEST_F(ExecTest, TesseraExecRunsTheCommandAndExitsWithItsCode) {
  std::istringstream in("piped through the CLI");
  std::ostringstream out, err;
  CommandContext ctx;
  ctx.config = As("erin-token");
  ctx.out = &out;
  ctx.err = &err;
  ctx.in = &in;
  const int code = RunExec(ctx, ExecOptions{.pod = std::string("pod/") + kPod, .stdin_open = true,
                                           .command = {"sh", "-c", "cat; echo; exit 7"}});
  EXPECT_EQ(code, 7);
  EXPECT_EQ(out.str(), "piped through the CLI\n");
  EXPECT_EQ(err.str(), "command terminated with exit code 7\n");
}

TEST_F(ExecTest, OnlyEditorsOfThePodsNamespaceMayExec) {
  std::ostringstream out, err;
  for (const char* token : {"bob-token", "vic-token"}) {  // another team's editor; a viewer
    auto code = ExecInPod(As(token), Target({"true"}), ExecStreams{.out = &out, .err = &err});
    ASSERT_FALSE(code.has_value()) << token;
    EXPECT_EQ(code.error().code(), StatusCode::kPermissionDenied) << code.error().ToString();
    EXPECT_NE(code.error().message().find("cannot create resource \"pods/exec\""), std::string::npos)
        << code.error().message();
  }
  EXPECT_TRUE(out.str().empty());
  // The audit writer appends in batches: its file is read until the refusals are there.
  std::string audit;
  for (int i = 0; i < 500 && audit.find("\"subresource\":\"exec\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream f(dir_ / "audit.log");
    audit.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(audit.find("\"subresource\":\"exec\""), std::string::npos) << "the refusals are audited";
}

TEST_F(ExecTest, TheRealKubectlExecsThroughTheServer) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) GTEST_SKIP() << "kubectl is not installed";
  const fs::path kubeconfig = dir_ / "kubeconfig";
  std::ofstream(kubeconfig) << fmt::format(R"(apiVersion: v1
kind: Config
clusters: [{{name: t, cluster: {{server: "{}", certificate-authority: "{}"}}}}]
users: [{{name: erin, user: {{token: erin-token}}}}]
contexts: [{{name: t, context: {{cluster: t, user: erin, namespace: default}}}}]
current-context: t
)",
                                           server_->url(), cert_.cert);
  const std::string command =
      fmt::format("echo from-stdin | kubectl --kubeconfig {} exec -i {} -- sh -c 'cat; echo $TESSERA_POD_NAME; exit 4' "
                  ">{} 2>{}",
                  kubeconfig.string(), kPod, (dir_ / "kubectl.out").string(), (dir_ / "kubectl.err").string());
  const int status = std::system(command.c_str());
  auto read = [&](const char* name) {
    std::ifstream f(dir_ / name);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4) << read("kubectl.err");
  EXPECT_EQ(read("kubectl.out"), std::string("from-stdin\n") + kPod + "\n") << read("kubectl.err");
}

}  // namespace
}  // namespace tessera
