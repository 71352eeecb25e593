// Governance end to end over the API (DESIGN.md section 12, seed 004's rule):
// approval gates that hold no quota while they wait, budgets checked at
// admission, never-preempted production work under the seed's queue, and the
// audit log of each decision. A real server on 127.0.0.1 with token-auth users;
// nodes registered as agents register them (no processes: pods only bind).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/node_registration.h"
#include "api/manifest.h"
#include "client/api_client.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/read_file.h"
#include "tests/testing/seed_dir.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kAlice = "alice-token-0123456789";  // team-nlp, edit
constexpr const char* kBob = "bob-token-0123456789";      // team-nlp, admin: may approve
constexpr const char* kCarol = "carol-token-0123456789";  // team-nlp, admin: may approve

class GovernanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-governance");
    std::ofstream(dir_ / "users.csv") << kAlice << ",alice,1,\"nlp\"\n"
                                      << kBob << ",bob,2,\"nlp-admins\"\n"
                                      << kCarol << ",carol,3,\"nlp-admins\"\n";
    ServerOptions options;
    options.token_auth_file = (dir_ / "users.csv").string();
    options.audit.path = (dir_ / "audit.log").string();
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    admin_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    Create(*admin_, json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-nlp"}}}});
    for (const auto& [group, role] : {std::pair{"nlp", "edit"}, std::pair{"nlp-admins", "admin"}}) {
      Create(*admin_, json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                           {"kind", "RoleBinding"},
                           {"metadata", {{"name", std::string(group)}, {"namespace", "team-nlp"}}},
                           {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                           {"subjects", {{{"kind", "Group"}, {"name", group}, {"apiGroup", "rbac.authorization.k8s.io"}}}}});
    }
    Create(*admin_, json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                         {"kind", "LocalQueue"},
                         {"metadata", {{"name", "q"}, {"namespace", "team-nlp"}}},
                         {"spec", {{"clusterQueue", "default"}}}});
  }
  void TearDown() override {
    admin_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  ApiClient As(const char* token) { return ApiClient(server_->url(), token); }
  static json Create(ApiClient& c, const json& obj, int expected = 201) {
    auto r = c.Request("POST", ObjectPath(obj, false), obj.dump());
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, expected) << obj.dump() << "\n" << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Get(const std::string& path) {
    auto r = admin_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  void AddNode(const std::string& name, int gpus, const std::string& tier = "") {
    Node n{.name = name, .cpu_milli = 64000, .memory_bytes = int64_t{512} << 30};
    if (!tier.empty()) n.labels.Set("tier", tier);
    for (int g = 0; g < gpus; ++g) {
      n.gpus.push_back(GpuDevice{.index = g, .uuid = name + "-gpu" + std::to_string(g), .model = "A100-80GB",
                                 .memory_bytes = int64_t{80} << 30, .nvlink_domain = 0});
    }
    Create(*admin_, NodeObject(n, true, Rfc3339Now()));
  }
  static json Job(const std::string& name, int pods, int gpus_per_pod, int64_t deadline_seconds = 0,
                  const std::string& queue = "q", const std::string& ns = "team-nlp", const std::string& klass = "") {
    json container{{"name", "main"}, {"command", {"sleep", "3600"}},
                   {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(gpus_per_pod)}}}}}};
    json pod{{"containers", {container}}, {"restartPolicy", "Never"}};
    if (!klass.empty()) pod["priorityClassName"] = klass;
    json spec{{"parallelism", pods}, {"completions", pods}, {"template", {{"spec", pod}}}};
    if (deadline_seconds > 0) spec["activeDeadlineSeconds"] = deadline_seconds;
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
                {"spec", std::move(spec)}};
  }
  json WaitFor(const std::string& path, const std::function<bool(const json&)>& ready) {
    return WaitForObject(*admin_, path, ready);
  }
  static std::string WorkloadPath(const std::string& job, const std::string& ns = "team-nlp") {
    return "/apis/kueue.x-k8s.io/v1beta1/namespaces/" + ns + "/workloads/job-" + job;
  }
  static std::string RequestPath(const std::string& job, const std::string& ns = "team-nlp") {
    return "/apis/tessera.dev/v1/namespaces/" + ns + "/approvalrequests/job-" + job;
  }
  static bool Admitted(const json& w) { return ConditionField(w, "Admitted", "status") == "True"; }
  // A decision through the approval subresource, as `tessera approve` sends it.
  ApiResponse Decide(const char* token, const std::string& job, bool approve, const std::string& reason) {
    json request = Get(RequestPath(job));
    request["status"]["conditions"].push_back(
        {{"type", approve ? "Approved" : "Denied"}, {"status", "True"}, {"reason", "Test"}, {"message", reason}});
    ApiClient c = As(token);
    auto r = c.Request("PUT", RequestPath(job) + "/approval", request.dump());
    EXPECT_TRUE(r.has_value());
    return r ? *r : ApiResponse{};
  }
  // Every audit line (the log is written in the background: waits for `want` lines to match).
  std::vector<json> AuditLines(const std::function<bool(const json&)>& match, size_t want) {
    std::vector<json> found;
    for (int i = 0; i < 200; ++i) {
      found.clear();
      std::istringstream in(testing::ReadFile((dir_ / "audit.log").string()));
      for (std::string line; std::getline(in, line);) {
        json e = json::parse(line, nullptr, false);
        if (e.is_object() && match(e)) found.push_back(std::move(e));
      }
      if (found.size() >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return found;
  }
  void Policy(json spec) {
    Create(*admin_, json{{"apiVersion", "tessera.dev/v1"}, {"kind", "ApprovalPolicy"}, {"metadata", {{"name", "gate"}}},
                         {"spec", std::move(spec)}});
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> admin_;
};

TEST_F(GovernanceTest, AGatedWorkloadWaitsHoldingNoQuotaUntilTwoPeopleApprove) {
  // A policy gates more than 4 GPUs in team-nlp and needs two approvals. alice's 8-GPU job
  // waits for them outside the queue: while it waits, the 8-GPU node runs another team's
  // 8 GPUs, which could not have started had the gated one held quota or the GPUs.
  AddNode("n1", 8);
  Policy({{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", "team-nlp"}}}}},
          {"thresholds", {{"gpus", 4}}},
          {"requiredApprovals", 2}});
  ApiClient alice = As(kAlice);
  Create(alice, Job("big", 1, 8, 3600));
  const json request = WaitFor(RequestPath("big"), [](const json& r) { return r.is_object(); });
  EXPECT_EQ(request["spec"]["requester"], "alice");  // the authenticated creator, stamped by the server
  EXPECT_EQ(request["spec"]["requiredApprovals"], 2);
  EXPECT_EQ(request["spec"]["reasons"][0], "asks for 8 GPUs, above the 4 of ApprovalPolicy gate");
  EXPECT_EQ(request["status"]["phase"], "Pending");
  const json waiting = WaitFor(WorkloadPath("big"), [](const json& w) {
    return ConditionField(w, "QuotaReserved", "reason") == "AwaitingApproval";
  });
  const std::string message = ConditionField(waiting, "QuotaReserved", "message");
  EXPECT_NE(message.find("waits for approval, holding no quota: ApprovalRequest team-nlp/job-big has 0 of 2 approvals"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("group nlp-admins"), std::string::npos) << message;  // who may approve, from RBAC
  EXPECT_NE(message.find("tessera approve job-big -n team-nlp"), std::string::npos) << message;

  // It holds nothing: 8 GPUs of namespace default (which the policy does not select) run now.
  Create(*admin_, Job("meanwhile", 2, 4, 3600, "default", "default"));
  WaitFor(WorkloadPath("meanwhile", "default"), Admitted);
  EXPECT_FALSE(Admitted(Get(WorkloadPath("big"))));

  // alice, an editor, may not approve (RBAC: no update on approvalrequests/approval); bob's
  // approval counts once however often he approves.
  const ApiResponse editor = Decide(kAlice, "big", true, "mine");
  EXPECT_EQ(editor.status, 403) << editor.body;
  EXPECT_NE(json::parse(editor.body)["message"].get<std::string>().find("User \"alice\" cannot update resource \"approvalrequests/approval\" in API group "
                             "\"tessera.dev\" in the namespace \"team-nlp\""),
            std::string::npos)
      << editor.body;
  EXPECT_EQ(Decide(kBob, "big", true, "budgeted").status, 200);
  EXPECT_EQ(Decide(kBob, "big", true, "really").status, 200);
  json after_bob = Get(RequestPath("big"));
  EXPECT_EQ(after_bob["status"]["phase"], "Pending");
  EXPECT_EQ(after_bob["status"]["approvals"].size(), 1u);
  EXPECT_EQ(after_bob["status"]["approvals"][0]["user"], "bob");
  EXPECT_EQ(after_bob["status"]["approvals"][0]["reason"], "budgeted");

  // carol's is the second: approved. Once the node is free, it is admitted.
  EXPECT_EQ(Decide(kCarol, "big", true, "ok").status, 200);
  EXPECT_EQ(Get(RequestPath("big"))["status"]["phase"], "Approved");
  EXPECT_EQ(admin_->Request("DELETE", "/apis/batch/v1/namespaces/default/jobs/meanwhile")->status, 200);
  WaitFor(WorkloadPath("big"), Admitted);

  // A decision on a request no longer pending is a Conflict.
  const ApiResponse late = Decide(kCarol, "big", false, "changed my mind");
  EXPECT_EQ(late.status, 409) << late.body;

  // Who decided, when and why, in the audit log too.
  auto decided = AuditLines(
      [](const json& e) {
        return e.value("objectRef", json::object()).value("subresource", "") == "approval" &&
               e.value("annotations", json::object()).contains("tessera.dev/approval");
      },
      3);
  ASSERT_EQ(decided.size(), 3u);  // bob twice, carol once; the refused ones carry no decision
  EXPECT_EQ(decided[0]["annotations"]["tessera.dev/approval"], "approved by bob: budgeted");
  EXPECT_EQ(decided[2]["user"]["username"], "carol");
  auto refused = AuditLines(
      [](const json& e) {
        return e.value("objectRef", json::object()).value("subresource", "") == "approval" &&
               e.value("responseStatus", json::object()).value("code", 0) == 403;
      },
      1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["user"]["username"], "alice");
}

TEST_F(GovernanceTest, AnApproverMayNotApproveTheirOwnRequest) {
  // bob may approve team-nlp's requests, but not one for his own job (allowSelfApproval false).
  Policy({{"thresholds", {{"gpus", 1}}}});
  ApiClient bob = As(kBob);
  Create(bob, Job("bobs", 1, 2, 3600));
  WaitFor(RequestPath("bobs"), [](const json& r) { return r.is_object(); });
  const ApiResponse self = Decide(kBob, "bobs", true, "mine");
  EXPECT_EQ(self.status, 403) << self.body;
  EXPECT_EQ(json::parse(self.body)["message"],
            "approvalrequests.tessera.dev \"job-bobs\" is forbidden: user \"bob\" requested it: someone else must "
            "approve it (its ApprovalPolicy does not allow self-approval)");
  EXPECT_EQ(Decide(kCarol, "bobs", true, "ok").status, 200);
}

TEST_F(GovernanceTest, ADeniedWorkloadIsDeactivatedWithTheReasonAndAResumeDoesNotPassTheGate) {
  // The policy gates a priority class. bob denies (a denial needs a reason); alice's
  // workload is deactivated, says who denied it and why, and stays out after a resume.
  AddNode("n1", 8);
  Create(*admin_, json{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
                       {"metadata", {{"name", "production-inference"}}}, {"value", 1000000}});
  Policy({{"thresholds", {{"priorityClasses", {"production-inference"}}}}});
  ApiClient alice = As(kAlice);
  Create(alice, Job("serve", 1, 1, 0, "q", "team-nlp", "production-inference"));
  const json request = WaitFor(RequestPath("serve"), [](const json& r) { return r.is_object(); });
  EXPECT_EQ(request["spec"]["reasons"][0], "runs at priority class production-inference, which ApprovalPolicy gate gates");
  EXPECT_EQ(Decide(kBob, "serve", false, "").status, 422);  // no reason
  EXPECT_EQ(Decide(kBob, "serve", false, "use the staging queue").status, 200);
  const json denied = WaitFor(WorkloadPath("serve"), [](const json& w) {
    return ConditionField(w, "QuotaReserved", "reason") == "ApprovalDenied";
  });
  EXPECT_EQ(denied["spec"]["active"], false);
  EXPECT_NE(ConditionField(denied, "QuotaReserved", "message").find("denied by bob at "), std::string::npos);
  EXPECT_NE(ConditionField(denied, "QuotaReserved", "message").find(": use the staging queue"), std::string::npos);
  // alice (an editor) resumes it: the gate still holds, and the controller deactivates it again.
  ApiClient c = As(kAlice);
  auto resumed = c.Request("PATCH", WorkloadPath("serve"), R"({"spec":{"active":true}})", "application/merge-patch+json");
  ASSERT_TRUE(resumed && resumed->status == 200) << (resumed ? resumed->body : "");
  WaitFor(WorkloadPath("serve"), [](const json& w) { return w["spec"].value("active", true) == false; });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(Admitted(Get(WorkloadPath("serve"))));
}

TEST_F(GovernanceTest, ARequestExpiresAndItsWorkloadIsDeactivated) {
  // expireAfter 1s: nobody decides in time.
  AddNode("n1", 8);
  Policy({{"thresholds", {{"gpus", 1}}}, {"expireAfter", "1s"}});
  ApiClient alice = As(kAlice);
  Create(alice, Job("slow", 1, 2, 3600));
  WaitFor(RequestPath("slow"), [](const json& r) { return r.value("status", json::object()).value("phase", "") == "Expired"; });
  const json expired = WaitFor(WorkloadPath("slow"), [](const json& w) {
    return ConditionField(w, "QuotaReserved", "reason") == "ApprovalExpired";
  });
  EXPECT_EQ(expired["spec"]["active"], false);
  EXPECT_EQ(Decide(kBob, "slow", true, "too late").status, 409);
}

TEST_F(GovernanceTest, WorkWithoutARunTimeLimitCrossesAGpuHoursThresholdAndSmallWorkPasses) {
  // gpuHours 10: a 2-GPU job of 1 h (2 GPU-hours) passes; one without a limit is unbounded; 4 GPUs
  // for 4 h (16) crosses. The namespaceSelector limits the policy to team-nlp.
  AddNode("n1", 8);
  Policy({{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", "team-nlp"}}}}},
          {"thresholds", {{"gpuHours", 10}}}});
  ApiClient alice = As(kAlice);
  Create(alice, Job("short", 1, 2, 3600));
  Create(alice, Job("open", 1, 1));
  Create(alice, Job("long", 1, 4, 4 * 3600));
  Create(*admin_, Job("elsewhere", 1, 1, 0, "default", "default"));  // another namespace: not gated
  WaitFor(WorkloadPath("short"), Admitted);
  WaitFor(WorkloadPath("elsewhere", "default"), Admitted);
  const json open = WaitFor(RequestPath("open"), [](const json& r) { return r.is_object(); });
  EXPECT_NE(open["spec"]["reasons"][0].get<std::string>().find("has no run-time limit, so its GPU-hours are unbounded"),
            std::string::npos);
  const json long_request = WaitFor(RequestPath("long"), [](const json& r) { return r.is_object(); });
  EXPECT_EQ(long_request["spec"]["reasons"][0], "asks for 16 GPU-hours (4 GPUs for 4h0m), above the 10 of ApprovalPolicy gate");
  EXPECT_EQ(Get(RequestPath("short")), json());  // never gated
}

TEST_F(GovernanceTest, ASpecChangedAfterApprovalAsksAgain) {
  // An approval holds for what was asked: a larger ask after it is a new request.
  Policy({{"thresholds", {{"gpus", 1}}}});  // no node: nothing is admitted meanwhile
  ApiClient alice = As(kAlice);
  Create(alice, Job("grow", 1, 2, 3600));
  WaitFor(RequestPath("grow"), [](const json& r) { return r.is_object(); });
  ASSERT_EQ(Decide(kBob, "grow", true, "fine").status, 200);
  WaitFor(RequestPath("grow"), [](const json& r) { return r["status"]["phase"] == "Approved"; });
  // The workload's pod set asks for 4 GPUs now (an admin edits the Workload;
  // a merge patch, as the scheduler writes its status meanwhile).
  json pod_sets = Get(WorkloadPath("grow"))["spec"]["podSets"];
  pod_sets[0]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "4";
  auto patch = admin_->Request("PATCH", WorkloadPath("grow"), json{{"spec", {{"podSets", pod_sets}}}}.dump(),
                               "application/merge-patch+json");
  ASSERT_TRUE(patch && patch->status == 200) << (patch ? patch->body : "");
  const json again = WaitFor(RequestPath("grow"), [](const json& r) { return r["status"]["phase"] == "Pending"; });
  EXPECT_EQ(again["spec"]["reasons"][0], "asks for 4 GPUs, above the 1 of ApprovalPolicy gate");
}

TEST_F(GovernanceTest, ABudgetBlocksAdmissionWithTheNumbersThenAdmitsAfterARaise) {
  // Flavor price $10 per GPU-hour; team-nlp's monthly budget $100. A job of 4 GPUs for an
  // hour costs $40: admitted. Two more like it would reach $120: the second waits, with the
  // numbers; raising the budget to $1,000 admits it.
  AddNode("n1", 16);
  json flavor = Get("/apis/kueue.x-k8s.io/v1beta1/resourceflavors/default");
  flavor["metadata"]["annotations"]["tessera.dev/price-per-gpu-hour"] = "10";
  ASSERT_EQ(admin_->Request("PUT", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/default", flavor.dump())->status, 200);
  const json budget{{"apiVersion", "tessera.dev/v1"},
                    {"kind", "Budget"},
                    {"metadata", {{"name", "monthly"}, {"namespace", "team-nlp"}}},
                    {"spec", {{"period", "Monthly"}, {"cost", "100"}}}};
  Create(*admin_, budget);
  ApiClient alice = As(kAlice);
  // alice may read the budget but not change it.
  EXPECT_EQ(alice.Request("GET", "/apis/tessera.dev/v1/namespaces/team-nlp/budgets/monthly")->status, 200);
  EXPECT_EQ(alice.Request("DELETE", "/apis/tessera.dev/v1/namespaces/team-nlp/budgets/monthly")->status, 403);
  Create(alice, Job("first", 1, 4, 3600));
  WaitFor(WorkloadPath("first"), Admitted);
  Create(alice, Job("second", 1, 4, 3600));
  WaitFor(WorkloadPath("second"), Admitted);
  Create(alice, Job("third", 1, 4, 3600));
  const json blocked = WaitFor(WorkloadPath("third"), [](const json& w) {
    return ConditionField(w, "QuotaReserved", "message").find("Budget monthly") != std::string::npos;
  });
  EXPECT_TRUE(ConditionField(blocked, "QuotaReserved", "message")
                  .starts_with("team-nlp has used $80 of $100 this month (Budget monthly, counting admitted work to its "
                               "run-time limit)"))
      << ConditionField(blocked, "QuotaReserved", "message");
  EXPECT_NE(ConditionField(blocked, "QuotaReserved", "message").find("this workload could add $40"), std::string::npos);
  // The Budget's status and the metric.
  const json counted = WaitFor("/apis/tessera.dev/v1/namespaces/team-nlp/budgets/monthly",
                               [](const json& b) { return b.value("status", json::object()).value("usedCost", "") == "80.00"; });
  EXPECT_FALSE(counted["status"].value("periodEnd", "").empty());
  auto metrics = admin_->Request("GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("tessera_budget_used_ratio{namespace=\"team-nlp\",budget=\"monthly\",measure=\"cost\"} 0.8"),
            std::string::npos)
      << metrics->body.substr(metrics->body.find("tessera_budget"), 400);
  // A raise admits it.
  json raised = Get("/apis/tessera.dev/v1/namespaces/team-nlp/budgets/monthly");
  raised["spec"]["cost"] = "1000";
  ASSERT_EQ(admin_->Request("PUT", "/apis/tessera.dev/v1/namespaces/team-nlp/budgets/monthly", raised.dump())->status, 200);
  WaitFor(WorkloadPath("third"), Admitted);
}

TEST_F(GovernanceTest, TheSeedsProductionInferenceIsNeverPreemptedWhenAnotherTeamReclaims) {
  // The seed's queue shares a cohort with team-b's queue (an admin's change: the seed has
  // none). production-inference, annotated never-preempted, runs within the seed queue's
  // nominal 16 spot GPUs; scheduled-training borrows team-b's idle 8 on top. When team-b
  // submits 8 GPUs of its own, reclaim takes them back from the borrower, never from
  // production — which, before this change, was the victim.
  const fs::path seed = testing::SeedDir();
  ASSERT_FALSE(seed.empty());
  for (const char* file : {"01-namespaces.yaml", "05-priorityclasses.yaml", "06-kueue.yaml"}) {
    std::ifstream in(seed / file);
    std::stringstream text;
    text << in.rdbuf();
    auto docs = ParseManifests(text.str());
    ASSERT_TRUE(docs.has_value());
    for (const ManifestDocument& d : *docs) {
      if (d.object["kind"] == "Namespace" && !Get("/api/v1/namespaces/" + d.object["metadata"]["name"].get<std::string>()).is_null()) {
        continue;  // team-nlp exists already (SetUp)
      }
      Create(*admin_, d.object);
    }
  }
  auto annotated = admin_->Request("PATCH", "/apis/scheduling.k8s.io/v1/priorityclasses/production-inference",
                                   R"({"metadata":{"annotations":{"tessera.dev/preemptible":"false"}}})",
                                   "application/merge-patch+json");
  ASSERT_TRUE(annotated && annotated->status == 200);
  // The seed's two flavors, on spot nodes only; the seed queue in cohort "shared" and
  // reclaiming; team-b's queue lends its 8 spot GPUs.
  for (const char* flavor : {"a100-spot", "a100-ondemand"}) {
    Create(*admin_, json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"},
                         {"metadata", {{"name", flavor}}},
                         {"spec", {{"nodeLabels", {{"tier", std::string(flavor) == "a100-spot" ? "spot" : "ondemand"}}}}}});
  }
  auto cohort = admin_->Request("PATCH", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/gpu-cluster-queue",
                                R"({"spec":{"cohort":"shared","preemption":{"reclaimWithinCohort":"Any","withinClusterQueue":"LowerPriority"}}})",
                                "application/merge-patch+json");
  ASSERT_TRUE(cohort && cohort->status == 200) << (cohort ? cohort->body : "");
  Create(*admin_, json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                       {"kind", "ClusterQueue"},
                       {"metadata", {{"name", "team-b"}}},
                       {"spec",
                        {{"cohort", "shared"},
                         {"preemption", {{"reclaimWithinCohort", "Any"}}},
                         {"resourceGroups",
                          {{{"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
                            {"flavors",
                             {{{"name", "a100-spot"},
                               {"resources",
                                {{{"name", "cpu"}, {"nominalQuota", 64}},
                                 {{"name", "memory"}, {"nominalQuota", "256Gi"}},
                                 {{"name", "nvidia.com/gpu"}, {"nominalQuota", 8}}}}}}}}}}}}});
  Create(*admin_, json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "LocalQueue"},
                       {"metadata", {{"name", "b"}, {"namespace", "ml-research"}}}, {"spec", {{"clusterQueue", "team-b"}}}});
  for (int i = 0; i < 3; ++i) AddNode("spot-" + std::to_string(i), 8, "spot");  // 24 spot GPUs: 16 + 8 lendable
  // Production fills the seed queue's 16 nominal spot GPUs; training borrows team-b's 8.
  Create(*admin_, Job("serve", 2, 8, 0, "team-nlp-queue", "team-nlp", "production-inference"));
  WaitFor(WorkloadPath("serve"), Admitted);
  Create(*admin_, Job("train", 1, 8, 0, "team-nlp-queue", "team-nlp", "scheduled-training"));
  WaitFor(WorkloadPath("train"), Admitted);
  // team-b reclaims its 8.
  Create(*admin_, Job("mine", 1, 8, 0, "b", "ml-research", "scheduled-training"));
  WaitFor(WorkloadPath("train"), [](const json& w) { return ConditionField(w, "Evicted", "status") == "True"; });
  const json serve = Get(WorkloadPath("serve"));
  EXPECT_TRUE(Admitted(serve));
  EXPECT_NE(ConditionField(serve, "Evicted", "status"), "True") << serve.dump(2);
  // More production than nominal waits rather than borrows, and says why.
  Create(*admin_, Job("serve-more", 1, 8, 0, "team-nlp-queue", "team-nlp", "production-inference"));
  const json more = WaitFor(WorkloadPath("serve-more"), [](const json& w) {
    return ConditionField(w, "QuotaReserved", "message").find("never preempted") != std::string::npos;
  });
  EXPECT_NE(ConditionField(more, "QuotaReserved", "message")
                .find("its priority class production-inference is never preempted, so it runs only within its queue's "
                      "nominal quota"),
            std::string::npos)
      << ConditionField(more, "QuotaReserved", "message");
}

}  // namespace
}  // namespace tessera
