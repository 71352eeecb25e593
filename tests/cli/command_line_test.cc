// The command line itself: flags in kubectl's places, `--` before a submitted
// command, and exit code 2 for anything CLI11 cannot parse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "client/client_config.h"
#include "tests/cli/cli_test_fixture.h"
#include "tests/testing/scoped_env.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

class CommandLineTest : public CliTest {
 protected:
  // Runs `tessera ARGS...` through the same wiring as main(), with --server and
  // --token for the test's server first (before the command) unless `connect` is false.
  CommandRun Tessera(std::vector<std::string> args, bool connect = true) {
    if (connect) {
      args.insert(args.begin(), {"--server", server_->url(), "--token", server_->admin_token()});
    }
    return RunCommandLine(args);
  }
};

// -n and the global flags may come after the subcommand, as with kubectl.
TEST_F(CommandLineTest, GlobalFlagsAfterTheCommand) {
  ApplySeed();
  CommandRun r = Tessera({"get", "localqueues", "-n", "team-nlp", "-o", "name"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "localqueue.kueue.x-k8s.io/team-nlp-queue\n");
}

// Everything after `--` is the submitted command, flags included.
TEST_F(CommandLineTest, SubmitTakesTheCommandAfterDoubleDash) {
  CommandRun r = Tessera({"submit", "nb", "--queue", "default", "--gpu", "0.5", "--", "python", "-m", "train",
                          "--lr", "3e-4", "-n", "7"});
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json job = GetJson("/apis/batch/v1/namespaces/default/jobs/nb");
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["command"],
            nlohmann::json({"python", "-m", "train", "--lr", "3e-4", "-n", "7"}));
}

// What CLI11 refuses exits 2 without contacting the server.
TEST_F(CommandLineTest, ParseErrorsExitTwo) {
  EXPECT_EQ(Tessera({"get"}, false).rc, 2);                          // KIND missing
  EXPECT_EQ(Tessera({"get", "ns", "-o", "table"}, false).rc, 2);     // not an output format
  EXPECT_EQ(Tessera({"submit"}, false).rc, 2);                       // NAME missing (--queue is optional)
  EXPECT_EQ(Tessera({"train", "x", "--workers", "0", "--", "true"}, false).rc, 2);
  EXPECT_EQ(Tessera({"submit", "x", "--queue", "q", "--type", "cron", "--", "true"}, false).rc, 2);
  EXPECT_EQ(Tessera({"submit", "x", "--queue", "q", "--workers", "0", "--", "true"}, false).rc, 2);
  EXPECT_EQ(Tessera({"apply"}, false).rc, 2);                        // -f missing
  EXPECT_EQ(Tessera({"get", "ns", "--frobnicate"}, false).rc, 2);
  CommandRun r = Tessera({"get", "ns", "-o", "table"}, false);
  EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
  CommandRun timeout = Tessera({"get", "ns", "--request-timeout", "soon"}, false);
  EXPECT_EQ(timeout.rc, 2);
  EXPECT_NE(timeout.err.find("--request-timeout: 'soon' is not a duration: give one such as 30s"), std::string::npos)
      << timeout.err;
}

// An unknown command is named, in kubectl's words, with the commands it is
// close to; `tessera` alone prints its help.
TEST_F(CommandLineTest, AnUnknownCommandIsNamedWithTheCloseOnes) {
  CommandRun typo = Tessera({"sumbit", "x"}, false);
  EXPECT_EQ(typo.rc, 2);
  EXPECT_EQ(typo.err,
            "error: unknown command \"sumbit\" for \"tessera\"\n\nDid you mean this?\n\tsubmit\n\n"
            "Run 'tessera --help' for usage.\n");
  CommandRun after_flags = Tessera({"sumbit", "x"});  // --server URL --token T first
  EXPECT_EQ(after_flags.rc, 2);
  EXPECT_NE(after_flags.err.find("unknown command \"sumbit\""), std::string::npos) << after_flags.err;
  CommandRun unknown = Tessera({"api-resources"}, false);
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_EQ(unknown.err, "error: unknown command \"api-resources\" for \"tessera\"\nRun 'tessera --help' for usage.\n");
  CommandRun alone = RunCommandLine({});
  EXPECT_EQ(alone.rc, 0);
  EXPECT_NE(alone.out.find("Subcommands:"), std::string::npos) << alone.out;
  EXPECT_NE(alone.out.find("submit"), std::string::npos) << alone.out;
}

// --request-timeout takes kubectl's forms; against a live server it changes nothing.
TEST_F(CommandLineTest, RequestTimeoutAcceptsDurations) {
  for (const std::string timeout : {"0", "30s", "2m", "1h30m", "45"}) {
    CommandRun r = Tessera({"get", "ns", "default", "-o", "name", "--request-timeout", timeout});
    EXPECT_EQ(r.rc, 0) << timeout << ": " << r.err;
    EXPECT_EQ(r.out, "namespace/default\n") << timeout;
  }
}

// --chunk-size reads a list a few objects per request; all of them arrive.
TEST_F(CommandLineTest, ChunkSizeFlagPagesTheList) {
  ApiClient client = Admin();
  for (const char* name : {"chunk-a", "chunk-b", "chunk-c"}) {
    ASSERT_EQ(client.Request("POST", "/api/v1/namespaces",
                             nlohmann::json{{"apiVersion", "v1"}, {"kind", "Namespace"},
                                            {"metadata", {{"name", name}, {"labels", {{"chunk", "yes"}}}}}}
                                 .dump())
                  ->status,
              201);
  }
  CommandRun r = Tessera({"get", "ns", "-l", "chunk", "--chunk-size", "2", "-o", "name"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "namespace/chunk-a\nnamespace/chunk-b\nnamespace/chunk-c\n");
  EXPECT_EQ(Tessera({"get", "ns", "--chunk-size", "-1"}, false).rc, 2);  // not a size
}

// --help exits 0 and shows the command's own usage line.
TEST_F(CommandLineTest, HelpShowsTheUsage) {
  CommandRun r = Tessera({"delete", "--help"}, false);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Usage: tessera delete KIND NAME... [-n NAMESPACE] [--ignore-not-found]\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Exit codes: 0 success, 1 refused or failed, 2 usage error"), std::string::npos) << r.out;
}

// In a pod, the agent sets TESSERA_SERVER, TESSERA_TOKEN_FILE and
// TESSERA_NAMESPACE: with no config file, the namespace is the pod's, as
// kubectl's in-cluster config takes the pod's namespace; a context's
// namespace, when there is one, comes first.
TEST(ClientConfigTest, TheNamespaceIsTheContextsElseTesseraNamespace) {
  const std::filesystem::path dir = testing::FreshTestDir("tessera-client-config");
  testing::ScopedEnv config_home("XDG_CONFIG_HOME", dir.string());
  testing::ScopedEnv server("TESSERA_SERVER", "http://127.0.0.1:1");
  testing::ScopedEnv token("TESSERA_TOKEN", std::nullopt);
  testing::ScopedEnv token_file("TESSERA_TOKEN_FILE", std::nullopt);
  testing::ScopedEnv ns("TESSERA_NAMESPACE", "team-a");
  auto in_pod = ResolveClientConfig(ClientFlags{});
  ASSERT_TRUE(in_pod.has_value()) << in_pod.error().ToString();
  EXPECT_EQ(in_pod->ns, "team-a");
  std::filesystem::create_directories(dir / "tessera");
  std::ofstream(dir / "tessera" / "config.yaml") << "current-context: mine\n"
                                                    "contexts:\n"
                                                    "  - name: mine\n"
                                                    "    server: http://127.0.0.1:2\n"
                                                    "    namespace: team-b\n";
  auto with_context = ResolveClientConfig(ClientFlags{});
  ASSERT_TRUE(with_context.has_value()) << with_context.error().ToString();
  EXPECT_EQ(with_context->ns, "team-b");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
