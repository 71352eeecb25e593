// pods/NAME/portforward end to end (server/api/port_forward.h and `tessera
// port-forward`, cli/commands/port_forward_command.h), over real sockets on
// 127.0.0.1: the CLI listens on a local port and relays each connection over a
// WebSocket (v4.channel.k8s.io) to the server, which dials the pod's IP and
// port: an echo server of the test's, behind a pod whose status (podIP
// 127.0.0.1, Running) the admin writes as an agent would. RBAC decides:
// edit may, view and another team may not.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/commands/port_forward_command.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/self_signed_cert.h"
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


// A TCP server on 127.0.0.1 that writes back "echo:" once per connection,
// then every byte it reads, until the client closes.
class EchoServer {
 public:
  EchoServer() : acceptor_(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] {
      while (!stopping_) {
        auto socket = std::make_shared<tcp::socket>(ioc_);
        beast::error_code ec;
        acceptor_.accept(*socket, ec);
        if (ec || stopping_) return;
        std::lock_guard lock(mu_);
        sockets_.push_back(socket);
        workers_.emplace_back([socket] {
          beast::error_code e;
          net::write(*socket, net::buffer(std::string("echo:")), e);
          std::array<char, 16 * 1024> buf{};
          while (!e) {
            const size_t n = socket->read_some(net::buffer(buf), e);
            if (e) break;
            net::write(*socket, net::buffer(buf.data(), n), e);
          }
        });
      }
    });
  }
  ~EchoServer() {
    stopping_ = true;
    beast::error_code ec;
    {
      tcp::socket wake(ioc_);
      wake.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
    }
    thread_.join();
    std::lock_guard lock(mu_);
    for (auto& s : sockets_) s->shutdown(tcp::socket::shutdown_both, ec);
    for (auto& w : workers_) w.join();
  }
  uint16_t port() const { return port_; }

 private:
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> workers_;
  std::thread thread_;
};

// Reads exactly n bytes.
std::string ReadN(tcp::socket& s, size_t n) {
  std::string out(n, '\0');
  beast::error_code ec;
  net::read(s, net::buffer(out), ec);
  EXPECT_FALSE(ec) << ec.message();
  return out;
}

class PortForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-port-forward");
    std::ofstream(dir_ / "tokens.csv") << testing::kTeamUsersTokenFile;
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    ApiClient admin(server_->url(), server_->admin_token());
    ASSERT_NO_FATAL_FAILURE(testing::CreateTeamUsers(admin));
    const json pod{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", "db"}}},
                   {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}},
                   {"status", {{"phase", "Running"}, {"podIP", "127.0.0.1"}}}};
    auto r = admin.Request("POST", "/api/v1/namespaces/team-a/pods", pod.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  uint16_t ServerPort() const {
    const std::string url = server_->url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }
  CommandContext Context(const std::string& token) {
    CommandContext ctx;
    ctx.config.server = server_->url();
    ctx.config.token = token;
    ctx.ns = "team-a";
    ctx.ns_explicit = true;
    ctx.out = &out_;
    ctx.err = &err_;
    return ctx;
  }
  // A WebSocket handshake to the portforward subresource as `token`.
  std::unique_ptr<websocket::stream<tcp::socket>> Open(net::io_context& ioc, const std::string& token,
                                                       const std::string& query, websocket::response_type& answer,
                                                       beast::error_code& ec) {
    auto ws = std::make_unique<websocket::stream<tcp::socket>>(ioc);
    ws->next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
    ws->set_option(websocket::stream_base::decorator([token](websocket::request_type& req) {
      req.set(http::field::authorization, "Bearer " + token);
      req.set(http::field::sec_websocket_protocol, "v4.channel.k8s.io");
    }));
    ws->handshake(answer, "127.0.0.1", "/api/v1/namespaces/team-a/pods/db/portforward" + query, ec);
    return ws;
  }
  static std::string Message(websocket::stream<tcp::socket>& ws) {
    beast::flat_buffer b;
    beast::error_code ec;
    ws.read(b, ec);
    EXPECT_FALSE(ec) << ec.message();
    return beast::buffers_to_string(b.data());
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  EchoServer echo_;
  std::ostringstream out_, err_;
};

std::string PortBytes(uint8_t channel, uint16_t port) {
  return std::string{static_cast<char>(channel), static_cast<char>(port & 0xff), static_cast<char>(port >> 8)};
}

TEST(PortPairTest, LocalColonRemoteAsKubectlReadsIt) {
  auto same = ParsePortPair("8888");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->local, 8888);
  EXPECT_EQ(same->remote, 8888);
  auto pair = ParsePortPair("9999:8888");
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->local, 9999);
  EXPECT_EQ(pair->remote, 8888);
  auto any = ParsePortPair(":8888");
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->local, 0) << "any free port";
  auto named = ParsePortPair("8080:http");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->remote_name, "http");
  for (const char* bad : {"", "0", "70000", "x", "1:2:3", "-1:80"}) {
    auto r = ParsePortPair(bad);
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r) {
      EXPECT_NE(r.error().message().find("port"), std::string::npos) << r.error().message();
    }
  }
}

TEST_F(PortForwardTest, TheCliForwardsALocalPortToThePodBothWays) {
  std::atomic<bool> stop{false};
  std::promise<uint16_t> listening;
  PortForwardOptions options{.target = "pod/db", .ports = {":" + std::to_string(echo_.port())}};
  options.stop = &stop;
  options.on_listening = [&](const std::vector<uint16_t>& ports) { listening.set_value(ports.at(0)); };
  const CommandContext ctx = Context("erin-token");
  int rc = -1;
  std::thread cli([&] { rc = RunPortForward(ctx, options); });
  auto local = listening.get_future();
  ASSERT_EQ(local.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const uint16_t port = local.get();

  // Two connections, one after the other, each its own stream to the pod; a
  // large payload (several relay buffers, several WebSocket messages) included.
  for (const std::string& payload : {std::string("hello"), std::string(200'000, 'x')}) {
    net::io_context ioc;
    tcp::socket s(ioc);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    EXPECT_EQ(ReadN(s, 5), "echo:") << "the pod's bytes reach the local client";
    // Written while read: neither side waits for the other to drain.
    std::thread writer([&] {
      beast::error_code ec;
      net::write(s, net::buffer(payload), ec);
    });
    EXPECT_EQ(ReadN(s, payload.size()), payload) << "and the client's reach the pod";
    writer.join();
    s.close();
  }
  stop = true;
  cli.join();
  EXPECT_EQ(rc, 0) << err_.str();
  const std::string printed = out_.str();
  EXPECT_NE(printed.find("Forwarding from 127.0.0.1:" + std::to_string(port) + " -> " + std::to_string(echo_.port())),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Handling connection for " + std::to_string(echo_.port())), std::string::npos) << printed;
}

TEST_F(PortForwardTest, TheWebSocketSpeaksKubernetesChannels) {
  net::io_context ioc;
  websocket::response_type answer;
  beast::error_code ec;
  auto ws = Open(ioc, "erin-token", "?ports=" + std::to_string(echo_.port()), answer, ec);
  ASSERT_FALSE(ec) << ec.message() << ": " << answer;
  EXPECT_EQ(answer[http::field::sec_websocket_protocol], "v4.channel.k8s.io");
  // Each channel's first message: the port, little-endian.
  EXPECT_EQ(Message(*ws), PortBytes(0, echo_.port()));
  EXPECT_EQ(Message(*ws), PortBytes(1, echo_.port()));
  EXPECT_EQ(Message(*ws), std::string(1, '\0') + "echo:");
  ws->binary(true);
  ws->write(net::buffer(std::string(1, '\0') + "ping"));
  EXPECT_EQ(Message(*ws), std::string(1, '\0') + "ping");
  ws->close(websocket::close_code::normal, ec);

  // A port nothing listens on: the reason on its error channel, then the end.
  net::io_context ioc2;
  tcp::acceptor closed(ioc2, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  const uint16_t dead = closed.local_endpoint().port();
  closed.close();
  auto refused = Open(ioc2, "erin-token", "?ports=" + std::to_string(dead), answer, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(Message(*refused), PortBytes(0, dead));
  EXPECT_EQ(Message(*refused), PortBytes(1, dead));
  EXPECT_EQ(Message(*refused), std::string(1, '\1') + "error forwarding port " + std::to_string(dead) +
                                   " to pod team-a/db: dial tcp 127.0.0.1:" + std::to_string(dead) +
                                   ": connect: connection refused");

  // No ports: 400, in words.
  net::io_context ioc3;
  Open(ioc3, "erin-token", "", answer, ec);
  EXPECT_TRUE(ec);
  EXPECT_EQ(answer.result_int(), 400u);
  EXPECT_NE(answer.body().find("query parameter \\\"ports\\\" is required"), std::string::npos) << answer.body();
}

TEST_F(PortForwardTest, AViewerAndAnotherTeamAreRefused) {
  for (const char* token : {"bob-token", "vic-token"}) {
    net::io_context ioc;
    websocket::response_type answer;
    beast::error_code ec;
    Open(ioc, token, "?ports=" + std::to_string(echo_.port()), answer, ec);
    EXPECT_TRUE(ec) << token;
    EXPECT_EQ(answer.result_int(), 403u) << token;
    const std::string user = std::string(token).substr(0, std::string(token).find('-'));
    EXPECT_NE(answer.body().find("User \\\"" + user + "\\\" cannot create resource \\\"pods/portforward\\\""),
              std::string::npos)
        << answer.body();
  }
  // The CLI says so before it listens: bob cannot even read team-a's pod.
  PortForwardOptions options{.target = "pod/db", .ports = {std::to_string(echo_.port())}};
  EXPECT_EQ(RunPortForward(Context("bob-token"), options), 1);
  EXPECT_NE(err_.str().find("forbidden"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str().find("Forwarding from"), std::string::npos);
}

// To an https:// server the CLI speaks TLS, trusting the server as every
// command does (here: --certificate-authority, the server's own certificate).
TEST(PortForwardTlsTest, TheCliForwardsOverTls) {
  const auto dir = testing::FreshTestDir("tessera-port-forward-tls");
  const testing::CertFiles cert = testing::WriteSelfSignedCert(dir, "server");
  ASSERT_FALSE(cert.cert.empty());
  ServerOptions server_options;
  server_options.http.tls_cert_file = cert.cert;
  server_options.http.tls_key_file = cert.key;
  auto server = testing::StartLocalServer((dir / "data").string(), server_options);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->url().starts_with("https://"));
  EchoServer echo;
  ApiClient admin(server->url(), server->admin_token(), {.certificate_authority = cert.cert});
  const json pod{{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "db"}}},
                 {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}},
                 {"status", {{"phase", "Running"}, {"podIP", "127.0.0.1"}}}};
  auto created = admin.Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : created.error().ToString());

  std::ostringstream out, err;
  CommandContext ctx;
  ctx.config.server = server->url();
  ctx.config.token = server->admin_token();
  ctx.config.tls.certificate_authority = cert.cert;
  ctx.out = &out;
  ctx.err = &err;
  std::atomic<bool> stop{false};
  std::promise<uint16_t> listening;
  PortForwardOptions options{.target = "pod/db", .ports = {":" + std::to_string(echo.port())}};
  options.stop = &stop;
  options.on_listening = [&](const std::vector<uint16_t>& ports) { listening.set_value(ports.at(0)); };
  int rc = -1;
  std::thread cli([&] { rc = RunPortForward(ctx, options); });
  auto local = listening.get_future();
  ASSERT_EQ(local.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  {
    net::io_context ioc;
    tcp::socket s(ioc);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), local.get()));
    EXPECT_EQ(ReadN(s, 5), "echo:");
    net::write(s, net::buffer(std::string("over tls")));
    EXPECT_EQ(ReadN(s, 8), "over tls");
  }
  stop = true;
  cli.join();
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_EQ(err.str(), "");
  server.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
