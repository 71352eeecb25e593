// HTTPS end to end: the real `tessera server` binary started with
// kube-apiserver's flags (--tls-cert-file, --tls-private-key-file) and a
// self-signed certificate made at test time, and the CLI against it with
// kubectl's flags (--certificate-authority, --insecure-skip-tls-verify) or the
// same settings from its config file; plus what a user sees when the
// certificate is not trusted or the URL says http://.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/cli/cli_test_fixture.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/read_file.h"
#include "tests/testing/scoped_env.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::ReadFile;

using testing::ScopedEnv;

// `tessera server ARGS...` as a child process, its output in a file.
class ServerProcess {
 public:
  ServerProcess(const std::vector<std::string>& args, const fs::path& log) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      std::vector<char*> argv = {const_cast<char*>(TESSERA_BINARY), const_cast<char*>("server")};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(TESSERA_BINARY, argv.data());
      _exit(127);
    }
  }
  ~ServerProcess() {
    if (pid_ > 0 && exit_code_ < 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The exit code once the process has ended; nullopt while it runs.
  std::optional<int> Exited() {
    int status = 0;
    if (exit_code_ < 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    return exit_code_ < 0 ? std::nullopt : std::optional<int>(exit_code_);
  }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

class CliTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-cli-tls");
    fs::create_directories(dir_ / "config" / "tessera");
    cert_ = testing::WriteSelfSignedCert(dir_, "server");
    ASSERT_FALSE(cert_.cert.empty()) << "could not make a test certificate";
    // The CLI's config comes from this test alone, never from the environment.
    env_.emplace_back(std::make_unique<ScopedEnv>("XDG_CONFIG_HOME", (dir_ / "config").string()));
    env_.emplace_back(std::make_unique<ScopedEnv>("TESSERA_SERVER", std::nullopt));
    env_.emplace_back(std::make_unique<ScopedEnv>("TESSERA_TOKEN", std::nullopt));
  }
  void TearDown() override {
    server_.reset();
    env_.clear();
    fs::remove_all(dir_);
  }

  // Starts the server with the certificate and key flags (and `extra`), and
  // waits for the line that says where it listens.
  void StartServer() {
    server_ = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--listen", "127.0.0.1:0", "--data-dir", (dir_ / "data").string(), "--tls-cert-file",
                                 cert_.cert, "--tls-private-key-file", cert_.key},
        dir_ / "server.log");
    const std::string marker = "tessera server listening on ";
    for (int i = 0; i < 500 && url_.empty(); ++i) {
      const std::string log = ReadFile(dir_ / "server.log");
      if (const auto at = log.find(marker); at != std::string::npos) {
        const auto start = at + marker.size();
        url_ = log.substr(start, log.find(' ', start) - start);
      } else if (server_->Exited()) {
        FAIL() << "the server exited: " << log;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    ASSERT_FALSE(url_.empty()) << ReadFile(dir_ / "server.log");
    token_ = ReadFile(dir_ / "data" / "admin.token");
    while (!token_.empty() && token_.back() == '\n') token_.pop_back();
    port_ = url_.substr(url_.rfind(':') + 1);
  }

  // `tessera --server URL --token T ARGS...`.
  CommandRun Tessera(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), {"--server", url_, "--token", token_});
    return RunCommandLine(args, stdin_text);
  }

  fs::path dir_;
  testing::CertFiles cert_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
  std::unique_ptr<ServerProcess> server_;
  std::string url_, token_, port_;
};

// The server serves HTTPS; with its CA the CLI creates an object and reads it back.
TEST_F(CliTlsTest, ServerFlagsServeHttpsAndTheCliTrustsTheCertificateAuthority) {
  StartServer();
  EXPECT_EQ(url_, "https://127.0.0.1:" + port_);
  CommandRun applied = Tessera({"--certificate-authority", cert_.cert, "apply", "-f", "-"},
                               "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tls-team\n");
  EXPECT_EQ(applied.rc, 0) << applied.err;
  EXPECT_EQ(applied.out, "namespace/tls-team created\n");
  CommandRun got = Tessera({"get", "ns", "tls-team", "-o", "name", "--certificate-authority", cert_.cert});
  EXPECT_EQ(got.rc, 0) << got.err;
  EXPECT_EQ(got.out, "namespace/tls-team\n");
}

// Without the CA the certificate is refused: exit 1, saying why and which flag fixes it.
TEST_F(CliTlsTest, UntrustedCertificateIsRefusedSayingWhichFlagFixesIt) {
  StartServer();
  CommandRun r = Tessera({"get", "ns"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: the TLS certificate of 127.0.0.1:" + port_ +
                       " is not trusted (self-signed certificate): pass --certificate-authority FILE with the CA "
                       "certificate that signed it, or --insecure-skip-tls-verify to skip the check (insecure)\n");
}

TEST_F(CliTlsTest, InsecureSkipTlsVerifyConnectsWithoutChecking) {
  StartServer();
  CommandRun r = Tessera({"get", "ns", "default", "-o", "name", "--insecure-skip-tls-verify"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "namespace/default\n");
}

// http:// to the HTTPS port: the server's own answer, not a bare reset.
TEST_F(CliTlsTest, PlainHttpUrlGetsTheServersAnswer) {
  StartServer();
  CommandRun r = RunCommandLine({"--server", "http://127.0.0.1:" + port_, "--token", token_, "get", "ns"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "Error from server (BadRequest): this server speaks HTTPS and the request came in plain HTTP: use an "
            "https:// server URL\n");
}

// The config file's certificate-authority (relative to the file) and
// insecure-skip-tls-verify work as the flags do, for the server the file names.
TEST_F(CliTlsTest, ConfigFileGivesTheTlsSettingsOfItsServer) {
  StartServer();
  const fs::path config_dir = dir_ / "config" / "tessera";
  fs::copy_file(cert_.cert, config_dir / "ca.crt");
  std::ofstream(config_dir / "config.yaml") << "server: " << url_ << "\ntoken: " << token_
                                            << "\ncertificate-authority: ca.crt\n";
  CommandRun r = RunCommandLine({"get", "ns", "default", "-o", "name"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "namespace/default\n");
  // The same server under another URL is another server: the file's CA is not for it.
  CommandRun other = RunCommandLine({"--server", "https://localhost:" + port_, "get", "ns"});
  EXPECT_EQ(other.rc, 1);
  EXPECT_NE(other.err.find("is not trusted"), std::string::npos) << other.err;

  // A flag replaces the file's TLS settings: skipping the check is no clash with its CA.
  CommandRun flagged = RunCommandLine({"get", "ns", "default", "-o", "name", "--insecure-skip-tls-verify"});
  EXPECT_EQ(flagged.rc, 0) << flagged.err;

  std::ofstream(config_dir / "config.yaml", std::ios::trunc)
      << "server: " << url_ << "\ntoken: " << token_ << "\ninsecure-skip-tls-verify: true\n";
  CommandRun insecure = RunCommandLine({"get", "ns", "default", "-o", "name"});
  EXPECT_EQ(insecure.rc, 0) << insecure.err;
}

// A certificate without its key is a start-up error naming both flags.
TEST_F(CliTlsTest, CertificateWithoutKeyIsAStartError) {
  ServerProcess server({"--listen", "127.0.0.1:0", "--data-dir", (dir_ / "data").string(), "--tls-cert-file",
                        cert_.cert},
                       dir_ / "server.log");
  std::optional<int> exit_code;
  for (int i = 0; i < 500 && !exit_code; ++i) {
    exit_code = server.Exited();
    if (!exit_code) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(exit_code.has_value()) << "the server kept running: " << ReadFile(dir_ / "server.log");
  EXPECT_EQ(*exit_code, 1);
  EXPECT_NE(ReadFile(dir_ / "server.log")
                .find("error: TLS needs both a certificate (--tls-cert-file) and its private key "
                      "(--tls-private-key-file)"),
            std::string::npos)
      << ReadFile(dir_ / "server.log");
}

}  // namespace
}  // namespace tessera
