// OIDC ID tokens as kube-apiserver's --oidc-* flags accept them, end to end:
// an identity provider of the test's own (OIDC discovery and a JWKS over HTTPS
// on 127.0.0.1, with a self-signed certificate, counting what it is asked), a
// Tessera server trusting it as Entra ID is trusted in the seed, and tokens the
// test signs. Each test changes one thing about the token, the options or the
// provider, and reads what the server answers.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "auth/jwt.h"
#include "auth/oidc.h"
#include "client/api_client.h"
#include "http/http_server.h"
#include "server/server.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
using testing::CertFiles;

constexpr const char* kAliceSub = "9f3c2a10-4d5e-4b7a-8c61-0e2f1d3b5a77";  // an Entra object id
constexpr const char* kAliceEmail = "alice@example.com";

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// An identity provider: GET /.well-known/openid-configuration and GET /keys
// over HTTPS on 127.0.0.1 and a free port, publishing the keys it is given and
// counting the requests of each kind.
class IdentityProvider {
 public:
  explicit IdentityProvider(const CertFiles& cert)
      : http_(HttpServerOptions{.host = "127.0.0.1", .port = 0, .threads = 1, .tls_cert_file = cert.cert,
                                .tls_key_file = cert.key},
              [this](const HttpRequest& request) { return Handle(request); }) {}

  Status Start() {
    Status started = http_.Start();
    std::lock_guard lock(mu_);
    issuer_ = "https://127.0.0.1:" + std::to_string(http_.port());
    return started;
  }
  void Stop() { http_.Stop(); }

  std::string issuer() const {
    std::lock_guard lock(mu_);
    return issuer_;
  }
  // The JWKS served from now on: the public halves of `keys` (a rotation
  // replaces the old keys).
  void Publish(const std::vector<const SigningKey*>& keys) {
    KeySet set;
    for (const SigningKey* key : keys) set.Add(*key);
    std::lock_guard lock(mu_);
    jwks_ = set.ToJwks();
  }
  int discovery_requests() const { return discovery_requests_.load(); }
  int key_requests() const { return key_requests_.load(); }

 private:
  HttpResponse Handle(const HttpRequest& request) {
    HttpResponse response;
    std::lock_guard lock(mu_);
    if (request.method == "GET" && request.path == "/.well-known/openid-configuration") {
      ++discovery_requests_;
      response.body = json{{"issuer", issuer_},
                           {"jwks_uri", issuer_ + "/keys"},
                           {"authorization_endpoint", issuer_ + "/authorize"},
                           {"token_endpoint", issuer_ + "/token"},
                           {"response_types_supported", json::array({"code"})},
                           {"subject_types_supported", json::array({"public"})},
                           {"id_token_signing_alg_values_supported", json::array({"RS256"})}}
                          .dump();
    } else if (request.method == "GET" && request.path == "/keys") {
      ++key_requests_;
      response.body = jwks_.dump();
    } else {
      response.status = 404;
      response.body = R"({"error": "not found"})";
    }
    return response;
  }

  mutable std::mutex mu_;
  std::string issuer_;                         // guarded by mu_
  json jwks_ = json{{"keys", json::array()}};  // guarded by mu_
  std::atomic<int> discovery_requests_{0};
  std::atomic<int> key_requests_{0};
  HttpServer http_;  // last: stopped before what its handler reads goes away
};

// Alice's ID token as Entra ID writes it (valid for ten minutes from now, for
// audience "tessera", group "ml-team"), changed a claim at a time.
class IdToken {
 public:
  explicit IdToken(const std::string& issuer) {
    const int64_t now = NowSeconds();
    claims_ = json{{"iss", issuer},
                   {"aud", "tessera"},
                   {"sub", kAliceSub},
                   {"email", kAliceEmail},
                   {"email_verified", true},
                   {"groups", json::array({"ml-team"})},
                   {"iat", now},
                   {"nbf", now},
                   {"exp", now + 600}};
  }
  IdToken& Claim(const std::string& name, json value) {
    claims_[name] = std::move(value);
    return *this;
  }
  IdToken& Without(const std::string& name) {
    claims_.erase(name);
    return *this;
  }
  // exp, iat and nbf relative to now (negative: in the past).
  IdToken& ExpiresIn(int64_t seconds) { return Claim("exp", NowSeconds() + seconds); }
  IdToken& IssuedIn(int64_t seconds) { return Claim("iat", NowSeconds() + seconds); }
  IdToken& ValidFromIn(int64_t seconds) { return Claim("nbf", NowSeconds() + seconds); }

  // The compact JWS, RS256 with the key's kid in the header.
  std::string SignedBy(const SigningKey& key) const {
    auto token = key.Sign(claims_);
    EXPECT_TRUE(token.has_value()) << token.error().ToString();
    return token.has_value() ? *token : std::string();
  }

 private:
  json claims_;
};

class OidcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-oidc");
    cert_ = testing::WriteSelfSignedCert(dir_, "idp");
    ASSERT_FALSE(cert_.cert.empty()) << "could not make a test certificate";
    auto key = SigningKey::GenerateRsa();
    ASSERT_TRUE(key.has_value()) << key.error().ToString();
    key_.emplace(*key);
    provider_ = std::make_unique<IdentityProvider>(cert_);
    Status started = provider_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    provider_->Publish({&*key_});
  }
  void TearDown() override {
    server_.reset();
    if (provider_) provider_->Stop();
    provider_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The flags of a cluster trusting Entra ID: --oidc-issuer-url the provider,
  // --oidc-client-id=tessera, --oidc-username-claim=email,
  // --oidc-username-prefix=oidc:, --oidc-groups-claim=groups,
  // --oidc-groups-prefix=entra:, --oidc-ca-file the provider's certificate.
  OidcOptions Oidc() const {
    return OidcOptions{.issuer_url = provider_->issuer(),
                       .client_id = "tessera",
                       .username_claim = "email",
                       .username_prefix = "oidc:",
                       .groups_claim = "groups",
                       .groups_prefix = "entra:",
                       .ca_file = cert_.cert};
  }
  ServerOptions WithOidc(OidcOptions oidc) const {
    ServerOptions options;
    options.oidc = std::move(oidc);
    return options;
  }
  void StartTessera(OidcOptions oidc) {
    server_ = testing::StartLocalServer((dir_ / "data").string(), WithOidc(std::move(oidc)));
    ASSERT_NE(server_, nullptr);
  }
  // Server::Start's answer for options that should not start a server (its own data directory).
  Result<std::unique_ptr<Server>> TryStart(OidcOptions oidc) {
    ServerOptions options = WithOidc(std::move(oidc));
    options.data_dir = (dir_ / "refused").string();
    options.http.port = 0;
    return Server::Start(options);
  }

  IdToken Alice() const { return IdToken(provider_->issuer()); }

  ApiResponse Call(const std::string& token, const std::string& method, const std::string& path,
                   const json& body = json()) {
    ApiClient client(server_->url(), token);
    auto r = client.Request(method, path, body.is_null() ? std::string() : body.dump());
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : ApiResponse{};
  }
  // POST /apis/authentication.k8s.io/v1/selfsubjectreviews: whom the server takes the token for.
  ApiResponse Review(const std::string& token) {
    return Call(token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}});
  }
  static json UserInfoOf(const ApiResponse& r) {
    const json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body["status"]["userInfo"] : json();
  }
  // The Status of a refusal: its reason and message.
  static std::string Reason(const ApiResponse& r) {
    const json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body.value("reason", "") : "";
  }
  static std::string Message(const ApiResponse& r) {
    const json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body.value("message", "") : "";
  }
  static bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  std::filesystem::path dir_;
  CertFiles cert_;
  std::optional<SigningKey> key_;  // the provider's signing key
  std::unique_ptr<IdentityProvider> provider_;
  std::unique_ptr<Server> server_;
};

const json kJobTemplate{
    {"spec",
     {{"containers", json::array({json{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "60"}}}})},
      {"restartPolicy", "Never"}}}};

json Job(const std::string& name, const std::string& ns) {
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"template", kJobTemplate}}}};
}

// --- Accepted tokens ---------------------------------------------------------

TEST_F(OidcTest, ValidTokenIsTheUserWithPrefixedNameAndGroups) {
  // Alice's valid token: she is "oidc:" + her email, in "entra:" + her group and
  // in system:authenticated, as a SelfSubjectReview (kubectl auth whoami) shows.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().SignedBy(*key_));
  ASSERT_EQ(r.status, 201) << r.body;
  const json user = UserInfoOf(r);
  EXPECT_EQ(user["username"], "oidc:alice@example.com") << r.body;  // "oidc:" + email
  EXPECT_EQ(user["groups"], json::array({"entra:ml-team", "system:authenticated"})) << r.body;
  EXPECT_EQ(provider_->discovery_requests(), 1);  // the keys fetched on first use: discovery, then
  EXPECT_EQ(provider_->key_requests(), 1);        // the jwks_uri it names
}

TEST_F(OidcTest, DefaultPrefixForSubIsTheIssuerUrlAndHash) {
  // Without --oidc-username-prefix and with --oidc-username-claim=sub, the user
  // is "<issuer>#<sub>" (kube-apiserver's default: two issuers' subs never clash).
  OidcOptions oidc = Oidc();
  oidc.username_claim = "sub";
  oidc.username_prefix.reset();
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));
  const ApiResponse r = Review(Alice().SignedBy(*key_));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(UserInfoOf(r)["username"], provider_->issuer() + "#" + kAliceSub) << r.body;
}

TEST_F(OidcTest, EmailClaimHasNoDefaultPrefix) {
  // Without --oidc-username-prefix and with --oidc-username-claim=email, the
  // user is the email itself (kube-apiserver prefixes every claim but email).
  OidcOptions oidc = Oidc();
  oidc.username_prefix.reset();
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));
  const ApiResponse r = Review(Alice().SignedBy(*key_));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(UserInfoOf(r)["username"], "alice@example.com") << r.body;
}

TEST_F(OidcTest, DashPrefixMeansNoPrefix) {
  // --oidc-username-prefix=- with --oidc-username-claim=sub: the bare sub.
  OidcOptions oidc = Oidc();
  oidc.username_claim = "sub";
  oidc.username_prefix = "-";
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));
  const ApiResponse r = Review(Alice().SignedBy(*key_));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(UserInfoOf(r)["username"], kAliceSub) << r.body;
}

TEST_F(OidcTest, GroupsClaimAsAStringIsOneGroup) {
  // A provider that writes a single group as a string, not a list.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().Claim("groups", "ml-team").SignedBy(*key_));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(UserInfoOf(r)["groups"], json::array({"entra:ml-team", "system:authenticated"})) << r.body;
}

TEST_F(OidcTest, AudienceListHoldingTheClientIdIsAccepted) {
  // "aud" a list of two audiences, one of them --oidc-client-id.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().Claim("aud", json::array({"other", "tessera"})).SignedBy(*key_));
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(OidcTest, ClockSkewOfLessThanAMinuteIsAllowed) {
  // A token that expired 30 s ago, and one valid from 30 s from now: both
  // within the minute of clock skew allowed.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse expired = Review(Alice().IssuedIn(-600).ValidFromIn(-600).ExpiresIn(-30).SignedBy(*key_));
  EXPECT_EQ(expired.status, 201) << expired.body;  // now < exp + 60 s
  const ApiResponse early = Review(Alice().ValidFromIn(30).SignedBy(*key_));
  EXPECT_EQ(early.status, 201) << early.body;  // now >= nbf - 60 s
}

TEST_F(OidcTest, GroupBoundByARoleBindingLetsTheUserCreateJobsInThatNamespaceOnly) {
  // As the seed binds a role to an Entra group: the admin makes namespace
  // team-data-science and binds ClusterRole edit there to Group entra:ml-team.
  // Alice (in ml-team) may create a Job there, and not in default.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const std::string admin = server_->admin_token();
  ApiResponse ns = Call(admin, "POST", "/api/v1/namespaces",
                        json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-data-science"}}}});
  ASSERT_EQ(ns.status, 201) << ns.body;
  const json binding{
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "ml-team-edit"}, {"namespace", "team-data-science"}}},
      {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "edit"}}},
      {"subjects", json::array({json{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Group"}, {"name", "entra:ml-team"}}})}};
  ApiResponse bound =
      Call(admin, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-data-science/rolebindings", binding);
  ASSERT_EQ(bound.status, 201) << bound.body;

  const std::string alice = Alice().SignedBy(*key_);
  const ApiResponse inside = Call(alice, "POST", "/apis/batch/v1/namespaces/team-data-science/jobs",
                                  Job("train", "team-data-science"));
  EXPECT_EQ(inside.status, 201) << inside.body;  // edit holds jobs create, bound to her group there
  const ApiResponse outside = Call(alice, "POST", "/apis/batch/v1/namespaces/default/jobs", Job("train", "default"));
  EXPECT_EQ(outside.status, 403) << outside.body;  // no binding of hers in default
  EXPECT_EQ(Reason(outside), "Forbidden");
  EXPECT_EQ(Message(outside),
            "jobs.batch is forbidden: User \"oidc:alice@example.com\" cannot create resource \"jobs\" in API group "
            "\"batch\" in the namespace \"default\"");
}

// --- Refused tokens ----------------------------------------------------------

TEST_F(OidcTest, ExpiredTokenIsUnauthorizedSayingItExpired) {
  // A token that expired an hour ago (far past the minute of clock skew allowed).
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().IssuedIn(-7200).ValidFromIn(-7200).ExpiresIn(-3600).SignedBy(*key_));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "token expired at ")) << r.body;
}

TEST_F(OidcTest, TokenNotValidYetIsUnauthorized) {
  // A token whose nbf is an hour from now (far past the minute of clock skew allowed).
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().ValidFromIn(3600).ExpiresIn(7200).SignedBy(*key_));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "token is not valid before ")) << r.body;
}

TEST_F(OidcTest, TokenForAnotherAudienceIsUnauthorizedNamingTheAudience) {
  // A token minted for client "other", not for --oidc-client-id=tessera.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().Claim("aud", "other").SignedBy(*key_));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "token audience [\"other\"] is not accepted here (accepted: [\"tessera\"])"))
      << r.body;
}

TEST_F(OidcTest, UnverifiedEmailIsUnauthorizedWhenTheUserNameIsTheEmail) {
  // email_verified false while the user name comes from "email": anyone could
  // claim an address they do not own.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().Claim("email_verified", false).SignedBy(*key_));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "email_verified")) << r.body;
}

TEST_F(OidcTest, TokenOfAnotherIssuerIsUnauthorizedSayingItIsNotTrusted) {
  // A token whose iss is https://elsewhere.example (signed with the provider's
  // key, even): only the configured issuer is trusted.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const ApiResponse r = Review(Alice().Claim("iss", "https://elsewhere.example").SignedBy(*key_));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "token issuer \"https://elsewhere.example\" is not trusted")) << r.body;
}

TEST_F(OidcTest, RequiredClaimIsNeededForTheTokenToBeAccepted) {
  // --oidc-required-claim=hd=example.com: without "hd" the token is refused,
  // with it accepted.
  OidcOptions oidc = Oidc();
  oidc.required_claims = {{"hd", "example.com"}};
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));
  const ApiResponse without = Review(Alice().SignedBy(*key_));
  EXPECT_EQ(without.status, 401) << without.body;
  EXPECT_EQ(Reason(without), "Unauthorized");
  EXPECT_TRUE(Contains(Message(without), "hd=example.com")) << without.body;
  const ApiResponse with = Review(Alice().Claim("hd", "example.com").SignedBy(*key_));
  EXPECT_EQ(with.status, 201) << with.body;
  EXPECT_EQ(UserInfoOf(with)["username"], "oidc:alice@example.com") << with.body;
}

// --- Keys --------------------------------------------------------------------

TEST_F(OidcTest, UnknownKeyIsUnauthorizedAndTheKeysAreFetchedAtMostOnceIn10Seconds) {
  // Tokens signed by a key the provider does not publish (its kid is not in the
  // JWKS): each is refused; the first fetches the keys, the next ones within
  // 10 s do not fetch them again, and the provider's real key still works.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  auto stranger = SigningKey::GenerateRsa();
  ASSERT_TRUE(stranger.has_value()) << stranger.error().ToString();
  ASSERT_NE(stranger->kid(), key_->kid());
  for (int i = 0; i < 4; ++i) {
    // Distinct tokens (a "jti" each), so that nothing could be remembered.
    const ApiResponse r = Review(Alice().Claim("jti", "attempt-" + std::to_string(i)).SignedBy(*stranger));
    EXPECT_EQ(r.status, 401) << "attempt " << i << ": " << r.body;
    EXPECT_EQ(Reason(r), "Unauthorized");
    EXPECT_EQ(Message(r), "token signed by an unknown key (kid \"" + stranger->kid() + "\")") << "attempt " << i;
  }
  EXPECT_EQ(provider_->key_requests(), 1);  // 4 unknown kids in well under 10 s: one fetch, on first use
  EXPECT_EQ(provider_->discovery_requests(), 1);
  EXPECT_EQ(Review(Alice().SignedBy(*key_)).status, 201);  // its kid is among the keys held
  EXPECT_EQ(provider_->key_requests(), 1);                  // 1: no fetch for a known kid
}

TEST_F(OidcTest, TokenOfARotatedKeyIsAcceptedOnceTheKeysAreFetchedAgain) {
  // The provider rotates from its key to a new one (the JWKS now lists only the
  // new key). A token of the new key within 10 s of the last fetch is refused
  // (no fetch yet); once 10 s have passed, it makes the server fetch the keys
  // again and is accepted.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  ASSERT_EQ(Review(Alice().SignedBy(*key_)).status, 201);  // first use: keys fetched (1)
  const auto fetched = std::chrono::steady_clock::now();
  ASSERT_EQ(provider_->key_requests(), 1);

  auto rotated = SigningKey::GenerateRsa();
  ASSERT_TRUE(rotated.has_value()) << rotated.error().ToString();
  provider_->Publish({&*rotated});
  const std::string token = Alice().SignedBy(*rotated);
  const ApiResponse early = Review(token);
  EXPECT_EQ(early.status, 401) << early.body;  // < 10 s since the fetch: not fetched again
  EXPECT_EQ(Message(early), "token signed by an unknown key (kid \"" + rotated->kid() + "\")");
  EXPECT_EQ(provider_->key_requests(), 1);

  std::this_thread::sleep_until(fetched + std::chrono::milliseconds(10'500));  // 10 s + half a second of margin
  const ApiResponse later = Review(token);
  EXPECT_EQ(later.status, 201) << later.body;
  EXPECT_EQ(UserInfoOf(later)["username"], "oidc:alice@example.com") << later.body;
  EXPECT_EQ(provider_->key_requests(), 2);  // 1 + the fetch the unknown kid made after 10 s
  EXPECT_EQ(provider_->discovery_requests(), 2);
}

TEST_F(OidcTest, JwksFileGivesTheKeysAndTheProviderIsNeverAsked) {
  // Air-gapped: --oidc-jwks-file holds the provider's keys; the server reads
  // them from there and never asks the provider, even for a kid it lacks.
  const std::filesystem::path jwks = dir_ / "jwks.json";
  {
    KeySet keys;
    keys.Add(*key_);
    std::ofstream(jwks) << keys.ToJwks().dump();
  }
  OidcOptions oidc = Oidc();
  oidc.jwks_file = jwks.string();
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));
  const ApiResponse r = Review(Alice().SignedBy(*key_));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(UserInfoOf(r)["username"], "oidc:alice@example.com") << r.body;
  auto stranger = SigningKey::GenerateRsa();
  ASSERT_TRUE(stranger.has_value()) << stranger.error().ToString();
  EXPECT_EQ(Review(Alice().SignedBy(*stranger)).status, 401);  // not in the file
  EXPECT_EQ(provider_->discovery_requests(), 0);  // 0: nothing fetched, ever
  EXPECT_EQ(provider_->key_requests(), 0);
}

TEST_F(OidcTest, UnreachableProviderIsUnauthorizedSayingTheKeysAreNotAvailable) {
  // The provider is down when the first token arrives: no keys to check it
  // with, so a 401 that says so (and why), not a 500.
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const std::string issuer = provider_->issuer();
  const std::string token = Alice().SignedBy(*key_);
  provider_.reset();  // gone: its port refuses connections
  const ApiResponse r = Review(token);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_TRUE(Contains(Message(r), "the keys of oidc issuer " + issuer + " are not available yet")) << r.body;
}

TEST_F(OidcTest, UnreachableProviderIsNotCalledTheTesseraServer) {
  // The same outage: the 401's reason is about the identity provider; it must
  // not send the user looking for a Tessera server that is not running (the
  // one answering is running).
  ASSERT_NO_FATAL_FAILURE(StartTessera(Oidc()));
  const std::string token = Alice().SignedBy(*key_);
  provider_.reset();
  const ApiResponse r = Review(token);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_FALSE(Contains(Message(r), "Tessera server")) << r.body;
  EXPECT_FALSE(Contains(Message(r), "tessera up")) << r.body;
}

TEST_F(OidcTest, UnresponsiveProviderDoesNotStallOtherUsersRequests) {
  // The issuer's address takes connections and never answers (a listening
  // socket nobody accepts on: the TLS handshake hangs). Two OIDC users' first
  // tokens wait on its keys; meanwhile the admin, who needs no keys, is still
  // answered at once (within 3 s) on fresh connections.
  const int black_hole = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(black_hole, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  ASSERT_EQ(::bind(black_hole, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(black_hole, 16), 0);
  ASSERT_EQ(::getsockname(black_hole, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string issuer = "https://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  OidcOptions oidc = Oidc();
  oidc.issuer_url = issuer;
  ASSERT_NO_FATAL_FAILURE(StartTessera(oidc));

  std::vector<std::thread> users;
  std::vector<int> statuses(2, 0);
  for (int i = 0; i < 2; ++i) {
    const std::string token = IdToken(issuer).Claim("jti", "user-" + std::to_string(i)).SignedBy(*key_);
    users.emplace_back([this, token, &statuses, i] { statuses[i] = Review(token).status; });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // both now wait on the issuer
  for (int i = 0; i < 2; ++i) {
    ApiClient admin(server_->url(), server_->admin_token(), {}, std::chrono::seconds(3));
    auto r = admin.Request("GET", "/api/v1/namespaces/default");
    EXPECT_TRUE(r.has_value()) << "admin request " << i << ": " << r.error().ToString();
    if (r.has_value()) {
      EXPECT_EQ(r->status, 200) << r->body;
    }
  }
  ::close(black_hole);  // resets the waiting connections: the fetches fail, the users are answered
  for (std::thread& t : users) t.join();
  EXPECT_EQ(statuses, (std::vector<int>{401, 401}));  // no keys to check their tokens with
}

// --- Options kube-apiserver refuses ------------------------------------------

TEST_F(OidcTest, HttpIssuerMakesStartFail) {
  // --oidc-issuer-url=http://...: kube-apiserver requires https://.
  OidcOptions oidc = Oidc();
  oidc.issuer_url = "http://127.0.0.1:1";
  auto s = TryStart(oidc);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << s.error().ToString();
  EXPECT_TRUE(Contains(s.error().message(), "https://")) << s.error().ToString();
}

TEST_F(OidcTest, MissingClientIdMakesStartFail) {
  // --oidc-issuer-url without --oidc-client-id.
  OidcOptions oidc = Oidc();
  oidc.client_id.clear();
  auto s = TryStart(oidc);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << s.error().ToString();
  EXPECT_TRUE(Contains(s.error().message(), "--oidc-client-id")) << s.error().ToString();
}

TEST_F(OidcTest, UnknownSigningAlgMakesStartFail) {
  // --oidc-signing-algs=RS256,HS256: HS256 is not an algorithm an ID token may use.
  OidcOptions oidc = Oidc();
  oidc.signing_algs = {"RS256", "HS256"};
  auto s = TryStart(oidc);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << s.error().ToString();
  EXPECT_TRUE(Contains(s.error().message(), "--oidc-signing-algs: HS256 is not supported")) << s.error().ToString();
}

TEST_F(OidcTest, UnreadableJwksFileMakesStartFail) {
  // --oidc-jwks-file naming a file that is not there: oidc.h promises
  // InvalidArgument, as for the other refused options.
  OidcOptions oidc = Oidc();
  oidc.jwks_file = (dir_ / "missing.json").string();
  auto s = TryStart(oidc);
  ASSERT_FALSE(s.has_value());
  EXPECT_TRUE(Contains(s.error().message(), "--oidc-jwks-file")) << s.error().ToString();
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << s.error().ToString();
}

}  // namespace
}  // namespace tessera
