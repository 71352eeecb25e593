// A PipelineRun end to end: a real server and a real agent sharing a volume
// root, and per node attempt a real `sh` script. The diamond
//
//   a -> (b over three items, c) -> d
//
// passes files between steps (TESSERA_OUTPUT_DIR, TESSERA_INPUT_DIR/<step>,
// TESSERA_INPUT_DIR/b/<item index>) and a result ({{steps.c.outputs.result}}
// in d's command, {{steps.a.outputs.result}} in b's condition). b-1 fails its
// first attempt (leaving a file that must not reach d) and succeeds on its
// retry; c fails for good until a parameter fixes it; a second run resumes the
// first without running a or b again; a third run with the same inputs but
// d's is a cache hit for a, b and c, and d reads their artifacts from the runs
// that made them. Every script appends to a count file, so "did not run
// again" is a count that did not change.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_agent.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kRuns = "/apis/tessera.dev/v1/namespaces/default/pipelineruns/";

class PipelineAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-pipeline-agent");
    // Written by the scripts, which run as the namespace's user when the agent is root.
    for (const char* d : {"counts", "markers"}) {
      fs::create_directories(dir_ / d);
      fs::permissions(dir_ / d, fs::perms::all);
    }
    fs::create_directories(dir_ / "volumes");
    ServerOptions so;
    so.volume_root = (dir_ / "volumes").string();
    server_ = testing::StartLocalServer((dir_ / "server").string(), so);
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    AgentOptions o = testing::TestAgentOptions(*server_, dir_, "node-1", "1xA100-80GB");
    o.volume_root = (dir_ / "volumes").string();
    auto a = Agent::Start(o);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
  }
  void TearDown() override {
    agent_.reset();
    testing::KillAgentPods(dir_ / "node-1");
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  // How many times NODE's script started (lines of its count file).
  int Count(const std::string& node) const {
    std::ifstream in(dir_ / "counts" / node);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

  // A step running `script` under sh, its count file appended to first.
  json Step(const std::string& name, const std::string& count, const std::string& script) const {
    const std::string body = "echo run >> " + (dir_ / "counts").string() + "/" + count + "; " + script;
    return json{{"name", name},
                {"template",
                 {{"spec",
                   {{"terminationGracePeriodSeconds", 1},
                    {"containers", {{{"name", "main"}, {"command", {"sh", "-c", body}}}}}}}}}};
  }

  // The diamond; `mode` fixes c, `tag` is d's own.
  json Run(const std::string& name, const std::string& mode, const std::string& tag,
           const std::string& resume_from = "") const {
    const std::string marker = (dir_ / "markers" / "b-1").string();
    json a = Step("a", "a",
                  "echo hello > $TESSERA_OUTPUT_DIR/data && echo 42 > $TESSERA_OUTPUT_DIR/result");
    // b-1 fails its first attempt, leaving a file behind, and succeeds on its retry.
    json b = Step("b", "b-{{item}}",
                  "test \"$(cat $TESSERA_INPUT_DIR/a/data)\" = hello || exit 3; "
                  "if [ {{item}} = y ] && [ ! -e " + marker + " ]; then touch " + marker +
                      "; echo leftover > $TESSERA_OUTPUT_DIR/junk; exit 1; fi; "
                      "echo \"b-{{item}} $(cat $TESSERA_INPUT_DIR/a/data)\" > $TESSERA_OUTPUT_DIR/data");
    b["dependsOn"] = {"a"};
    b["withItems"] = {"x", "y", "z"};
    b["when"] = "{{steps.a.outputs.result}} == 42";
    b["retries"] = {{"limit", 1}, {"backoffSeconds", 0}};
    json c = Step("c", "c",
                  "[ {{params.mode}} = fixed ] || exit 2; "
                  "echo \"c $(cat $TESSERA_INPUT_DIR/a/data)\" > $TESSERA_OUTPUT_DIR/data && "
                  "echo c-ok > $TESSERA_OUTPUT_DIR/result");
    c["dependsOn"] = {"a"};
    // d checks everything it reads; any difference fails it (exit 4), and the run with it.
    json d = Step("d", "d",
                  "I=$TESSERA_INPUT_DIR; "
                  "test \"$(cat $I/b/0/data)\" = 'b-x hello' && test \"$(cat $I/b/1/data)\" = 'b-y hello' && "
                  "test \"$(cat $I/b/2/data)\" = 'b-z hello' && test ! -e $I/b/1/junk && "
                  "test \"$(cat $I/c/data)\" = 'c hello' && test {{steps.c.outputs.result}} = c-ok && "
                  "test -z \"$(ls -A $TESSERA_OUTPUT_DIR)\" || exit 4; "
                  "cat $I/b/0/data $I/b/1/data $I/b/2/data $I/c/data > $TESSERA_OUTPUT_DIR/all && "
                  "echo {{params.tag}} > $TESSERA_OUTPUT_DIR/result");
    d["dependsOn"] = {"b", "c"};
    json spec{{"pipelineSpec",
               {{"parameters", {{{"name", "mode"}}, {{"name", "tag"}}}}, {"steps", {a, b, c, d}}}},
              {"parameters", {{{"name", "mode"}, {"value", mode}}, {{"name", "tag"}, {"value", tag}}}}};
    if (!resume_from.empty()) spec["resumeFrom"] = resume_from;
    return json{{"apiVersion", "tessera.dev/v1"},
                {"kind", "PipelineRun"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec", std::move(spec)}};
  }

  // Creates the run and waits for it to end.
  json RunToEnd(const json& run) {
    auto r = client_->Request("POST", kRuns, run.dump());
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, 201) << r->body;
    return WaitForObject(
        *client_, kRuns + run["metadata"]["name"].get<std::string>(),
        [](const json& p) {
          const std::string phase = p.value("status", json::object()).value("phase", "");
          return phase == "Succeeded" || phase == "Failed";
        },
        std::chrono::seconds(60));
  }

  // The file PATH under the run's claim directory ("" when absent).
  std::string ClaimFile(const json& run, const std::string& path) const {
    const json& a = run["status"]["artifacts"];
    std::ifstream in(dir_ / "volumes" /
                     ("default-" + a.value("claimName", "") + "-" + a.value("claimUid", "")) / path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
};

std::string Phase(const json& run, const std::string& node) {
  return run["status"]["nodes"].value(node, json::object()).value("phase", "");
}

TEST_F(PipelineAgentTest, ADiamondPassesArtifactsRetriesResumesAndHitsTheCache) {
  // 1. c fails for good (no retries): d is omitted, the run fails; b-1 failed once and was retried.
  const json first = RunToEnd(Run("first", "broken", "one"));
  ASSERT_EQ(first["status"].value("phase", ""), "Failed") << first.dump(2);
  for (const char* node : {"a", "b-0", "b-1", "b-2"}) EXPECT_EQ(Phase(first, node), "Succeeded") << node;
  EXPECT_EQ(Phase(first, "c"), "Failed");
  EXPECT_EQ(Phase(first, "d"), "Omitted");
  EXPECT_EQ(first["status"]["nodes"]["b-1"]["attempts"], 2);
  EXPECT_EQ(first["status"]["nodes"]["a"]["result"], "42");
  EXPECT_EQ(ClaimFile(first, "a/data"), "hello\n");
  EXPECT_EQ(ClaimFile(first, "b/1/data"), "b-y hello\n");
  EXPECT_EQ(ClaimFile(first, "b/1/junk"), "") << "a retry starts from an empty output directory";
  EXPECT_EQ(Count("a"), 1);
  EXPECT_EQ(Count("b-x"), 1);
  EXPECT_EQ(Count("b-y"), 2);
  EXPECT_EQ(Count("b-z"), 1);
  EXPECT_EQ(Count("c"), 1);
  EXPECT_EQ(Count("d"), 0);
  // The run's claim: its own, bound, owned by it.
  auto claim = client_->Request("GET", "/api/v1/namespaces/default/persistentvolumeclaims/first-artifacts");
  ASSERT_TRUE(claim.has_value());
  ASSERT_EQ(claim->status, 200) << claim->body;
  EXPECT_EQ(json::parse(claim->body)["metadata"]["ownerReferences"][0]["name"], "first");

  // 2. Fixed, resumed: a and b are carried over (not run again), c and d run.
  const json second = RunToEnd(Run("second", "fixed", "one", "first"));
  ASSERT_EQ(second["status"].value("phase", ""), "Succeeded") << second.dump(2);
  for (const char* node : {"a", "b-0", "b-1", "b-2"}) {
    EXPECT_EQ(Phase(second, node), "Succeeded") << node;
    EXPECT_EQ(second["status"]["nodes"][node].value("resumedFrom", ""), "first") << node;
  }
  EXPECT_EQ(Count("a"), 1);
  EXPECT_EQ(Count("b-x"), 1);
  EXPECT_EQ(Count("b-y"), 2);
  EXPECT_EQ(Count("b-z"), 1);
  EXPECT_EQ(Count("c"), 2);
  EXPECT_EQ(Count("d"), 1);
  EXPECT_EQ(second["status"]["nodes"]["d"]["result"], "one");
  EXPECT_EQ(ClaimFile(second, "d/all"), "b-x hello\nb-y hello\nb-z hello\nc hello\n");

  // 3. A new run with the same inputs but d's: a, b and c are cache hits, and
  // d (run again) reads their artifacts from the runs that made them.
  const json third = RunToEnd(Run("third", "fixed", "two"));
  ASSERT_EQ(third["status"].value("phase", ""), "Succeeded") << third.dump(2);
  for (const char* node : {"a", "b-0", "b-1", "b-2", "c"}) EXPECT_EQ(Phase(third, node), "Cached") << node;
  EXPECT_EQ(Phase(third, "d"), "Succeeded");
  EXPECT_EQ(third["status"]["nodes"]["c"]["artifacts"]["claim"], "second-artifacts");
  EXPECT_EQ(third["status"]["nodes"]["a"]["artifacts"]["claim"], "first-artifacts");
  EXPECT_EQ(Count("a"), 1);
  EXPECT_EQ(Count("b-y"), 2);
  EXPECT_EQ(Count("c"), 2);
  EXPECT_EQ(Count("d"), 2);
  EXPECT_EQ(third["status"]["nodes"]["d"]["result"], "two");
  EXPECT_EQ(ClaimFile(third, "d/all"), "b-x hello\nb-y hello\nb-z hello\nc hello\n");

  // 4. Deleting a run deletes its claim (the claim reclaimer then its directory).
  auto deleted = client_->Request("DELETE", std::string(kRuns) + "third");
  ASSERT_TRUE(deleted.has_value());
  ASSERT_EQ(deleted->status, 200) << deleted->body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 200;
  while (status != 404 && std::chrono::steady_clock::now() < deadline) {
    auto r = client_->Request("GET", "/api/v1/namespaces/default/persistentvolumeclaims/third-artifacts");
    status = r ? r->status : 0;
    if (status != 404) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, 404) << "the deleted run's claim is still there";
}

}  // namespace
}  // namespace tessera
