// The proxy subresource end to end, over real HTTP and WebSocket on 127.0.0.1:
// pods/NAME:PORT/proxy and services/NAME:PORT/proxy reach a backend that
// stands in for a notebook (a Boost.Beast server in the test, serving HTTP and
// a WebSocket echo on a loopback port), authorized by RBAC (edit and admin
// hold pods/proxy and services/proxy, view does not, another team gets 403),
// audited, and answered 503 in Kubernetes' words when there is nothing to
// reach. The pod's status (its IP, 127.0.0.1, and Ready) is written by the
// admin as an agent would write it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/http_backend.h"
#include "tests/testing/read_file.h"
#include "tests/testing/team_users.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;


json Body(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

// A port on 127.0.0.1 where nothing listens (bound, then closed).
uint16_t ClosedPort() {
  net::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-proxy");
    std::ofstream(dir_ / "tokens.csv") << testing::kTeamUsersTokenFile;
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    options.audit.path = (dir_ / "audit.log").string();
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    ApiClient admin(server_->url(), Admin());
    ASSERT_NO_FATAL_FAILURE(testing::CreateTeamUsers(admin));
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Admin() const { return server_->admin_token(); }
  uint16_t ServerPort() const {
    const std::string url = server_->url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }

  ApiResponse Send(const std::string& method, const std::string& path, const std::string& token,
                   const std::string& body = "") {
    ApiClient client(server_->url(), token);
    auto r = client.Request(method, path, body);
    EXPECT_TRUE(r.has_value()) << method << " " << path << ": " << (r ? "" : r.error().ToString());
    return r.value_or(ApiResponse{});
  }

  // A raw HTTP/1.1 exchange with the server (headers the client library does
  // not send, and the answer's own headers).
  http::response<http::string_body> Raw(http::verb method, const std::string& target, const std::string& token,
                                        std::vector<std::pair<std::string, std::string>> headers = {},
                                        std::string body = "") {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
    http::request<http::string_body> req(method, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    req.prepare_payload();
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket, buffer, res, ec);
    EXPECT_FALSE(ec) << target << ": " << ec.message();
    return res;
  }

  // Pod `name` in team-a with label app=NAME, a container port named http
  // (`port`), and the status an agent writes once it runs: Running, Ready,
  // podIP 127.0.0.1 (`ip` empty: none yet, Pending).
  void CreatePod(const std::string& name, uint16_t port, bool with_ip = true) {
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
             {"spec",
              {{"containers",
                {{{"name", "main"}, {"image", "busybox"}, {"ports", {{{"name", "http"}, {"containerPort", port}}}}}}}}}};
    if (with_ip) {
      pod["status"] = {{"phase", "Running"},
                       {"podIP", "127.0.0.1"},
                       {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    }
    const ApiResponse r = Send("POST", "/api/v1/namespaces/team-a/pods", Admin(), pod.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Service `name` in team-a over the pods labelled app=NAME: port 80 (named
  // http) to their port `target`.
  void CreateService(const std::string& name, uint16_t target) {
    const json svc{{"apiVersion", "v1"},
                   {"kind", "Service"},
                   {"metadata", {{"name", name}}},
                   {"spec",
                    {{"selector", {{"app", name}}},
                     {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", target}}}}}}};
    const ApiResponse r = Send("POST", "/api/v1/namespaces/team-a/services", Admin(), svc.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Waits for the EndpointSlice controller to list a ready endpoint of `service`.
  void WaitForReadyEndpoint(const std::string& service) {
    ApiClient admin(server_->url(), Admin());
    WaitForObject(admin,
                  "/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices?labelSelector=kubernetes.io/service-name=" +
                      service,
                  [](const json& list) {
                    for (const json& slice : list.value("items", json::array())) {
                      for (const json& e : slice.value("endpoints", json::array())) {
                        if (e.value("conditions", json::object()).value("ready", false)) return true;
                      }
                    }
                    return false;
                  });
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  testing::HttpBackend backend_;
};

std::string Message(const ApiResponse& r) { return Body(r.body).value("message", std::string()); }

TEST_F(ProxyTest, AMemberGetsAndPostsThroughThePodProxy) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("nb", backend_.port()));
  const std::string pod = "/api/v1/namespaces/team-a/pods/nb:" + std::to_string(backend_.port()) + "/proxy";

  // GET: the path after /proxy and the query, as sent; the caller's token
  // stays with this server.
  const ApiResponse got = Send("GET", pod + "/lab/tree?token=&x=1&x=2", "erin-token");
  ASSERT_EQ(got.status, 200) << got.body;
  const json seen = Body(got.body);
  EXPECT_EQ(seen["method"], "GET");
  EXPECT_EQ(seen["target"], "/lab/tree?token=&x=1&x=2");
  EXPECT_EQ(seen["authorization"], "");
  EXPECT_EQ(seen["host"], "127.0.0.1:" + std::to_string(backend_.port()));
  EXPECT_EQ(seen["x_forwarded_for"], "127.0.0.1");
  EXPECT_EQ(seen["connection"], "close");

  // POST: the body and the application's own headers and cookies go; the
  // backend's headers come back.
  const auto posted = Raw(http::verb::post, pod + "/api/contents", "erin-token",
                          {{"Content-Type", "application/json"}, {"X-Team-Header", "42"}, {"Cookie", "_xsrf=abc"}},
                          R"({"type":"notebook"})");
  ASSERT_EQ(posted.result_int(), 200u) << posted.body();
  EXPECT_EQ(posted["X-Backend"], "notebook");
  const json post_seen = Body(posted.body());
  EXPECT_EQ(post_seen["method"], "POST");
  EXPECT_EQ(post_seen["body"], R"({"type":"notebook"})");
  EXPECT_EQ(post_seen["x_team_header"], "42");
  EXPECT_EQ(post_seen["cookie"], "_xsrf=abc");
  EXPECT_EQ(post_seen["authorization"], "");

  // The pod's named port, the http: scheme, no path at all, and the
  // backend's own error status and chunked body, relayed as they are.
  EXPECT_EQ(Body(Send("GET", "/api/v1/namespaces/team-a/pods/nb:http/proxy/x", "erin-token").body)["target"], "/x");
  EXPECT_EQ(Body(Send("GET",
                      "/api/v1/namespaces/team-a/pods/http:nb:" + std::to_string(backend_.port()) + "/proxy",
                      "erin-token")
                     .body)["target"],
            "/");
  const ApiResponse missing = Send("GET", pod + "/missing", "erin-token");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, R"({"error":"no such page"})");
  const auto chunked = Raw(http::verb::get, pod + "/chunked", "erin-token");
  EXPECT_EQ(chunked.result_int(), 200u);
  EXPECT_EQ(chunked.body(), "part one, part two");

  // Without a port: the pod's first container port.
  EXPECT_EQ(Body(Send("GET", "/api/v1/namespaces/team-a/pods/nb/proxy/first", "erin-token").body)["target"], "/first");
}

TEST_F(ProxyTest, TheServiceProxyReachesAReadyEndpoint) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("web", backend_.port()));
  ASSERT_NO_FATAL_FAILURE(CreateService("web", backend_.port()));
  ASSERT_NO_FATAL_FAILURE(WaitForReadyEndpoint("web"));
  for (const std::string id : {"web:80", "web:http", "http:web:80"}) {
    const ApiResponse r = Send("GET", "/api/v1/namespaces/team-a/services/" + id + "/proxy/predict?n=3", "erin-token");
    ASSERT_EQ(r.status, 200) << id << ": " << r.body;
    EXPECT_EQ(Body(r.body)["target"], "/predict?n=3") << id;
  }
  const ApiResponse posted =
      Send("POST", "/api/v1/namespaces/team-a/services/web:80/proxy/v1/models/m:predict", "erin-token", "[1,2]");
  ASSERT_EQ(posted.status, 200) << posted.body;
  EXPECT_EQ(Body(posted.body)["body"], "[1,2]");
  EXPECT_EQ(Body(posted.body)["target"], "/v1/models/m:predict");

  // A port the Service does not have.
  const ApiResponse no_port = Send("GET", "/api/v1/namespaces/team-a/services/web:81/proxy/", "erin-token");
  EXPECT_EQ(no_port.status, 503);
  EXPECT_EQ(Message(no_port), "no service port 81 found for service \"web\"");
}

// A Service annotated tessera.dev/proxy-keep-path (a notebook's: Jupyter
// serves under its base_url, the proxy path) is sent the whole path.
TEST_F(ProxyTest, AServiceThatKeepsItsProxyPathIsSentTheWholePath) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("nb", backend_.port()));
  ASSERT_NO_FATAL_FAILURE(CreateService("nb", backend_.port()));
  ASSERT_NO_FATAL_FAILURE(WaitForReadyEndpoint("nb"));
  const ApiResponse patched =
      [&] {
        ApiClient client(server_->url(), Admin());
        auto r = client.Request("PATCH", "/api/v1/namespaces/team-a/services/nb",
                                R"({"metadata":{"annotations":{"tessera.dev/proxy-keep-path":"true"}}})",
                                "application/merge-patch+json");
        return r.value_or(ApiResponse{});
      }();
  ASSERT_EQ(patched.status, 200) << patched.body;
  const std::string path = "/api/v1/namespaces/team-a/services/nb:http/proxy/api/status?x=1";
  const ApiResponse r = Send("GET", path, "erin-token");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r.body)["target"], path);
  EXPECT_EQ(Body(r.body)["authorization"], "") << "the caller's token is not the pod's";
  // With tessera.dev/proxy-token-secret, the backend gets its own token from that Secret
  // (a notebook's Jupyter token), never the caller's.
  ApiClient admin(server_->url(), Admin());
  auto secret = admin.Request("POST", "/api/v1/namespaces/team-a/secrets",
                              R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"nb-token"},)"
                              R"("data":{"token":"czNjcjN0"}})");
  ASSERT_TRUE(secret && secret->status == 201) << (secret ? secret->body : "");
  auto annotated = admin.Request("PATCH", "/api/v1/namespaces/team-a/services/nb",
                                 R"({"metadata":{"annotations":{"tessera.dev/proxy-token-secret":"nb-token"}}})",
                                 "application/merge-patch+json");
  ASSERT_TRUE(annotated && annotated->status == 200);
  const ApiResponse with_token = Send("GET", path, "erin-token");
  ASSERT_EQ(with_token.status, 200) << with_token.body;
  EXPECT_EQ(Body(with_token.body)["authorization"], "token s3cr3t");
  // Its pod, by the pods/proxy path, is not: that is the Service's setting.
  const ApiResponse pod = Send("GET", "/api/v1/namespaces/team-a/pods/nb/proxy/api/status", "erin-token");
  ASSERT_EQ(pod.status, 200) << pod.body;
  EXPECT_EQ(Body(pod.body)["target"], "/api/status");
}

TEST_F(ProxyTest, AWebSocketIsRelayedBothWays) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("nb", backend_.port()));
  net::io_context ioc;
  websocket::stream<tcp::socket> ws(ioc);
  ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
  ws.set_option(websocket::stream_base::decorator(
      [](websocket::request_type& req) { req.set(http::field::authorization, "Bearer erin-token"); }));
  websocket::response_type answer;
  beast::error_code ec;
  ws.handshake(answer, "127.0.0.1", "/api/v1/namespaces/team-a/pods/nb:http/proxy/api/kernels/k1/channels", ec);
  ASSERT_FALSE(ec) << ec.message() << ": " << answer;
  EXPECT_EQ(answer.result_int(), 101u);
  // Messages both ways, a large one (several relay buffers) included.
  for (const std::string& message : {std::string("{\"msg_type\":\"execute_request\"}"), std::string(300'000, 'x')}) {
    ws.write(net::buffer(message), ec);
    ASSERT_FALSE(ec) << ec.message();
    beast::flat_buffer echoed;
    ws.read(echoed, ec);
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(beast::buffers_to_string(echoed.data()), message);
  }
  ws.close(websocket::close_code::normal, ec);
  EXPECT_FALSE(ec) << ec.message();
}

TEST_F(ProxyTest, OnlyTheNamespacesEditorsMayProxy) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("nb", backend_.port()));
  ASSERT_NO_FATAL_FAILURE(CreateService("nb", backend_.port()));
  const std::string pod = "/api/v1/namespaces/team-a/pods/nb:http/proxy/";
  const std::string svc = "/api/v1/namespaces/team-a/services/nb:80/proxy/";

  // Another team's member, in Kubernetes' words.
  const ApiResponse other = Send("GET", pod, "bob-token");
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(Message(other), "pods \"nb:http\" is forbidden: User \"bob\" cannot get resource \"pods/proxy\" in API "
                            "group \"\" in the namespace \"team-a\"");
  const ApiResponse other_post = Send("POST", svc + "run", "bob-token", "{}");
  EXPECT_EQ(other_post.status, 403);
  EXPECT_EQ(Message(other_post), "services \"nb:80\" is forbidden: User \"bob\" cannot create resource "
                                 "\"services/proxy\" in API group \"\" in the namespace \"team-a\"");
  // A viewer of team-a: view does not reach into pods.
  EXPECT_EQ(Send("GET", pod, "vic-token").status, 403);
  EXPECT_EQ(Send("GET", svc, "vic-token").status, 403);
  // No WebSocket either: refused before anything reaches the pod.
  const auto upgrade = Raw(http::verb::get, pod + "ws", "bob-token",
                           {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}, {"Sec-WebSocket-Version", "13"},
                            {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
  EXPECT_EQ(upgrade.result_int(), 403u);

  // A token that is no one's: 401.
  const ApiResponse stranger = Send("GET", pod, "no-such-token");
  EXPECT_EQ(stranger.status, 401);
}

TEST_F(ProxyTest, NothingToReachIsServiceUnavailable) {
  // A Service whose selector matches no pod.
  ASSERT_NO_FATAL_FAILURE(CreateService("empty", 8080));
  const ApiResponse none = Send("GET", "/api/v1/namespaces/team-a/services/empty:80/proxy/", "erin-token");
  EXPECT_EQ(none.status, 503);
  EXPECT_EQ(Body(none.body)["reason"], "ServiceUnavailable");
  EXPECT_EQ(Message(none), "no endpoints available for service \"empty\"");

  // A pod with no IP yet.
  ASSERT_NO_FATAL_FAILURE(CreatePod("pending", 8888, /*with_ip=*/false));
  const ApiResponse pending = Send("GET", "/api/v1/namespaces/team-a/pods/pending:8888/proxy/", "erin-token");
  EXPECT_EQ(pending.status, 503);
  EXPECT_EQ(Message(pending),
            "pod \"pending\" has no IP address yet (phase Pending): it is not running; see tessera describe pod pending");

  // A pod whose port nothing listens on.
  const uint16_t closed = ClosedPort();
  ASSERT_NO_FATAL_FAILURE(CreatePod("down", closed));
  const ApiResponse refused = Send("GET", "/api/v1/namespaces/team-a/pods/down:http/proxy/", "erin-token");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(Message(refused), "error trying to reach service: dial tcp 127.0.0.1:" + std::to_string(closed) +
                                  ": connect: connection refused");

  // No such pod, a name that is not NAME[:PORT], a port it does not name.
  EXPECT_EQ(Message(Send("GET", "/api/v1/namespaces/team-a/pods/ghost:80/proxy/", "erin-token")),
            "pods \"ghost\" not found");
  const ApiResponse bad = Send("GET", "/api/v1/namespaces/team-a/pods/a:b:c:d/proxy/", "erin-token");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Message(bad), "invalid pod request \"a:b:c:d\": name it NAME, NAME:PORT or http:NAME:PORT");
  const ApiResponse unnamed = Send("GET", "/api/v1/namespaces/team-a/pods/down:jupyter/proxy/", "erin-token");
  EXPECT_EQ(unnamed.status, 400);
}

TEST_F(ProxyTest, AProxiedChangeIsAudited) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("nb", backend_.port()));
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/team-a/pods/nb:http/proxy/api/sessions", "erin-token", "{}").status, 200);
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/team-a/pods/nb:http/proxy/api/sessions/s1", "bob-token").status, 403);
  // The log is written in batches: read it until both records are there.
  json created, refused;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((created.is_null() || refused.is_null()) && std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(dir_ / "audit.log");
    for (std::string line; std::getline(in, line);) {
      const json e = Body(line);
      if (e.value("objectRef", json::object()).value("subresource", "") != "proxy") continue;
      if (e.value("verb", "") == "create") created = e;
      if (e.value("verb", "") == "delete") refused = e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(created.is_null()) << "no audit record of the proxied POST";
  EXPECT_EQ(created["user"]["username"], "erin");
  EXPECT_EQ(created["objectRef"]["resource"], "pods");
  EXPECT_EQ(created["objectRef"]["name"], "nb:http");
  EXPECT_EQ(created["responseStatus"]["code"], 200);
  ASSERT_FALSE(refused.is_null()) << "no audit record of the refused DELETE";
  EXPECT_EQ(refused["user"]["username"], "bob");
  EXPECT_EQ(refused["responseStatus"]["code"], 403);
}

}  // namespace
}  // namespace tessera
