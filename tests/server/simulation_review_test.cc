// SimulationReview over the API (docs/simulator.md "What if: the platform's own
// history"): cluster-admin replays a recorded period on the cluster and policy
// in force and on changed ones; nobody else may; bad specs come back as 422
// with the field. A real server on 127.0.0.1; the history is UsageRecords and
// inactive Workloads written through the API, as the server would have.
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

constexpr const char* kAlice = "alice-token-0123456789";  // admin of team-nlp
constexpr const char* kReviews = "/apis/tessera.dev/v1/simulationreviews";

class SimulationReviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-simulation-review");
    std::ofstream(dir_ / "users.csv") << kAlice << ",alice,1,\"nlp\"\n";
    ServerOptions options;
    options.token_auth_file = (dir_ / "users.csv").string();
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    admin_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    Create(json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-nlp"}}}});
    Create(json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "RoleBinding"},
                {"metadata", {{"name", "nlp-admins"}, {"namespace", "team-nlp"}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "admin"}}},
                {"subjects", {{{"kind", "Group"}, {"name", "nlp"}, {"apiGroup", "rbac.authorization.k8s.io"}}}}});
    Create(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "LocalQueue"},
                {"metadata", {{"name", "q"}, {"namespace", "team-nlp"}}},
                {"spec", {{"clusterQueue", "default"}}}});
    Create(testing::GpuNodeObject("n1", 8, "H100-80GB"));
    // Yesterday: three 8-GPU jobs of an hour, submitted together, run one after another.
    const Timestamp t0 = Timestamp::FromMillis(SystemNow().ms - 86400000);
    auto at = [&](int64_t s) { return FormatRfc3339(Timestamp::FromMillis(t0.ms + s * 1000)); };
    for (int i = 0; i < 3; ++i) {
      const std::string name = "train-" + std::to_string(i);
      const json created = Create(json{
          {"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "Workload"},
          {"metadata", {{"name", name}, {"namespace", "team-nlp"}}},
          {"spec",
           {{"active", false},
            {"queueName", "q"},
            {"podSets",
             {{{"name", "main"},
               {"count", 1},
               {"template",
                {{"spec",
                  {{"containers",
                    {{{"name", "main"},
                      {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", "8"}, {"nvidia.com/gpu", "8"}}}}}}}}}}}}}}}}}});
      Create(json{{"apiVersion", "tessera.dev/v1"},
                  {"kind", "UsageRecord"},
                  {"metadata", {{"name", name + "-1"}, {"namespace", "team-nlp"}}},
                  {"spec",
                   {{"workload", name},
                    {"workloadUID", created["metadata"]["uid"]},
                    {"clusterQueue", "default"},
                    {"gpuMilli", 8000},
                    {"pods", 1},
                    {"submitted", at(0)},
                    {"start", at(i * 3600)},
                    {"end", at((i + 1) * 3600)}}}});
    }
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
  ApiResponse Ask(const json& spec, const std::string& token, const char* path = kReviews) {
    ApiClient c(server_->url(), token);
    const json review{{"apiVersion", "tessera.dev/v1"}, {"kind", "SimulationReview"}, {"spec", spec}};
    auto r = c.Request("POST", path, review.dump());
    EXPECT_TRUE(r.has_value());
    return r ? *r : ApiResponse{};
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> admin_;
};

TEST_F(SimulationReviewTest, TheAdminReplaysYesterdayOnTheClusterAndOnAChangedOne) {
  const json spec{{"since", "2d"},
                  {"scenarios", {{{"name", "three-nodes"}, {"addNodes", "2x8xH100-80GB"}}}}};
  const ApiResponse r = Ask(spec, server_->admin_token());
  ASSERT_EQ(r.status, 201) << r.body;
  const json review = json::parse(r.body);
  EXPECT_EQ(review["kind"], "SimulationReview");
  const json& st = review["status"];
  EXPECT_EQ(st["jobs"], 3) << st.dump();
  ASSERT_EQ(st["results"].size(), 2u);
  const json& current = st["results"][0];
  EXPECT_EQ(current["name"], "current");
  EXPECT_EQ(current["nodes"], 1);
  // As it really went: one at a time, waiting 0, 1 and 2 hours.
  EXPECT_EQ(current["summary"]["queueingSeconds"]["mean"], 3600.0) << current.dump();
  EXPECT_EQ(st["observed"]["queueingSeconds"]["mean"], 3600.0);
  const json& more = st["results"][1];
  EXPECT_EQ(more["name"], "three-nodes");
  EXPECT_EQ(more["nodes"], 3);
  // The default ClusterQueue's quota is far above the cluster: all three at once.
  EXPECT_EQ(more["summary"]["queueingSeconds"]["mean"], 0.0) << more.dump();
  // Nothing is stored.
  auto list = admin_->Request("GET", kReviews);
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->status, 405);
}

TEST_F(SimulationReviewTest, OnlyClusterAdminMayAskForItReadsEveryTeamsHistory) {
  const ApiResponse r = Ask(json{{"since", "2d"}}, kAlice);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("simulationreviews"), std::string::npos) << r.body;
  const ApiResponse ns = Ask(json{{"since", "2d"}}, server_->admin_token(),
                             "/apis/tessera.dev/v1/namespaces/team-nlp/simulationreviews");
  EXPECT_EQ(ns.status, 404) << ns.body;
}

TEST_F(SimulationReviewTest, ABadSpecIsRefusedWithTheFieldToFix) {
  ApiResponse r = Ask(json{{"since", "someday"}}, server_->admin_token());
  ASSERT_EQ(r.status, 422) << r.body;
  json body = json::parse(r.body);
  EXPECT_EQ(body["reason"], "Invalid");
  EXPECT_EQ(body["details"]["causes"][0]["field"], "spec.since") << r.body;

  json five = json::array();
  for (int i = 0; i < 5; ++i) five.push_back({{"name", "s" + std::to_string(i)}});
  r = Ask(json{{"since", "2d"}, {"scenarios", five}}, server_->admin_token());
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("at most 4"), std::string::npos) << r.body;

  r = Ask(json{{"scenarios", json::array()}}, server_->admin_token());
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["details"]["causes"][0]["field"], "spec.since") << r.body;

  r = Ask(json{{"since", "2d"}, {"scenarios", {{{"name", "x"}, {"removeNodes", {"n7"}}}}}}, server_->admin_token());
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["details"]["causes"][0]["field"], "spec.scenarios[0].removeNodes") << r.body;
}

}  // namespace
}  // namespace tessera
