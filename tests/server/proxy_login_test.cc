// Browser logins on the proxy subresource end to end, over real HTTP and
// WebSocket on 127.0.0.1 (server/api/proxy_login.h): a member asks for a login
// code with her token (POST .../proxylogin), a browser with no token trades it
// once for a session cookie on that path (303 to the URL without the code),
// and the cookie then carries HTTP and WebSocket requests under that path
// only, still authorized by RBAC request by request. The backend is a
// loopback stand-in for a notebook (tests/testing/http_backend.h) behind a pod
// whose status (podIP 127.0.0.1, Running, Ready) the admin writes as an agent
// would.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "auth/service_account_tokens.h"
#include "client/api_client.h"
#include "server/api/proxy_login.h"
#include "server/server.h"
#include "tests/testing/http_backend.h"
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

constexpr const char* kBase = "/api/v1/namespaces/team-a/pods/nb:http/proxy";

json Body(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

// The session JWT alone: who it names comes back whole, on its own path only,
// until it expires, from this server's key only.
TEST(ProxySessionTest, ASessionNamesItsUserOnItsPathOnly) {
  auto key = SigningKey::GenerateEs256();
  ASSERT_TRUE(key.has_value());
  const TokenIssuer issuer(*key, TokenIssuerOptions{});
  const Timestamp now = Timestamp::FromSeconds(1'800'000'000);
  const UserInfo erin{.name = "erin",
                      .uid = "uid-erin",
                      .groups = {"ml", "system:authenticated"},
                      .extra = {{"authentication.kubernetes.io/credential-id", {"X509SHA256=ab"}}}};
  auto session = issuer.IssueProxySession(erin, kBase, kProxySessionExpiration, now);
  ASSERT_TRUE(session.has_value()) << session.error().ToString();
  EXPECT_EQ(session->expires.seconds(), now.seconds() + 12 * 3600);
  auto user = issuer.VerifyProxySession(session->token, kBase, now + Duration::Seconds(60));
  ASSERT_TRUE(user.has_value()) << user.error().ToString();
  EXPECT_EQ(*user, erin);
  auto other = issuer.VerifyProxySession(session->token, "/api/v1/namespaces/team-a/pods/other:http/proxy", now);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().message(), "the session is for another proxy path");
  auto expired = issuer.VerifyProxySession(session->token, kBase, now + Duration::Seconds(12 * 3600 + 1));
  ASSERT_FALSE(expired.has_value());
  EXPECT_NE(expired.error().message().find("expired"), std::string::npos) << expired.error().message();
  auto foreign_key = SigningKey::GenerateEs256();
  ASSERT_TRUE(foreign_key.has_value());
  const TokenIssuer forger(*foreign_key, TokenIssuerOptions{});
  auto forged = forger.IssueProxySession(erin, kBase, kProxySessionExpiration, now);
  ASSERT_TRUE(forged.has_value());
  EXPECT_FALSE(issuer.VerifyProxySession(forged->token, kBase, now).has_value()) << "another server's key";
}

// A code lasts 60 seconds, and goes on its first use, good or bad.
TEST(ProxyLoginsTest, ACodeIsGoodOnceForSixtySeconds) {
  ProxyLogins logins;
  const Timestamp now = Timestamp::FromSeconds(1'800'000'000);
  const UserInfo erin{.name = "erin"};
  const auto late = logins.Issue(erin, kBase, now);
  EXPECT_EQ(late.expires.seconds(), now.seconds() + 60);
  auto expired = logins.Redeem(late.code, kBase, now + Duration::Seconds(60));
  ASSERT_FALSE(expired.has_value());
  EXPECT_NE(expired.error().message().find("expired"), std::string::npos);
  const auto good = logins.Issue(erin, kBase, now);
  EXPECT_NE(good.code, late.code);
  auto user = logins.Redeem(good.code, kBase, now + Duration::Seconds(59));
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "erin");
  EXPECT_FALSE(logins.Redeem(good.code, kBase, now).has_value()) << "used";
  // Codes past their time are dropped as new ones are issued.
  logins.Issue(erin, kBase, now);
  logins.Issue(erin, kBase, now + Duration::Seconds(61));
  EXPECT_EQ(logins.PendingForTest(), 1u);
}

TEST(ProxyLoginsTest, CookiesAndTargetsAreRewrittenAsTheyCome) {
  EXPECT_EQ(SessionCookies("_xsrf=abc; tessera-session=t1;tessera-session=t2"),
            (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(WithoutSessionCookies("_xsrf=abc; tessera-session=t1; theme=dark"), "_xsrf=abc; theme=dark");
  EXPECT_EQ(WithoutSessionCookies("tessera-session=t1"), "");
  EXPECT_EQ(SessionSetCookie("T", kBase, kProxySessionExpiration, true),
            std::string("tessera-session=T; Path=") + kBase + "; Max-Age=43200; HttpOnly; SameSite=Strict; Secure");
  EXPECT_EQ(TargetWithoutLogin("/p/?tessera-login=c"), "/p/");
  EXPECT_EQ(TargetWithoutLogin("/p/lab?a=1&tessera-login=c&b=2"), "/p/lab?a=1&b=2");
  EXPECT_EQ(TargetWithoutLogin("/p/lab?tessera-login=c&b=2"), "/p/lab?b=2");
  EXPECT_EQ(TargetWithoutLogin("/p/lab?tessera-loginx=1"), "/p/lab?tessera-loginx=1");
}

class ProxyLoginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-proxy-login");
    std::ofstream(dir_ / "tokens.csv") << testing::kTeamUsersTokenFile;
    ServerOptions options;
    options.token_auth_file = (dir_ / "tokens.csv").string();
    options.rate.per_second = 0;
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    ApiClient admin(server_->url(), Admin());
    ASSERT_NO_FATAL_FAILURE(testing::CreateTeamUsers(admin));
    ASSERT_NO_FATAL_FAILURE(CreatePod("team-a", "nb", backend_.port()));
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

  // A raw HTTP/1.1 GET as a browser sends it: no Authorization, maybe a Cookie.
  http::response<http::string_body> Browse(const std::string& target, const std::string& cookie = "") {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
    http::request<http::string_body> req(http::verb::get, target, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::accept, "application/json");
    if (!cookie.empty()) req.set(http::field::cookie, cookie);
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket, buffer, res, ec);
    EXPECT_FALSE(ec) << target << ": " << ec.message();
    return res;
  }

  // Pod `name` in `ns` with a container port named http (`port`), running at 127.0.0.1.
  void CreatePod(const std::string& ns, const std::string& name, uint16_t port) {
    const json pod{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", name}}},
                   {"spec",
                    {{"containers",
                      {{{"name", "main"}, {"image", "busybox"}, {"ports", {{{"name", "http"}, {"containerPort", port}}}}}}}}},
                   {"status",
                    {{"phase", "Running"},
                     {"podIP", "127.0.0.1"},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    const ApiResponse r = Send("POST", "/api/v1/namespaces/" + ns + "/pods", Admin(), pod.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // A login code's URL (the path and query) for `base`, asked for by `token`.
  std::string LoginUrl(const std::string& token, const std::string& base = kBase) {
    const std::string login = base.substr(0, base.size() - std::string("proxy").size()) + "proxylogin";
    const ApiResponse r = Send("POST", login, token);
    EXPECT_EQ(r.status, 201) << r.body;
    return Body(r.body).value("status", json::object()).value("url", std::string());
  }

  // The cookie pair (tessera-session=...) of a 303's Set-Cookie.
  static std::string CookieOf(const http::response<http::string_body>& res) {
    const std::string set(res[http::field::set_cookie]);
    return set.substr(0, set.find(';'));
  }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  testing::HttpBackend backend_;
};

TEST_F(ProxyLoginTest, ALoginCodeBecomesACookieOnceAndTheRedirectDropsIt) {
  // erin asks with her token: a code on the pod's proxy path, 60 seconds.
  const ApiResponse asked = Send("POST", "/api/v1/namespaces/team-a/pods/nb:http/proxylogin", "erin-token");
  ASSERT_EQ(asked.status, 201) << asked.body;
  const json login = Body(asked.body);
  EXPECT_EQ(login["kind"], "ProxyLogin");
  const std::string code = login["status"]["code"];
  EXPECT_EQ(code.size(), 64u) << "256 random bits in hex";
  EXPECT_EQ(login["status"]["path"], std::string(kBase) + "/");
  EXPECT_EQ(login["status"]["url"], std::string(kBase) + "/?tessera-login=" + code);
  EXPECT_FALSE(login["status"].value("expirationTimestamp", "").empty());

  // The browser opens it (deeper, with a query of its own): 303 to the same
  // URL without the code, and the session cookie on the proxy path.
  const auto redirect = Browse(std::string(kBase) + "/lab/tree?x=1&tessera-login=" + code + "&y=2");
  ASSERT_EQ(redirect.result_int(), 303u) << redirect.body();
  EXPECT_EQ(redirect[http::field::location], std::string(kBase) + "/lab/tree?x=1&y=2");
  EXPECT_EQ(redirect[http::field::cache_control], "no-store");
  const std::string set_cookie(redirect[http::field::set_cookie]);
  EXPECT_TRUE(set_cookie.starts_with("tessera-session=")) << set_cookie;
  EXPECT_NE(set_cookie.find("; Path=" + std::string(kBase) + ";"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("; Max-Age=43200"), std::string::npos) << "12 hours: " << set_cookie;
  EXPECT_NE(set_cookie.find("; HttpOnly"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("; SameSite=Strict"), std::string::npos) << set_cookie;
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos) << "plain HTTP: no Secure: " << set_cookie;
  EXPECT_EQ(set_cookie.find(code), std::string::npos) << "the cookie is a session, not the code";

  // The code is spent: a second use is 401, and nothing reaches the pod.
  const auto again = Browse(std::string(kBase) + "/?tessera-login=" + code);
  EXPECT_EQ(again.result_int(), 401u);
  EXPECT_NE(Body(again.body()).value("message", "").find("used already"), std::string::npos) << again.body();

  // The cookie carries the request; the pod sees neither it nor a token, but
  // its own cookies go on.
  const auto followed = Browse(std::string(redirect[http::field::location]), CookieOf(redirect) + "; _xsrf=abc");
  ASSERT_EQ(followed.result_int(), 200u) << followed.body();
  const json seen = Body(followed.body());
  EXPECT_EQ(seen["target"], "/lab/tree?x=1&y=2");
  EXPECT_EQ(seen["cookie"], "_xsrf=abc");
  EXPECT_EQ(seen["authorization"], "");
  const auto only_ours = Browse(std::string(kBase) + "/x", CookieOf(redirect));
  ASSERT_EQ(only_ours.result_int(), 200u) << only_ours.body();
  EXPECT_EQ(Body(only_ours.body())["cookie"], "");
}

TEST_F(ProxyLoginTest, CodesAndSessionsAreRefusedOnOtherPaths) {
  ASSERT_NO_FATAL_FAILURE(CreatePod("team-a", "other", backend_.port()));
  // A code used on another path is refused, and spent.
  const std::string url = LoginUrl("erin-token");
  const std::string code = url.substr(url.find('=') + 1);
  const auto elsewhere = Browse("/api/v1/namespaces/team-a/pods/other:http/proxy/?tessera-login=" + code);
  EXPECT_EQ(elsewhere.result_int(), 401u);
  EXPECT_NE(Body(elsewhere.body()).value("message", "").find("is for " + std::string(kBase)), std::string::npos)
      << elsewhere.body();
  EXPECT_EQ(Browse(url).result_int(), 401u) << "spent by the wrong use";
  // A made-up code.
  EXPECT_EQ(Browse(std::string(kBase) + "/?tessera-login=" + std::string(64, 'a')).result_int(), 401u);

  // A session for nb:http only: not for another pod, not the same pod by port
  // number, not the API, and never as a bearer token.
  const auto redirect = Browse(LoginUrl("erin-token"));
  ASSERT_EQ(redirect.result_int(), 303u) << redirect.body();
  const std::string cookie = CookieOf(redirect);
  EXPECT_EQ(Browse(std::string(kBase) + "/", cookie).result_int(), 200u);
  EXPECT_EQ(Browse("/api/v1/namespaces/team-a/pods/other:http/proxy/", cookie).result_int(), 401u);
  EXPECT_EQ(Browse("/api/v1/namespaces/team-a/pods/nb:" + std::to_string(backend_.port()) + "/proxy/", cookie)
                .result_int(),
            401u);
  EXPECT_EQ(Browse("/api/v1/namespaces/team-a/pods", cookie).result_int(), 401u);
  const std::string session = cookie.substr(cookie.find('=') + 1);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/team-a/pods", session).status, 401);
  EXPECT_EQ(Send("GET", std::string(kBase) + "/", session).status, 401);
}

TEST_F(ProxyLoginTest, OnlyThoseWhoMayProxyGetACodeAndRbacStillDecidesEachRequest) {
  // Another team's member, and a viewer: no code, in Kubernetes' words.
  const ApiResponse other = Send("POST", "/api/v1/namespaces/team-a/pods/nb:http/proxylogin", "bob-token");
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(Body(other.body).value("message", ""),
            "pods \"nb:http\" is forbidden: User \"bob\" cannot get resource \"pods/proxy\" in API group \"\" in the "
            "namespace \"team-a\"");
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/team-a/pods/nb:http/proxylogin", "vic-token").status, 403);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/team-a/pods/nb:http/proxylogin", "").status, 401);
  // bob's session on his own team's pod does not open team-a's.
  ASSERT_NO_FATAL_FAILURE(CreatePod("team-b", "nb", backend_.port()));
  const auto bobs = Browse(LoginUrl("bob-token", "/api/v1/namespaces/team-b/pods/nb:http/proxy"));
  ASSERT_EQ(bobs.result_int(), 303u) << bobs.body();
  EXPECT_EQ(Browse("/api/v1/namespaces/team-b/pods/nb:http/proxy/", CookieOf(bobs)).result_int(), 200u);
  EXPECT_EQ(Browse(std::string(kBase) + "/", CookieOf(bobs)).result_int(), 401u);

  // erin's session works until her RoleBinding goes: then 403, cookie or not.
  const auto redirect = Browse(LoginUrl("erin-token"));
  ASSERT_EQ(redirect.result_int(), 303u);
  const std::string cookie = CookieOf(redirect);
  ASSERT_EQ(Browse(std::string(kBase) + "/", cookie).result_int(), 200u);
  ASSERT_EQ(Send("DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/erin-edit", Admin()).status,
            200);
  const auto revoked = Browse(std::string(kBase) + "/", cookie);
  EXPECT_EQ(revoked.result_int(), 403u);
  EXPECT_EQ(Body(revoked.body()).value("message", ""),
            "pods \"nb:http\" is forbidden: User \"erin\" cannot get resource \"pods/proxy\" in API group \"\" in the "
            "namespace \"team-a\"");
}

TEST_F(ProxyLoginTest, TheCookieCarriesAWebSocket) {
  const auto redirect = Browse(LoginUrl("erin-token"));
  ASSERT_EQ(redirect.result_int(), 303u) << redirect.body();
  const std::string cookie = CookieOf(redirect);
  for (const bool with_cookie : {true, false}) {
    net::io_context ioc;
    websocket::stream<tcp::socket> ws(ioc);
    ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), ServerPort()));
    ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
      if (with_cookie) req.set(http::field::cookie, cookie);
    }));
    websocket::response_type answer;
    beast::error_code ec;
    ws.handshake(answer, "127.0.0.1", std::string(kBase) + "/api/kernels/k1/channels", ec);
    if (!with_cookie) {
      EXPECT_TRUE(ec) << "no cookie, no token: refused";
      EXPECT_EQ(answer.result_int(), 401u);
      continue;
    }
    ASSERT_FALSE(ec) << ec.message() << ": " << answer;
    EXPECT_EQ(answer.result_int(), 101u);
    const std::string message = "{\"msg_type\":\"execute_request\"}";
    ws.write(net::buffer(message), ec);
    ASSERT_FALSE(ec) << ec.message();
    beast::flat_buffer echoed;
    ws.read(echoed, ec);
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(beast::buffers_to_string(echoed.data()), message);
    ws.close(websocket::close_code::normal, ec);
  }
}

// Over TLS the session cookie is Secure: the browser never sends it in clear.
TEST(ProxyLoginTlsTest, UnderTlsTheCookieIsSecure) {
  const auto dir = testing::FreshTestDir("tessera-proxy-login-tls");
  const testing::CertFiles cert = testing::WriteSelfSignedCert(dir, "server");
  ASSERT_FALSE(cert.cert.empty());
  ServerOptions options;
  options.http.tls_cert_file = cert.cert;
  options.http.tls_key_file = cert.key;
  auto server = testing::StartLocalServer((dir / "data").string(), options);
  ASSERT_NE(server, nullptr);
  ApiClient admin(server->url(), server->admin_token(), {.certificate_authority = cert.cert});
  auto login = admin.Request("POST", "/api/v1/namespaces/default/pods/nb:http/proxylogin");
  ASSERT_TRUE(login.has_value()) << login.error().ToString();
  ASSERT_EQ(login->status, 201) << login->body;
  const std::string url = Body(login->body)["status"]["url"];

  net::io_context ioc;
  net::ssl::context tls(net::ssl::context::tls_client);
  tls.set_verify_mode(net::ssl::verify_none);  // a test of the cookie, not of the certificate
  beast::ssl_stream<tcp::socket> stream(ioc, tls);
  stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server->port()));
  stream.handshake(net::ssl::stream_base::client);
  http::request<http::string_body> req(http::verb::get, url, 11);
  req.set(http::field::host, "127.0.0.1");
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  ASSERT_EQ(res.result_int(), 303u) << res.body();
  const std::string set_cookie(res[http::field::set_cookie]);
  EXPECT_TRUE(set_cookie.ends_with("; HttpOnly; SameSite=Strict; Secure")) << set_cookie;
  server.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
