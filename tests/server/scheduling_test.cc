// End to end through the API: the seed's manifests applied unchanged, nodes
// registered as agents do, jobs submitted; the scheduler loop admits, binds
// pods, explains what waits, and preempts by priority.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/node_registration.h"
#include "api/kinds.h"
#include "api/manifest.h"
#include "cli/commands/usage_report.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;

class SchedulingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-sched");
    server_ = testing::StartLocalServer(dir_.string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  static std::string Path(const json& obj, bool item) { return ObjectPath(obj, item); }
  void Create(const json& obj) {
    auto r = client_->Request("POST", Path(obj, false), obj.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << obj.dump() << "\n" << r->body;
  }
  void ApplySeed() {
    const std::filesystem::path seed = std::filesystem::path("..") / "shared" / "examples" / "seed";
    ASSERT_TRUE(std::filesystem::exists(seed)) << std::filesystem::absolute(seed);
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(seed)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::stringstream text;
      text << in.rdbuf();
      auto docs = ParseManifests(text.str());
      ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
      for (const ManifestDocument& d : *docs) Create(d.object);
    }
  }
  void AddNode(const std::string& name, const std::string& tier, int gpus) {
    Node n{.name = name, .cpu_milli = 64000, .memory_bytes = int64_t{512} << 30};
    n.labels.Set("tier", tier);
    for (int g = 0; g < gpus; ++g) {
      n.gpus.push_back(GpuDevice{.index = g, .uuid = name + "-gpu" + std::to_string(g), .model = "A100-80GB",
                                 .memory_bytes = int64_t{80} << 30, .nvlink_domain = g / 4});
    }
    Create(NodeObject(n, true, Rfc3339Now()));
  }
  // The seed's ClusterQueue names two flavors; an admin defines them for the nodes.
  void AddFlavors() {
    for (const char* tier : {"spot", "ondemand"}) {
      Create(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                  {"kind", "ResourceFlavor"},
                  {"metadata", {{"name", std::string("a100-") + tier}}},
                  {"spec", {{"nodeLabels", {{"tier", tier}}}}}});
    }
  }
  json Job(const std::string& ns, const std::string& name, const std::string& queue, int pods, const std::string& gpus,
           const std::string& priority_class) {
    json container{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "3600"}},
                   {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}, {"limits", {{"nvidia.com/gpu", gpus}}}}}};
    json spec{{"containers", {container}}, {"restartPolicy", "Never"}};
    if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
                {"spec", {{"parallelism", pods}, {"completions", pods}, {"template", {{"spec", spec}}}}}};
  }
  // Polls `path` until `ready` holds (the loop runs in the background).
  json WaitFor(const std::string& path, const std::function<bool(const json&)>& ready) {
    return WaitForObject(*client_, path, ready);
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  static std::string Condition(const json& obj, const std::string& type, const char* field) {
    return ConditionField(obj, type, field);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
};

TEST_F(SchedulingTest, VolcanoGangOfFourStartsTogetherOnTheSeedsQueue) {
  // Two spot nodes of 8 GPUs: the seed's gang of 4 x 4 GPUs fits the spot quota (16).
  ApplySeed();
  AddFlavors();
  AddNode("spot-1", "spot", 8);
  AddNode("spot-2", "spot", 8);
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/vcjob-distributed-llm-training",
                          [](const json& w) { return Condition(w, "Admitted", "status") == "True"; });
  const json pods = json::parse(client_->Request("GET", "/api/v1/namespaces/team-nlp/pods")->body);
  ASSERT_EQ(pods["items"].size(), 4u);
  std::map<std::string, int> per_node;
  for (const json& p : pods["items"]) {
    ++per_node[p["spec"]["nodeName"].get<std::string>()];
    const std::string devices = p["metadata"]["annotations"]["tessera.dev/gpu-devices"];
    EXPECT_EQ(std::count(devices.begin(), devices.end(), ','), 3) << devices;  // 4 devices
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"spot-1", 2}, {"spot-2", 2}}));
  EXPECT_EQ(wl["status"]["admission"]["clusterQueue"], "gpu-cluster-queue");
}

TEST_F(SchedulingTest, WorkBeyondCapacityWaitsWithAReasonAndHoldsNoGpu) {
  // One spot node of 8 GPUs: the gang of 16 GPUs cannot start; it holds nothing,
  // and its Workload says why in plain words.
  ApplySeed();
  AddFlavors();
  AddNode("spot-1", "spot", 8);
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/vcjob-distributed-llm-training",
                          [](const json& w) {
                            return Condition(w, "QuotaReserved", "message").find("only 2 of the 4") != std::string::npos;
                          });
  EXPECT_EQ(Condition(wl, "Admitted", "status"), "False");
  const std::string message = Condition(wl, "QuotaReserved", "message");
  EXPECT_NE(message.find("only 2 of the 4 pods"), std::string::npos) << message;
  EXPECT_EQ(json::parse(client_->Request("GET", "/api/v1/namespaces/team-nlp/pods")->body)["items"].size(), 0u);
}

TEST_F(SchedulingTest, AClusterQueueAdmitsOnlyTheNamespacesItsSelectorMatches) {
  // A ClusterQueue for team a's namespaces (matchLabels), with LocalQueues
  // pointing at it from team-a and from the unlabelled team-b: only team-a's
  // work is admitted; team-b's waits with the reason, and is admitted once an
  // admin labels its namespace. Every namespace carries
  // kubernetes.io/metadata.name, as in Kubernetes.
  for (const char* ns : {"team-a", "team-b"}) {
    json obj{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    if (std::string(ns) == "team-a") obj["metadata"]["labels"] = {{"team", "a"}};
    Create(obj);
  }
  EXPECT_EQ(Get("/api/v1/namespaces/team-b")["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-b");
  AddFlavors();
  AddNode("spot-1", "spot", 8);
  Create({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", "team-a-cq"}}},
          {"spec",
           {{"namespaceSelector", {{"matchLabels", {{"team", "a"}}}}},
            {"resourceGroups",
             {{{"coveredResources", {"nvidia.com/gpu"}},
               {"flavors", {{{"name", "a100-spot"}, {"resources", {{{"name", "nvidia.com/gpu"}, {"nominalQuota", 8}}}}}}}}}}}}});
  for (const char* ns : {"team-a", "team-b"}) {
    Create({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
            {"kind", "LocalQueue"},
            {"metadata", {{"name", "q"}, {"namespace", ns}}},
            {"spec", {{"clusterQueue", "team-a-cq"}}}});
    Create(Job(ns, "train", "q", 1, "1", ""));
  }
  auto admitted = [](const json& w) { return Condition(w, "Admitted", "status") == "True"; };
  WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/workloads/job-train", admitted);
  const json refused = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-b/workloads/job-train", [](const json& w) {
    return Condition(w, "QuotaReserved", "status") == "False";
  });
  EXPECT_EQ(Condition(refused, "QuotaReserved", "message"),
            "ClusterQueue team-a-cq does not admit workloads from namespace team-b (namespaceSelector)");
  // A client cannot drop or forge the name label; other labels are its own.
  json patch{{"metadata", {{"labels", {{"team", "a"}, {"kubernetes.io/metadata.name", "team-a"}}}}}};
  auto r = client_->Request("PATCH", "/api/v1/namespaces/team-b", patch.dump(), "application/merge-patch+json");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-b");
  WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-b/workloads/job-train", admitted);
}

TEST_F(SchedulingTest, NamespaceQuotaCeilingHoldsWorkBack) {
  // ml-research's ResourceQuota allows 8 GPUs of requests: a 3 x 4-GPU job waits with
  // the numbers, though the queue's quota and the nodes have room (the seed's gang is
  // deleted so that the spot quota is free).
  ApplySeed();
  AddFlavors();
  ASSERT_EQ(client_->Request("DELETE", "/apis/batch.volcano.sh/v1alpha1/namespaces/team-nlp/jobs/distributed-llm-training")->status, 200);
  AddNode("spot-1", "spot", 8);
  AddNode("spot-2", "spot", 8);
  Create(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
              {"kind", "LocalQueue"},
              {"metadata", {{"name", "research"}, {"namespace", "ml-research"}}},
              {"spec", {{"clusterQueue", "gpu-cluster-queue"}}}});
  Create(Job("ml-research", "big", "research", 3, "4", ""));
  const json wl = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/ml-research/workloads/job-big",
                          [](const json& w) { return Condition(w, "QuotaReserved", "reason") == "ResourceQuotaExceeded"; });
  EXPECT_EQ(Condition(wl, "QuotaReserved", "reason"), "ResourceQuotaExceeded");
  EXPECT_NE(Condition(wl, "QuotaReserved", "message").find("ResourceQuota ml-research/ml-team-quota"), std::string::npos)
      << Condition(wl, "QuotaReserved", "message");
  // The quota's status shows used against hard; nothing of ml-research runs yet.
  const json rq = WaitFor("/api/v1/namespaces/ml-research/resourcequotas/ml-team-quota",
                          [](const json& q) { return q.contains("status"); });
  EXPECT_EQ(rq["status"]["hard"]["requests.nvidia.com/gpu"], "8");
  EXPECT_EQ(rq["status"]["used"]["requests.nvidia.com/gpu"], "0");
}

TEST_F(SchedulingTest, ProductionInferencePreemptsTrainingWhichPreemptsNothingBelowNever) {
  // One on-demand node of 8 GPUs (spot has none): training fills it; production
  // inference arrives and evicts it; exploratory work (preemptionPolicy Never) waits.
  ApplySeed();
  AddFlavors();
  AddNode("od-1", "ondemand", 8);
  Create(Job("team-nlp", "train", "team-nlp-queue", 2, "4", "scheduled-training"));
  WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-train",
          [](const json& w) { return Condition(w, "Admitted", "status") == "True"; });
  Create(Job("team-nlp", "notebook", "team-nlp-queue", 1, "1", "exploratory"));
  const json nb = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-notebook", [](const json& w) {
    return Condition(w, "QuotaReserved", "message").find("preemptionPolicy Never") != std::string::npos;
  });
  EXPECT_NE(Condition(nb, "QuotaReserved", "message").find("preemptionPolicy Never"), std::string::npos)
      << Condition(nb, "QuotaReserved", "message");
  Create(Job("team-nlp", "serve", "team-nlp-queue", 1, "8", "production-inference"));
  const json victim = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-train",
                              [](const json& w) { return Condition(w, "Evicted", "status") == "True"; });
  EXPECT_NE(Condition(victim, "Evicted", "message").find("team-nlp/job-serve"), std::string::npos);
  // The victim's pods are marked for termination (the node agent stops them).
  const json pods = json::parse(client_->Request("GET", "/api/v1/namespaces/team-nlp/pods")->body);
  int terminating = 0;
  for (const json& p : pods["items"]) terminating += p["metadata"].contains("deletionTimestamp") ? 1 : 0;
  EXPECT_EQ(terminating, 2);
}

// GET /metrics, without a token: the scheduler's counters and the cluster's
// gauges in Prometheus text format, following admission and preemption.
TEST_F(SchedulingTest, MetricsFollowAdmissionAndPreemption) {
  ApplySeed();
  AddFlavors();
  AddNode("od-1", "ondemand", 8);
  ApiClient anonymous(server_->url(), "");
  auto metrics_with = [&](const std::vector<std::string>& lines) {
    std::string body;
    for (int i = 0; i < 200; ++i) {
      auto r = anonymous.Request("GET", "/metrics");
      EXPECT_TRUE(r.has_value());
      if (!r.has_value()) return body;
      EXPECT_EQ(r->status, 200) << r->body;
      body = r->body;
      bool all = true;
      for (const std::string& line : lines) all = all && body.find("\n" + line + "\n") != std::string::npos;
      if (all) return body;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const std::string& line : lines) {
      EXPECT_NE(body.find("\n" + line + "\n"), std::string::npos) << line << " not in:\n" << body;
    }
    return body;
  };
  Create(Job("team-nlp", "train", "team-nlp-queue", 2, "4", "scheduled-training"));
  const std::string admitted = metrics_with({
      R"(tessera_admissions_total{cluster_queue="gpu-cluster-queue"} 1)",
      R"(tessera_cluster_queue_allocated_gpus{cluster_queue="gpu-cluster-queue",cohort="",flavor="a100-ondemand"} 8)",
      R"(tessera_gpu_allocated_ratio{node="od-1",gpu="7",model="A100-80GB",flavor="a100-ondemand"} 1)",
      R"(tessera_namespace_allocated_gpus{namespace="team-nlp"} 8)",
      R"(tessera_node_ready{node="od-1"} 1)",
      R"(tessera_admission_wait_seconds_count{cluster_queue="gpu-cluster-queue"} 1)",
  });
  EXPECT_NE(admitted.find("# TYPE tessera_scheduling_cycle_duration_seconds histogram\n"), std::string::npos);
  EXPECT_NE(admitted.find("tessera_scheduling_cycle_duration_seconds_bucket{le=\"+Inf\"} "), std::string::npos);
  Create(Job("team-nlp", "serve", "team-nlp-queue", 1, "8", "production-inference"));
  metrics_with({R"(tessera_preemptions_total{cluster_queue="gpu-cluster-queue",reason="InClusterQueue"} 1)"});
}

// Usage records: one opens when a workload is admitted, with its admission time,
// GPUs, devices and user; it closes at the Finished time when its pods succeed;
// the usage report's GPU time is exactly GPUs x (end - start).
TEST_F(SchedulingTest, UsageRecordsFollowAnAdmissionToTheSecond) {
  AddNode("n1", "ondemand", 4);
  json job = Job("default", "train", "default", 1, "2", "");
  // A label (or annotation) a client sets does not name the user: the server stamps who created it.
  job["metadata"]["labels"]["tessera.dev/user"] = "ana";
  job["metadata"]["annotations"]["tessera.dev/created-by"] = "ana";
  Create(job);
  const json admitted = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-train",
                                [](const json& w) { return Condition(w, "Admitted", "status") == "True"; });
  const std::string admitted_at = admitted["status"]["admission"]["admittedAt"];
  const std::string records_path = "/apis/tessera.dev/v1/namespaces/default/usagerecords";
  json records = WaitFor(records_path, [](const json& list) { return list["items"].size() == 1; });
  const json& open = records["items"][0];
  EXPECT_EQ(open["spec"]["start"], admitted_at);
  EXPECT_EQ(open["spec"]["gpuMilli"], 2000);
  EXPECT_EQ(open["spec"]["user"], "admin");
  EXPECT_EQ(open["spec"]["workload"], "job-train");
  EXPECT_EQ(open["spec"]["devices"].size(), 2u);
  EXPECT_FALSE(open["spec"].contains("end"));

  // Its agent's sample: every device half busy.
  json devices = json::array();
  for (int i = 0; i < 4; ++i) devices.push_back({{"index", i}, {"utilizationPercent", 50}, {"memoryUsedBytes", 0}});
  auto sampled = client_->Request(
      "PATCH", "/api/v1/nodes/n1", json{{"metadata", {{"annotations", {{"tessera.dev/gpu-usage", devices.dump()}}}}}}.dump(),
      "application/merge-patch+json");
  ASSERT_TRUE(sampled && sampled->status == 200);

  // The pod succeeds (as its agent reports), so the workload finishes.
  const json pods = json::parse(client_->Request("GET", "/api/v1/namespaces/default/pods")->body);
  ASSERT_EQ(pods["items"].size(), 1u);
  const std::string pod = pods["items"][0]["metadata"]["name"];
  auto patched = client_->Request("PATCH", "/api/v1/namespaces/default/pods/" + pod + "/status",
                                  json{{"status", {{"phase", "Succeeded"}}}}.dump(), "application/merge-patch+json");
  ASSERT_TRUE(patched && patched->status == 200) << (patched ? patched->body : "");
  const json finished = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-train",
                                [](const json& w) { return Condition(w, "Finished", "status") == "True"; });
  const std::string finished_at = Condition(finished, "Finished", "lastTransitionTime");
  records = WaitFor(records_path, [](const json& list) { return list["items"][0]["spec"].contains("end"); });
  EXPECT_EQ(records["items"][0]["spec"]["end"], finished_at);

  const Timestamp start = *ParseRfc3339(admitted_at), end = *ParseRfc3339(finished_at);
  std::vector<json> items(records["items"].begin(), records["items"].end());
  const UsageSummary s = SummarizeUsage(items, {{"default", 3.0}}, Timestamp::FromSeconds(0),
                                        Timestamp::FromSeconds(4'000'000'000), end, UsageGrouping::kUser);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].key, "admin");
  EXPECT_EQ(s.rows[0].gpu_milli_seconds, 2000 * (end.ms - start.ms) / 1000);
  // Used: 2 GPUs at 50 % from start to end (the latest sample holds for the interval).
  EXPECT_EQ(records["items"][0]["spec"]["usedGpuMilliSeconds"], 1000 * (end.ms - start.ms) / 1000);
  EXPECT_EQ(s.rows[0].used_milli_seconds, 1000 * (end.ms - start.ms) / 1000);
}

// An idle notebook is suspended after its idle timeout: evicted, made inactive
// (its GPUs freed, not re-admitted), an event and a condition saying why; a busy
// notebook keeps running; resuming (spec.active: true) queues it again.
TEST_F(SchedulingTest, IdleNotebookIsSuspendedAndResumed) {
  AddNode("n1", "ondemand", 4);
  for (const char* name : {"idle", "busy"}) {
    json job = Job("default", name, "default", 1, "1", "");
    job["metadata"]["annotations"] = {{"tessera.dev/type", "notebook"}, {"tessera.dev/idle-timeout", "1s"}};
    Create(job);
  }
  auto device_of = [&](const std::string& workload) {
    const json w = WaitFor("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/" + workload,
                           [](const json& o) { return Condition(o, "Admitted", "status") == "True"; });
    return w["status"]["admission"]["podSetAssignments"][0]["placements"][0]["devices"][0]["index"].get<int>();
  };
  device_of("job-idle");
  const int busy_device = device_of("job-busy");
  json devices = json::array();
  for (int i = 0; i < 4; ++i) {
    devices.push_back({{"index", i}, {"utilizationPercent", i == busy_device ? 90 : 0}, {"memoryUsedBytes", 0}});
  }
  auto patched = client_->Request(
      "PATCH", "/api/v1/nodes/n1",
      json{{"metadata", {{"annotations", {{"tessera.dev/gpu-usage", devices.dump()}}}}}}.dump(),
      "application/merge-patch+json");
  ASSERT_TRUE(patched && patched->status == 200);
  const std::string idle_path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-idle";
  const json suspended = WaitFor(idle_path, [](const json& w) { return Condition(w, "Evicted", "reason") == "Suspended"; });
  EXPECT_EQ(suspended["spec"]["active"], false);
  EXPECT_EQ(Condition(suspended, "Suspended", "status"), "True");
  EXPECT_NE(Condition(suspended, "Suspended", "message").find("longer than its idle timeout of 1 s"), std::string::npos)
      << Condition(suspended, "Suspended", "message");
  EXPECT_NE(Condition(suspended, "Suspended", "message").find("tessera resume job-idle"), std::string::npos);
  // The busy one runs on.
  const json busy = Get("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-busy");
  EXPECT_NE(Condition(busy, "Evicted", "status"), "True");

  // Its agent stops the pod and deletes it; the GPU is free and it is not admitted again.
  const json pods = json::parse(client_->Request("GET", "/api/v1/namespaces/default/pods?labelSelector=tessera.dev%2Fworkload%3Djob-idle")->body);
  ASSERT_EQ(pods["items"].size(), 1u);
  EXPECT_TRUE(pods["items"][0]["metadata"].contains("deletionTimestamp"));
  ASSERT_EQ(client_->Request("DELETE", "/api/v1/namespaces/default/pods/" + pods["items"][0]["metadata"]["name"].get<std::string>())->status, 200);
  const json waiting = WaitFor(idle_path, [](const json& w) { return !w["status"].contains("admission"); });
  EXPECT_NE(Condition(waiting, "QuotaReserved", "message").find("suspended; `tessera resume job-idle`"), std::string::npos)
      << Condition(waiting, "QuotaReserved", "message");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(Get(idle_path)["status"].contains("admission"));

  // Resumed: admitted again, and the condition says so.
  auto resumed = client_->Request("PATCH", idle_path, json{{"spec", {{"active", true}}}}.dump(), "application/merge-patch+json");
  ASSERT_TRUE(resumed && resumed->status == 200);
  const json again = WaitFor(idle_path, [](const json& w) {
    return w["status"].contains("admission") && Condition(w, "Suspended", "reason") == "Resumed";
  });
  EXPECT_EQ(Condition(again, "Suspended", "status"), "False");
}

// --metrics-require-token: /metrics answers only with a valid bearer token.
TEST(MetricsAuthTest, MetricsCanRequireAToken) {
  const auto dir = testing::FreshTestDir("tessera-metrics-auth");
  ServerOptions options;
  options.data_dir = dir.string();
  options.http.port = 0;
  options.metrics_need_token = true;
  auto server = Server::Start(options);
  ASSERT_TRUE(server.has_value()) << server.error().ToString();
  ApiClient anonymous((*server)->url(), "");
  auto refused = anonymous.Request("GET", "/metrics");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 401);
  ApiClient admin((*server)->url(), (*server)->admin_token());
  auto served = admin.Request("GET", "/metrics");
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
  EXPECT_NE(served->body.find("# TYPE tessera_admissions_total counter"), std::string::npos);
  server->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
