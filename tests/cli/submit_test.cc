// `tessera submit`: the quick form builds the Job a Kueue user would write.
#include <gtest/gtest.h>

#include "cli/commands/submit_command.h"
#include "cli/commands/train_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using nlohmann::json;

class SubmitTest : public CliTest {
 protected:
  CommandRun Submit(SubmitOptions options, const std::string& ns = "default") {
    return Run([&](const CommandContext& ctx) { return RunSubmit(ctx, options); }, ns);
  }
};

// A notebook at a quarter GPU: the stored Job carries the queue label, the
// type annotation, one container named after the job with requests = limits,
// and restartPolicy Never.
TEST_F(SubmitTest, CreatesTheJobWithQueueLabelAndResources) {
  CommandRun r = Submit({.name = "nb1", .queue = "default", .gpu = "0.25", .type = "notebook",
                         .command = {"jupyter", "lab", "--port", "8888"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "job.batch/nb1 submitted to queue default\n"
            "  why it waits, or where it runs:  tessera describe workload job-nb1 -n default\n");
  json job = GetJson("/apis/batch/v1/namespaces/default/jobs/nb1");
  ASSERT_FALSE(job.is_null());
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "default");
  EXPECT_EQ(job["metadata"]["annotations"]["tessera.dev/type"], "notebook");
  EXPECT_EQ(job["spec"]["parallelism"], 1);
  EXPECT_FALSE(job["spec"].contains("activeDeadlineSeconds"));
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_FALSE(pod.contains("priorityClassName"));  // the cluster's default class applies
  ASSERT_EQ(pod["containers"].size(), 1u);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["name"], "nb1");
  EXPECT_EQ(c["command"], json({"jupyter", "lab", "--port", "8888"}));
  const json expected = {{"cpu", "1"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "0.25"}};  // the defaults, and 0.25 GPU
  EXPECT_EQ(c["resources"]["requests"], expected);
  EXPECT_EQ(c["resources"]["limits"], expected);
}

// Training with workers: parallelism = completions = workers, indexed (ranks),
// restarts OnFailure, the priority class and the deadline from --max-run.
TEST_F(SubmitTest, TrainingWithWorkers) {
  SubmitOptions o{.name = "train-1", .queue = "default", .gpu = "4", .cpu = "8", .memory = "64Gi",
                  .priority = "training", .type = "training", .workers = 3, .max_run_seconds = 3600,
                  .command = {"python", "train.py"}};
  CommandRun r = Submit(o);
  ASSERT_EQ(r.rc, 0) << r.err;
  json job = GetJson("/apis/batch/v1/namespaces/default/jobs/train-1");
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_EQ(job["spec"]["completions"], 3);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 3600);
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "OnFailure");
  EXPECT_EQ(pod["priorityClassName"], "training");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["memory"], "64Gi");
}

// --gpu 1.5 is neither a fraction below one nor whole: refused before any
// request (exit 2 even with no server), the message naming the value.
TEST_F(SubmitTest, FractionAboveOneIsRefusedLocally) {
  CommandContext ctx = Context();
  ctx.config.server = "http://127.0.0.1:1";  // nothing listens: a request would fail with exit 1
  CommandRun r = RunWith(ctx, [](const CommandContext& c) {
    return RunSubmit(c, {.name = "x", .queue = "default", .gpu = "1.5", .command = {"sleep", "1"}});
  });
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--gpu \"1.5\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1.5 GPUs is neither"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// Other bad values are usage errors too, each naming its flag.
TEST_F(SubmitTest, BadValuesNameTheirFlag) {
  auto err = [&](SubmitOptions o) {
    if (o.command.empty()) o.command = {"true"};
    CommandRun r = Submit(o);
    EXPECT_EQ(r.rc, 2) << r.err;
    return r.err;
  };
  EXPECT_NE(err({.name = "x", .queue = "q", .cpu = "lots"}).find("--cpu \"lots\""), std::string::npos);
  EXPECT_NE(err({.name = "x", .queue = "q", .memory = "4GB"}).find("--memory \"4GB\""), std::string::npos);
  EXPECT_NE(err({.name = "x", .queue = "q", .gpu_memory = "-1Gi"}).find("--gpu-memory"), std::string::npos);
  EXPECT_NE(err({.name = "Bad_Name", .queue = "q"}).find("NAME \"Bad_Name\""), std::string::npos);
  SubmitOptions no_command{.name = "x", .queue = "q"};
  CommandRun r = Submit(no_command);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no command"), std::string::npos);
}

// GPU memory instead of a fraction goes in as tessera.dev/gpu-memory.
TEST_F(SubmitTest, GpuMemoryRequest) {
  auto job = BuildSubmitJob({.name = "x", .queue = "q", .gpu_memory = "20Gi", .command = {"run"}}, "ns");
  ASSERT_TRUE(job.has_value()) << job.error().ToString();
  const json& requests = (*job)["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"];
  EXPECT_EQ(requests["tessera.dev/gpu-memory"], "20Gi");
  EXPECT_FALSE(requests.contains("nvidia.com/gpu"));
  EXPECT_EQ((*job)["metadata"]["namespace"], "ns");
}

// A queue that does not exist is a warning (the job waits for it), not a failure.
TEST_F(SubmitTest, WarnsAboutAMissingQueue) {
  CommandRun r = Submit({.name = "x", .queue = "typo-queue", .command = {"true"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("warning: LocalQueue \"typo-queue\" does not exist in namespace default"), std::string::npos)
      << r.err;
  // Submitting the same name again is the server's AlreadyExists.
  CommandRun again = Submit({.name = "x", .queue = "default", .command = {"true"}});
  EXPECT_EQ(again.rc, 1);
  EXPECT_NE(again.err.find("Error from server (AlreadyExists)"), std::string::npos) << again.err;
}

// Without --queue the job goes to the namespace's LocalQueue named default,
// else to its only LocalQueue; with neither, the error says how to make one.
TEST_F(SubmitTest, WithoutQueueUsesTheNamespacesDefaultOrOnlyLocalQueue) {
  ASSERT_EQ(ApplyText("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n").rc, 0);
  CommandRun none = Submit({.name = "x", .command = {"true"}}, "team-a");
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("namespace team-a has no LocalQueue to submit to: ask an admin to create one named "
                          "\"default\""),
            std::string::npos)
      << none.err;

  const std::string queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: NAME, namespace: "
                            "team-a}\nspec: {clusterQueue: cq}\n";
  auto named = [&](const std::string& name) {
    std::string text = queue;
    return text.replace(text.find("NAME"), 4, name);
  };
  ASSERT_EQ(ApplyText(named("research")).rc, 0);
  CommandRun only = Submit({.name = "y", .command = {"true"}}, "team-a");
  ASSERT_EQ(only.rc, 0) << only.err;
  EXPECT_NE(only.out.find("submitted to queue research"), std::string::npos) << only.out;
  EXPECT_EQ(GetJson("/apis/batch/v1/namespaces/team-a/jobs/y")["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
            "research");

  ASSERT_EQ(ApplyText(named("urgent")).rc, 0);
  CommandRun two = Submit({.name = "z", .command = {"true"}}, "team-a");
  EXPECT_EQ(two.rc, 2);
  EXPECT_NE(two.err.find("has 2 LocalQueues and none named \"default\": pass --queue with one of research, urgent"),
            std::string::npos)
      << two.err;

  ASSERT_EQ(ApplyText(named("default")).rc, 0);
  CommandRun dflt = Submit({.name = "w", .command = {"true"}}, "team-a");
  ASSERT_EQ(dflt.rc, 0) << dflt.err;
  EXPECT_NE(dflt.out.find("submitted to queue default"), std::string::npos) << dflt.out;
}

// `tessera train` is the one-line TrainingJob: 4 workers of 8 GPUs, 8
// processes each (its whole GPUs), 3 gang restarts by default.
TEST_F(SubmitTest, TrainCreatesATrainingJobOfWorkersWithTheirGpus) {
  TrainOptions o{.pod = {.name = "llm", .queue = "default", .gpu = "8", .command = {"torchrun", "train.py"}},
                 .workers = 4};
  CommandRun r = Run([&](const CommandContext& ctx) { return RunTrain(ctx, o); });
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("trainingjob.tessera.dev/llm created in queue default"), std::string::npos) << r.out;
  const json tj = GetJson("/apis/tessera.dev/v1/namespaces/default/trainingjobs/llm");
  ASSERT_FALSE(tj.is_null());
  EXPECT_EQ(tj["spec"]["replicas"], 4);
  EXPECT_EQ(tj["spec"]["nprocPerNode"], 8);
  EXPECT_EQ(tj["spec"]["backoffLimit"], 3);
  EXPECT_EQ(tj["spec"]["queueName"], "default");
  EXPECT_EQ(tj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "8");
}

TEST_F(SubmitTest, TrainRefusesWorkersAndAnElasticRangeTogether) {
  auto tj = BuildTrainingJob({.pod = {.name = "x", .command = {"run"}}, .workers = 2, .min_workers = 1, .max_workers = 4},
                             "ns");
  ASSERT_FALSE(tj.has_value());
  EXPECT_EQ(tj.error().message(), "--workers, or --min-workers and --max-workers (elastic), not both");
  auto elastic = BuildTrainingJob({.pod = {.name = "x", .command = {"run"}}, .min_workers = 2, .max_workers = 4}, "ns");
  ASSERT_TRUE(elastic.has_value()) << elastic.error().ToString();
  EXPECT_EQ((*elastic)["spec"]["minReplicas"], 2);
  EXPECT_EQ((*elastic)["spec"]["maxReplicas"], 4);
  EXPECT_FALSE((*elastic)["spec"].contains("replicas"));
}

}  // namespace
}  // namespace tessera
