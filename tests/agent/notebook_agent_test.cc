// A notebook's kernel activity, end to end: a real server, a real agent, and
// a notebook pod running a small python3 HTTP server that stands in for
// Jupyter (its /api/status and /api/kernels, on the proxy's base URL). The
// agent asks it every usage interval and writes tessera.dev/last-activity on
// the pod; the Notebook's status shows it. And the parsing of Jupyter's answers.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/notebook_activity.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

TEST(KernelActivityTest, JupytersLastActivityOrNowWhileAKernelIsBusy) {
  const Timestamp now = *ParseRfc3339("2026-12-02T10:00:00Z");
  const std::string status =
      R"({"started":"2026-12-02T08:00:00.000000Z","last_activity":"2026-12-02T09:15:30.123456Z","kernels":1,"connections":0})";
  auto idle = KernelActivityFrom(status, R"([{"id":"k1","execution_state":"idle"}])", now);
  ASSERT_TRUE(idle.has_value()) << idle.error().ToString();
  EXPECT_EQ(FormatRfc3339(*idle).substr(0, 19), "2026-12-02T09:15:30");
  auto busy = KernelActivityFrom(status, R"([{"id":"k1","execution_state":"busy"}])", now);
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->ms, now.ms);
  EXPECT_TRUE(KernelActivityFrom(status, "", now).has_value()) << "api/kernels is optional";
  EXPECT_FALSE(KernelActivityFrom("<html>not jupyter</html>", "", now).has_value());
  EXPECT_FALSE(KernelActivityFrom(R"({"last_activity":"yesterday"})", "", now).has_value());
}

TEST(KernelActivityTest, OnlyNotebookPodsAreAskedOnTheirHttpPortAndBaseUrl) {
  const json pod = json::parse(R"({"metadata":{"name":"notebook-nb-notebook-0","namespace":"team","uid":"u1",
      "labels":{"tessera.dev/notebook":"nb"},"annotations":{"tessera.dev/last-activity":"2026-12-02T09:00:00Z"}},
      "spec":{"containers":[{"name":"notebook","ports":[{"name":"http","containerPort":9000}],
      "env":[{"name":"NOTEBOOK_BASE_URL","value":"/api/v1/namespaces/team/services/notebook-nb:http/proxy/"}]}]}})");
  auto nb = NotebookPodOf(pod, "10.0.0.5");
  ASSERT_TRUE(nb.has_value());
  EXPECT_EQ(nb->url, "http://10.0.0.5:9000/api/v1/namespaces/team/services/notebook-nb:http/proxy/");
  EXPECT_EQ(nb->reported, "2026-12-02T09:00:00Z");
  json other = pod;
  other["metadata"]["labels"] = json::object();
  EXPECT_FALSE(NotebookPodOf(other, "10.0.0.5").has_value());
}

// A free TCP port on 127.0.0.1 (bound, then closed, for the stand-in to take).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// argv: port, base URL, and the kernel's state ("idle" or "busy").
constexpr const char* kStandIn = R"(import http.server, json, sys
port, base, state = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class Jupyter(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == base + "api/status":
            body = {"started": "2020-01-01T08:00:00.000000Z", "last_activity": "2020-01-01T09:15:30.000000Z",
                    "kernels": 1, "connections": 0}
        elif path == base + "api/kernels":
            body = [{"id": "k1", "name": "python3", "execution_state": state}]
        else:
            self.send_response(404); self.end_headers(); return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Jupyter).serve_forever()
)";

class NotebookAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-notebook-agent");
    server_ = testing::StartLocalServer((dir_ / "server").string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    AgentOptions o;
    o.server = server_->url();
    o.token = server_->admin_token();
    o.node_name = "node-1";
    o.data_dir = (dir_ / "node-1").string();
    o.checkpoint_root = (dir_ / "checkpoints").string();
    o.gpus.simulated = "2xA100-80GB";
    o.gpus.preference = GpuPreference::kSimulated;
    o.usage_interval = Duration::Millis(200);
    o.lease_duration = Duration::Seconds(4);
    auto a = Agent::Start(o);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
  }
  void TearDown() override {
    agent_.reset();
    std::ifstream in(dir_ / "node-1" / "agent-state.json");
    const json state = json::parse(in, nullptr, false);
    if (state.is_object()) {
      for (const auto& [uid, p] : state["pods"].items()) ::kill(-p.value("pid", 0), SIGKILL);
    }
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  // A Notebook running the stand-in with its kernel `state`, on a free port.
  void CreateNotebook(const std::string& name, const std::string& state, const json& extra = json::object()) {
    const fs::path script = dir_ / "jupyter_stand_in.py";
    if (!fs::exists(script)) std::ofstream(script) << kStandIn;
    json spec{{"port", FreePort()},
              {"cpu", "100m"},
              {"memory", "256Mi"},
              {"command",
               {"sh", "-c", "exec python3 " + script.string() + " \"$NOTEBOOK_PORT\" \"$NOTEBOOK_BASE_URL\" " + state}}};
    spec.update(extra);
    const json nb{{"apiVersion", "tessera.dev/v1"},
                  {"kind", "Notebook"},
                  {"metadata", {{"name", name}, {"namespace", "default"}}},
                  {"spec", spec}};
    auto r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/default/notebooks", nb.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(NotebookAgentTest, TheAgentReportsAStandInJupytersKernelActivityOnThePodAndTheNotebook) {
  CreateNotebook("nb", "idle");
  const json pod = WaitForObject(
      *client_, "/api/v1/namespaces/default/pods/notebook-nb-notebook-0",
      [](const json& p) {
        return p["metadata"].value("annotations", json::object()).contains("tessera.dev/last-activity");
      },
      std::chrono::seconds(30));
  const std::string reported = pod["metadata"]["annotations"].value("tessera.dev/last-activity", "");
  EXPECT_EQ(reported.substr(0, 19), "2020-01-01T09:15:30") << reported;
  // Running once its readiness probe finds the server listening.
  const json running = WaitForObject(*client_, "/apis/tessera.dev/v1/namespaces/default/notebooks/nb", [&](const json& n) {
    const json st = n.value("status", json::object());
    return st.value("lastActivity", "") == reported && st.value("phase", "") == "Running";
  });
  EXPECT_EQ(running["status"]["phase"], "Running") << running["status"].dump();
}

TEST_F(NotebookAgentTest, AQuietNotebookIsSuspendedWithItsGpuFreedAndABusyKernelKeepsItsOwn) {
  // Two notebooks on the node's 2 GPUs, their processes idle (the simulated
  // GPUs read ~0 %), a 3 s idle policy: "quiet"'s kernel last worked years
  // ago, "busy"'s kernel is executing.
  CreateNotebook("busy", "busy", {{"gpu", 1}, {"idle", {{"timeout", "3s"}}}});
  CreateNotebook("quiet", "idle", {{"gpu", 1}, {"idle", {{"timeout", "3s"}}}});
  const std::string workloads = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/";
  const json quiet = WaitForObject(
      *client_, workloads + "notebook-quiet",
      [](const json& w) { return ConditionField(w, "Suspended", "status") == "True"; }, std::chrono::seconds(60));
  EXPECT_NE(ConditionField(quiet, "Suspended", "message").find("and its kernels quiet"), std::string::npos)
      << ConditionField(quiet, "Suspended", "message");
  // Its pod is stopped and gone (the agent), its GPU with it.
  WaitForObject(*client_, "/api/v1/namespaces/default/pods?labelSelector=tessera.dev%2Fnotebook%3Dquiet",
                [](const json& l) { return l["items"].empty(); }, std::chrono::seconds(30));
  const json nb = WaitForObject(*client_, "/apis/tessera.dev/v1/namespaces/default/notebooks/quiet", [](const json& n) {
    return n.value("status", json::object()).value("phase", "") == "Suspended";
  });
  // "busy": its GPU idle since T; once its agent has reported kernel activity
  // at T + 4 s (past its 3 s policy, measured by GPU alone), it still runs.
  const json busy = WaitForObject(*client_, workloads + "notebook-busy", [](const json& w) {
    return w["metadata"].value("annotations", json::object()).contains("tessera.dev/idle-since");
  });
  const Timestamp gpu_idle_since = *ParseRfc3339(busy["metadata"]["annotations"].value("tessera.dev/idle-since", ""));
  WaitForObject(
      *client_, "/api/v1/namespaces/default/pods/notebook-busy-notebook-0",
      [&](const json& p) {
        auto at = ParseRfc3339(p["metadata"].value("annotations", json::object()).value("tessera.dev/last-activity", ""));
        return at && (*at - gpu_idle_since).ms > 4000;
      },
      std::chrono::seconds(30));
  const json still = WaitForObject(*client_, workloads + "notebook-busy", [](const json&) { return true; });
  EXPECT_NE(ConditionField(still, "Suspended", "status"), "True") << still.dump();
  EXPECT_NE(ConditionField(still, "Evicted", "status"), "True") << still.dump();

  // Opened (resume-from its suspension, as `tessera notebook open` writes): it runs again.
  auto r = client_->Request(
      "PATCH", "/apis/tessera.dev/v1/namespaces/default/notebooks/quiet",
      json{{"metadata", {{"annotations", {{"tessera.dev/resume-from", nb["status"]["suspendedAt"]}}}}}}.dump(),
      "application/merge-patch+json");
  ASSERT_TRUE(r && r->status == 200);
  WaitForObject(*client_, "/apis/tessera.dev/v1/namespaces/default/notebooks/quiet", [](const json& n) {
    return n.value("status", json::object()).value("phase", "") == "Running";
  }, std::chrono::seconds(30));
}

// The real thing, where Debian's jupyter-notebook is installed
// (scripts/install-deps.sh installs it): a Notebook with no command runs
// Jupyter on its proxy path; through the server's proxy, with the caller's
// token, its REST API answers, a kernel starts, and code sent over the
// kernel's WebSocket runs and its output comes back.
TEST_F(NotebookAgentTest, RealJupyterRunsCodeThroughTheServersProxy) {
  if (std::system("command -v jupyter-notebook >/dev/null 2>&1 || command -v jupyter-lab >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "neither jupyter-notebook nor jupyter-lab is installed (scripts/install-deps.sh installs Debian's)";
  }
  const json nb{{"apiVersion", "tessera.dev/v1"},
                {"kind", "Notebook"},
                {"metadata", {{"name", "real"}, {"namespace", "default"}}},
                {"spec", {{"port", FreePort()}, {"cpu", "500m"}, {"memory", "1Gi"}, {"gpu", "0.25"},
                          {"idle", {{"timeout", "0"}}}}}};
  auto r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/default/notebooks", nb.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const std::string url = "/api/v1/namespaces/default/services/notebook-real:http/proxy/";
  // Jupyter answers once it has started (a few seconds).
  WaitForObject(*client_, url + "api/status", [](const json& s) { return s.contains("started"); },
                std::chrono::seconds(60));
  if (HasFailure()) {  // what the notebook and its pod say
    auto got = client_->Request("GET", "/apis/tessera.dev/v1/namespaces/default/notebooks/real");
    auto log = client_->Request("GET", "/api/v1/namespaces/default/pods/notebook-real-notebook-0");
    FAIL() << (got ? got->body : "") << "\n" << (log ? log->body : "");
  }
  // Jupyter itself asks for its token: the pod network alone does not reach the kernels.
  {
    ApiClient direct("http://127.0.0.1:" + std::to_string(nb["spec"]["port"].get<int>()), "");
    auto status = direct.Request("GET", url + "api/kernels");
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(status->status, 403) << status->body;
  }
  const std::string server = server_->url();
  const uint16_t port = static_cast<uint16_t>(std::stoi(server.substr(server.rfind(':') + 1)));
  const std::string bearer = "Bearer " + server_->admin_token();
  net::io_context ioc;
  // Jupyter's XSRF cookie (as a browser gets it), then a kernel.
  auto exchange = [&](http::verb method, const std::string& target, const std::string& cookie, const std::string& body) {
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> req(method, target, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, bearer);
    if (!cookie.empty()) {
      req.set(http::field::cookie, "_xsrf=" + cookie);
      req.set("X-XSRFToken", cookie);
    }
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket, buffer, res, ec);
    EXPECT_FALSE(ec) << target << ": " << ec.message();
    return res;
  };
  const auto tree = exchange(http::verb::get, url + "tree", "", "");
  ASSERT_EQ(tree.result_int(), 200u) << tree;
  std::string xsrf;
  for (const auto& field : tree) {
    const std::string value(field.value());
    if (field.name() == http::field::set_cookie && value.starts_with("_xsrf=")) xsrf = value.substr(6, value.find(';') - 6);
  }
  ASSERT_FALSE(xsrf.empty()) << tree.base();
  const auto kernel = exchange(http::verb::post, url + "api/kernels", xsrf, R"({"name":"python3"})");
  ASSERT_EQ(kernel.result_int(), 201u) << kernel;
  const std::string id = json::parse(kernel.body()).value("id", "");
  ASSERT_FALSE(id.empty()) << kernel.body();
  // The kernel's channels over a WebSocket through the proxy: execute, read its output.
  websocket::stream<tcp::socket> ws(ioc);
  ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  ws.set_option(websocket::stream_base::decorator(
      [&](websocket::request_type& req) { req.set(http::field::authorization, bearer); }));
  websocket::response_type answer;
  beast::error_code ec;
  ws.handshake(answer, "127.0.0.1", url + "api/kernels/" + id + "/channels", ec);
  ASSERT_FALSE(ec) << ec.message() << ": " << answer;
  const json execute{{"header", {{"msg_id", "t1"}, {"username", "test"}, {"session", "s1"},
                                 {"msg_type", "execute_request"}, {"version", "5.3"}}},
                     {"parent_header", json::object()},
                     {"metadata", json::object()},
                     {"content", {{"code", "print(6 * 7)"}, {"silent", false}, {"store_history", false},
                                  {"user_expressions", json::object()}, {"allow_stdin", false}}},
                     {"channel", "shell"}};
  ws.write(net::buffer(execute.dump()), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::string printed;
  for (int i = 0; i < 50 && printed.empty(); ++i) {
    beast::flat_buffer buffer;
    ws.read(buffer, ec);
    ASSERT_FALSE(ec) << ec.message();
    const json message = json::parse(beast::buffers_to_string(buffer.data()), nullptr, false);
    if (message.is_object() && message.value("msg_type", "") == "stream") {
      printed = message["content"].value("text", "");
    }
  }
  EXPECT_EQ(printed, "42\n");
  ws.close(websocket::close_code::normal, ec);
  // Jupyter's own activity clock moved: the agent reports it, the Notebook shows it.
  WaitForObject(*client_, "/apis/tessera.dev/v1/namespaces/default/notebooks/real", [](const json& n) {
    auto at = ParseRfc3339(n.value("status", json::object()).value("lastActivity", ""));
    return at && (SystemNow() - *at).ms < 120'000;
  }, std::chrono::seconds(30));
}

}  // namespace
}  // namespace tessera
