// SchedulingReview over the API (docs/scheduling.md "Forecasts"): what the
// scheduler would do with a workload submitted now — where it would run and at
// what price, or why it would wait, its position and estimated start, an
// approval it would need — with nothing stored. A real server on 127.0.0.1 with
// token-auth users; nodes registered as agents register them (no processes).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/gpu_node.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kAlice = "alice-token-0123456789";  // team-nlp, edit
constexpr const char* kVera = "vera-token-0123456789";    // team-nlp, view
constexpr const char* kReviews = "/apis/tessera.dev/v1/namespaces/team-nlp/schedulingreviews";

class SchedulingReviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-scheduling-review");
    std::ofstream(dir_ / "users.csv") << kAlice << ",alice,1,\"nlp\"\n" << kVera << ",vera,2,\"nlp-viewers\"\n";
    ServerOptions options;
    options.token_auth_file = (dir_ / "users.csv").string();
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    admin_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    Create(json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-nlp"}}}});
    for (const auto& [group, role] : {std::pair{"nlp", "edit"}, std::pair{"nlp-viewers", "view"}}) {
      Create(json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "RoleBinding"},
                  {"metadata", {{"name", std::string(group)}, {"namespace", "team-nlp"}}},
                  {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                  {"subjects", {{{"kind", "Group"}, {"name", group}, {"apiGroup", "rbac.authorization.k8s.io"}}}}});
    }
    // The server's default flavor, priced; team-nlp's queue over the default ClusterQueue.
    auto priced = admin_->Request("PATCH", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/default",
                                  R"({"metadata":{"annotations":{"tessera.dev/price-per-gpu-hour":"2.5"}}})",
                                  "application/merge-patch+json");
    ASSERT_TRUE(priced && priced->status == 200) << (priced ? priced->body : "");
    Create(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "LocalQueue"},
                {"metadata", {{"name", "q"}, {"namespace", "team-nlp"}}},
                {"spec", {{"clusterQueue", "default"}}}});
    Create(testing::GpuNodeObject("n1", 8, "H100-80GB"));
  }
  void TearDown() override {
    admin_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  json Create(const json& obj) {
    auto r = admin_->Request("POST", ObjectPath(obj, false), obj.dump());
    EXPECT_TRUE(r && r->status == 201) << obj.dump() << "\n" << (r ? r->body : "");
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  static json Job(const std::string& name, int gpus, int64_t deadline_seconds = 0) {
    json container{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "3600"}},
                   {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
    json spec{{"template", {{"spec", {{"containers", {container}}, {"restartPolicy", "Never"}}}}}};
    if (deadline_seconds > 0) spec["activeDeadlineSeconds"] = deadline_seconds;
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", name}, {"namespace", "team-nlp"}, {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}}}},
                {"spec", std::move(spec)}};
  }
  // The review's answer (status and body), as `token` asks it.
  ApiResponse Ask(const json& object, const char* token = kAlice) {
    ApiClient c(server_->url(), token);
    const json review{{"apiVersion", "tessera.dev/v1"}, {"kind", "SchedulingReview"}, {"spec", {{"object", object}}}};
    auto r = c.Request("POST", kReviews, review.dump());
    EXPECT_TRUE(r.has_value());
    return r ? *r : ApiResponse{};
  }
  json Status(const json& object) {
    const ApiResponse r = Ask(object);
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body, nullptr, false)["status"];
  }
  void WaitAdmitted(const std::string& job) {
    WaitForObject(*admin_, "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-" + job,
                  [](const json& w) { return ConditionField(w, "Admitted", "status") == "True"; });
  }
  size_t Count(const std::string& path) {
    auto r = admin_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body)["items"].size() : 0;
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> admin_;
};

TEST_F(SchedulingReviewTest, AJobThatFitsWouldRunNowOnItsFlavorAndNodeAtItsPrice) {
  const json st = Status(Job("train", 2));
  EXPECT_EQ(st["wouldAdmit"], true) << st.dump();
  EXPECT_EQ(st["reason"], "Admitted");
  EXPECT_EQ(st["clusterQueue"], "default");
  EXPECT_EQ(st["flavors"], json::array({"default"}));
  EXPECT_EQ(st["nodes"], json::array({"n1"}));
  EXPECT_EQ(st["gpus"], "2");
  EXPECT_EQ(st["costPerHour"], "5");  // 2 GPUs at 2.5 a GPU-hour
  EXPECT_EQ(st["message"], "would run now on default in ClusterQueue default (n1 GPU 0,1)") << st.dump();
}

TEST_F(SchedulingReviewTest, AFractionalNotebookNamesTheDeviceShareItWouldGet) {
  const json nb{{"apiVersion", "tessera.dev/v1"},
                {"kind", "Notebook"},
                {"metadata", {{"name", "nb"}}},
                {"spec", {{"gpu", "0.25"}, {"queueName", "q"}}}};
  const json st = Status(nb);
  EXPECT_EQ(st["wouldAdmit"], true) << st.dump();
  EXPECT_EQ(st["gpus"], "0.25");
  EXPECT_EQ(st["costPerHour"], "0.625");
  EXPECT_NE(st["message"].get<std::string>().find("n1 GPU 0 (0.25)"), std::string::npos) << st.dump();
}

TEST_F(SchedulingReviewTest, WorkThatMustWaitGetsTheCoresReasonItsPositionAndAnEstimatedStart) {
  // The node's 8 GPUs run for at most an hour; one job already waits for them.
  Create(Job("running", 8, 3600));
  WaitAdmitted("running");
  Create(Job("first", 8, 600));
  WaitForObject(*admin_, "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-first",
                [](const json& w) { return ConditionField(w, "QuotaReserved", "status") == "False"; });
  const size_t workloads = Count("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads");

  const json st = Status(Job("second", 4));
  EXPECT_EQ(st["wouldAdmit"], false) << st.dump();
  EXPECT_EQ(st["clusterQueue"], "default");
  EXPECT_EQ(st["queuePosition"], 2) << st.dump();
  const std::string message = st["message"];
  EXPECT_TRUE(message.starts_with("waits: ")) << message;
  EXPECT_NE(message.find("position 2 in ClusterQueue default"), std::string::npos) << message;
  EXPECT_EQ(st["costPerHour"], "10");  // 4 GPUs at the queue's dearest flavor
  // "first" holds the reservation at the hour's end; "second" would start after it, or when "running" ends.
  if (st.contains("estimatedStart")) {
    auto start = ParseRfc3339(st["estimatedStart"].get<std::string>());
    ASSERT_TRUE(start.has_value());
  }
  // The review left nothing behind: no Workload, no Job.
  EXPECT_EQ(Count("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads"), workloads);
  EXPECT_EQ(Count("/apis/batch/v1/namespaces/team-nlp/jobs"), 2u);
}

TEST_F(SchedulingReviewTest, TheHeadOfABlockedQueueGetsItsEstimatedStartFromTheRunningWorksLimit) {
  Create(Job("running", 8, 3600));
  WaitAdmitted("running");
  const Timestamp before = SystemNow();
  const json st = Status(Job("next", 8));
  EXPECT_EQ(st["wouldAdmit"], false) << st.dump();
  EXPECT_EQ(st["queuePosition"], 1);
  ASSERT_TRUE(st.contains("estimatedStart")) << st.dump();
  auto start = ParseRfc3339(st["estimatedStart"].get<std::string>());
  ASSERT_TRUE(start.has_value());
  // About an hour from now: when "running" reaches its activeDeadlineSeconds.
  EXPECT_GT((*start - before).seconds(), 3500) << st.dump();
  EXPECT_LT((*start - before).seconds(), 3700) << st.dump();
  EXPECT_NE(st["message"].get<std::string>().find("estimated start in"), std::string::npos) << st.dump();
}

TEST_F(SchedulingReviewTest, AnApprovalItWouldNeedComesFirstWithWhatFollowsOnceApproved) {
  Create(json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "ApprovalPolicy"},
              {"metadata", {{"name", "gate"}}},
              {"spec", {{"thresholds", {{"gpus", 4}}}}}});
  const json st = Status(Job("big", 6));
  EXPECT_EQ(st["wouldAdmit"], false) << st.dump();
  EXPECT_EQ(st["reason"], "WaitingForApproval");
  EXPECT_EQ(st["approvalReasons"], json::array({"asks for 6 GPUs, above the 4 of ApprovalPolicy gate"}));
  EXPECT_TRUE(st["message"].get<std::string>().starts_with(
      "needs an approval first, and waits for it holding no quota (asks for 6 GPUs, above the 4 of ApprovalPolicy "
      "gate); once approved it would run now on default"))
      << st.dump();
  EXPECT_EQ(Count("/apis/tessera.dev/v1/namespaces/team-nlp/approvalrequests"), 0u);
}

TEST_F(SchedulingReviewTest, BadObjectsAreToldWhatToFixFieldByField) {
  // A Job without containers: the Job's own validation, under spec.object.
  json job = Job("broken", 1);
  job["spec"]["template"]["spec"].erase("containers");
  ApiResponse r = Ask(job);
  EXPECT_EQ(r.status, 422) << r.body;
  json body = json::parse(r.body);
  ASSERT_TRUE(body["details"]["causes"].is_array()) << r.body;
  EXPECT_EQ(body["details"]["causes"][0]["field"], "spec.object.spec.template.spec.containers") << r.body;
  EXPECT_EQ(body["details"]["causes"][0]["reason"], "FieldValueRequired") << r.body;

  // A kind the scheduler does not queue.
  r = Ask(json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["details"]["causes"][0]["field"], "spec.object.kind") << r.body;
  EXPECT_NE(r.body.find("a SchedulingReview forecasts a batch/v1 Job"), std::string::npos) << r.body;

  // Another namespace than the review's.
  job = Job("elsewhere", 1);
  job["metadata"]["namespace"] = "team-vision";
  r = Ask(job);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["details"]["causes"][0]["field"], "spec.object.metadata.namespace") << r.body;

  // No object at all.
  ApiClient alice(server_->url(), kAlice);
  auto empty = alice.Request("POST", kReviews, R"({"apiVersion":"tessera.dev/v1","kind":"SchedulingReview","spec":{}})");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->status, 422) << empty->body;
  EXPECT_EQ(json::parse(empty->body)["details"]["causes"][0]["field"], "spec.object") << empty->body;

  // Reviews are answered, not stored: there is nothing to GET.
  auto get = admin_->Request("GET", kReviews);
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->status, 405) << get->body;
}

TEST_F(SchedulingReviewTest, OnlyThoseWhoMaySubmitWorkMayAsk) {
  const ApiResponse viewer = Ask(Job("train", 1), kVera);
  EXPECT_EQ(viewer.status, 403) << viewer.body;
  EXPECT_NE(json::parse(viewer.body)["message"].get<std::string>().find(
                "User \"vera\" cannot create resource \"schedulingreviews\" in API group \"tessera.dev\""),
            std::string::npos)
      << viewer.body;
  EXPECT_EQ(Ask(Job("train", 1)).status, 201);
}

TEST_F(SchedulingReviewTest, ACreateRefusedForItsFieldsNamesThemInTheStatusCauses) {
  json job = Job("broken", 1);
  job["spec"]["template"]["spec"].erase("containers");
  ApiClient alice(server_->url(), kAlice);
  auto r = alice.Request("POST", "/apis/batch/v1/namespaces/team-nlp/jobs", job.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  const json body = json::parse(r->body);
  EXPECT_EQ(body["reason"], "Invalid");
  EXPECT_EQ(body["details"]["causes"][0]["field"], "spec.template.spec.containers") << r->body;
}

}  // namespace
}  // namespace tessera
