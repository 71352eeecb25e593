// The agent's status reporter against a real server on 127.0.0.1: statuses sent
// from its own thread, merged when they pile up, confirmed to the loop, and
// retried across a server restart.
#include "agent/status_reporter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPodPath = "/api/v1/namespaces/default/pods/p";

class StatusReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-status");
    StartServer(0);
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", {{"name", "p"}, {"namespace", "default"}}},
             {"spec", {{"containers", {{{"name", "main"}, {"image", "x"}, {"command", {"true"}}}}}}}};
    auto created = Client().Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
    ASSERT_TRUE(created && created->status == 201) << (created ? created->body : created.error().ToString());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void StartServer(uint16_t port) {
    ServerOptions options;
    options.data_dir = dir_.string();
    options.http.port = port;
    auto server = Server::Start(options);
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    server_ = std::move(*server);
  }
  ApiClient Client() { return ApiClient(server_->url(), server_->admin_token()); }
  std::unique_ptr<StatusReporter> Reporter() {
    return std::make_unique<StatusReporter>(std::make_unique<ApiClient>(server_->url(), server_->admin_token()));
  }
  // Waits up to 10 s for the reporter to confirm `version` of pod "uid".
  static bool Confirmed(StatusReporter& reporter, uint64_t version) {
    for (int i = 0; i < 1000; ++i) {
      auto confirmed = reporter.TakeConfirmed();
      if (auto it = confirmed.find("uid"); it != confirmed.end() && it->second >= version) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  json PodStatus() {
    auto got = Client().Request("GET", kPodPath);
    return got && got->status == 200 ? json::parse(got->body)["status"] : json();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
};

// Two statuses posted back to back leave what sending both in turn would: the
// later phase, and the fields only the earlier one had.
TEST_F(StatusReporterTest, TheLatestStatusIsSentOverTheEarlierOnes) {
  auto reporter = Reporter();
  reporter->Post("uid", std::string(kPodPath) + "/status", json{{"phase", "Running"}, {"startTime", "2026-11-30T00:00:00Z"}}, 1);
  reporter->Post("uid", std::string(kPodPath) + "/status", json{{"phase", "Succeeded"}}, 2);
  reporter->Post("uid", std::string(kPodPath) + "/status", json{{"phase", "Running"}}, 1);  // stale: ignored
  ASSERT_TRUE(Confirmed(*reporter, 2));
  const json status = PodStatus();
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["startTime"], "2026-11-30T00:00:00Z");
}

// A pod that is gone has nothing more owed: 404 counts as taken.
TEST_F(StatusReporterTest, APodThatIsGoneIsNotRetried) {
  auto reporter = Reporter();
  reporter->Post("uid", "/api/v1/namespaces/default/pods/gone/status", json{{"phase", "Failed"}}, 7);
  EXPECT_TRUE(Confirmed(*reporter, 7));
}

// While the server is down nothing is confirmed; the reporter keeps the status
// and sends it once the server is back.
TEST_F(StatusReporterTest, AStatusIsRetriedUntilTheServerTakesIt) {
  const uint16_t port = server_->port();
  auto reporter = Reporter();
  server_.reset();
  reporter->Post("uid", std::string(kPodPath) + "/status", json{{"phase", "Running"}}, 1);
  reporter->Post("uid", std::string(kPodPath) + "/status", json{{"phase", "Succeeded"}}, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // at least one failed attempt
  EXPECT_TRUE(reporter->TakeConfirmed().empty());
  StartServer(port);
  ASSERT_TRUE(Confirmed(*reporter, 2));
  EXPECT_EQ(PodStatus()["phase"], "Succeeded");
}

}  // namespace
}  // namespace tessera
