// The batch/v1 Job lifecycle through the API, with the test as the node's
// agent: it registers a node and writes the pods' phases and exit codes; the
// server's loop (job_lifecycle_controller) does the rest: completions and
// Indexed Jobs, backoffLimit with its back-off, podFailurePolicy, and
// activeDeadlineSeconds.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "agent/node_registration.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/controllers/trainingjob_controller.h"
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

class JobLifecycleTest : public testing::TeamClusterTest {
 protected:
  JobLifecycleTest() : TeamClusterTest("tessera-joblife") {}

  static json Job(const std::string& name, int parallelism, std::optional<int> completions) {
    json container{{"name", "main"}, {"command", {"sleep", "3600"}},
                   {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}, {"limits", {{"nvidia.com/gpu", 1}}}}}};
    json spec{{"parallelism", parallelism},
              {"template", {{"spec", {{"containers", {container}}, {"restartPolicy", "Never"}}}}}};
    if (completions) spec["completions"] = *completions;
    return json{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}, {"namespace", "team"}}},
                {"spec", spec}};
  }
  json WaitForPod(const std::string& name) {
    return WaitFor(kPods + name, [](const json& p) { return p.contains("metadata"); });
  }
  // As the agent reports a pod's end: its phase and its container's exit code,
  // `ended_ago` seconds ago.
  void EndPod(const std::string& name, int exit_code, int ended_ago = 0) {
    json pod = WaitForPod(name);
    const std::string at = FormatRfc3339(SystemNow() + Duration::Seconds(-ended_ago));
    pod["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
    pod["status"]["containerStatuses"] = {
        {{"name", "main"}, {"state", {{"terminated", {{"exitCode", exit_code}, {"finishedAt", at}}}}}}};
    auto r = client_->Request("PUT", std::string(kPods) + name + "/status", pod.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  void RunPod(const std::string& name) {
    json pod = WaitForPod(name);
    pod["status"]["phase"] = "Running";
    auto r = client_->Request("PUT", std::string(kPods) + name + "/status", pod.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  static std::string IndexEnv(const json& pod) {
    for (const json& e : pod["spec"]["containers"][0].value("env", json::array())) {
      if (e.value("name", "") == "JOB_COMPLETION_INDEX") return e.value("value", "");
    }
    return "";
  }
  static std::string JobCondition(const json& job, const char* type, const char* field) {
    return ConditionField(job, type, field);
  }

};

TEST_F(JobLifecycleTest, AnIndexedJobRunsEveryIndexOnItsSlotsAndCompletes) {
  // completions 4, parallelism 2: slots 0 and 1 start indexes 0 and 1; each
  // slot whose pod succeeds takes the next index left (2, then 3).
  json job = Job("array", 2, 4);
  job["spec"]["completionMode"] = "Indexed";
  Create(job);
  EXPECT_EQ(IndexEnv(WaitForPod("job-array-main-0")), "0");
  EXPECT_EQ(IndexEnv(WaitForPod("job-array-main-1")), "1");
  EndPod("job-array-main-0", 0);
  const json third = WaitForPod("job-array-main-0-1");
  EXPECT_EQ(IndexEnv(third), "2");
  EXPECT_EQ(third["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], "2");
  EXPECT_EQ(third["spec"]["nodeName"], "node-1") << "the slot's placement is kept";
  EndPod("job-array-main-1", 0);
  EXPECT_EQ(IndexEnv(WaitForPod("job-array-main-1-1")), "3");
  EndPod("job-array-main-0-1", 0);
  EndPod("job-array-main-1-1", 0);
  const json done = WaitFor(std::string(kJobs) + "array", [](const json& j) { return JobCondition(j, "Complete", "status") == "True"; });
  EXPECT_EQ(done["status"]["succeeded"], 4);
  EXPECT_EQ(done["status"]["completedIndexes"], "0-3");
  EXPECT_EQ(done["status"]["active"], 0);
}

TEST_F(JobLifecycleTest, AFailedPodIsRetriedUntilTheBackoffLimitIsPassed) {
  // backoffLimit 1: the first failure is retried (its back-off, 10 s, has
  // passed: it ended 11 s ago); the second (2 > 1) fails the Job.
  json job = Job("flaky", 1, 1);
  job["spec"]["backoffLimit"] = 1;
  Create(job);
  EndPod("job-flaky-main-0", 3, 11);
  const json retry = WaitForPod("job-flaky-main-0-1");
  EXPECT_EQ(retry["metadata"]["annotations"]["tessera.dev/attempt"], "1");
  EXPECT_EQ(WaitFor(std::string(kJobs) + "flaky", [](const json& j) { return j.value("status", json::object()).value("failed", 0) == 1; })
                ["status"]["active"],
            1);
  EndPod("job-flaky-main-0-1", 3);
  const json failed = WaitFor(std::string(kJobs) + "flaky", [](const json& j) { return JobCondition(j, "Failed", "status") == "True"; });
  EXPECT_EQ(JobCondition(failed, "Failed", "reason"), "BackoffLimitExceeded");
  EXPECT_EQ(JobCondition(failed, "Failed", "message"), "Job has reached the specified backoff limit");
  EXPECT_EQ(failed["status"]["failed"], 2);
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/job-flaky",
                          [](const json& w) { return ConditionField(w, "Finished", "status") == "True"; });
  EXPECT_NE(ConditionField(wl, "Finished", "message").find("exit code 3"), std::string::npos)
      << ConditionField(wl, "Finished", "message");
}

TEST_F(JobLifecycleTest, ARetryWaitsForItsBackoff) {
  // A failure that just happened is retried only after 10 s: a pass now
  // creates no replacement (checked 2 s on, several passes later).
  json job = Job("patient", 1, 1);
  Create(job);
  EndPod("job-patient-main-0", 1);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto r = client_->Request("GET", std::string(kPods) + "job-patient-main-0-1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 404) << "retried before its back-off ended";
}

TEST_F(JobLifecycleTest, PodFailurePolicyFailJobEndsTheJobAtOnceAndIgnoreRetriesWithoutCounting) {
  // Exit 42 is FailJob, exit 7 Ignore: the 7 is retried with no failure
  // counted (and no back-off), then the 42 fails the Job though backoffLimit is 6.
  json job = Job("policy", 1, 1);
  job["spec"]["podFailurePolicy"] = {
      {"rules",
       {{{"action", "FailJob"}, {"onExitCodes", {{"containerName", "main"}, {"operator", "In"}, {"values", {42}}}}},
        {{"action", "Ignore"}, {"onExitCodes", {{"operator", "In"}, {"values", {7}}}}}}}};
  Create(job);
  EndPod("job-policy-main-0", 7);
  WaitForPod("job-policy-main-0-1");
  EndPod("job-policy-main-0-1", 42);
  const json failed = WaitFor(std::string(kJobs) + "policy", [](const json& j) { return JobCondition(j, "Failed", "status") == "True"; });
  EXPECT_EQ(JobCondition(failed, "Failed", "reason"), "PodFailurePolicy");
  EXPECT_EQ(JobCondition(failed, "Failed", "message"),
            "Container main for pod team/job-policy-main-0-1 failed with exit code 42 matching FailJob rule at index 0");
  EXPECT_EQ(failed["status"]["failed"], 1) << "the ignored failure is not counted";
}

TEST_F(JobLifecycleTest, ActiveDeadlineSecondsFailsTheJobAndStopsItsPods) {
  // activeDeadlineSeconds 2: two seconds after its admission the Job fails
  // (DeadlineExceeded) and its running pod is told to stop; the loop wakes
  // for the deadline instead of waiting for its resync.
  json job = Job("overrun", 1, 1);
  job["spec"]["activeDeadlineSeconds"] = 2;
  Create(job);
  RunPod("job-overrun-main-0");
  const json failed = WaitFor(std::string(kJobs) + "overrun", [](const json& j) { return JobCondition(j, "Failed", "status") == "True"; });
  EXPECT_EQ(JobCondition(failed, "Failed", "reason"), "DeadlineExceeded");
  EXPECT_EQ(JobCondition(failed, "Failed", "message"), "Job was active longer than specified deadline");
  const json pod = WaitFor(std::string(kPods) + "job-overrun-main-0",
                           [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
  EXPECT_EQ(pod["status"]["reason"], "DeadlineExceeded");
}

TEST_F(JobLifecycleTest, ANonIndexedJobStartsANewPodPerCompletionLeft) {
  // completions 3, parallelism 1: one slot runs three pods in turn.
  Create(Job("serial", 1, 3));
  EndPod("job-serial-main-0", 0);
  EndPod("job-serial-main-0-1", 0);
  EndPod("job-serial-main-0-2", 0);
  const json done = WaitFor(std::string(kJobs) + "serial", [](const json& j) { return JobCondition(j, "Complete", "status") == "True"; });
  EXPECT_EQ(done["status"]["succeeded"], 3);
  EXPECT_FALSE(done["status"].contains("completedIndexes"));
}

TEST_F(JobLifecycleTest, ThePodsNewestCheckpointBecomesTheWorkloads) {
  // The agent annotates a pod when it checkpoints; the Workload takes the
  // newest time, which the scheduler reads for least-waste preemption, and an
  // older one never moves it back.
  Create(Job("ckpt", 2, 2));
  auto annotate = [&](const std::string& pod, const std::string& at) {
    WaitForPod(pod);
    json patch{{"metadata", {{"annotations", {{"tessera.dev/last-checkpoint", at}}}}}};
    auto r = client_->Request("PATCH", std::string(kPods) + pod, patch.dump(), "application/merge-patch+json");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  };
  const std::string workload = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/job-ckpt";
  auto checkpoint_is = [](const std::string& at) {
    return [at](const json& w) {
      return w.value("metadata", json::object()).value("annotations", json::object()).value("tessera.dev/last-checkpoint", "") == at;
    };
  };
  annotate("job-ckpt-main-0", "2026-12-02T10:00:00Z");
  WaitFor(workload, checkpoint_is("2026-12-02T10:00:00Z"));
  annotate("job-ckpt-main-1", "2026-12-02T10:05:00Z");
  WaitFor(workload, checkpoint_is("2026-12-02T10:05:00Z"));
  annotate("job-ckpt-main-0", "2026-12-02T10:01:00Z");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(checkpoint_is("2026-12-02T10:05:00Z")(WaitFor(workload, [](const json&) { return true; })));
}

TEST_F(JobLifecycleTest, AFinishedJobIsDeletedAfterItsTtlWithItsWorkloadAndPods) {
  // ttlSecondsAfterFinished 1: a second after it completed the Job is gone,
  // and the Job controller removes its Workload and Pods.
  json job = Job("short-lived", 1, 1);
  job["spec"]["ttlSecondsAfterFinished"] = 1;
  Create(job);
  EndPod("job-short-lived-main-0", 0);
  WaitFor(std::string(kJobs) + "short-lived", [](const json& j) { return JobCondition(j, "Complete", "status") == "True"; });
  auto gone = [&](const std::string& path) {
    for (int i = 0; i < 100; ++i) {
      auto r = client_->Request("GET", path);
      if (r && r->status == 404) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  EXPECT_TRUE(gone(std::string(kJobs) + "short-lived"));
  EXPECT_TRUE(gone("/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/job-short-lived"));
  EXPECT_TRUE(gone(std::string(kPods) + "job-short-lived-main-0"));
}

TEST_F(JobLifecycleTest, SuspendingAJobStopsItsPodsAndResumingQueuesItAgain) {
  // spec.suspend true on a running Job: its Workload is deactivated and its
  // pods told to stop (quota released once they are gone); false again: it
  // is queued, admitted, and its pod runs anew.
  Create(Job("pausable", 1, 1));
  RunPod("job-pausable-main-0");
  auto set_suspend = [&](bool suspend) {
    json patch{{"spec", {{"suspend", suspend}}}};
    auto r = client_->Request("PATCH", std::string(kJobs) + "pausable", patch.dump(), "application/merge-patch+json");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  };
  set_suspend(true);
  WaitFor(std::string(kPods) + "job-pausable-main-0", [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
  const json job = WaitFor(std::string(kJobs) + "pausable", [](const json& j) { return JobCondition(j, "Suspended", "status") == "True"; });
  EXPECT_EQ(JobCondition(job, "Suspended", "reason"), "JobSuspended");
  // As the agent does once the pod's processes are gone.
  ASSERT_EQ(client_->Request("DELETE", std::string(kPods) + "job-pausable-main-0")->status, 200);
  const std::string workload = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/job-pausable";
  const json parked = WaitFor(workload, [](const json& w) { return ConditionField(w, "QuotaReserved", "status") == "False"; });
  EXPECT_EQ(parked["spec"]["active"], false);
  set_suspend(false);
  WaitFor(workload, [](const json& w) { return ConditionField(w, "Admitted", "status") == "True"; });
  WaitForPod("job-pausable-main-0");
  EXPECT_EQ(JobCondition(Get(std::string(kJobs) + "pausable"), "Suspended", "reason"), "JobResumed");
}

TEST_F(JobLifecycleTest, AJobThatDependsOnOthersStartsOnlyAfterTheySucceed) {
  // Slurm's afterok: "report" depends on "prep" and "train"; it waits outside
  // the queue, saying for what, until both completed; "never" depends on a
  // Job that failed, so it ends Failed without running.
  Create(Job("prep", 1, 1));
  Create(Job("train", 1, 1));
  json report = Job("report", 1, 1);
  report["metadata"]["annotations"] = {{"tessera.dev/depends-on", "prep,train"}};
  Create(report);
  const std::string workload = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/job-report";
  const json waiting = WaitFor(workload, [](const json& w) {
    return ConditionField(w, "QuotaReserved", "message") ==
           "waits for jobs prep (running) and train (running) to succeed (tessera.dev/depends-on)";
  });
  EXPECT_EQ(ConditionField(waiting, "QuotaReserved", "reason"), "WaitingForDependencies");
  EndPod("job-prep-main-0", 0);
  WaitFor(workload, [](const json& w) {
    return ConditionField(w, "QuotaReserved", "message").find("jobs") == std::string::npos &&
           ConditionField(w, "QuotaReserved", "message").find("train (running)") != std::string::npos;
  });
  auto r = client_->Request("GET", std::string(kPods) + "job-report-main-0");
  EXPECT_EQ(r->status, 404) << "started before its dependencies succeeded";
  EndPod("job-train-main-0", 0);
  WaitForPod("job-report-main-0");

  json never = Job("never", 1, 1);
  never["metadata"]["annotations"] = {{"tessera.dev/depends-on", "broken"}};
  json broken = Job("broken", 1, 1);
  broken["spec"]["backoffLimit"] = 0;
  Create(broken);
  Create(never);
  EndPod("job-broken-main-0", 1);
  const json failed = WaitFor(std::string(kJobs) + "never", [](const json& j) { return JobCondition(j, "Failed", "status") == "True"; });
  EXPECT_EQ(JobCondition(failed, "Failed", "reason"), "DependencyFailed");
  EXPECT_EQ(JobCondition(failed, "Failed", "message"),
            "job broken failed, so this one never starts (tessera.dev/depends-on: it needs them to succeed)");
}

json TrainingJob(const std::string& name, const json& size) {
  json container{{"name", "worker"}, {"command", {"torchrun", "train.py"}},
                 {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}, {"limits", {{"nvidia.com/gpu", 1}}}}}};
  json spec = size;
  spec["nprocPerNode"] = 2;
  spec["template"] = {{"spec", {{"containers", {container}}}}};
  return json{{"apiVersion", "tessera.dev/v1"}, {"kind", "TrainingJob"},
              {"metadata", {{"name", name}, {"namespace", "team"}}}, {"spec", spec}};
}

constexpr const char* kTrainingJobs = "/apis/tessera.dev/v1/namespaces/team/trainingjobs/";

TEST_F(JobLifecycleTest, ATrainingJobWhoseRankTwoFailsRestartsTheGangAndSucceeds) {
  // 4 workers as one gang with torchrun's variables; rank 2 fails: every
  // worker is stopped and the gang is queued again (restart 1 of 3), comes
  // back on the same Workload (so the same checkpoint directory) and succeeds.
  Create(TrainingJob("llm", {{"replicas", 4}}));
  const json first = WaitForPod("trainingjob-llm-worker-0");
  std::map<std::string, std::string> env;
  for (const json& e : first["spec"]["containers"][0]["env"]) env[e.value("name", "")] = e.value("value", "");
  EXPECT_EQ(env["PET_NNODES"], "4");
  EXPECT_EQ(env["PET_NPROC_PER_NODE"], "2");
  EXPECT_EQ(env["PET_NODE_RANK"], "$(RANK)") << "expanded by the agent from the pod's rank";
  EXPECT_EQ(first["metadata"]["annotations"]["tessera.dev/world-size"], "4");
  for (int r = 0; r < 4; ++r) RunPod("trainingjob-llm-worker-" + std::to_string(r));
  WaitFor(std::string(kTrainingJobs) + "llm", [](const json& t) { return t.value("status", json::object()).value("phase", "") == "Running"; });
  EndPod("trainingjob-llm-worker-2", 1);
  const json restarting = WaitFor(std::string(kTrainingJobs) + "llm", [](const json& t) {
    return t.value("status", json::object()).value("restarts", 0) == 1;
  });
  EXPECT_NE(restarting["status"].value("message", "").find("pod trainingjob-llm-worker-2 failed: exit code 1; "
                                                           "restarting the gang from its last checkpoint (restart 1 of 3)"),
            std::string::npos)
      << restarting["status"].dump();
  // Every worker is told to stop; the agent deletes each once it has ended.
  for (int r = 0; r < 4; ++r) {
    const std::string pod = "trainingjob-llm-worker-" + std::to_string(r);
    WaitFor(std::string(kPods) + pod, [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
    ASSERT_EQ(client_->Request("DELETE", std::string(kPods) + pod)->status, 200);
  }
  // Queued again and admitted: a fresh gang of four.
  for (int r = 0; r < 4; ++r) {
    const std::string pod = "trainingjob-llm-worker-" + std::to_string(r);
    WaitFor(std::string(kPods) + pod, [](const json& p) { return !p["metadata"].contains("deletionTimestamp"); });
  }
  for (int r = 0; r < 4; ++r) EndPod("trainingjob-llm-worker-" + std::to_string(r), 0);
  const json done = WaitFor(std::string(kTrainingJobs) + "llm", [](const json& t) {
    return t.value("status", json::object()).value("phase", "") == "Succeeded";
  });
  EXPECT_EQ(done["status"]["restarts"], 1);
  EXPECT_EQ(done["status"]["worldSize"], 4);
  EXPECT_EQ(ConditionField(done, "Succeeded", "status"), "True");
}

TEST_F(JobLifecycleTest, AnElasticTrainingJobStartsWithWhatFitsAtOrAboveItsMinimum) {
  // 8 GPUs, 5 held by another job: an elastic 2..6 job starts with the room
  // there is (3 workers, or at least its minimum 2), not waiting for 6.
  Create(Job("holder", 5, 5));
  WaitForPod("job-holder-main-4");
  Create(TrainingJob("elastic", {{"minReplicas", 2}, {"maxReplicas", 6}}));
  const json running = WaitFor(std::string(kTrainingJobs) + "elastic", [](const json& t) {
    return t.value("status", json::object()).contains("worldSize");
  });
  const int world = running["status"]["worldSize"];
  EXPECT_GE(world, 2);
  EXPECT_LE(world, 3);
  EXPECT_EQ(WaitForPod("trainingjob-elastic-worker-0")["spec"]["containers"][0]["env"][2]["value"], "2:6")
      << "PET_NNODES is the elastic range";
}

TEST_F(JobLifecycleTest, AnElasticTrainingJobGrowsAtItsNextCheckpointWhenRoomAppears) {
  // 8 GPUs, 5 held: an elastic 2..6 gang starts below its maximum. Once it has
  // checkpointed it asks for the rest with a placeholder Workload that runs
  // nothing; the holder ends, the placeholder is admitted, and at the gang's
  // next checkpoint it restarts with 6 workers: a resize, not a restart.
  const std::string tj = std::string(kTrainingJobs) + "elastic";
  const std::string placeholder = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/trainingjob-elastic-grow";
  auto status_of = [](const json& t) { return t.value("status", json::object()); };
  auto checkpoint = [&](const std::string& pod, Timestamp at) {
    json patch{{"metadata", {{"annotations", {{"tessera.dev/last-checkpoint", FormatRfc3339(at)}}}}}};
    auto r = client_->Request("PATCH", std::string(kPods) + pod, patch.dump(), "application/merge-patch+json");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  };
  Create(Job("holder", 5, 5));
  WaitForPod("job-holder-main-4");
  Create(TrainingJob("elastic", {{"minReplicas", 2}, {"maxReplicas", 6}}));
  const json started = WaitFor(tj, [&](const json& t) { return status_of(t).contains("worldSize"); });
  const int world = started["status"]["worldSize"];
  ASSERT_LT(world, 6);
  for (int r = 0; r < world; ++r) RunPod("trainingjob-elastic-worker-" + std::to_string(r));
  const json waiting_for_checkpoint = WaitFor(tj, [&](const json& t) { return status_of(t).value("phase", "") == "Running"; });
  EXPECT_NE(waiting_for_checkpoint["status"].value("message", "").find("it grows toward 6 workers once it reports a checkpoint"),
            std::string::npos)
      << waiting_for_checkpoint["status"].dump();
  EXPECT_EQ(client_->Request("GET", placeholder)->status, 404) << "no checkpoint yet: a restart would lose its work";

  checkpoint("trainingjob-elastic-worker-0", SystemNow() + Duration::Seconds(-60));
  WaitFor(tj, [&](const json& t) {
    return status_of(t).value("message", "").find("waiting for room to grow to 6 workers") != std::string::npos;
  });
  const json pending = WaitFor(placeholder, [](const json& w) { return w.contains("spec"); });
  EXPECT_EQ(pending["spec"]["podSets"][0]["count"], 6 - world);
  EXPECT_EQ(pending["spec"]["priority"], kGrowthPlaceholderPriority);
  EXPECT_FALSE(pending.value("status", json::object()).contains("admission")) << "the holder still has the room";

  for (int i = 0; i < 5; ++i) EndPod("job-holder-main-" + std::to_string(i), 0);
  WaitFor(placeholder, [](const json& w) { return w.value("status", json::object()).contains("admission"); });
  const json held = WaitFor(tj, [&](const json& t) {
    return status_of(t).value("message", "").find("is held: the gang grows to 6 at its next checkpoint") != std::string::npos;
  });
  EXPECT_EQ(held["status"]["worldSize"], world) << "it keeps running until it checkpoints";
  auto pods = client_->Request("GET", "/api/v1/namespaces/team/pods?labelSelector=tessera.dev/workload%3Dtrainingjob-elastic-grow");
  ASSERT_TRUE(pods.has_value());
  EXPECT_TRUE(json::parse(pods->body)["items"].empty()) << "a placeholder runs no pods";

  checkpoint("trainingjob-elastic-worker-1", SystemNow() + Duration::Seconds(1));
  const json resizing = WaitFor(tj, [&](const json& t) { return status_of(t).value("phase", "") == "Resizing"; });
  EXPECT_NE(resizing["status"].value("message", "").find(fmt::format("growing from {} to 6 workers", world)), std::string::npos)
      << resizing["status"].dump();
  for (int r = 0; r < world; ++r) {
    const std::string pod = "trainingjob-elastic-worker-" + std::to_string(r);
    WaitFor(std::string(kPods) + pod, [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
    ASSERT_EQ(client_->Request("DELETE", std::string(kPods) + pod)->status, 200);
  }
  const json grown = WaitFor(tj, [&](const json& t) { return status_of(t).value("worldSize", 0) == 6; });
  EXPECT_EQ(grown["status"].value("restarts", 0), 0) << "a resize is not a failure restart";
  WaitForPod("trainingjob-elastic-worker-5");
  EXPECT_EQ(client_->Request("GET", placeholder)->status, 404) << "its room is the gang's now";
}

TEST_F(JobLifecycleTest, ABadTrainingJobIsRefusedWithItsFieldPathAndNothingIsStored) {
  json both = TrainingJob("bad", {{"replicas", 2}, {"minReplicas", 1}, {"maxReplicas", 3}});
  auto r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/team/trainingjobs", both.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec.replicas: set replicas, or minReplicas and maxReplicas (elastic), not both"),
            std::string::npos)
      << r->body;
  json typo = TrainingJob("bad", {{"replicas", 2}});
  typo["spec"]["nprocPerNod"] = 8;
  r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/team/trainingjobs", typo.dump());
  EXPECT_NE(r->body.find("spec.nprocPerNod: unknown field; did you mean \\\"nprocPerNode\\\"?"), std::string::npos)
      << r->body;
  EXPECT_EQ(client_->Request("GET", std::string(kTrainingJobs) + "bad")->status, 404);
}

}  // namespace
}  // namespace tessera
