// PipelineRuns through the API, with the test as the node's agent: it
// registers a node and ends the steps' pods with exit codes; the server's loop
// (pipeline_controller, then the Job lifecycle) does the rest: a Job per node
// attempt in the DAG's order, fan-out and fan-in, retries with back-off,
// omitted dependents, resume from a previous run, and cache hits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/node_registration.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/team_cluster.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPods = "/api/v1/namespaces/team/pods/";
constexpr const char* kJobs = "/apis/batch/v1/namespaces/team/jobs/";
constexpr const char* kRuns = "/apis/tessera.dev/v1/namespaces/team/pipelineruns/";
constexpr const char* kPipelines = "/apis/tessera.dev/v1/namespaces/team/pipelines/";

// A step running `command`, one GPU.
json Step(const std::string& name, std::vector<std::string> depends_on = {},
          std::vector<std::string> command = {"true"}) {
  json container{{"name", "main"}, {"command", command},
                 {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}, {"limits", {{"nvidia.com/gpu", 1}}}}}};
  json step{{"name", name}, {"template", {{"spec", {{"containers", {container}}}}}}};
  if (!depends_on.empty()) step["dependsOn"] = depends_on;
  return step;
}

json RunOf(const std::string& name, json steps) {
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "PipelineRun"},
              {"metadata", {{"name", name}, {"namespace", "team"}}},
              {"spec", {{"pipelineSpec", {{"steps", std::move(steps)}}}}}};
}

class PipelineTest : public testing::TeamClusterTest {
 protected:
  PipelineTest() : TeamClusterTest("tessera-pipeline") {}

  // The pod of Job `job` (a node attempt: RUN-NODE-ATTEMPT).
  static std::string PodOf(const std::string& job) { return "job-" + job + "-main-0"; }
  json WaitForPod(const std::string& name) {
    return WaitFor(kPods + name, [](const json& p) { return p.contains("metadata"); });
  }
  // As the agent reports a pod's end: its phase and its container's exit code.
  void EndPod(const std::string& name, int exit_code) {
    json pod = WaitForPod(name);
    pod["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
    pod["status"]["containerStatuses"] = {
        {{"name", "main"}, {"state", {{"terminated", {{"exitCode", exit_code}, {"finishedAt", Rfc3339Now()}}}}}}};
    auto r = client_->Request("PUT", std::string(kPods) + name + "/status", pod.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  // Ends the pod of Job `job` once it exists.
  void EndJob(const std::string& job, int exit_code) { EndPod(PodOf(job), exit_code); }
  bool Exists(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200;
  }
  json WaitForPhase(const std::string& run, const std::string& phase) {
    return WaitFor(kRuns + run, [&](const json& o) {
      return o.contains("status") && o["status"].value("phase", "") == phase;
    });
  }
  static std::string NodePhase(const json& run, const std::string& node) {
    return run["status"]["nodes"][node].value("phase", "");
  }

};

TEST_F(PipelineTest, ADiamondRunsItsStepsInDependencyOrder) {
  // a -> (b, c) -> d: b and c start only after a, d only after both.
  Create(RunOf("dia", {Step("a"), Step("b", {"a"}), Step("c", {"a"}), Step("d", {"b", "c"})}));
  WaitForPod(PodOf("dia-a-1"));
  EXPECT_FALSE(Exists(std::string(kJobs) + "dia-b-1")) << "b started before a ended";
  const json job = WaitFor(std::string(kJobs) + "dia-a-1", [](const json& j) { return j.contains("metadata"); });
  EXPECT_EQ(job["metadata"]["labels"]["tessera.dev/pipelinerun"], "dia");
  EXPECT_EQ(job["metadata"]["labels"]["tessera.dev/step"], "a");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["kind"], "PipelineRun");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(job["spec"]["backoffLimit"], 0) << "retries are the pipeline's";
  EndJob("dia-a-1", 0);
  WaitForPod(PodOf("dia-b-1"));
  WaitForPod(PodOf("dia-c-1"));
  EndJob("dia-b-1", 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(Exists(std::string(kJobs) + "dia-d-1")) << "d started before c ended";
  EndJob("dia-c-1", 0);
  EndJob("dia-d-1", 0);
  const json done = WaitForPhase("dia", "Succeeded");
  for (const char* node : {"a", "b", "c", "d"}) {
    EXPECT_EQ(NodePhase(done, node), "Succeeded") << node;
    EXPECT_EQ(done["status"]["nodes"][node]["attempts"], 1) << node;
  }
  EXPECT_EQ(done["status"]["specDigest"].get<std::string>().size(), 64u);
}

TEST_F(PipelineTest, AFanOutCreatesOneJobPerItemAndTheFanInWaitsForAll) {
  // prep withItems [x, y, z]: nodes prep-0..2, each a Job; join waits for the three.
  json prep = Step("prep", {}, {"echo", "{{item}}"});
  prep["withItems"] = {"x", "y", "z"};
  Create(RunOf("fan", {prep, Step("join", {"prep"})}));
  const json pod = WaitForPod(PodOf("fan-prep-1-1"));
  EXPECT_EQ(pod["spec"]["containers"][0]["command"][1], "y") << "{{item}} of prep-1";
  EndJob("fan-prep-0-1", 0);
  EndJob("fan-prep-1-1", 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(Exists(std::string(kJobs) + "fan-join-1")) << "join started before prep-2 ended";
  EndJob("fan-prep-2-1", 0);
  EndJob("fan-join-1", 0);
  const json done = WaitForPhase("fan", "Succeeded");
  EXPECT_EQ(done["status"]["nodes"].size(), 4u);  // prep-0, prep-1, prep-2, join
}

TEST_F(PipelineTest, AFailedStepIsRetriedAfterItsBackoffAndTheRunSucceeds) {
  // retries {limit 2, backoffSeconds 1}: the first attempt fails (exit 1), the
  // second (Job flaky-s-2, a second or more later) succeeds.
  json s = Step("s");
  s["retries"] = {{"limit", 2}, {"backoffSeconds", 1}};
  Create(RunOf("flaky", {s}));
  EndJob("flaky-s-1", 1);
  const json failed_once = WaitFor(kRuns + std::string("flaky"), [](const json& o) {
    return o.contains("status") && NodePhase(o, "s") == "Failed";
  });
  EXPECT_NE(failed_once["status"]["nodes"]["s"].value("message", "").find("backoff limit"), std::string::npos)
      << failed_once["status"]["nodes"]["s"].dump();
  EndJob("flaky-s-2", 0);
  const json done = WaitForPhase("flaky", "Succeeded");
  EXPECT_EQ(done["status"]["nodes"]["s"]["attempts"], 2);
  EXPECT_EQ(done["status"]["nodes"]["s"]["job"], "flaky-s-2");
}

TEST_F(PipelineTest, APermanentFailureOmitsItsDependentsAndFailsTheRun) {
  // a fails with no retries: b (after a) is Omitted, the independent c still runs.
  Create(RunOf("bad", {Step("a"), Step("b", {"a"}), Step("c")}));
  EndJob("bad-a-1", 2);
  EndJob("bad-c-1", 0);
  const json done = WaitForPhase("bad", "Failed");
  EXPECT_EQ(NodePhase(done, "a"), "Failed");
  EXPECT_EQ(NodePhase(done, "b"), "Omitted");
  EXPECT_EQ(NodePhase(done, "c"), "Succeeded");
  EXPECT_FALSE(Exists(std::string(kJobs) + "bad-b-1"));
  EXPECT_NE(done["status"].value("message", "").find("a"), std::string::npos) << done["status"].dump();
}

TEST_F(PipelineTest, AResumeRerunsOnlyTheFixedStepAndItsDependents) {
  // first: a ok, b fails, c (after b) omitted. second (resumeFrom first, b's
  // command fixed): a is carried over (no Job), b and c run.
  Create(RunOf("first", {Step("a"), Step("b", {"a"}, {"false"}), Step("c", {"b"})}));
  EndJob("first-a-1", 0);
  EndJob("first-b-1", 1);
  WaitForPhase("first", "Failed");
  json second = RunOf("second", {Step("a"), Step("b", {"a"}, {"true"}), Step("c", {"b"})});
  second["spec"]["resumeFrom"] = "first";
  Create(second);
  WaitForPod(PodOf("second-b-1"));
  EXPECT_FALSE(Exists(std::string(kJobs) + "second-a-1")) << "a was rerun";
  EndJob("second-b-1", 0);
  EndJob("second-c-1", 0);
  const json done = WaitForPhase("second", "Succeeded");
  EXPECT_EQ(NodePhase(done, "a"), "Succeeded");
  EXPECT_EQ(done["status"]["nodes"]["a"]["resumedFrom"], "first");
  EXPECT_EQ(done["status"]["nodes"]["a"]["attempts"], 0);
  EXPECT_EQ(done["status"]["nodes"]["b"]["attempts"], 1);
}

TEST_F(PipelineTest, AStepWithTheSameTemplateAndInputsIsACacheHit) {
  // one's a succeeds; two runs the same spec: a is Cached from one, no Job.
  Create(RunOf("one", {Step("a")}));
  EndJob("one-a-1", 0);
  WaitForPhase("one", "Succeeded");
  Create(RunOf("two", {Step("a")}));
  const json done = WaitForPhase("two", "Succeeded");
  EXPECT_EQ(NodePhase(done, "a"), "Cached");
  EXPECT_EQ(done["status"]["nodes"]["a"]["message"], "cache hit: one/a");
  const json one = WaitForPhase("one", "Succeeded");
  EXPECT_EQ(done["status"]["nodes"]["a"]["cacheKey"], one["status"]["nodes"]["a"]["cacheKey"]);
  EXPECT_FALSE(Exists(std::string(kJobs) + "two-a-1"));
}

TEST_F(PipelineTest, ARunOfAPipelineRecordsItsSpecAndThePipelineIsImmutable) {
  // A Pipeline's spec may not change; a run of it records the spec it ran.
  json pipeline{{"apiVersion", "tessera.dev/v1"},
                {"kind", "Pipeline"},
                {"metadata", {{"name", "train"}, {"namespace", "team"}}},
                {"spec", {{"steps", {Step("a")}}}}};
  Create(pipeline);
  json changed = WaitFor(std::string(kPipelines) + "train", [](const json& o) { return o.contains("metadata"); });
  changed["spec"]["steps"][0]["name"] = "b";
  auto r = client_->Request("PUT", std::string(kPipelines) + "train", changed.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec: a Pipeline is immutable; create a new version (a new name)"), std::string::npos)
      << r->body;
  Create({{"apiVersion", "tessera.dev/v1"},
          {"kind", "PipelineRun"},
          {"metadata", {{"name", "r1"}, {"namespace", "team"}}},
          {"spec", {{"pipelineRef", {{"name", "train"}}}}}});
  const json running = WaitFor(std::string(kRuns) + "r1", [](const json& o) {
    return o.contains("status") && o["status"].contains("pipelineSpec");
  });
  EXPECT_EQ(running["status"]["pipelineSpec"], pipeline["spec"]);
  EndJob("r1-a-1", 0);
  WaitForPhase("r1", "Succeeded");
}

TEST_F(PipelineTest, AStepWhoseJobTheApiWouldRefuseFailsForGood) {
  // a's template sets restartPolicy Always, which a Job refuses: a fails with
  // the reason and no Job; b (after a) is omitted.
  json a = Step("a");
  a["template"]["spec"]["restartPolicy"] = "Always";
  Create(RunOf("refused", {a, Step("b", {"a"})}));
  const json done = WaitForPhase("refused", "Failed");
  EXPECT_NE(done["status"]["nodes"]["a"].value("message", "").find("spec.template.spec.restartPolicy"),
            std::string::npos)
      << done["status"]["nodes"]["a"].dump();
  EXPECT_EQ(NodePhase(done, "b"), "Omitted");
  EXPECT_FALSE(Exists(std::string(kJobs) + "refused-a-1"));
}

TEST_F(PipelineTest, DeletingARunDeletesItsJobs) {
  // A run with a running step is deleted: its Job goes (and with it, its Workload and pod).
  Create(RunOf("gone", {Step("a")}));
  WaitForPod(PodOf("gone-a-1"));
  auto r = client_->Request("DELETE", std::string(kRuns) + "gone");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Exists(std::string(kJobs) + "gone-a-1") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(Exists(std::string(kJobs) + "gone-a-1")) << "the deleted run's Job is still there";
}

// With a volume root (the server's --volume-root): each run gets a claim, and a
// container step gets it mounted, its outputs at /tessera/outputs and each
// upstream node's read-only at /tessera/inputs/STEP; the controller reads
// OUTPUT/result when the node succeeds.
class PipelineArtifactsTest : public PipelineTest {
 protected:
  void SetUp() override {
    volumes_ = testing::FreshTestDir("tessera-pipeline-volumes");
    server_options_.volume_root = volumes_.string();
    PipelineTest::SetUp();
  }
  void TearDown() override {
    PipelineTest::TearDown();
    std::filesystem::remove_all(volumes_);
  }
  std::filesystem::path volumes_;
};

// The value of variable `name` in a container's env, and its index ("" and -1 when absent).
std::pair<std::string, int> EnvOf(const json& container, const std::string& name) {
  const json env = container.value("env", json::array());
  for (size_t i = 0; i < env.size(); ++i) {
    if (env[i].value("name", "") == name) return {env[i].value("value", ""), static_cast<int>(i)};
  }
  return {"", -1};
}

TEST_F(PipelineArtifactsTest, AContainerStepMountsItsOutputsAndItsUpstreamOutputsFromTheRunsClaim) {
  json a = Step("a");
  a["template"]["spec"]["containers"][0]["image"] = "busybox:1.36";
  a["template"]["spec"]["containers"][0]["env"] = {{{"name", "TESSERA_INPUT_DIR"}, {"value", "/mine"}}};
  json b = Step("b", {"a"}, {"echo", "{{steps.a.outputs.result}}"});
  b["template"]["spec"]["containers"][0]["image"] = "busybox:1.36";
  Create(RunOf("art", {a, b}));
  const json pod_a = WaitForPod(PodOf("art-a-1"));
  const json run = WaitFor(kRuns + std::string("art"), [](const json& o) {
    return !o.value("status", json::object()).value("artifacts", json::object()).empty();
  });
  const std::string uid = run["status"]["artifacts"].value("claimUid", "");
  EXPECT_EQ(run["status"]["artifacts"]["claimName"], "art-artifacts");
  // The claim: the run's, bound.
  const json claim =
      WaitFor("/api/v1/namespaces/team/persistentvolumeclaims/art-artifacts", [](const json&) { return true; });
  EXPECT_EQ(claim["metadata"]["uid"], uid);
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["name"], "art");
  EXPECT_EQ(claim["status"]["phase"], "Bound");

  EXPECT_EQ(pod_a["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "art-artifacts");
  const json& ca = pod_a["spec"]["containers"][0];
  EXPECT_EQ(EnvOf(ca, "TESSERA_OUTPUT_DIR").first, "/tessera/outputs");
  // The template's own variable comes after the controller's, so it wins.
  EXPECT_EQ(ca["env"][1]["name"], "TESSERA_INPUT_DIR");
  EXPECT_EQ(ca["env"][2]["value"], "/mine");
  EXPECT_EQ(ca["volumeMounts"][0]["mountPath"], "/tessera/outputs");
  EXPECT_EQ(ca["volumeMounts"][0]["subPath"], "a");

  // a's output directory is there and empty; what it writes as result is b's {{steps.a.outputs.result}}.
  const std::filesystem::path out = volumes_ / ("team-art-artifacts-" + uid) / "a";
  ASSERT_TRUE(std::filesystem::is_directory(out));
  EXPECT_TRUE(std::filesystem::is_empty(out));
  std::ofstream(out / "result") << "0.93\n";
  EndJob("art-a-1", 0);
  const json pod_b = WaitForPod(PodOf("art-b-1"));
  const json& cb = pod_b["spec"]["containers"][0];
  EXPECT_EQ(cb["command"][1], "0.93");
  EXPECT_EQ(EnvOf(cb, "TESSERA_INPUT_DIR").first, "/tessera/inputs");
  ASSERT_EQ(cb["volumeMounts"].size(), 2u) << cb.dump();
  EXPECT_EQ(cb["volumeMounts"][1]["mountPath"], "/tessera/inputs/a");
  EXPECT_EQ(cb["volumeMounts"][1]["subPath"], "a");
  EXPECT_EQ(cb["volumeMounts"][1]["readOnly"], true);
  const json after = WaitFor(kRuns + std::string("art"), [](const json& o) { return NodePhase(o, "a") == "Succeeded"; });
  EXPECT_EQ(after["status"]["nodes"]["a"]["result"], "0.93");
  EXPECT_EQ(after["status"]["nodes"]["a"]["outputDigest"].get<std::string>().size(), 64u);
  EndJob("art-b-1", 0);
  WaitForPhase("art", "Succeeded");
}

TEST_F(PipelineArtifactsTest, ARunIsRefusedAClaimOfItsNameThatIsNotItsOwn) {
  Create({{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", "mine-artifacts"}, {"namespace", "team"}}},
          {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  Create(RunOf("mine", {Step("a")}));
  const json failed = WaitForPhase("mine", "Failed");
  EXPECT_NE(failed["status"].value("message", "").find("PersistentVolumeClaim mine-artifacts exists"),
            std::string::npos)
      << failed.dump();
  EXPECT_FALSE(Exists(std::string(kJobs) + "mine-a-1"));
}

TEST_F(PipelineArtifactsTest, ARunWaitsForRoomForItsClaimUnderAQuota) {
  // Its claim is the controller's, not the API's, but counted as the API counts one.
  Create({{"apiVersion", "v1"},
          {"kind", "ResourceQuota"},
          {"metadata", {{"name", "claims"}, {"namespace", "team"}}},
          {"spec", {{"hard", {{"persistentvolumeclaims", "0"}}}}}});
  Create(RunOf("full", {Step("a")}));
  const json waiting = WaitFor(kRuns + std::string("full"), [](const json& o) {
    return o.value("status", json::object()).value("message", "").find("exceeded quota: claims") != std::string::npos;
  });
  EXPECT_EQ(waiting["status"]["phase"], "Pending") << waiting.dump();
  EXPECT_FALSE(Exists("/api/v1/namespaces/team/persistentvolumeclaims/full-artifacts"));
  EXPECT_FALSE(Exists(std::string(kJobs) + "full-a-1"));
  auto r = client_->Request("DELETE", "/api/v1/namespaces/team/resourcequotas/claims");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  WaitForPod(PodOf("full-a-1"));
  EXPECT_TRUE(Exists("/api/v1/namespaces/team/persistentvolumeclaims/full-artifacts"));
}

}  // namespace
}  // namespace tessera
