// `tessera describe`: kubectl describe's layout, plus what each kind's users
// look for (why a workload waits, where it runs, a queue's quota, ...).
#include <gtest/gtest.h>

#include "api/age.h"
#include "cli/commands/describe_command.h"
#include "cli/commands/submit_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using nlohmann::json;

class DescribeTest : public CliTest {
 protected:
  CommandRun Describe(std::vector<std::string> args, const std::string& ns = "default") {
    return Run([&](const CommandContext& ctx) { return RunDescribe(ctx, {.args = args}); }, ns);
  }
};

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A namespace: its metadata (with who created it and, once the server gave it
// one, its uid block), the resource quotas in it (used/hard) and the local
// queues its users submit to.
TEST_F(DescribeTest, NamespaceShowsQuotasAndQueues) {
  ApplySeed();
  ASSERT_TRUE(Eventually([&] {
    return GetJson("/api/v1/namespaces/team-data-science")["metadata"]["annotations"].contains("tessera.dev/uid-range");
  }));
  CommandRun ds = Describe({"namespace", "team-data-science"});
  ASSERT_EQ(ds.rc, 0) << ds.err;
  EXPECT_TRUE(ds.out.starts_with("Name:                team-data-science\n"
                                 "Labels:              kubernetes.io/metadata.name=team-data-science\n"
                                 "Annotations:         tessera.dev/created-by: admin\n"
                                 "                     tessera.dev/uid-range: 10000"))
      << ds.out;
  EXPECT_TRUE(Has(ds.out, "API Version:         v1\nKind:                Namespace\n")) << ds.out;
  EXPECT_TRUE(Has(ds.out, "Resource Quotas:\n  Name:  gpu-quota\n")) << ds.out;
  EXPECT_TRUE(Has(ds.out, "  requests.nvidia.com/gpu  0     8\n")) << ds.out;  // nothing used of 8
  EXPECT_TRUE(Has(ds.out, "Local Queues:  <none>")) << ds.out;
  EXPECT_TRUE(Has(ds.out, "Events:        <none>\n")) << ds.out;

  CommandRun nlp = Describe({"ns/team-nlp"});
  EXPECT_TRUE(Has(nlp.out, "Local Queues:\n")) << nlp.out;
  EXPECT_TRUE(Has(nlp.out, "  team-nlp-queue  gpu-cluster-queue")) << nlp.out;
}

// A ClusterQueue: its spec in kubectl's key: value form, then quota and usage
// per flavor and resource (GPUs first).
TEST_F(DescribeTest, ClusterQueueShowsSpecAndUsage) {
  ApplySeed();
  CommandRun r = Describe({"cq", "gpu-cluster-queue"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("Name:                gpu-cluster-queue\n")) << r.out;
  EXPECT_FALSE(Has(r.out, "Namespace:"));  // cluster-scoped
  EXPECT_TRUE(Has(r.out, "Spec:\n  Namespace Selector:\n  Preemption:\n    Within Cluster Queue:  LowerPriority\n"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "        Name:           nvidia.com/gpu\n        Nominal Quota:  16\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "Usage:\n  Flavor         Resource        Nominal  Reserved  Borrowing Limit  Used  Borrowed\n"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "  a100-spot      nvidia.com/gpu  16       0         -")) << r.out;
  EXPECT_TRUE(Has(r.out, "  a100-ondemand  nvidia.com/gpu  8        0         -")) << r.out;
  EXPECT_TRUE(Has(r.out, "Events:  <none>\n")) << r.out;
}

// A pending workload says why it waits, in the scheduler's words (the
// QuotaReserved condition's message), and lists its conditions as a table.
TEST_F(DescribeTest, PendingWorkloadSaysWhy) {
  ApplySeed();  // the seed's queue names flavors that do not exist: nothing can be admitted
  std::string message;
  ASSERT_TRUE(Eventually([&] {
    json wl = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/vcjob-distributed-llm-training");
    if (!wl.is_object()) return false;  // the job controller has not made it yet
    for (const json& c : wl.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "QuotaReserved" && c.value("status", "") == "False") message = c.value("message", "");
    }
    return !message.empty();
  }));
  CommandRun r = Describe({"workload", "vcjob-distributed-llm-training"}, "team-nlp");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "Queue:               team-nlp-queue\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "Pending:             " + message + "\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "Conditions:\n  Type           Status  Reason")) << r.out;
  EXPECT_TRUE(Has(r.out, "  QuotaReserved  False   ")) << r.out;
  // Describing the Volcano job finds its workload and says the same.
  CommandRun job = Describe({"vcjob", "distributed-llm-training"}, "team-nlp");
  EXPECT_TRUE(Has(job.out, "Workload:            vcjob-distributed-llm-training\n")) << job.out;
  EXPECT_TRUE(Has(job.out, "Pending:             " + message + "\n")) << job.out;
}

// An admitted workload shows where it runs: per pod, the node and its GPU
// devices (a quarter of device 0 for a 0.25 GPU notebook).
TEST_F(DescribeTest, AdmittedWorkloadShowsPlacement) {
  RegisterNode("gpu-node-1", "8xH100-80GB");
  CommandRun submitted = Run([](const CommandContext& ctx) {
    return RunSubmit(ctx, {.name = "nb", .queue = "default", .gpu = "0.25", .type = "notebook", .command = {"jupyter"}});
  });
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(Eventually([&] {
    return GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-nb")["status"].contains("admission");
  })) << "the scheduler loop did not admit the notebook";
  CommandRun r = Describe({"workload", "job-nb"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "Admitted:            in ClusterQueue default\n")) << r.out;
  EXPECT_FALSE(Has(r.out, "Pending:")) << r.out;
  EXPECT_TRUE(Has(r.out, "Admission:\n  Cluster Queue:  default\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "    main  1      default\n")) << r.out;  // pod set, count, flavor
  EXPECT_TRUE(Has(r.out, "    main     0    gpu-node-1  0 (0.25)\n")) << r.out;
}

// A workload that reported a checkpoint (its annotation
// tessera.dev/last-checkpoint, which least-waste preemption reads) shows how
// long ago that was, and when.
TEST_F(DescribeTest, WorkloadShowsItsLastCheckpoint) {
  CommandRun submitted = Run([](const CommandContext& ctx) {
    return RunSubmit(ctx, {.name = "train", .queue = "default", .command = {"python", "train.py"}});
  });
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  const std::string path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-train";
  ASSERT_TRUE(Eventually([&] { return GetJson(path).is_object(); })) << "the job controller made no workload";
  ApiClient admin = Admin();
  const json patch{{"metadata", {{"annotations", {{"tessera.dev/last-checkpoint", "2026-12-02T10:00:00Z"}}}}}};
  auto r = admin.Request("PATCH", path, patch.dump(), "application/merge-patch+json");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  CommandContext ctx = Context();
  ctx.now_unix = *ParseTimeSeconds("2026-12-02T10:04:00Z");  // 4 minutes later
  CommandRun d =
      RunWith(ctx, [](const CommandContext& c) { return RunDescribe(c, {.args = {"workload", "job-train"}}); });
  ASSERT_EQ(d.rc, 0) << d.err;
  EXPECT_TRUE(Has(d.out, "Last Checkpoint:     4m ago (2026-12-02T10:00:00Z)\n")) << d.out;
}

// A workload without the annotation shows the newest of its pods' checkpoints
// (each pod's agent sets them), and describing its Job shows the same.
TEST_F(DescribeTest, JobShowsTheNewestCheckpointOfItsPods) {
  RegisterNode("gpu-node-1", "8xH100-80GB");
  CommandRun submitted = Run([](const CommandContext& ctx) {
    return RunSubmit(ctx, {.name = "ddp", .queue = "default", .gpu = "1", .workers = 2, .command = {"torchrun"}});
  });
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  const std::string pods_path = "/api/v1/namespaces/default/pods?labelSelector=tessera.dev/workload%3Djob-ddp";
  std::vector<std::string> pods;
  ASSERT_TRUE(Eventually([&] {
    pods.clear();
    const json list = GetJson(pods_path);
    for (const json& p : list.is_object() ? list.value("items", json::array()) : json::array()) {
      pods.push_back(p["metadata"].value("name", ""));
    }
    return pods.size() == 2;
  })) << "the workload's two pods were not made";
  ApiClient admin = Admin();
  // Rank order does not matter: the newer of the two is shown.
  const std::vector<std::string> times = {"2026-12-02T09:00:00Z", "2026-12-02T10:00:00Z"};
  for (size_t i = 0; i < pods.size(); ++i) {
    const json patch{{"metadata", {{"annotations", {{"tessera.dev/last-checkpoint", times[i]}}}}}};
    auto r = admin.Request("PATCH", "/api/v1/namespaces/default/pods/" + pods[i], patch.dump(),
                           "application/merge-patch+json");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  CommandContext ctx = Context();
  ctx.now_unix = *ParseTimeSeconds("2026-12-02T10:04:00Z");
  CommandRun job = RunWith(ctx, [](const CommandContext& c) { return RunDescribe(c, {.args = {"job", "ddp"}}); });
  ASSERT_EQ(job.rc, 0) << job.err;
  EXPECT_TRUE(Has(job.out, "Workload:            job-ddp\n")) << job.out;
  EXPECT_TRUE(Has(job.out, "Last Checkpoint:     4m ago (2026-12-02T10:00:00Z)\n")) << job.out;
  CommandRun wl =
      RunWith(ctx, [](const CommandContext& c) { return RunDescribe(c, {.args = {"workload", "job-ddp"}}); });
  EXPECT_TRUE(Has(wl.out, "Last Checkpoint:     4m ago (2026-12-02T10:00:00Z)\n")) << wl.out;
}

// A TrainingJob, a Sweep and a PipelineRun say why their parts wait, in the
// scheduler's words: the gang's Workload, and each trial or step that waits
// (no node is registered here, so nothing fits).
TEST_F(DescribeTest, BatchKindsSayWhyTheirPartsWait) {
  CommandRun applied = ApplyText(R"(apiVersion: tessera.dev/v1
kind: TrainingJob
metadata: {name: llm}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: worker
        command: [torchrun, train.py]
        resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
---
apiVersion: tessera.dev/v1
kind: Sweep
metadata: {name: lr}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parallelTrialCount: 2
  maxTrialCount: 4
  parameters:
  - name: lr
    parameterType: double
    feasibleSpace: {min: "0.001", max: "0.1"}
  trialTemplate:
    template:
      spec:
        containers:
        - name: trial
          command: [sh, -c, "echo ${params.lr}"]
          resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
---
apiVersion: tessera.dev/v1
kind: PipelineRun
metadata: {name: nightly}
spec:
  pipelineSpec:
    steps:
    - name: prepare
      template:
        spec:
          containers:
          - name: prepare
            command: [sh, -c, "echo prepare"]
            resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
)");
  ASSERT_EQ(applied.rc, 0) << applied.err;
  auto pending = [&](const std::string& workload) {
    return Eventually([&] {
      const json wl = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/" + workload);
      if (!wl.is_object()) return false;
      for (const json& c : wl.value("status", json::object()).value("conditions", json::array())) {
        if (c.value("type", "") == "QuotaReserved" && c.value("status", "") == "False") return true;
      }
      return false;
    });
  };
  ASSERT_TRUE(pending("trainingjob-llm"));
  ASSERT_TRUE(pending("job-lr-1") && pending("job-lr-2"));
  CommandRun tj = Describe({"trainingjob", "llm"});
  ASSERT_EQ(tj.rc, 0) << tj.err;
  EXPECT_TRUE(Has(tj.out, "Workload:            trainingjob-llm\nPending:             ")) << tj.out;
  CommandRun sweep = Describe({"sweep", "lr"});
  ASSERT_EQ(sweep.rc, 0) << sweep.err;
  EXPECT_TRUE(Has(sweep.out, "Waiting:\n  Trial  Job   Why\n")) << sweep.out;
  EXPECT_TRUE(Has(sweep.out, "\n  lr-1   lr-1  ")) << sweep.out;
  EXPECT_TRUE(Has(sweep.out, "\n  lr-2   lr-2  ")) << sweep.out;
  ASSERT_TRUE(Eventually([&] {
    return Has(Describe({"pipelinerun", "nightly"}).out, "Waiting:\n  Step     Job");
  })) << Describe({"pipelinerun", "nightly"}).out;
  // The reason is the trial's Workload's, word for word.
  const json trial = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-lr-1");
  std::string why;
  for (const json& c : trial["status"]["conditions"]) {
    if (c.value("type", "") == "QuotaReserved") why = c.value("message", "");
  }
  ASSERT_FALSE(why.empty());
  EXPECT_TRUE(Has(sweep.out, why.substr(0, 40))) << sweep.out;
}

// A workload that never reported a checkpoint shows no such line.
TEST_F(DescribeTest, WorkloadWithoutACheckpointShowsNone) {
  CommandRun submitted = Run([](const CommandContext& ctx) {
    return RunSubmit(ctx, {.name = "fresh", .queue = "default", .command = {"python", "train.py"}});
  });
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(Eventually([&] {
    return GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-fresh").is_object();
  }));
  CommandRun d = Describe({"workload", "job-fresh"});
  ASSERT_EQ(d.rc, 0) << d.err;
  EXPECT_FALSE(Has(d.out, "Last Checkpoint:")) << d.out;
}

// A workload that names no PriorityClass shows the priority it runs at and
// where that comes from: the global default class.
TEST_F(DescribeTest, WorkloadWithoutAClassShowsTheDefaultPriority) {
  ASSERT_EQ(ApplyText("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: exploratory\n"
                      "value: 1000\nglobalDefault: true\n")
                .rc,
            0);
  CommandRun submitted = Run([](const CommandContext& ctx) {
    return RunSubmit(ctx, {.name = "nb", .queue = "default", .type = "notebook", .command = {"jupyter"}});
  });
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(Eventually([&] {
    return GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-nb").is_object();
  })) << "the job controller made no workload";
  CommandRun r = Describe({"workload", "job-nb"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "Priority:            1000 (the global default PriorityClass exploratory)\n")) << r.out;
}

// Events whose involvedObject is the object are listed; others are not, nor
// those about an earlier object of the same name (another uid).
TEST_F(DescribeTest, ShowsEventsAboutTheObject) {
  ApiClient client = Admin();
  auto got = client.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/default");
  ASSERT_TRUE(got.has_value() && got->status == 200);
  const std::string uid = json::parse(got->body)["metadata"].value("uid", "");
  ASSERT_FALSE(uid.empty());
  auto event = [&](const std::string& name, const std::string& object, const std::string& reason,
                   const std::string& about_uid = "") {
    json about{{"kind", "LocalQueue"}, {"name", object}, {"namespace", "default"}};
    if (!about_uid.empty()) about["uid"] = about_uid;
    json e{{"apiVersion", "v1"},
           {"kind", "Event"},
           {"metadata", {{"name", name}, {"namespace", "default"}}},
           {"involvedObject", about},
           {"reason", reason},
           {"message", reason + " happened"},
           {"type", "Normal"},
           {"source", {{"component", "tessera-scheduler"}}}};
    auto r = client.Request("POST", "/api/v1/namespaces/default/events", e.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  };
  event("e1", "default", "Created");
  event("e2", "other", "Unrelated");
  event("e3", "default", "Updated", uid);
  event("e4", "default", "Gone", "uid-of-a-deleted-queue");
  CommandRun r = Describe({"localqueue", "default"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "Events:\n  Type    Reason   Age")) << r.out;
  EXPECT_TRUE(Has(r.out, "tessera-scheduler  Created happened\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "tessera-scheduler  Updated happened\n")) << r.out;
  EXPECT_FALSE(Has(r.out, "Unrelated")) << r.out;
  EXPECT_FALSE(Has(r.out, "Gone")) << r.out;
}

// Several objects are separated by a blank line; a missing one is an error (exit 1).
TEST_F(DescribeTest, MissingObjectIsAnError) {
  CommandRun r = Describe({"priorityclass", "training", "nope", "batch"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): priorityclasses.scheduling.k8s.io \"nope\" not found\n");
  EXPECT_TRUE(Has(r.out, "Name:                training\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "\n\nName:                batch\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "Value:               100000\n")) << r.out;  // a top-level field of PriorityClass
}

}  // namespace
}  // namespace tessera
