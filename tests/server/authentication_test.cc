// Identities and what the server stamps on objects (DESIGN.md section 12),
// end to end: a real server on 127.0.0.1 and a free port, its SQLite store in
// a temp dir, a real token-auth file, real signed ServiceAccount tokens and
// keys, requests over HTTP. Covers the token-auth file, why a 401 refuses,
// ServiceAccounts and the TokenRequest API, what every namespace gets, the
// created-by annotation, status through /status only, what a non-admin's pod
// may not say, per-user request rates, the audit log, the default RBAC roles
// across a restart, and the service account issuer's OpenID discovery.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/convert.h"
#include "auth/jwt.h"
#include "auth/service_account_tokens.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "domain/uid_range.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Users of the token-auth file. The tokens are long and distinctive so that a
// search of a response or the audit log for one cannot match by chance.
struct TokenUser {
  const char* token;
  const char* name;
  const char* uid;
  const char* groups;  // the CSV's fourth column, "" for none
};
constexpr TokenUser kAlice{"alice-tok-3f9a61c2e7b04d58a1", "alice", "1001", "team-a,ml"};
constexpr TokenUser kBob{"bob-tok-8d2e47b19c6f03a5e7", "bob", "1002", ""};
constexpr TokenUser kCarol{"carol-tok-5b7c90d3a4e1f26b8c", "carol", "1003", "team-b"};
constexpr TokenUser kDave{"dave-tok-1e6f38a9b2d5c47e90", "dave", "1004", "team-a"};
// Not in any file: an opaque token the server has never issued.
constexpr const char* kUnknownToken = "nobody-tok-9c4b2a7e5d8f1036ab";

constexpr const char* kSelfSubjectReviews = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
constexpr const char* kMergePatch = "application/merge-patch+json";
constexpr std::string_view kEs256[] = {"ES256"};

std::string CsvLine(const TokenUser& u) {
  std::string line = std::string(u.token) + "," + u.name + "," + u.uid;
  if (*u.groups != '\0') line += std::string(",\"") + u.groups + "\"";
  return line + "\n";
}

void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::string ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A response's JSON body; an empty object when it is not a JSON object.
json Body(const ApiResponse& r) {
  json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  return body.is_object() ? body : json::object();
}

// obj.a.b... as a copy, null when a step is missing or not an object (never
// operator[] on a const document that may lack the key).
json Field(const json& obj, std::initializer_list<const char*> path) {
  const json* at = &obj;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return *at;
}
// The same when it is a string; "" otherwise.
std::string Text(const json& obj, std::initializer_list<const char*> path) {
  const json v = Field(obj, path);
  return v.is_string() ? v.get<std::string>() : "";
}

// Polls `done` every 20 ms until it holds or `timeout` passes; returns whether it held.
bool PollUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

// A minimal Pod manifest: MakePod("p").NodeName("n1").Status({{"phase", "Running"}}).Build().
class MakePod {
 public:
  explicit MakePod(std::string name) : name_(std::move(name)) {}
  MakePod& NodeName(std::string node) {
    node_ = std::move(node);
    return *this;
  }
  MakePod& Status(json status) {
    status_ = std::move(status);
    return *this;
  }
  MakePod& ServiceAccount(std::string name) {
    service_account_ = std::move(name);
    return *this;
  }
  json Build() const {
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", {{"name", name_}}},
             {"spec", {{"containers", json::array({{{"name", "main"}, {"command", {"true"}}}})}}}};
    if (!node_.empty()) pod["spec"]["nodeName"] = node_;
    if (!service_account_.empty()) pod["spec"]["serviceAccountName"] = service_account_;
    if (!status_.is_null()) pod["status"] = status_;
    return pod;
  }

 private:
  std::string name_;
  std::string node_;
  std::string service_account_;
  json status_;
};

// A batch/v1 Job of one pod asking one CPU, on LocalQueue "default".
json MakeJob(const std::string& name) {
  json container{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "60"}},
                 {"resources", {{"requests", {{"cpu", "1"}}}}}};
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"labels", {{"kueue.x-k8s.io/queue-name", "default"}}}}},
              {"spec",
               {{"parallelism", 1},
                {"completions", 1},
                {"template", {{"spec", {{"containers", {container}}, {"restartPolicy", "Never"}}}}}}}};
}

json TokenRequest(json spec = json::object()) {
  return json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", std::move(spec)}};
}

json UserSubject(const std::string& name) {
  return json{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", name}};
}

class AuthenticationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-authn");
    data_dir_ = dir_ / "data";
    token_file_ = dir_ / "tokens.csv";
    WriteTextFile(token_file_, "# token,user,uid,groups\n" + CsvLine(kAlice) + CsvLine(kBob) + CsvLine(kCarol));
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Starts the server with the token-auth file and `options` (its data_dir,
  // port and token file are set here).
  void Start(ServerOptions options = {}) {
    options.token_auth_file = token_file_.string();
    options_ = options;
    server_ = testing::StartLocalServer(data_dir_.string(), options);
    ASSERT_NE(server_, nullptr);
  }
  // Stop, then Start on the same data directory (a new port).
  void Restart() {
    server_->Stop();
    server_.reset();
    server_ = testing::StartLocalServer(data_dir_.string(), options_);
    ASSERT_NE(server_, nullptr);
  }

  const std::string& AdminToken() const { return server_->admin_token(); }

  // One request on a connection of its own; a network failure is a test
  // failure and status 0.
  ApiResponse Send(const std::string& token, const std::string& method, const std::string& path,
                   const json& body = nullptr, const std::string& content_type = "application/json") {
    ApiClient client(server_->url(), token);
    auto r = client.Request(method, path, body.is_null() ? "" : body.dump(), content_type);
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": " << r.error().ToString();
      return ApiResponse{};
    }
    return std::move(*r);
  }
  ApiResponse AsAdmin(const std::string& method, const std::string& path, const json& body = nullptr,
                      const std::string& content_type = "application/json") {
    return Send(AdminToken(), method, path, body, content_type);
  }
  // The admin's GET of `path`: the object, or null (with a failure) when not 200.
  json Get(const std::string& path) {
    ApiResponse r = AsAdmin("GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.status == 200 ? Body(r) : json();
  }
  // The admin creates `obj` at `collection` and gets the stored object back.
  json Create(const std::string& collection, const json& obj) {
    ApiResponse r = AsAdmin("POST", collection, obj);
    EXPECT_EQ(r.status, 201) << collection << ": " << r.body;
    return r.status == 201 ? Body(r) : json();
  }

  // Who the server says `token` is (kubectl auth whoami): status.userInfo, or
  // null with a failure when the review is not answered 201.
  json WhoAmI(const std::string& token) {
    ApiResponse r = Send(token, "POST", kSelfSubjectReviews,
                         json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? Field(Body(r), {"status", "userInfo"}) : json();
  }
  int WhoAmIStatus(const std::string& token) {
    return Send(token, "POST", kSelfSubjectReviews,
                json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}})
        .status;
  }

  // ServiceAccount ns/name, created by the admin; returns its metadata.uid.
  std::string CreateServiceAccount(const std::string& ns, const std::string& name) {
    json sa = Create("/api/v1/namespaces/" + ns + "/serviceaccounts",
                     json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}}}});
    EXPECT_FALSE(sa.is_null());
    return Text(sa, {"metadata", "uid"});
  }
  ApiResponse RequestToken(const std::string& ns, const std::string& name, json spec = json::object()) {
    return AsAdmin("POST", "/api/v1/namespaces/" + ns + "/serviceaccounts/" + name + "/token",
                   TokenRequest(std::move(spec)));
  }
  // status.token of a TokenRequest the admin makes; "" with a failure otherwise.
  std::string IssueToken(const std::string& ns, const std::string& name, json spec = json::object()) {
    ApiResponse r = RequestToken(ns, name, std::move(spec));
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? Text(Body(r), {"status", "token"}) : "";
  }

  // RBAC, as the admin: `user` may do `verbs` on core `resource` cluster-wide.
  void GrantClusterWide(const std::string& user, const std::string& resource, const std::vector<std::string>& verbs) {
    const std::string role = user + "-" + resource;
    Create("/apis/rbac.authorization.k8s.io/v1/clusterroles",
           json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRole"},
                {"metadata", {{"name", role}}},
                {"rules", json::array({{{"apiGroups", {""}}, {"resources", {resource}}, {"verbs", verbs}}})}});
    Create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
           json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRoleBinding"},
                {"metadata", {{"name", role}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                {"subjects", json::array({UserSubject(user)})}});
  }
  // ... and in namespace `ns` only, through a Role and a RoleBinding.
  void GrantInNamespace(const std::string& user, const std::string& ns, const std::string& resource,
                        const std::vector<std::string>& verbs) {
    const std::string role = user + "-" + resource;
    Create("/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles",
           json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "Role"},
                {"metadata", {{"name", role}}},
                {"rules", json::array({{{"apiGroups", {""}}, {"resources", {resource}}, {"verbs", verbs}}})}});
    Create("/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
           json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "RoleBinding"},
                {"metadata", {{"name", role}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", role}}},
                {"subjects", json::array({UserSubject(user)})}});
  }
  // `user` gets ClusterRole `cluster_role` (edit, view...) in namespace `ns`.
  void BindClusterRoleInNamespace(const std::string& user, const std::string& ns, const std::string& cluster_role) {
    Create("/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
           json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "RoleBinding"},
                {"metadata", {{"name", user + "-" + cluster_role}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", cluster_role}}},
                {"subjects", json::array({UserSubject(user)})}});
  }

  // A namespace the admin creates, once the namespace controller gave it its
  // uid range (it runs in the scheduler loop's pass).
  json CreateNamespaceWithRange(const std::string& name) {
    Create("/api/v1/namespaces", json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
    ApiClient admin(server_->url(), AdminToken());
    return WaitForObject(admin, "/api/v1/namespaces/" + name, [](const json& ns) { return !UidRangeOf(ns).empty(); });
  }
  static std::string UidRangeOf(const json& ns) {
    return Text(ns, {"metadata", "annotations", kUidRangeAnnotation.data()});
  }
  static std::string CreatedByOf(const json& obj) {
    return Text(obj, {"metadata", "annotations", kCreatedByAnnotation.data()});
  }

  // What every 401 must be: a Status with reason Unauthorized whose message
  // says `why`, and nothing of the token that was sent.
  static void ExpectUnauthorized(const ApiResponse& r, std::string_view why, std::string_view token) {
    EXPECT_EQ(r.status, 401) << r.body;
    const json status = Body(r);
    EXPECT_EQ(status.value("kind", ""), "Status") << r.body;
    EXPECT_EQ(status.value("reason", ""), "Unauthorized") << r.body;
    EXPECT_EQ(status.value("code", 0), 401) << r.body;
    EXPECT_NE(status.value("message", "").find(why), std::string::npos)
        << "the message should say \"" << why << "\": " << r.body;
    if (!token.empty()) {
      EXPECT_EQ(r.body.find(token), std::string::npos) << "the 401 holds the token: " << r.body;
    }
  }

  std::filesystem::path dir_;
  std::filesystem::path data_dir_;
  std::filesystem::path token_file_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
};

// ---------------------------------------------------------------------------
// The token-auth file.

TEST_F(AuthenticationTest, TokenFileUserIsWhoTheFileSays) {
  // alice's line is `token,alice,1001,"team-a,ml"`: her review shows that name,
  // uid and both groups, then system:authenticated, which every user gets.
  ASSERT_NO_FATAL_FAILURE(Start());
  const json me = WhoAmI(kAlice.token);
  EXPECT_EQ(me.value("username", ""), "alice");
  EXPECT_EQ(me.value("uid", ""), "1001");
  EXPECT_EQ(Field(me, {"groups"}), (json{"team-a", "ml", "system:authenticated"}));
  // bob's line has no groups column: only system:authenticated.
  const json bob = WhoAmI(kBob.token);
  EXPECT_EQ(bob.value("username", ""), "bob");
  EXPECT_EQ(Field(bob, {"groups"}), (json{"system:authenticated"}));
}

TEST_F(AuthenticationTest, RewrittenTokenFileAddsAndRemovesUsersWithinTwoSeconds) {
  // The admin rewrites the file in place: dave is added and bob removed. The
  // server looks at the file at most once a second, so within about 2 s dave
  // authenticates and bob does not (3 s of slack for a loaded machine).
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_EQ(WhoAmIStatus(kBob.token), 201);
  ASSERT_EQ(WhoAmIStatus(kDave.token), 401);  // not in the file yet
  const auto rewritten = std::chrono::steady_clock::now();
  WriteTextFile(token_file_, CsvLine(kAlice) + CsvLine(kCarol) + CsvLine(kDave));
  const bool changed =
      PollUntil([&] { return WhoAmIStatus(kDave.token) == 201 && WhoAmIStatus(kBob.token) == 401; }, seconds(3));
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - rewritten);
  EXPECT_TRUE(changed) << "after " << took.count() << " ms dave is " << WhoAmIStatus(kDave.token) << " and bob is "
                       << WhoAmIStatus(kBob.token);
  EXPECT_LE(took.count(), 2500) << "the file is re-read at most once a second, so a change shows within ~2 s";
  EXPECT_EQ(WhoAmI(kDave.token).value("username", ""), "dave");
  EXPECT_EQ(WhoAmIStatus(kAlice.token), 201);  // users kept in the new file stay
}

TEST_F(AuthenticationTest, TokenFileThatBecomesMalformedKeepsTheLastGoodUsers) {
  // The admin saves a broken file (a line of two columns) that would also
  // drop bob: the server keeps the users it read before, bob included, and
  // the broken line's token is nobody's.
  ASSERT_NO_FATAL_FAILURE(Start());
  WriteTextFile(token_file_, CsvLine(kAlice) + "broken-tok-77a1e0c9,mallory\n");
  // Two re-reads' worth (the file is looked at at most once a second).
  std::this_thread::sleep_for(milliseconds(2200));
  EXPECT_EQ(WhoAmIStatus(kAlice.token), 201);
  EXPECT_EQ(WhoAmIStatus(kBob.token), 201) << "bob was in the last good file";
  EXPECT_EQ(WhoAmIStatus(kCarol.token), 201);
  EXPECT_EQ(WhoAmIStatus("broken-tok-77a1e0c9"), 401);
}

TEST_F(AuthenticationTest, MalformedTokenFileStopsTheServerNamingTheLine) {
  // A token line needs at least three columns (token, user name, uid); the
  // bad line has two. The server does not start, and says which file and
  // which line, never what the line holds. Lines count from 1, blank lines
  // and comments included: the bad line is line 4 after a comment, a user and
  // a blank line, and line 2 when it is the first row, after a blank line.
  struct Case {
    std::string text;
    std::string line;
  };
  const std::vector<Case> cases = {
      {"# token,user,uid\n" + CsvLine(kAlice) + "\nbroken-tok-77a1e0c9,mallory\n", "line 4"},
      {"\nbroken-tok-77a1e0c9,mallory\n" + CsvLine(kAlice), "line 2"},
  };
  for (const Case& c : cases) {
    WriteTextFile(token_file_, c.text);
    ServerOptions options;
    options.data_dir = data_dir_.string();
    options.http.port = 0;
    options.token_auth_file = token_file_.string();
    auto server = Server::Start(options);
    ASSERT_FALSE(server.has_value()) << "a malformed token file must stop the server at start:\n" << c.text;
    const std::string message = server.error().ToString();
    EXPECT_NE(message.find(c.line + ":"), std::string::npos) << "expected " << c.line << ": " << message;
    EXPECT_NE(message.find(token_file_.string()), std::string::npos) << message;
    EXPECT_EQ(message.find("broken-tok-77a1e0c9"), std::string::npos) << "the error holds a token: " << message;
  }
}

// ---------------------------------------------------------------------------
// Why a 401 refuses.

TEST_F(AuthenticationTest, NoAuthorizationHeaderIsUnauthorizedSayingSo) {
  // A client with no token sends no Authorization header at all.
  ASSERT_NO_FATAL_FAILURE(Start());
  ExpectUnauthorized(Send("", "GET", "/api/v1/namespaces"), "no bearer token", "");
}

TEST_F(AuthenticationTest, UnknownOpaqueTokenIsUnauthorized) {
  // Not the admin's, not in the token file, not a JWT.
  ASSERT_NO_FATAL_FAILURE(Start());
  ExpectUnauthorized(Send(kUnknownToken, "GET", "/api/v1/namespaces"), "not valid for this server", kUnknownToken);
}

TEST_F(AuthenticationTest, MalformedJwtIsUnauthorizedAsMalformed) {
  // Three dot-separated parts look like a JWT, but "a", "b", "c" are not
  // base64url JSON objects.
  ASSERT_NO_FATAL_FAILURE(Start());
  ExpectUnauthorized(Send("a.b.c", "GET", "/api/v1/namespaces"), "malformed token", "a.b.c");
}

TEST_F(AuthenticationTest, ExpiredServiceAccountTokenIsUnauthorizedAsExpired) {
  // Minted with the server's own key for an existing ServiceAccount: issued
  // 90 minutes ago for 1 hour, it expired 30 minutes ago.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string uid = CreateServiceAccount("default", "ci");
  auto key = TokenIssuer::LoadOrCreateSigningKey((data_dir_ / "service-account.key").string());
  ASSERT_TRUE(key.has_value()) << key.error().ToString();
  const TokenIssuer issuer(*key, TokenIssuerOptions{});
  const Timestamp issued_at = SystemNow() + Duration::Seconds(-90 * 60);
  auto token = issuer.IssueServiceAccount(
      ServiceAccountTokenRequest{.ns = "default", .name = "ci", .uid = uid, .expiration = Duration::Seconds(3600)},
      issued_at);
  ASSERT_TRUE(token.has_value()) << token.error().ToString();
  ExpectUnauthorized(Send(token->token, "GET", "/api/v1/namespaces"), "token expired at", token->token);
}

TEST_F(AuthenticationTest, TokenForAnotherAudienceIsUnauthorized) {
  // The TokenRequest asks for audience "other"; the API accepts only its own
  // (the issuer, https://tessera.default.svc, by default).
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  const std::string token = IssueToken("default", "ci", json{{"audiences", {"other"}}});
  ASSERT_FALSE(token.empty());
  ExpectUnauthorized(Send(token, "GET", "/api/v1/namespaces"), "audience", token);
}

TEST_F(AuthenticationTest, TokenSignedByAnUnknownKeyIsUnauthorized) {
  // Right issuer, right audience, an existing ServiceAccount, but signed with
  // a key the server never had.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string uid = CreateServiceAccount("default", "ci");
  auto foreign = SigningKey::GenerateEs256();
  ASSERT_TRUE(foreign.has_value()) << foreign.error().ToString();
  const TokenIssuer forger(*foreign, TokenIssuerOptions{.issuer = std::string(kDefaultServiceAccountIssuer)});
  auto token =
      forger.IssueServiceAccount(ServiceAccountTokenRequest{.ns = "default", .name = "ci", .uid = uid}, SystemNow());
  ASSERT_TRUE(token.has_value()) << token.error().ToString();
  ExpectUnauthorized(Send(token->token, "GET", "/api/v1/namespaces"), "unknown key", token->token);
}

// ---------------------------------------------------------------------------
// ServiceAccounts and TokenRequest.

TEST_F(AuthenticationTest, TokenRequestAnswersATokenAndWhenItExpires) {
  // No expirationSeconds: one hour, as kube-apiserver's default.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  const Timestamp before = SystemNow();
  ApiResponse r = RequestToken("default", "ci");
  ASSERT_EQ(r.status, 201) << r.body;
  const json answer = Body(r);
  EXPECT_EQ(answer.value("kind", ""), "TokenRequest");
  EXPECT_FALSE(Text(answer, {"status", "token"}).empty()) << r.body;
  auto expires = ParseRfc3339(Text(answer, {"status", "expirationTimestamp"}));
  ASSERT_TRUE(expires.has_value()) << r.body;
  // expires = now + 3600 s, to the second: within [before - 1 s, before + 3600 s + 5 s].
  EXPECT_GE(expires->seconds(), before.seconds() + 3600 - 1) << r.body;
  EXPECT_LE(expires->seconds(), before.seconds() + 3600 + 5) << r.body;
  EXPECT_EQ(Field(answer, {"spec", "expirationSeconds"}), 3600) << r.body;
}

TEST_F(AuthenticationTest, ServiceAccountTokenIsTheServiceAccountWithItsGroups) {
  // The token is system:serviceaccount:NS:NAME, uid the ServiceAccount's, in
  // the groups of all ServiceAccounts, of those of its namespace, and of
  // everyone authenticated.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string uid = CreateServiceAccount("default", "ci");
  const std::string token = IssueToken("default", "ci");
  ASSERT_FALSE(token.empty());
  const json me = WhoAmI(token);
  EXPECT_EQ(me.value("username", ""), "system:serviceaccount:default:ci");
  EXPECT_EQ(me.value("uid", ""), uid);
  EXPECT_EQ(Field(me, {"groups"}),
            (json{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}));
}

TEST_F(AuthenticationTest, TokenRequestBelowTenMinutesIsInvalid) {
  // 60 s < the 600 s TokenRequest allows at least.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  ApiResponse r = RequestToken("default", "ci", json{{"expirationSeconds", 60}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r).value("reason", ""), "Invalid") << r.body;
  EXPECT_NE(Body(r).value("message", "").find("spec.expirationSeconds"), std::string::npos) << r.body;
}

TEST_F(AuthenticationTest, TokenRequestForAMissingServiceAccountIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ApiResponse r = RequestToken("default", "x");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Body(r).value("message", ""), "serviceaccounts \"x\" not found") << r.body;
}

TEST_F(AuthenticationTest, DeletingTheServiceAccountRevokesItsTokenAtOnce) {
  // The token works (and is remembered as verified); the next request after
  // the delete's answer is refused.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  const std::string token = IssueToken("default", "ci");
  ASSERT_EQ(WhoAmIStatus(token), 201);
  ASSERT_EQ(AsAdmin("DELETE", "/api/v1/namespaces/default/serviceaccounts/ci").status, 200);
  ExpectUnauthorized(Send(token, "POST", kSelfSubjectReviews,
                          json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}}),
                     "no longer exists", token);
}

TEST_F(AuthenticationTest, RecreatedServiceAccountDoesNotReviveTheOldToken) {
  // Same namespace and name, new uid: the old token names the old uid.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string first_uid = CreateServiceAccount("default", "ci");
  const std::string token = IssueToken("default", "ci");
  ASSERT_EQ(WhoAmIStatus(token), 201);
  ASSERT_EQ(AsAdmin("DELETE", "/api/v1/namespaces/default/serviceaccounts/ci").status, 200);
  const std::string second_uid = CreateServiceAccount("default", "ci");
  ASSERT_NE(first_uid, second_uid);
  EXPECT_EQ(WhoAmIStatus(token), 401);
  // Still refused a while later (after the auth follower saw every event).
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(WhoAmIStatus(token), 401);
  // A token requested now, for the new ServiceAccount, works.
  EXPECT_EQ(WhoAmIStatus(IssueToken("default", "ci")), 201);
}

TEST_F(AuthenticationTest, PodBoundTokenStopsWorkingWhenThePodIsDeleted) {
  // A token bound to pod "runner" (spec.boundObjectRef) names the pod; once the
  // pod is deleted through the API it is refused at once, though its
  // ServiceAccount still exists.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  Create("/api/v1/namespaces/default/pods", MakePod("runner").ServiceAccount("ci").Build());
  const std::string token = IssueToken("default", "ci", json{{"boundObjectRef", {{"kind", "Pod"}, {"name", "runner"}}}});
  ASSERT_FALSE(token.empty());
  const json me = WhoAmI(token);
  EXPECT_EQ(Field(me, {"extra", "authentication.kubernetes.io/pod-name"}), (json{"runner"})) << me.dump();
  ASSERT_EQ(AsAdmin("DELETE", "/api/v1/namespaces/default/pods/runner").status, 200);
  EXPECT_EQ(WhoAmIStatus(token), 401);
  // The ServiceAccount's unbound token is unaffected.
  EXPECT_EQ(WhoAmIStatus(IssueToken("default", "ci")), 201);
}

TEST_F(AuthenticationTest, TokenCannotBeBoundToAPodOfAnotherServiceAccount) {
  // Pod "runner" runs as ServiceAccount "default" (it names none); a token of
  // ServiceAccount "ci" bound to it would claim a pod that is not ci's.
  // kube-apiserver refuses this TokenRequest with 400: "cannot bind token for
  // serviceaccount "ci" to pod running with different serviceaccount name."
  // A pod that does run as ci may have ci's token bound to it.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  Create("/api/v1/namespaces/default/pods", MakePod("runner").Build());
  Create("/api/v1/namespaces/default/pods", MakePod("ci-runner").ServiceAccount("ci").Build());
  ApiResponse other = RequestToken("default", "ci", json{{"boundObjectRef", {{"kind", "Pod"}, {"name", "runner"}}}});
  EXPECT_TRUE(other.status == 400 || other.status == 422)
      << "a token of ci bound to a pod running as default: " << other.status << " " << other.body;
  EXPECT_TRUE(Text(Body(other), {"status", "token"}).empty()) << other.body;
  ApiResponse own = RequestToken("default", "ci", json{{"boundObjectRef", {{"kind", "Pod"}, {"name", "ci-runner"}}}});
  EXPECT_EQ(own.status, 201) << own.body;
}

// ---------------------------------------------------------------------------
// What every namespace gets.

TEST_F(AuthenticationTest, EveryNamespaceGetsADefaultServiceAccountAndAUidRangeOfItsOwn) {
  // Blocks of 10000 ids from 1000000000 up, one per namespace: "FIRST/10000"
  // with FIRST >= 1000000000 and FIRST a multiple of 10000.
  ASSERT_NO_FATAL_FAILURE(Start());
  std::set<uint32_t> firsts;
  ApiClient admin(server_->url(), AdminToken());
  for (const std::string name : {"default", "team-a", "team-b"}) {
    json ns = name == "default" ? WaitForObject(admin, "/api/v1/namespaces/default",
                                                [](const json& o) { return !UidRangeOf(o).empty(); })
                                : CreateNamespaceWithRange(name);
    auto range = ParseUidRange(UidRangeOf(ns));
    ASSERT_TRUE(range.has_value()) << name << ": " << ns.dump();
    EXPECT_EQ(range->size, 10000u) << name;
    EXPECT_GE(range->first, 1000000000u) << name;
    EXPECT_EQ(range->first % 10000, 0u) << name;
    firsts.insert(range->first);
    WaitForObject(admin, "/api/v1/namespaces/" + name + "/serviceaccounts/default",
                  [](const json& sa) { return sa.value("kind", "") == "ServiceAccount"; });
  }
  EXPECT_EQ(firsts.size(), 3u) << "three namespaces, three distinct blocks";
}

TEST_F(AuthenticationTest, NonAdminPutCannotDropOrChangeTheUidRange) {
  // carol may get and update namespaces (a ClusterRole and binding); her PUT
  // of team-a without the annotation, then with another value, keeps the
  // server's value each time.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string range = UidRangeOf(CreateNamespaceWithRange("team-a"));
  ASSERT_FALSE(range.empty());
  GrantClusterWide("carol", "namespaces", {"get", "update", "patch"});
  json ns = Get("/api/v1/namespaces/team-a");
  ns["metadata"]["annotations"].erase(std::string(kUidRangeAnnotation));
  ns["metadata"]["labels"]["put"] = "1";
  ApiResponse dropped = Send(kCarol.token, "PUT", "/api/v1/namespaces/team-a", ns);
  ASSERT_EQ(dropped.status, 200) << dropped.body;
  EXPECT_EQ(UidRangeOf(Body(dropped)), range) << dropped.body;
  ns = Get("/api/v1/namespaces/team-a");
  ns["metadata"]["annotations"][std::string(kUidRangeAnnotation)] = "1000000000/10000";
  ns["metadata"]["labels"]["put"] = "2";
  ApiResponse changed = Send(kCarol.token, "PUT", "/api/v1/namespaces/team-a", ns);
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(UidRangeOf(Body(changed)), range) << changed.body;
  const json stored = Get("/api/v1/namespaces/team-a");
  EXPECT_EQ(UidRangeOf(stored), range);
  EXPECT_EQ(Text(stored, {"metadata", "labels", "put"}), "2");  // the rest of her update was applied
}

TEST_F(AuthenticationTest, NonAdminPatchCannotDropOrChangeTheUidRange) {
  // The same through JSON merge patches: null (remove) and another value.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string range = UidRangeOf(CreateNamespaceWithRange("team-a"));
  ASSERT_FALSE(range.empty());
  GrantClusterWide("carol", "namespaces", {"get", "update", "patch"});
  const std::string key(kUidRangeAnnotation);
  ApiResponse dropped = Send(kCarol.token, "PATCH", "/api/v1/namespaces/team-a",
                             json{{"metadata", {{"annotations", {{key, nullptr}}}}}}, kMergePatch);
  ASSERT_EQ(dropped.status, 200) << dropped.body;
  EXPECT_EQ(UidRangeOf(Body(dropped)), range) << dropped.body;
  ApiResponse changed = Send(kCarol.token, "PATCH", "/api/v1/namespaces/team-a",
                             json{{"metadata", {{"annotations", {{key, "2000000000/10000"}}}}}}, kMergePatch);
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(UidRangeOf(Body(changed)), range) << changed.body;
  EXPECT_EQ(UidRangeOf(Get("/api/v1/namespaces/team-a")), range);
}

TEST_F(AuthenticationTest, NonAdminNamespaceCreateCannotChooseItsUidRange) {
  // carol may create namespaces (a ClusterRole and binding). Her namespace
  // asks for default's block of uids: were it kept, her pods would run as
  // default's uids and read their files. The server gives her namespace a
  // block of its own instead, as it does when an update names another.
  ASSERT_NO_FATAL_FAILURE(Start());
  ApiClient admin(server_->url(), AdminToken());
  const std::string taken =
      UidRangeOf(WaitForObject(admin, "/api/v1/namespaces/default", [](const json& o) { return !UidRangeOf(o).empty(); }));
  ASSERT_FALSE(taken.empty());
  GrantClusterWide("carol", "namespaces", {"create", "get"});
  ApiResponse r = Send(kCarol.token, "POST", "/api/v1/namespaces",
                       json{{"apiVersion", "v1"},
                            {"kind", "Namespace"},
                            {"metadata", {{"name", "team-x"}, {"annotations", {{std::string(kUidRangeAnnotation), taken}}}}}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_NE(UidRangeOf(Body(r)), taken) << "a non-admin's create chose another namespace's uids: " << r.body;
  const json ns = WaitForObject(
      admin, "/api/v1/namespaces/team-x", [&](const json& o) { return !UidRangeOf(o).empty() && UidRangeOf(o) != taken; },
      seconds(5));
  EXPECT_NE(UidRangeOf(ns), taken) << "team-x shares default's uid block";
}

TEST_F(AuthenticationTest, AdminMayChangeTheUidRange) {
  // The admin (system:masters) moves team-a to a block of its choosing.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string range = UidRangeOf(CreateNamespaceWithRange("team-a"));
  ASSERT_NE(range, "1500000000/10000");
  ApiResponse r = AsAdmin("PATCH", "/api/v1/namespaces/team-a",
                          json{{"metadata", {{"annotations", {{std::string(kUidRangeAnnotation), "1500000000/10000"}}}}}},
                          kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(UidRangeOf(Body(r)), "1500000000/10000");
  // The namespace controller leaves a range that is set alone.
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(UidRangeOf(Get("/api/v1/namespaces/team-a")), "1500000000/10000");
}

// ---------------------------------------------------------------------------
// tessera.dev/created-by.

TEST_F(AuthenticationTest, CreateIsStampedWithTheAuthenticatedUserWhateverTheBodySays) {
  // alice may edit in default; her Job claims to be mallory's.
  ASSERT_NO_FATAL_FAILURE(Start());
  BindClusterRoleInNamespace("alice", "default", "edit");
  json job = MakeJob("train");
  job["metadata"]["annotations"][std::string(kCreatedByAnnotation)] = "mallory";
  ApiResponse r = Send(kAlice.token, "POST", "/apis/batch/v1/namespaces/default/jobs", job);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(CreatedByOf(Body(r)), "alice");
  EXPECT_EQ(CreatedByOf(Get("/apis/batch/v1/namespaces/default/jobs/train")), "alice");
  // The admin's creates are stamped too.
  const json ns = Create("/api/v1/namespaces", json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-a"}}}});
  EXPECT_EQ(CreatedByOf(ns), "admin");
}

TEST_F(AuthenticationTest, UpdateAndPatchCannotChangeOrRemoveCreatedBy) {
  // alice made the Job; neither she nor the admin can rewrite who did, by
  // merge patch (another value, null) or by PUT (another value, none).
  ASSERT_NO_FATAL_FAILURE(Start());
  BindClusterRoleInNamespace("alice", "default", "edit");
  ASSERT_EQ(Send(kAlice.token, "POST", "/apis/batch/v1/namespaces/default/jobs", MakeJob("train")).status, 201);
  const std::string path = "/apis/batch/v1/namespaces/default/jobs/train";
  const std::string key(kCreatedByAnnotation);
  for (const std::string& token : {std::string(kAlice.token), AdminToken()}) {
    for (const json& value : {json("mallory"), json(nullptr)}) {
      ApiResponse r = Send(token, "PATCH", path, json{{"metadata", {{"annotations", {{key, value}}}}}}, kMergePatch);
      ASSERT_EQ(r.status, 200) << value.dump() << ": " << r.body;
      EXPECT_EQ(CreatedByOf(Body(r)), "alice") << "patch to " << value.dump();
    }
  }
  for (const bool drop : {false, true}) {
    json job = Get(path);
    job["metadata"].erase("resourceVersion");  // the job controller may write meanwhile
    if (drop) {
      job["metadata"]["annotations"].erase(key);
    } else {
      job["metadata"]["annotations"][key] = "mallory";
    }
    ApiResponse r = AsAdmin("PUT", path, job);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(CreatedByOf(Body(r)), "alice") << (drop ? "PUT without it" : "PUT with another");
  }
  EXPECT_EQ(CreatedByOf(Get(path)), "alice");
}

TEST_F(AuthenticationTest, UpdateCannotAddCreatedByToAnObjectTheServerMade) {
  // Namespace "default" is made by the server at first start, by no user: a
  // patch or PUT that names a creator leaves it without one.
  ASSERT_NO_FATAL_FAILURE(Start());
  GrantClusterWide("carol", "namespaces", {"get", "update", "patch"});
  ASSERT_EQ(CreatedByOf(Get("/api/v1/namespaces/default")), "");
  const std::string key(kCreatedByAnnotation);
  ApiResponse patched = Send(kCarol.token, "PATCH", "/api/v1/namespaces/default",
                             json{{"metadata", {{"annotations", {{key, "carol"}}}}}}, kMergePatch);
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(CreatedByOf(Body(patched)), "") << patched.body;
  json ns = Get("/api/v1/namespaces/default");
  ns["metadata"].erase("resourceVersion");
  ns["metadata"]["annotations"][key] = "carol";
  ApiResponse put = Send(kCarol.token, "PUT", "/api/v1/namespaces/default", ns);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(CreatedByOf(Body(put)), "") << put.body;
}

TEST_F(AuthenticationTest, WorkloadOfAJobCarriesTheJobsCreatedBy) {
  // The job controller makes Workload job-train for alice's Job "train".
  ASSERT_NO_FATAL_FAILURE(Start());
  BindClusterRoleInNamespace("alice", "default", "edit");
  ASSERT_EQ(Send(kAlice.token, "POST", "/apis/batch/v1/namespaces/default/jobs", MakeJob("train")).status, 201);
  ApiClient admin(server_->url(), AdminToken());
  const json wl = WaitForObject(admin, "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-train",
                                [](const json& w) { return w.value("kind", "") == "Workload"; });
  EXPECT_EQ(CreatedByOf(wl), "alice") << wl.dump();
}

// ---------------------------------------------------------------------------
// Status through /status only.

TEST_F(AuthenticationTest, MergePatchOfAPodItselfKeepsItsStoredStatus) {
  // The admin's pod brings status {phase: Pending, message: "as made"}; a
  // merge patch of the pod that also names status changes the label only.
  ASSERT_NO_FATAL_FAILURE(Start());
  Create("/api/v1/namespaces/default/pods",
         MakePod("p").NodeName("n1").Status({{"phase", "Pending"}, {"message", "as made"}}).Build());
  const std::string path = "/api/v1/namespaces/default/pods/p";
  const json before = Field(Get(path), {"status"});
  ASSERT_EQ(Text(before, {"message"}), "as made") << before.dump();
  ApiResponse r = AsAdmin(
      "PATCH", path,
      json{{"metadata", {{"labels", {{"patched", "yes"}}}}}, {"status", {{"phase", "Running"}, {"message", "forged"}}}},
      kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  const json after = Get(path);
  EXPECT_EQ(Text(after, {"metadata", "labels", "patched"}), "yes");
  EXPECT_EQ(Field(after, {"status"}), before) << "the patch's status must be ignored";
}

TEST_F(AuthenticationTest, PutOfAPodItselfKeepsItsStoredStatus) {
  // The same through PUT: the body's status is ignored, its label applied.
  ASSERT_NO_FATAL_FAILURE(Start());
  Create("/api/v1/namespaces/default/pods",
         MakePod("p").NodeName("n1").Status({{"phase", "Pending"}, {"message", "as made"}}).Build());
  const std::string path = "/api/v1/namespaces/default/pods/p";
  json pod = Get(path);
  const json before = Field(pod, {"status"});
  pod["metadata"]["labels"]["put"] = "yes";
  pod["status"] = {{"phase", "Running"}, {"message", "forged"}};
  ApiResponse r = AsAdmin("PUT", path, pod);
  ASSERT_EQ(r.status, 200) << r.body;
  const json after = Get(path);
  EXPECT_EQ(Text(after, {"metadata", "labels", "put"}), "yes");
  EXPECT_EQ(Field(after, {"status"}), before) << "the PUT's status must be ignored";
}

TEST_F(AuthenticationTest, MergePatchThroughStatusChangesTheStatus) {
  // The same patch to /status writes status (and only status).
  ASSERT_NO_FATAL_FAILURE(Start());
  Create("/api/v1/namespaces/default/pods",
         MakePod("p").NodeName("n1").Status({{"phase", "Pending"}, {"message", "as made"}}).Build());
  const std::string path = "/api/v1/namespaces/default/pods/p";
  ApiResponse r = AsAdmin(
      "PATCH", path + "/status",
      json{{"metadata", {{"labels", {{"patched", "yes"}}}}}, {"status", {{"phase", "Running"}, {"message", "patched"}}}},
      kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  const json after = Get(path);
  EXPECT_EQ(Text(after, {"status", "phase"}), "Running");
  EXPECT_EQ(Text(after, {"status", "message"}), "patched");
  EXPECT_TRUE(Field(after, {"metadata", "labels", "patched"}).is_null())
      << "/status must not write metadata: " << after.dump();
}

// ---------------------------------------------------------------------------
// What a non-admin's pod may not say.

TEST_F(AuthenticationTest, NonAdminPodWithNodeNameIsForbidden) {
  // bob may create pods in default (a Role and a RoleBinding), but only the
  // scheduler binds pods to nodes.
  ASSERT_NO_FATAL_FAILURE(Start());
  GrantInNamespace("bob", "default", "pods", {"create", "get"});
  ApiResponse r = Send(kBob.token, "POST", "/api/v1/namespaces/default/pods", MakePod("p").NodeName("n1").Build());
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r).value("message", "").rfind("spec.nodeName: Forbidden", 0), 0u) << r.body;
  EXPECT_EQ(AsAdmin("GET", "/api/v1/namespaces/default/pods/p").status, 404) << "nothing is stored";
}

TEST_F(AuthenticationTest, NonAdminCannotBindTheirPodToANodeByPatchOrPut) {
  // bob may create, patch and update pods in default. His pods, created
  // without a node, must not get one by a later write either: that would run
  // them at once on n1, past queues and quota, just as a create with
  // spec.nodeName would (only the scheduler binds pods). One pod tries a
  // merge patch, the other a PUT.
  ASSERT_NO_FATAL_FAILURE(Start());
  GrantInNamespace("bob", "default", "pods", {"create", "get", "patch", "update"});
  for (const char* name : {"by-patch", "by-put"}) {
    ASSERT_EQ(Send(kBob.token, "POST", "/api/v1/namespaces/default/pods", MakePod(name).Build()).status, 201);
  }
  const std::string by_patch = "/api/v1/namespaces/default/pods/by-patch";
  ApiResponse patched = Send(kBob.token, "PATCH", by_patch, json{{"spec", {{"nodeName", "n1"}}}}, kMergePatch);
  EXPECT_EQ(patched.status, 422) << patched.body;
  EXPECT_EQ(Text(Body(patched), {"message"}).rfind("spec.nodeName: Forbidden", 0), 0u) << patched.body;
  EXPECT_EQ(Text(Get(by_patch), {"spec", "nodeName"}), "") << "a merge patch bound bob's pod to a node";
  const std::string by_put = "/api/v1/namespaces/default/pods/by-put";
  json pod = Get(by_put);
  pod["metadata"].erase("resourceVersion");
  pod["spec"]["nodeName"] = "n1";
  ApiResponse put = Send(kBob.token, "PUT", by_put, pod);
  EXPECT_EQ(put.status, 422) << put.body;
  EXPECT_EQ(Text(Body(put), {"message"}).rfind("spec.nodeName: Forbidden", 0), 0u) << put.body;
  EXPECT_EQ(Text(Get(by_put), {"spec", "nodeName"}), "") << "a PUT bound bob's pod to a node";
}

TEST_F(AuthenticationTest, NonAdminPodBodysStatusIsDropped) {
  // bob's pod claims to be Running already; the stored pod has no such status.
  ASSERT_NO_FATAL_FAILURE(Start());
  GrantInNamespace("bob", "default", "pods", {"create", "get"});
  ApiResponse r = Send(kBob.token, "POST", "/api/v1/namespaces/default/pods",
                       MakePod("p").Status({{"phase", "Running"}, {"podIP", "10.0.0.9"}}).Build());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_FALSE(Body(r).contains("status")) << r.body;
  const json stored = Get("/api/v1/namespaces/default/pods/p");
  EXPECT_NE(Text(stored, {"status", "phase"}), "Running") << stored.dump();
  EXPECT_TRUE(Field(stored, {"status", "podIP"}).is_null()) << stored.dump();
}

// ---------------------------------------------------------------------------
// Per-user request rate.

class RateLimitTest : public AuthenticationTest {
 protected:
  void SetUp() override {
    AuthenticationTest::SetUp();
    ServerOptions options;
    options.rate = UserRateLimit{.per_second = 5, .burst = 5};
    Start(options);
  }
  // `n` requests (selfsubjectreviews, which everyone may make) as `token`, all
  // released at once from their own connections; the answers.
  std::vector<ApiResponse> Burst(const std::string& token, int n) {
    std::vector<ApiResponse> answers(n);
    std::vector<std::unique_ptr<ApiClient>> clients;
    for (int i = 0; i < n; ++i) clients.push_back(std::make_unique<ApiClient>(server_->url(), token));
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    const std::string body = json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}}.dump();
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        auto r = clients[i]->Request("POST", kSelfSubjectReviews, body);
        if (r) answers[i] = std::move(*r);
      });
    }
    go = true;
    for (std::thread& t : threads) t.join();
    return answers;
  }
};

TEST_F(RateLimitTest, BurstBeyondTheUsersRateIsTooManyRequestsAndSparesOthers) {
  // 5 a second with a burst of 5: of 30 requests at once, the first 5 pass and
  // the rest, beyond what refills meanwhile (5 per second), are 429. carol's
  // request at the same moment has a bucket of its own.
  const auto start = std::chrono::steady_clock::now();
  ApiResponse carol;
  std::thread other([&] {
    std::this_thread::sleep_for(milliseconds(5));
    carol = Send(kCarol.token, "POST", kSelfSubjectReviews,
                 json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}});
  });
  const std::vector<ApiResponse> answers = Burst(kBob.token, 30);
  other.join();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int ok = 0, limited = 0;
  for (const ApiResponse& r : answers) {
    if (r.status == 201) {
      ++ok;
    } else if (r.status == 429) {
      ++limited;
      const json status = Body(r);
      EXPECT_EQ(status.value("reason", ""), "TooManyRequests") << r.body;
      EXPECT_NE(status.value("message", "").find("user \"bob\""), std::string::npos) << r.body;
      EXPECT_EQ(r.retry_after, "1") << r.body;
    } else {
      ADD_FAILURE() << "neither 201 nor 429: " << r.status << " " << r.body;
    }
  }
  EXPECT_EQ(ok + limited, 30);
  EXPECT_GT(limited, 0) << "30 at once against a burst of 5";
  EXPECT_GE(ok, 5) << "the burst passes";
  // At most the burst plus what refilled: 5 + 5 * elapsed, plus one for rounding.
  EXPECT_LE(ok, 5 + static_cast<int>(5 * elapsed_s) + 1) << "elapsed " << elapsed_s << " s";
  EXPECT_EQ(carol.status, 201) << "another user is not limited by bob's burst: " << carol.body;
}

TEST_F(RateLimitTest, AdminIsNeverLimited) {
  // system:masters is exempt: 30 at once, and 30 more, all answered.
  for (int round = 0; round < 2; ++round) {
    for (const ApiResponse& r : Burst(AdminToken(), 30)) EXPECT_EQ(r.status, 201) << "round " << round << ": " << r.body;
  }
}

// ---------------------------------------------------------------------------
// The audit log.

class AuditTest : public AuthenticationTest {
 protected:
  void SetUp() override {
    AuthenticationTest::SetUp();
    audit_path_ = dir_ / "audit.log";
    ServerOptions options;
    options.audit.path = audit_path_.string();
    Start(options);
  }
  // The scenario every audit test reads: a create (201), a create refused
  // (403: bob has no rights on priority classes), a 401, plain GETs, a
  // TokenRequest, and a delete, in that order; then waits until the delete's
  // line is written (the writer is asynchronous and keeps the order).
  void RunScenario() {
    const json pc{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "audited"}}},
                  {"value", 7}};
    ASSERT_EQ(AsAdmin("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc).status, 201);
    json sneaky = pc;
    sneaky["metadata"]["name"] = "sneaky";
    ASSERT_EQ(Send(kBob.token, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", sneaky).status, 403);
    ASSERT_EQ(Send(kUnknownToken, "GET", "/api/v1/namespaces").status, 401);
    ASSERT_EQ(AsAdmin("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/audited").status, 200);
    ASSERT_EQ(AsAdmin("GET", "/apis/scheduling.k8s.io/v1/priorityclasses").status, 200);
    ASSERT_EQ(Send(kBob.token, "POST", kSelfSubjectReviews,
                   json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}})
                  .status,
              201);
    CreateServiceAccount("default", "ci");
    sa_token_ = IssueToken("default", "ci");
    ASSERT_FALSE(sa_token_.empty());
    ASSERT_EQ(WhoAmIStatus(sa_token_), 201);
    ASSERT_EQ(AsAdmin("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/audited").status, 200);
    const bool written = PollUntil(
        [&] {
          for (const json& e : Events()) {
            if (e.value("verb", "") == "delete" && Ref(e, "name") == "audited") return true;
          }
          return false;
        },
        seconds(10));
    ASSERT_TRUE(written) << "no audit line for the delete; the log holds:\n" << ReadTextFile(audit_path_);
  }
  // The log's whole lines (one being written may lack its newline yet),
  // parsed; a line that is not a JSON object is a failure.
  std::vector<json> Events() {
    std::vector<json> events;
    std::string text = ReadTextFile(audit_path_);
    text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      json e = json::parse(line, nullptr, false);
      if (!e.is_object()) {
        ADD_FAILURE() << "not a JSON object: " << line;
        continue;
      }
      events.push_back(std::move(e));
    }
    return events;
  }
  // The events that `match`.
  std::vector<json> Matching(const std::function<bool(const json&)>& match) {
    std::vector<json> out;
    for (json& e : Events()) {
      if (match(e)) out.push_back(std::move(e));
    }
    return out;
  }
  static int Code(const json& e) {
    const json code = Field(e, {"responseStatus", "code"});
    return code.is_number_integer() ? code.get<int>() : 0;
  }
  static std::string User(const json& e) { return Text(e, {"user", "username"}); }
  static std::string Ref(const json& e, const char* field) { return Text(e, {"objectRef", field}); }

  std::filesystem::path audit_path_;
  std::string sa_token_;
};

TEST_F(AuditTest, CreateIsOneEventWithUserVerbObjectAndCode) {
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto created = Matching([](const json& e) { return e.value("verb", "") == "create" && Code(e) == 201 &&
                                                           Ref(e, "resource") == "priorityclasses"; });
  ASSERT_EQ(created.size(), 1u) << ReadTextFile(audit_path_);
  const json& e = created[0];
  EXPECT_EQ(e.value("apiVersion", ""), "audit.k8s.io/v1");
  EXPECT_EQ(e.value("kind", ""), "Event");
  EXPECT_EQ(User(e), "admin");
  EXPECT_EQ(Ref(e, "name"), "audited");
  EXPECT_EQ(Ref(e, "apiGroup"), "scheduling.k8s.io");
  EXPECT_EQ(Ref(e, "apiVersion"), "v1");
}

TEST_F(AuditTest, ForbiddenCreateIsOneEventWithTheMessageAndTheForbidDecision) {
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto refused = Matching([](const json& e) { return Code(e) == 403; });
  ASSERT_EQ(refused.size(), 1u) << ReadTextFile(audit_path_);
  const json& e = refused[0];
  EXPECT_EQ(User(e), "bob");
  EXPECT_EQ(e.value("verb", ""), "create");
  EXPECT_EQ(Ref(e, "resource"), "priorityclasses");
  EXPECT_EQ(Text(e, {"responseStatus", "reason"}), "Forbidden");
  EXPECT_NE(Text(e, {"responseStatus", "message"}).find("forbidden"), std::string::npos) << e.dump();
  EXPECT_EQ(Text(e, {"annotations", "authorization.k8s.io/decision"}), "forbid") << e.dump();
}

TEST_F(AuditTest, UnauthorizedRequestIsOneEventOfTheAnonymousUser) {
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto refused = Matching([](const json& e) { return Code(e) == 401; });
  ASSERT_EQ(refused.size(), 1u) << ReadTextFile(audit_path_);
  EXPECT_EQ(User(refused[0]), "system:anonymous");
  EXPECT_EQ(refused[0].value("requestURI", ""), "/api/v1/namespaces");
  EXPECT_EQ(Ref(refused[0], "resource"), "namespaces");
}

TEST_F(AuditTest, DeleteIsOneEvent) {
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto deleted = Matching([](const json& e) { return e.value("verb", "") == "delete"; });
  ASSERT_EQ(deleted.size(), 1u) << ReadTextFile(audit_path_);
  EXPECT_EQ(User(deleted[0]), "admin");
  EXPECT_EQ(Ref(deleted[0], "resource"), "priorityclasses");
  EXPECT_EQ(Ref(deleted[0], "name"), "audited");
  EXPECT_EQ(Code(deleted[0]), 200);
}

TEST_F(AuditTest, PlainGetsAreNotLogged) {
  // The scenario's successful GETs and lists (and the answered-not-stored
  // selfsubjectreviews) leave no line; the one read that is logged is the 401.
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto reads = Matching([](const json& e) {
    const std::string verb = e.value("verb", "");
    return verb == "get" || verb == "list" || verb == "watch";
  });
  ASSERT_EQ(reads.size(), 1u) << ReadTextFile(audit_path_);
  EXPECT_EQ(Code(reads[0]), 401);
  EXPECT_TRUE(Matching([](const json& e) {
                return Ref(e, "resource") == "selfsubjectreviews";
              }).empty())
      << ReadTextFile(audit_path_);
}

TEST_F(AuditTest, LogIsPrivateAndHoldsNoToken) {
  // Mode 0600: it names users and objects. No line holds any token this test
  // sent or was issued: the admin's, bob's, the unknown one, the
  // ServiceAccount's (whose TokenRequest is itself logged).
  ASSERT_NO_FATAL_FAILURE(RunScenario());
  const auto perms = std::filesystem::status(audit_path_).permissions() & std::filesystem::perms::all;
  EXPECT_EQ(perms, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string log = ReadTextFile(audit_path_);
  EXPECT_FALSE(Matching([](const json& e) { return Ref(e, "subresource") == "token"; }).empty())
      << "the TokenRequest is a create, and logged: " << log;
  for (const std::string& token :
       {AdminToken(), std::string(kBob.token), std::string(kUnknownToken), sa_token_}) {
    ASSERT_FALSE(token.empty());
    EXPECT_EQ(log.find(token), std::string::npos) << "the audit log holds a token";
  }
}

// ---------------------------------------------------------------------------
// Kinds that are answered, not stored.

TEST_F(AuthenticationTest, SelfSubjectAccessReviewsCannotBeListed) {
  // They are only POSTed: a GET of the collection is 405, even for the admin.
  ASSERT_NO_FATAL_FAILURE(Start());
  ApiResponse r = AsAdmin("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
  EXPECT_EQ(r.status, 405) << r.body;
  EXPECT_EQ(Body(r).value("reason", ""), "MethodNotAllowed") << r.body;
}

// ---------------------------------------------------------------------------
// The default RBAC roles.

TEST_F(AuthenticationTest, DefaultClusterRolesExistLabelledAsRbacDefaults) {
  ASSERT_NO_FATAL_FAILURE(Start());
  for (const char* name : {"cluster-admin", "admin", "edit", "view", "kueue-batch-admin-role", "kueue-batch-user-role",
                           "system:basic-user"}) {
    const json role = Get(std::string("/apis/rbac.authorization.k8s.io/v1/clusterroles/") + name);
    EXPECT_EQ(Text(role, {"metadata", "labels", "kubernetes.io/bootstrapping"}), "rbac-defaults")
        << name << ": " << role.dump();
  }
}

TEST_F(AuthenticationTest, RestartRestoresEditedDefaultRoles) {
  // The admin removes view's aggregationRule and rewrites system:basic-user's
  // rules; both are still marked autoupdate=true, so the next start gives
  // back what they lack of the shipped contents and, as kube-apiserver's
  // reconciliation does, keeps what the admin added.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string view = "/apis/rbac.authorization.k8s.io/v1/clusterroles/view";
  const std::string basic = "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user";
  const json shipped_view = Get(view);
  const json shipped_basic = Get(basic);
  ASSERT_TRUE(shipped_view.contains("aggregationRule")) << shipped_view.dump();
  ApiResponse r = AsAdmin("PATCH", view, json{{"aggregationRule", nullptr}}, kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_FALSE(Get(view).contains("aggregationRule"));
  const json narrowed = json::array({{{"apiGroups", {""}}, {"resources", {"namespaces"}}, {"verbs", {"get"}}}});
  r = AsAdmin("PATCH", basic, json{{"rules", narrowed}}, kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(Field(Get(basic), {"rules"}), narrowed);
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Field(Get(view), {"aggregationRule"}), Field(shipped_view, {"aggregationRule"}));
  json expected_basic = narrowed;
  for (const json& rule : Field(shipped_basic, {"rules"})) expected_basic.push_back(rule);
  EXPECT_EQ(Field(Get(basic), {"rules"}), expected_basic);
  // And they work again: alice may ask who she is (system:basic-user).
  EXPECT_EQ(WhoAmIStatus(kAlice.token), 201);
}

TEST_F(AuthenticationTest, RestartLeavesARoleWithAutoupdateFalseAsEdited) {
  // The admin sets rbac.authorization.kubernetes.io/autoupdate: "false" on
  // system:monitoring and edits its rules: the next start keeps the edit.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:monitoring";
  const json edited = json::array({{{"nonResourceURLs", {"/metrics"}}, {"verbs", {"get"}}}});
  ApiResponse r = AsAdmin(
      "PATCH", path,
      json{{"metadata", {{"annotations", {{"rbac.authorization.kubernetes.io/autoupdate", "false"}}}}}, {"rules", edited}},
      kMergePatch);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_NO_FATAL_FAILURE(Restart());
  const json role = Get(path);
  EXPECT_EQ(Field(role, {"rules"}), edited) << role.dump();
  EXPECT_EQ(Text(role, {"metadata", "annotations", "rbac.authorization.kubernetes.io/autoupdate"}), "false");
}

// ---------------------------------------------------------------------------
// The service account issuer's OpenID discovery.

TEST_F(AuthenticationTest, DiscoveryDocumentNamesTheIssuerAndTheJwksUri) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ApiResponse r = AsAdmin("GET", "/.well-known/openid-configuration");
  ASSERT_EQ(r.status, 200) << r.body;
  const json doc = Body(r);
  EXPECT_EQ(doc.value("issuer", ""), "https://tessera.default.svc");
  EXPECT_EQ(doc.value("jwks_uri", ""), server_->url() + "/openid/v1/jwks");
}

TEST_F(AuthenticationTest, JwksVerifiesATokenRequestsToken) {
  // What anyone can check a ServiceAccount token with: the served key set
  // verifies the signature (ES256), and the claims name the issuer and subject.
  ASSERT_NO_FATAL_FAILURE(Start());
  CreateServiceAccount("default", "ci");
  const std::string token = IssueToken("default", "ci");
  ASSERT_FALSE(token.empty());
  ApiResponse r = AsAdmin("GET", "/openid/v1/jwks");
  ASSERT_EQ(r.status, 200) << r.body;
  auto keys = KeySet::FromJwks(r.body);
  ASSERT_TRUE(keys.has_value()) << keys.error().ToString() << ": " << r.body;
  EXPECT_EQ(keys->size(), 1u);
  auto verified = VerifyJwt(token, *keys, kEs256);
  ASSERT_TRUE(verified.has_value()) << verified.error().ToString();
  EXPECT_EQ(verified->claims.value("iss", ""), "https://tessera.default.svc");
  EXPECT_EQ(verified->claims.value("sub", ""), "system:serviceaccount:default:ci");
  // A key set of another key does not.
  auto other = SigningKey::GenerateEs256();
  ASSERT_TRUE(other.has_value());
  KeySet others;
  others.Add(*other);
  EXPECT_FALSE(VerifyJwt(token, others, kEs256).has_value());
}

}  // namespace
}  // namespace tessera
