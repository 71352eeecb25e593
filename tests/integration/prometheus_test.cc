// A real Prometheus (Debian's `prometheus`, started here on 127.0.0.1) scrapes a
// running Tessera with the shipped alert rules loaded; PromQL then returns the
// GPUs each queue and namespace holds after known workloads start.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kPrometheus = "/usr/bin/prometheus";
constexpr const char* kPromtool = "/usr/bin/promtool";

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

class PrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " is missing: scripts/install-deps.sh installs it";
    dir_ = testing::FreshTestDir("tessera-prom");
    server_ = StartServer((dir_ / "server").string());
    ASSERT_FALSE(server_.url.empty());
    token_ = ReadToken((dir_ / "server").string());
    client_ = std::make_unique<ApiClient>(server_.url, token_);
  }
  void TearDown() override {
    for (pid_t pid : {prometheus_, agent_, server_.pid}) {
      if (pid <= 0) continue;
      KillProcess(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SubmitJob(const std::string& name, const std::string& gpus, const std::string& script) {
    json container{{"name", "main"}, {"command", {"sh", "-c", script}}};
    container["resources"]["requests"] = {{"nvidia.com/gpu", gpus}};
    json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
    job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 1},
                                       {"containers", json::array({container})}};
    auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  // The value of a PromQL query returning one sample, or "" when it has none.
  std::string Query(ApiClient& prometheus, const std::string& promql) {
    auto r = prometheus.Request("GET", "/api/v1/query?query=" + UrlEncode(promql));
    if (!r || r->status != 200) return "";
    const json body = json::parse(r->body, nullptr, false);
    if (body.is_discarded() || body["data"]["result"].empty()) return "";
    return body["data"]["result"][0]["value"][1].get<std::string>();
  }

  fs::path dir_;
  ServerProcess server_;
  std::string token_;
  std::unique_ptr<ApiClient> client_;
  pid_t agent_ = -1;
  pid_t prometheus_ = -1;
};

TEST_F(PrometheusTest, PromQLSeesWhatEachQueueAndNamespaceHolds) {
  agent_ = StartAgent(server_.url, token_, "gpu-1", (dir_ / "agent").string(),
                      {"--gpus", "4xA100-80GB", "--usage-interval", "1"});
  SubmitJob("train", "2", "while :; do :; done");  // busy: the simulated GPUs follow its CPU
  SubmitJob("notebook", "0.5", "sleep 600");       // idle

  const std::string target = server_.url.substr(server_.url.find("//") + 2);
  const int port = FreeLocalPort();
  std::ofstream config(dir_ / "prometheus.yml");
  config << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         << "rule_files: [\"" << TESSERA_SOURCE_DIR << "/deploy/prometheus/tessera-alerts.yml\"]\n"
         << "scrape_configs:\n  - job_name: tessera\n    static_configs:\n      - targets: [\"" << target << "\"]\n";
  config.close();
  const std::string line = SpawnAndWaitForLine(
      {kPrometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
       "--storage.tsdb.path=" + (dir_ / "tsdb").string(), "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      (dir_ / "prometheus.out").string(), "Server is ready to receive web requests", &prometheus_, 60);
  ASSERT_FALSE(line.empty()) << testing::ReadFile((dir_ / "prometheus.out").string());

  ApiClient prometheus("http://127.0.0.1:" + std::to_string(port), "");
  std::string queue_gpus, namespace_gpus, devices, ready, busy_devices, used_gpus;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    queue_gpus = Query(prometheus, "sum by (cluster_queue) (tessera_cluster_queue_allocated_gpus{cluster_queue=\"default\"})");
    namespace_gpus = Query(prometheus, "tessera_namespace_allocated_gpus{namespace=\"default\"}");
    devices = Query(prometheus, "count(tessera_gpu_allocated_ratio{node=\"gpu-1\"} > 0)");
    ready = Query(prometheus, "tessera_node_ready{node=\"gpu-1\"}");
    busy_devices = Query(prometheus, "count(tessera_gpu_utilization_ratio{node=\"gpu-1\"} > 0.5)");
    used_gpus = Query(prometheus, "tessera_namespace_used_gpus{namespace=\"default\"}");
    if (queue_gpus == "2.5" && namespace_gpus == "2.5" && devices == "3" && ready == "1" && busy_devices == "2" &&
        used_gpus == "2") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(queue_gpus, "2.5");      // 2 whole GPUs and half of one
  EXPECT_EQ(namespace_gpus, "2.5");
  EXPECT_EQ(devices, "3");           // the fraction shares a third device
  EXPECT_EQ(ready, "1");
  EXPECT_EQ(busy_devices, "2");      // the training pod's two devices; the notebook's is idle
  EXPECT_EQ(used_gpus, "2");         // allocated 2.5, of which 2 are busy
  EXPECT_EQ(Query(prometheus, "tessera_admissions_total{cluster_queue=\"default\"}"), "2");

  // Every query of the shipped Grafana dashboard is valid PromQL over these metrics
  // and, except the rates (one scrape is too few), returns data.
  std::ifstream dashboard_file(std::string(TESSERA_SOURCE_DIR) + "/deploy/grafana/tessera-dashboard.json");
  const json dashboard = json::parse(dashboard_file, nullptr, false);
  ASSERT_TRUE(dashboard.is_object());
  int queries = 0;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      for (size_t at; (at = expr.find("$price_per_gpu_hour")) != std::string::npos;) expr.replace(at, 19, "2.5");
      auto r = prometheus.Request("GET", "/api/v1/query?query=" + UrlEncode(expr));
      ASSERT_TRUE(r.has_value());
      EXPECT_EQ(r->status, 200) << panel["title"] << ": " << expr << "\n" << r->body;
      const json body = json::parse(r->body, nullptr, false);
      EXPECT_EQ(body.value("status", ""), "success") << expr;
      if (expr.find("rate(") == std::string::npos) {
        EXPECT_FALSE(body["data"]["result"].empty()) << panel["title"] << ": " << expr;
      }
      ++queries;
    }
  }
  EXPECT_GE(queries, 13);

  // The shipped alert rules are loaded.
  auto rules = prometheus.Request("GET", "/api/v1/rules");
  ASSERT_TRUE(rules && rules->status == 200);
  for (const char* alert : {"TesseraGpusIdleWhileAllocated", "TesseraQueueWaitingTooLong", "TesseraTeamAtQuota",
                            "TesseraNodeNotReady"}) {
    EXPECT_NE(rules->body.find(alert), std::string::npos) << alert;
  }
}

// The rules are valid, and their unit tests (deploy/prometheus/tessera-alerts.test.yml)
// pass: the idle-GPU alert fires for an idle notebook and not for busy or free GPUs.
TEST(PrometheusFilesTest, ShippedRulesPassPromtoolAndTheirUnitTests) {
  if (!fs::exists(kPromtool)) GTEST_SKIP() << kPromtool << " is missing: scripts/install-deps.sh installs it";
  const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/deploy/prometheus";
  const std::string promtool = std::string("cd ") + dir + " && " + kPromtool;
  EXPECT_EQ(std::system((promtool + " check rules tessera-alerts.yml >/dev/null").c_str()), 0);
  EXPECT_EQ(std::system((promtool + " check config prometheus.yml >/dev/null").c_str()), 0);
  EXPECT_EQ(std::system((promtool + " test rules tessera-alerts.test.yml").c_str()), 0);
}

}  // namespace
}  // namespace tessera
