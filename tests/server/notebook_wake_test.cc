// Opening a suspended notebook's URL resumes it (server/api/notebook_wake.h),
// over real HTTP on 127.0.0.1: the proxy, finding the notebook's Service and
// its Notebook Suspended, writes the resume for a caller who may patch
// notebooks, answers a browser with a "starting" page that reloads itself and
// anything else with 503 and Retry-After, and proxies once the pod is ready.
// The test acts as the node's agent (it writes the pod's status: podIP
// 127.0.0.1, Running, Ready); the notebook's port is a loopback stand-in
// (tests/testing/http_backend.h).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/testing/http_backend.h"
#include "tests/testing/team_cluster.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr const char* kNotebook = "/apis/tessera.dev/v1/namespaces/team/notebooks/nb";
constexpr const char* kPod = "/api/v1/namespaces/team/pods/notebook-nb-notebook-0";
constexpr const char* kUrl = "/api/v1/namespaces/team/services/notebook-nb:http/proxy/lab";

std::string Phase(const json& nb) { return nb.value("status", json::object()).value("phase", ""); }

class NotebookWakeTest : public testing::TeamClusterTest {
 protected:
  NotebookWakeTest() : TeamClusterTest("tessera-notebook-wake") {}

  void SetUp() override {
    std::ofstream(tokens_) << "ann-token,ann,uid-ann\nval-token,val,uid-val\n";
    server_options_.token_auth_file = tokens_.string();
    server_options_.rate.per_second = 0;
    TeamClusterTest::SetUp();
    for (const auto& [user, role] : {std::pair{"ann", "edit"}, std::pair{"val", "view"}}) {
      Create({{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "RoleBinding"},
              {"metadata", {{"name", std::string(user) + "-" + role}, {"namespace", "team"}}},
              {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
              {"subjects", {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user}}}}});
    }
  }

  void TearDown() override {
    TeamClusterTest::TearDown();
    std::filesystem::remove(tokens_);
  }

  uint16_t ServerPort() const {
    const std::string url = server_->url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }
  // GET `target` as `token`, accepting `accept`.
  http::response<http::string_body> Get(const std::string& target, const std::string& token, const std::string& accept) {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
    http::request<http::string_body> req(http::verb::get, target, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + token);
    req.set(http::field::accept, accept);
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket, buffer, res, ec);
    EXPECT_FALSE(ec) << target << ": " << ec.message();
    return res;
  }
  json Object(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  // As the agent: the pod runs at 127.0.0.1 and is ready.
  void RunPod() {
    json pod = WaitFor(kPod, [](const json& p) { return !p["metadata"].contains("deletionTimestamp"); });
    pod["status"] = {{"phase", "Running"},
                     {"podIP", "127.0.0.1"},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    auto r = client_->Request("PUT", std::string(kPod) + "/status", pod.dump());
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error().ToString());
  }
  // As the agent with a pod marked for deletion: stopped, then deleted.
  void StopPod() {
    WaitFor(kPod, [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
    auto r = client_->Request("DELETE", kPod);
    ASSERT_TRUE(r && r->status == 200);
  }
  // Until the notebook's URL is proxied to the backend for `token`.
  bool Serves(const std::string& token) {
    for (int i = 0; i < 500; ++i) {
      const auto res = Get(kUrl, token, "text/html");
      if (res.result_int() == 200 && res[http::field::content_type] == "application/json") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // The token-auth file (the server reads it again when it changes): beside the test's data.
  const std::filesystem::path tokens_ =
      std::filesystem::temp_directory_path() / ("tessera-wake-tokens-" + std::to_string(::getpid()) + ".csv");
  testing::HttpBackend backend_;
};

TEST_F(NotebookWakeTest, OpeningASuspendedNotebooksUrlResumesItBehindAStartingPage) {
  Create({{"apiVersion", "tessera.dev/v1"},
          {"kind", "Notebook"},
          {"metadata", {{"name", "nb"}, {"namespace", "team"}}},
          {"spec", {{"gpu", "0.25"}, {"port", backend_.port()}, {"command", {"my-notebook"}}}}});
  // Before its pod is ready: the starting page (browser) or 503 (anything else).
  WaitFor(kPod, [](const json&) { return true; });
  WaitFor("/api/v1/namespaces/team/services/notebook-nb", [](const json&) { return true; });
  const auto starting = Get(kUrl, "ann-token", "text/html,application/xhtml+xml");
  ASSERT_EQ(starting.result_int(), 200u) << starting.body();
  EXPECT_EQ(starting[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_EQ(starting[http::field::cache_control], "no-store");
  EXPECT_NE(starting.body().find("<meta http-equiv=\"refresh\" content=\"2\">"), std::string::npos) << starting.body();
  EXPECT_NE(starting.body().find("Notebook nb is starting"), std::string::npos);
  const auto api = Get(kUrl, "ann-token", "application/json");
  EXPECT_EQ(api.result_int(), 503u);
  EXPECT_EQ(api[http::field::retry_after], "2");
  ASSERT_NO_FATAL_FAILURE(RunPod());
  ASSERT_TRUE(Serves("ann-token")) << "proxied once its pod is ready";

  // Suspended (GPU freed, pod gone).
  auto r = client_->Request("PATCH", kNotebook, R"({"spec":{"suspend":true}})", "application/merge-patch+json");
  ASSERT_TRUE(r && r->status == 200);
  ASSERT_NO_FATAL_FAILURE(StopPod());
  const json suspended = WaitFor(kNotebook, [](const json& n) {
    return Phase(n) == "Suspended" && n["status"].contains("suspendedAt");
  });
  const std::string suspended_at = suspended["status"]["suspendedAt"];

  // A viewer may not resume it: told so, and nothing is written.
  const auto viewer = Get(kUrl, "val-token", "text/html");
  EXPECT_EQ(viewer.result_int(), 403u) << "view holds no services/proxy: " << viewer.body();
  ASSERT_EQ(client_->Request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
                             json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                                  {"kind", "RoleBinding"},
                                  {"metadata", {{"name", "val-proxy"}, {"namespace", "team"}}},
                                  {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "proxy"}}},
                                  {"subjects", {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", "val"}}}}}
                                 .dump())
                ->status,
            201);
  ASSERT_EQ(client_->Request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles",
                             json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                                  {"kind", "Role"},
                                  {"metadata", {{"name", "proxy"}, {"namespace", "team"}}},
                                  {"rules", {{{"apiGroups", {""}}, {"resources", {"services/proxy"}}, {"verbs", {"get"}}}}}}
                                 .dump())
                ->status,
            201);
  const auto proxy_only = Get(kUrl, "val-token", "text/html");
  ASSERT_EQ(proxy_only.result_int(), 200u) << proxy_only.body();
  EXPECT_NE(proxy_only.body().find("cannot patch resource &quot;notebooks&quot;"), std::string::npos)
      << proxy_only.body();
  EXPECT_EQ(Object(kNotebook)["spec"]["suspend"], true) << "nothing written for val";

  // ann may: the resume is written as `tessera notebook open` writes it, and
  // the page says it is resuming.
  const auto page = Get(kUrl, "ann-token", "text/html");
  ASSERT_EQ(page.result_int(), 200u) << page.body();
  EXPECT_EQ(page[http::field::cache_control], "no-store");
  EXPECT_NE(page.body().find("<b id=\"phase\">Resuming</b>"), std::string::npos) << page.body();
  const json resumed = Object(kNotebook);
  EXPECT_EQ(resumed["spec"]["suspend"], false);
  EXPECT_EQ(resumed["metadata"]["annotations"]["tessera.dev/resume-from"], suspended_at);
  // A client that is no browser: 503 with Retry-After while it starts.
  const auto waiting = Get(kUrl, "ann-token", "*/*");
  EXPECT_EQ(waiting.result_int(), 503u) << waiting.body();
  EXPECT_EQ(waiting[http::field::retry_after], "2");
  EXPECT_NE(waiting.body().find("notebook \\\"nb\\\" is not serving yet"), std::string::npos) << waiting.body();

  // Its pod comes back; once ready, the same URL is the notebook again.
  ASSERT_NO_FATAL_FAILURE(RunPod());
  ASSERT_TRUE(Serves("ann-token"));
  WaitFor(kNotebook, [](const json& n) { return Phase(n) == "Running"; });
}

}  // namespace
}  // namespace tessera
