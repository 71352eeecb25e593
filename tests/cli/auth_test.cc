// The tenancy commands: `tessera auth can-i`, `tessera auth whoami`, `tessera
// create token`, `tessera create node-token`, `tessera config ...` and `tessera
// approve`/`deny`, against a real server with token-auth users (kube-apiserver's
// --token-auth-file) and RBAC bindings made by the admin. kubectl is the
// reference for their words and exit codes.
//
// The CLI's config file is isolated: XDG_CONFIG_HOME and HOME point into the
// test's directory (DefaultConfigPath() prefers $XDG_CONFIG_HOME), and
// TESSERA_SERVER/TESSERA_TOKEN/TESSERA_TOKEN_FILE are cleared, for each test.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "api/manifest.h"
#include "auth/jwt.h"
#include "cli/commands/approve_command.h"
#include "cli/commands/auth_commands.h"
#include "cli/commands/submit_command.h"
#include "client/client_config.h"
#include "tests/cli/cli_test_fixture.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/scoped_env.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kAlice = "alice-token-0123456789abcdef";  // user alice, group team-a-devs: edit in team-a
constexpr const char* kBob = "bob-token-0123456789abcdef";      // user bob: bound to nothing
constexpr const char* kCarol = "carol-token-0123456789abcdef";  // user carol: admin in team-a (may approve)
constexpr const char* kDave = "dave-token-0123456789abcdef";    // user dave: only the approval rule in team-a

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The rows of `table` (ParseTable) whose `column` is `value`.
// The rows whose `column` is `value`, or lists it among others ("jobs.batch, jobs/scale.batch").
std::vector<std::map<std::string, std::string>> RowsWhere(const std::string& table, const std::string& column,
                                                          const std::string& value) {
  std::vector<std::map<std::string, std::string>> rows;
  for (auto& row : ParseTable(table)) {
    const std::string cell = ", " + row[column] + ", ";
    if (row[column] == value || (value.find(", ") == std::string::npos && Contains(cell, ", " + value + ", "))) {
      rows.push_back(row);
    }
  }
  return rows;
}

// A server with four token-auth users and two namespaces; alice's group edits
// team-a, carol administers it, dave may only decide approvals there.
class TenancyTest : public CliTest {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-cli-auth");
    fs::create_directories(dir_ / "xdg");
    fs::create_directories(dir_ / "home");
    env_.emplace_back(std::make_unique<testing::ScopedEnv>("XDG_CONFIG_HOME", (dir_ / "xdg").string()));
    env_.emplace_back(std::make_unique<testing::ScopedEnv>("HOME", (dir_ / "home").string()));
    for (const char* name : {"TESSERA_SERVER", "TESSERA_TOKEN", "TESSERA_TOKEN_FILE", "TESSERA_NAMESPACE"}) {
      env_.emplace_back(std::make_unique<testing::ScopedEnv>(name, std::nullopt));
    }
    config_path_ = dir_ / "xdg" / "tessera" / "config.yaml";
    ASSERT_EQ(DefaultConfigPath(), config_path_.string());

    std::ofstream(dir_ / "users.csv") << "# token,user,uid,groups\n"
                                      << kAlice << ",alice,1001,\"team-a-devs\"\n"
                                      << kBob << ",bob,1002\n"
                                      << kCarol << ",carol,1003,\"team-a-admins\"\n"
                                      << kDave << ",dave,1004\n";
    ServerOptions options;
    options.token_auth_file = (dir_ / "users.csv").string();
    server_ = testing::StartLocalServer((dir_ / "data").string(), options);
    ASSERT_NE(server_, nullptr);
    CommandRun setup = ApplyText(R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: devs-edit, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects:
- {kind: Group, name: team-a-devs, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: admins-admin, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects:
- {kind: Group, name: team-a-admins, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: approver, namespace: team-a}
rules:
- apiGroups: [tessera.dev]
  resources: [approvalrequests/approval]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dave-approver, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: approver}
subjects:
- {kind: User, name: dave, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: builder, namespace: team-a}
)");
    ASSERT_EQ(setup.rc, 0) << setup.out << setup.err;
  }

  void TearDown() override {
    CliTest::TearDown();
    env_.clear();
  }

  // A context for the test's server with `token` (the admin's when empty).
  CommandContext As(const std::string& token, const std::string& ns = "default") {
    CommandContext ctx = Context(ns);
    if (!token.empty()) ctx.config.token = token;
    return ctx;
  }
  CommandRun CanI(const std::string& token, CanIOptions options, const std::string& ns = "default") {
    return RunWith(As(token, ns), [&](const CommandContext& c) { return RunCanI(c, options); });
  }
  CommandRun WhoAmI(const std::string& token, const std::string& output = "") {
    return RunWith(As(token), [&](const CommandContext& c) { return RunWhoAmI(c, output); });
  }
  // `tessera ARGS... --server URL --token TOKEN`, through main()'s wiring.
  CommandRun Cli(std::vector<std::string> args, const std::string& token = "") {
    args.insert(args.end(), {"--server", server_->url(), "--token", token.empty() ? server_->admin_token() : token});
    return RunCommandLine(args);
  }
  // The token file of `token`, for contexts that name one.
  std::string TokenFile(const std::string& name, const std::string& token) {
    const fs::path path = dir_ / (name + ".token");
    std::ofstream(path) << token << "\n";
    return path.string();
  }
  // status.userInfo of whoever `token` authenticates as (null when it does not).
  json UserInfoOf(const std::string& token) {
    CommandRun r = WhoAmI(token, "json");
    if (r.rc != 0) {
      ADD_FAILURE() << "whoami failed: " << r.err;
      return json();
    }
    json review = json::parse(r.out, nullptr, false);
    return review.is_object() ? review["status"]["userInfo"] : json();
  }

  fs::path config_path_;
  std::vector<std::unique_ptr<testing::ScopedEnv>> env_;
};

// ---------------------------------------------------------------------------
// auth can-i

class AuthTest : public TenancyTest {};

// The admin (system:masters) may do anything: yes, exit 0, and nothing else printed.
TEST_F(AuthTest, CanIAdminMayDoAnything) {
  CommandRun r = CanI("", {.args = {"create", "jobs"}}, "team-a");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  EXPECT_EQ(r.err, "");
  r = CanI("", {.args = {"*", "*"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = CanI("", {.args = {"delete", "clusterqueues"}});
  EXPECT_EQ(r.out, "yes\n");
  r = CanI("", {.args = {"get", "/metrics"}});
  EXPECT_EQ(r.out, "yes\n");
  EXPECT_EQ(r.rc, 0);
}

// alice's group is bound to ClusterRole edit in team-a only: yes there (exit 0),
// no in team-b and for cluster-scoped queues (exit 1), as kubectl prints them.
TEST_F(AuthTest, CanIFollowsTheRoleBindingsNamespace) {
  CommandRun r = CanI(kAlice, {.args = {"create", "jobs"}}, "team-a");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  EXPECT_EQ(r.err, "");

  r = CanI(kAlice, {.args = {"create", "jobs"}}, "team-b");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "no\n");
  EXPECT_EQ(r.err, "");

  r = CanI(kAlice, {.args = {"create", "clusterqueues"}}, "team-a");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
  // Every signed-in user reads the queues (quotas) and flavors (prices).
  EXPECT_EQ(CanI(kAlice, {.args = {"list", "clusterqueues"}}, "team-a").out, "yes\n");

  // A qualified type, a TYPE/NAME and a short name answer the same.
  EXPECT_EQ(CanI(kAlice, {.args = {"create", "jobs.batch"}}, "team-a").out, "yes\n");
  EXPECT_EQ(CanI(kAlice, {.args = {"delete", "jobs/train-1"}}, "team-a").out, "yes\n");
  EXPECT_EQ(CanI(kAlice, {.args = {"delete", "cq"}}, "team-a").out, "no\n");
  // edit does not bind roles (that is admin's), nor decide approvals.
  EXPECT_EQ(CanI(kAlice, {.args = {"create", "rolebindings"}}, "team-a").out, "no\n");
  EXPECT_EQ(CanI(kAlice, {.args = {"update", "approvalrequests"}, .subresource = "approval"}, "team-a").out, "no\n");
  EXPECT_EQ(CanI(kCarol, {.args = {"update", "approvalrequests"}, .subresource = "approval"}, "team-a").out, "yes\n");
  // -A asks cluster-wide: a namespace's binding does not reach that far.
  r = CanI(kAlice, {.args = {"create", "jobs"}, .all_namespaces = true}, "team-a");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
  EXPECT_EQ(CanI("", {.args = {"create", "jobs"}, .all_namespaces = true}).out, "yes\n");
}

// --subresource: edit reads pod logs (view's pods/log) but not nodes' tokens.
TEST_F(AuthTest, CanISubresource) {
  CommandRun r = CanI(kAlice, {.args = {"get", "pods"}, .subresource = "log"}, "team-a");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = CanI(kAlice, {.args = {"get", "pods"}, .subresource = "log"}, "team-b");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
  r = CanI(kAlice, {.args = {"create", "serviceaccounts"}, .subresource = "token"}, "team-a");
  EXPECT_EQ(r.out, "yes\n");
  r = CanI(kAlice, {.args = {"create", "nodes"}, .subresource = "token"}, "team-a");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
}

// A /URL asks about a non-resource path: /metrics is for system:monitoring
// (and admins), not for a user bound to nothing; /healthz is public.
TEST_F(AuthTest, CanINonResourceUrl) {
  CommandRun r = CanI(kBob, {.args = {"get", "/metrics"}});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "no\n");
  EXPECT_EQ(r.err, "");
  r = CanI(kBob, {.args = {"get", "/healthz"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  // bob may ask about himself (system:basic-user), and nothing else.
  EXPECT_EQ(CanI(kBob, {.args = {"create", "selfsubjectaccessreviews"}}).out, "yes\n");
  EXPECT_EQ(CanI(kBob, {.args = {"get", "pods"}}, "team-a").out, "no\n");
}

// -q prints nothing either way: the exit code says.
TEST_F(AuthTest, CanIQuiet) {
  CommandRun yes = CanI(kAlice, {.args = {"create", "jobs"}, .quiet = true}, "team-a");
  EXPECT_EQ(yes.rc, 0);
  EXPECT_EQ(yes.out, "");
  EXPECT_EQ(yes.err, "");
  CommandRun no = CanI(kAlice, {.args = {"create", "jobs"}, .quiet = true}, "team-b");
  EXPECT_EQ(no.rc, 1);
  EXPECT_EQ(no.out, "");
  EXPECT_EQ(no.err, "");
}

// --list: kubectl's table of rules (Resources, Non-Resource URLs, Resource
// Names, Verbs), resources qualified by group; only what applies in the namespace.
TEST_F(AuthTest, CanIListShowsTheRulesOfTheNamespace) {
  CommandRun r = CanI(kAlice, {.list = true}, "team-a");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_TRUE(header.starts_with("Resources")) << r.out;
  EXPECT_TRUE(Contains(header, "Non-Resource URLs")) << header;
  EXPECT_TRUE(Contains(header, "Resource Names")) << header;
  EXPECT_TRUE(Contains(header, "Verbs")) << header;
  auto jobs = RowsWhere(r.out, "Resources", "jobs.batch");
  ASSERT_FALSE(jobs.empty()) << r.out;
  bool create = false;
  for (const auto& row : jobs) create = create || Contains(row.at("Verbs"), "create");
  EXPECT_TRUE(create) << r.out;
  // What every user has: the self-reviews, and the discovery URLs.
  auto reviews = RowsWhere(r.out, "Resources", "selfsubjectaccessreviews.authorization.k8s.io, "
                                               "selfsubjectrulesreviews.authorization.k8s.io");
  ASSERT_EQ(reviews.size(), 1u) << r.out;
  EXPECT_EQ(reviews[0].at("Verbs"), "[create]");
  EXPECT_EQ(reviews[0].at("Non-Resource URLs"), "[]");
  bool healthz = false;
  for (const auto& row : ParseTable(r.out)) {
    if (row.at("Resources").empty() && Contains(row.at("Non-Resource URLs"), "/healthz")) healthz = true;
  }
  EXPECT_TRUE(healthz) << r.out;

  // In team-b, where nothing binds her, no jobs.
  CommandRun b = CanI(kAlice, {.list = true}, "team-b");
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_TRUE(RowsWhere(b.out, "Resources", "jobs.batch").empty()) << b.out;
  EXPECT_FALSE(Contains(b.out, "jobs.batch")) << b.out;
}

// Bad input: no verb or one word only is a usage error (exit 2, not the "no"
// of exit 1), nothing printed on stdout; --list with a verb too.
TEST_F(AuthTest, CanIUsageErrors) {
  CommandRun r = CanI(kAlice, {.args = {}});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "you must specify two arguments: verb resource or verb resource/resourceName")) << r.err;
  r = CanI(kAlice, {.args = {"create"}});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "you must specify two arguments")) << r.err;
  r = CanI(kAlice, {.args = {"create", "jobs"}, .list = true});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(Contains(r.err, "--list takes no VERB or TYPE")) << r.err;
  // Through the command line too.
  r = Cli({"auth", "can-i"}, kAlice);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "you must specify two arguments")) << r.err;
  r = Cli({"auth", "can-i", "create", "jobs", "extra"}, kAlice);
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(Contains(r.err, "you must specify two arguments")) << r.err;
}

// An unknown resource type: kubectl's warning on stderr, then the answer RBAC
// gives for it anyway (a role may name a resource this server does not serve).
TEST_F(AuthTest, CanIUnknownTypeWarnsAndStillAsks) {
  CommandRun r = CanI(kAlice, {.args = {"create", "flurbs"}}, "team-a");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
  EXPECT_EQ(r.err, "Warning: the server doesn't have a resource type 'flurbs'\n\n");
  r = CanI("", {.args = {"create", "flurbs.example.com"}}, "team-a");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "yes\n");  // cluster-admin's * covers it
  EXPECT_EQ(r.err, "Warning: the server doesn't have a resource type 'flurbs.example.com'\n\n");
}

// The command line: `tessera auth can-i ... -n NS` through main()'s wiring, flags after the command.
TEST_F(AuthTest, CanIThroughTheCommandLine) {
  CommandRun r = Cli({"auth", "can-i", "create", "jobs", "-n", "team-a"}, kAlice);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = Cli({"auth", "can-i", "create", "jobs", "-n", "team-b"}, kAlice);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "no\n");
  r = Cli({"auth", "can-i", "get", "pods", "--subresource", "log", "-n", "team-a"}, kAlice);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = Cli({"auth", "can-i", "-q", "create", "jobs", "-n", "team-b"}, kAlice);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  r = Cli({"auth", "can-i", "--list", "-n", "team-a"}, kAlice);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(RowsWhere(r.out, "Resources", "jobs.batch").empty()) << r.out;
  // A token the server does not know: 401 in kubectl's words, exit 1 (not a "no").
  r = Cli({"auth", "can-i", "create", "jobs"}, "not-a-known-token");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "Error from server (Unauthorized)")) << r.err;
}

// ---------------------------------------------------------------------------
// auth whoami

// The admin: kubectl's ATTRIBUTE/VALUE table, then the SelfSubjectReview as JSON and YAML.
TEST_F(AuthTest, WhoAmIAdmin) {
  CommandRun r = WhoAmI("");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "ATTRIBUTE   VALUE\n"
            "Username    admin\n"
            "Groups      [system:masters system:authenticated]\n");

  r = WhoAmI("", "json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json review = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(review.is_object()) << r.out;
  EXPECT_EQ(review["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(review["kind"], "SelfSubjectReview");
  EXPECT_EQ(review["status"]["userInfo"]["username"], "admin");
  EXPECT_EQ(review["status"]["userInfo"]["groups"], json({"system:masters", "system:authenticated"}));

  r = WhoAmI("", "yaml");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto parsed = ParseSingleObject(r.out);
  ASSERT_TRUE(parsed.has_value()) << r.out;
  EXPECT_EQ((*parsed)["kind"], "SelfSubjectReview");
  EXPECT_EQ((*parsed)["status"]["userInfo"]["username"], "admin");
  EXPECT_EQ((*parsed)["status"]["userInfo"]["groups"], json({"system:masters", "system:authenticated"}));
  EXPECT_TRUE(Contains(r.out, "kind: SelfSubjectReview\n")) << r.out;
}

// A token-auth user: name, uid and the file's groups plus system:authenticated.
TEST_F(AuthTest, WhoAmITokenFileUser) {
  CommandRun r = WhoAmI(kAlice);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "ATTRIBUTE   VALUE\n"
            "Username    alice\n"
            "UID         1001\n"
            "Groups      [team-a-devs system:authenticated]\n");
  json info = UserInfoOf(kAlice);
  EXPECT_EQ(info["username"], "alice");
  EXPECT_EQ(info["uid"], "1001");
  EXPECT_EQ(info["groups"], json({"team-a-devs", "system:authenticated"}));

  r = WhoAmI(kBob, "yaml");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto parsed = ParseSingleObject(r.out);
  ASSERT_TRUE(parsed.has_value()) << r.out;
  EXPECT_EQ((*parsed)["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ((*parsed)["status"]["userInfo"]["username"], "bob");
  EXPECT_EQ((*parsed)["status"]["userInfo"]["uid"], "1002");
  EXPECT_EQ((*parsed)["status"]["userInfo"]["groups"], json({"system:authenticated"}));

  // Through the command line: -o json, and a format it does not have (usage error, exit 2).
  r = Cli({"auth", "whoami", "-o", "json"}, kAlice);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["status"]["userInfo"]["username"], "alice");
  r = Cli({"auth", "whoami", "-o", "wide"}, kAlice);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "wide")) << r.err;
}

// ---------------------------------------------------------------------------
// create token

// A ServiceAccount token: a JWT of three base64url parts, valid for --duration,
// that authenticates as system:serviceaccount:NS:SA.
TEST_F(AuthTest, CreateTokenAuthenticatesAsTheServiceAccount) {
  CommandRun r = RunWith(As("", "team-a"), [](const CommandContext& c) {
    return RunCreateToken(c, {.name = "builder", .duration = "24h"});
  });
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(r.out.ends_with("\n")) << r.out;
  const std::string token = r.out.substr(0, r.out.size() - 1);
  ASSERT_EQ(std::count(token.begin(), token.end(), '.'), 2) << token;
  for (const std::string& part : {token.substr(0, token.find('.')), token.substr(token.rfind('.') + 1)}) {
    EXPECT_FALSE(part.empty()) << token;
  }
  EXPECT_EQ(token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."),
            std::string::npos)
      << token;
  auto jwt = DecodeJwtUnverified(token);
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims["sub"], "system:serviceaccount:team-a:builder");
  EXPECT_EQ(jwt->claims["exp"].get<int64_t>() - jwt->claims["iat"].get<int64_t>(), 24 * 3600);

  json info = UserInfoOf(token);
  EXPECT_EQ(info["username"], "system:serviceaccount:team-a:builder");
  const json groups = info["groups"];
  for (const char* g : {"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"}) {
    EXPECT_NE(std::find(groups.begin(), groups.end(), g), groups.end()) << g << " in " << groups.dump();
  }
  // kubectl's table: the ServiceAccount's uid, and the token's credential id as an Extra row.
  CommandRun table = WhoAmI(token);
  ASSERT_EQ(table.rc, 0) << table.err;
  std::map<std::string, std::string> attributes;
  for (const auto& row : ParseTable(table.out)) attributes[row.at("ATTRIBUTE")] = row.at("VALUE");
  EXPECT_EQ(attributes["Username"], "system:serviceaccount:team-a:builder") << table.out;
  EXPECT_EQ(attributes["UID"], GetJson("/api/v1/namespaces/team-a/serviceaccounts/builder")["metadata"]["uid"])
      << table.out;
  EXPECT_EQ(attributes["Groups"], "[system:serviceaccounts system:serviceaccounts:team-a system:authenticated]");
  EXPECT_TRUE(attributes["Extra: authentication.kubernetes.io/credential-id"].starts_with("[JTI=")) << table.out;
  // The raw API agrees: the token is a bearer credential of its own.
  ApiClient as_sa(server_->url(), token);
  auto review = as_sa.Request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                              R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_TRUE(review.has_value());
  EXPECT_EQ(review->status, 201) << review->body;

  // An editor of team-a may request one too (edit has create on serviceaccounts/token), through the command line.
  r = Cli({"create", "token", "builder", "-n", "team-a", "--duration", "1h"}, kAlice);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '.'), 2) << r.out;
  EXPECT_EQ(UserInfoOf(r.out.substr(0, r.out.size() - 1))["username"], "system:serviceaccount:team-a:builder");
}

// --duration below 10 minutes is refused with the server's words; one that is
// not a duration, or not whole seconds, is a usage error before any request.
TEST_F(AuthTest, CreateTokenDurationLimits) {
  auto create = [&](const std::string& duration) {
    return RunWith(As("", "team-a"), [&](const CommandContext& c) {
      return RunCreateToken(c, {.name = "builder", .duration = duration});
    });
  };
  CommandRun r = create("5m");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "may not specify a duration less than 10 minutes")) << r.err;
  EXPECT_TRUE(r.err.starts_with("Error from server (")) << r.err;
  EXPECT_EQ(create("10m").rc, 0);
  r = create("soon");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.err.starts_with("error: ")) << r.err;
  r = create("90500ms");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(Contains(r.err, "--duration 90500ms: give whole seconds")) << r.err;
}

// --audience: the token names it, and is then not for this API (kube-apiserver
// refuses tokens not meant for its audiences); a bound object needs kind and name.
TEST_F(AuthTest, CreateTokenAudienceAndBoundObject) {
  CommandRun r = Cli({"create", "token", "builder", "-n", "team-a", "--audience", "vault"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string token = r.out.substr(0, r.out.size() - 1);
  auto jwt = DecodeJwtUnverified(token);
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims["aud"], json({"vault"}));
  CommandRun who = WhoAmI(token);
  EXPECT_EQ(who.rc, 1);
  EXPECT_TRUE(who.err.starts_with("Error from server (Unauthorized)")) << who.err;

  r = RunWith(As("", "team-a"), [](const CommandContext& c) {
    return RunCreateToken(c, {.name = "builder", .bound_object_kind = "Pod"});
  });
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "error: --bound-object-kind and --bound-object-name go together\n");
  r = Cli({"create", "token", "builder", "-n", "team-a", "--bound-object-kind", "Secret", "--bound-object-name", "s"});
  EXPECT_EQ(r.rc, 2);  // only Pod
  EXPECT_EQ(r.out, "");
}

// A ServiceAccount that does not exist: Kubernetes' NotFound wording, exit 1.
TEST_F(AuthTest, CreateTokenForAMissingServiceAccount) {
  CommandRun r =
      RunWith(As("", "team-a"), [](const CommandContext& c) { return RunCreateToken(c, {.name = "ghost"}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Error from server (NotFound): serviceaccounts \"ghost\" not found\n");
}

// A user without create on serviceaccounts/token there: kube-apiserver's 403 wording.
TEST_F(AuthTest, CreateTokenForbidden) {
  CommandRun r =
      RunWith(As(kBob, "team-a"), [](const CommandContext& c) { return RunCreateToken(c, {.name = "builder"}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Error from server (Forbidden): serviceaccounts \"builder\" is forbidden: User \"bob\" cannot create "
            "resource \"serviceaccounts/token\" in API group \"\" in the namespace \"team-a\"\n");
  // alice edits team-a, not team-b (no builder there either: RBAC answers first).
  r = RunWith(As(kAlice, "team-b"), [](const CommandContext& c) { return RunCreateToken(c, {.name = "builder"}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(Contains(r.err, "User \"alice\" cannot create resource \"serviceaccounts/token\" in API group \"\" in "
                              "the namespace \"team-b\""))
      << r.err;
}

// ---------------------------------------------------------------------------
// create node-token

// An admin's node credential authenticates as system:node:NODE (group system:nodes).
TEST_F(AuthTest, CreateNodeTokenAsAdmin) {
  CommandRun r = Cli({"create", "node-token", "gpu-07"});
  ASSERT_EQ(r.rc, 0) << r.err;
  ASSERT_TRUE(r.out.ends_with("\n"));
  const std::string token = r.out.substr(0, r.out.size() - 1);
  EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2) << token;
  auto jwt = DecodeJwtUnverified(token);
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims["exp"].get<int64_t>() - jwt->claims["iat"].get<int64_t>(), 365 * 24 * 3600);  // a year
  json info = UserInfoOf(token);
  EXPECT_EQ(info["username"], "system:node:gpu-07");
  const json groups = info["groups"];
  EXPECT_NE(std::find(groups.begin(), groups.end(), "system:nodes"), groups.end()) << groups.dump();

  r = Cli({"create", "node-token", "gpu-07", "--duration", "2h"});
  ASSERT_EQ(r.rc, 0) << r.err;
  jwt = DecodeJwtUnverified(r.out.substr(0, r.out.size() - 1));
  ASSERT_TRUE(jwt.has_value());
  EXPECT_EQ(jwt->claims["exp"].get<int64_t>() - jwt->claims["iat"].get<int64_t>(), 2 * 3600);
  r = Cli({"create", "node-token", "gpu-07", "--duration", "1m"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "at least 10 minutes")) << r.err;
}

// A non-admin may not make node credentials (a team's admin included).
TEST_F(AuthTest, CreateNodeTokenForbiddenForOthers) {
  for (const char* token : {kAlice, kCarol}) {
    CommandRun r = Cli({"create", "node-token", "gpu-07"}, token);
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
    const std::string user = token == kAlice ? "alice" : "carol";
    EXPECT_EQ(r.err, "Error from server (Forbidden): nodes \"gpu-07\" is forbidden: User \"" + user +
                         "\" cannot create resource \"nodes/token\" in API group \"\" at the cluster scope\n");
  }
}

// ---------------------------------------------------------------------------
// config

class ConfigTest : public TenancyTest {};

// set-context creates contexts (the first becomes current), get-contexts marks
// the current one with *, use-context switches, current-context prints it,
// delete-context removes one; the file is the user's alone (0600).
TEST_F(ConfigTest, ContextsLifecycle) {
  const std::string alice_file = TokenFile("alice", kAlice);
  CommandRun r = RunCommandLine({"config", "set-context", "team-a", "--server", server_->url(), "--token-file",
                                 alice_file, "--namespace", "team-a"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Context \"team-a\" created.\n");
  ASSERT_TRUE(fs::exists(config_path_));
  struct stat st {};
  ASSERT_EQ(::stat(config_path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  r = RunCommandLine({"config", "set-context", "admin", "--server", server_->url(), "--token", server_->admin_token()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Context \"admin\" created.\n");
  ASSERT_EQ(::stat(config_path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  r = RunCommandLine({"config", "get-contexts"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0].at("CURRENT"), "*");  // the first context made became current
  EXPECT_EQ(rows[0].at("NAME"), "team-a");
  EXPECT_EQ(rows[0].at("SERVER"), server_->url());
  EXPECT_EQ(rows[0].at("NAMESPACE"), "team-a");
  EXPECT_EQ(rows[1].at("CURRENT"), "");
  EXPECT_EQ(rows[1].at("NAME"), "admin");
  EXPECT_EQ(rows[1].at("NAMESPACE"), "");
  r = RunCommandLine({"config", "current-context"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "team-a\n");

  r = RunCommandLine({"config", "use-context", "admin"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Switched to context \"admin\".\n");
  EXPECT_EQ(RunCommandLine({"config", "current-context"}).out, "admin\n");
  rows = ParseTable(RunCommandLine({"config", "get-contexts"}).out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("CURRENT"), "");
  EXPECT_EQ(rows[1].at("CURRENT"), "*");
  // The current context is what commands use: whoami is the admin now.
  r = RunCommandLine({"auth", "whoami"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "Username    admin\n")) << r.out;
  // --context picks another for one command.
  r = RunCommandLine({"auth", "whoami", "--context", "team-a"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "Username    alice\n")) << r.out;

  // set-context on an existing context modifies it; --current names the current one.
  r = RunCommandLine({"config", "set-context", "--current", "--namespace", "team-b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Context \"admin\" modified.\n");
  rows = RowsWhere(RunCommandLine({"config", "get-contexts"}).out, "NAME", "admin");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("NAMESPACE"), "team-b");
  EXPECT_EQ(rows[0].at("SERVER"), server_->url());  // kept

  r = RunCommandLine({"config", "delete-context", "team-a"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "deleted context team-a from " + config_path_.string() + "\n");
  rows = ParseTable(RunCommandLine({"config", "get-contexts"}).out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("NAME"), "admin");
  EXPECT_EQ(rows[0].at("CURRENT"), "*");
  ASSERT_EQ(::stat(config_path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Deleting the current context warns and leaves none current.
  r = RunCommandLine({"config", "delete-context", "admin"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "this removed your active context")) << r.err;
  r = RunCommandLine({"config", "current-context"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: current-context is not set\n");
}

// config view shows the file with tokens REDACTED: a token given with --token
// is kept in the file (mode 0600) but never printed.
TEST_F(ConfigTest, ViewRedactsTokens) {
  const std::string secret = "s3cret-token-for-view-0123456789";
  CommandRun r = RunCommandLine(
      {"config", "set-context", "ci", "--server", server_->url(), "--token", secret, "--namespace", "team-a"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(Contains(r.out + r.err, secret));
  const std::string alice_file = TokenFile("alice", kAlice);
  ASSERT_EQ(
      RunCommandLine({"config", "set-context", "alice", "--server", server_->url(), "--token-file", alice_file}).rc, 0);
  EXPECT_TRUE(Contains(ReadAll(config_path_), secret));  // the file keeps it, for the CLI to use

  r = RunCommandLine({"config", "view"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(Contains(r.out, secret)) << r.out;
  EXPECT_FALSE(Contains(r.out, kAlice)) << r.out;
  EXPECT_EQ(r.out, "current-context: ci\n"
                   "contexts:\n"
                   "- name: ci\n"
                   "  server: " + server_->url() + "\n"
                   "  token: REDACTED\n"
                   "  namespace: team-a\n"
                   "- name: alice\n"
                   "  server: " + server_->url() + "\n"
                   "  token-file: " + alice_file + "\n");
  // The context's token works, though it is not shown: it is sent, and refused as unknown.
  r = RunCommandLine({"auth", "whoami"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(Contains(r.err, "Unauthorized")) << r.err;
  EXPECT_FALSE(Contains(r.err, secret)) << r.err;  // the error names where it came from, not the token
}

// A context's namespace is the default for commands without -n; -n still wins.
TEST_F(ConfigTest, ContextNamespaceIsTheDefault) {
  ASSERT_EQ(ApplyText(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: in-team-a, namespace: team-a}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sleep, "1"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: in-default, namespace: default}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sleep, "1"]}]
)").rc,
            0);
  const std::string alice_file = TokenFile("alice", kAlice);
  ASSERT_EQ(RunCommandLine({"config", "set-context", "alice", "--server", server_->url(), "--token-file", alice_file,
                            "--namespace", "team-a"})
                .rc,
            0);
  CommandRun r = RunCommandLine({"get", "jobs"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].at("NAME"), "in-team-a");
  r = RunCommandLine({"auth", "can-i", "create", "jobs"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  // -n wins over the context's: alice may not list default's jobs.
  r = RunCommandLine({"get", "jobs", "-n", "default"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(Contains(r.err, "Error from server (Forbidden)")) << r.err;
  EXPECT_TRUE(Contains(r.err, "User \"alice\" cannot list resource \"jobs\" in API group \"batch\" in the namespace "
                              "\"default\""))
      << r.err;
  r = RunCommandLine({"auth", "can-i", "create", "jobs", "-n", "team-b"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "no\n");
  // The flags win over the context's credential too.
  r = RunCommandLine({"get", "jobs", "-n", "default", "--token", server_->admin_token()});
  ASSERT_EQ(r.rc, 0) << r.err;
  rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].at("NAME"), "in-default");
}

// Missing contexts are errors naming them.
TEST_F(ConfigTest, MissingContexts) {
  CommandRun r = RunCommandLine({"config", "use-context", "nope"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: no context exists with the name: \"nope\"\n");
  EXPECT_FALSE(fs::exists(config_path_));  // nothing written
  ASSERT_EQ(RunCommandLine({"config", "set-context", "a", "--server", server_->url()}).rc, 0);
  r = RunCommandLine({"config", "use-context", "nope"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: no context exists with the name: \"nope\"\n");
  EXPECT_EQ(RunCommandLine({"config", "current-context"}).out, "a\n");  // unchanged
  r = RunCommandLine({"config", "delete-context", "nope"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: cannot delete context nope, not in " + config_path_.string() + "\n");
  r = RunCommandLine({"get", "jobs", "--context", "nope"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "context \"nope\" is not in " + config_path_.string())) << r.err;
  // set-context needs a name (or --current), and one credential.
  r = RunCommandLine({"config", "set-context", "--server", server_->url()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "error: give the context's name, or --current\n");
  r = RunCommandLine({"config", "set-context", "b", "--token", "x", "--token-file", "/dev/null"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "error: give --token or --token-file, not both\n");
}

// ---------------------------------------------------------------------------
// approve, deny

// An ApprovalPolicy gates team-a's work above 2 GPUs; alice (an editor) submits
// a 4-GPU job, which waits with an ApprovalRequest job-big.
class ApproveTest : public TenancyTest {
 protected:
  void SetUp() override {
    TenancyTest::SetUp();
    if (HasFatalFailure()) return;
    RegisterNode("gpu-node-1", "8xA100-80GB");
    ASSERT_EQ(ApplyText(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: team-a}
spec: {clusterQueue: default}
)").rc,
              0);
    Gate(1);
  }

  void Gate(int required_approvals) {
    ASSERT_EQ(ApplyText(R"(
apiVersion: tessera.dev/v1
kind: ApprovalPolicy
metadata: {name: gate}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: team-a}
  thresholds: {gpus: 2}
  requiredApprovals: )" + std::to_string(required_approvals) + "\n")
                  .rc,
              0);
  }

  // alice submits `name` asking for 4 GPUs; returns once its ApprovalRequest exists.
  void SubmitBig(const std::string& name = "big") {
    CommandRun r = RunWith(As(kAlice, "team-a"), [&](const CommandContext& c) {
      return RunSubmit(c, {.name = name, .queue = "q", .gpu = "4", .command = {"sleep", "3600"}});
    });
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_TRUE(Eventually([&] { return Request(name).is_object(); })) << "no ApprovalRequest for job " << name;
    ASSERT_TRUE(Eventually([&] {
      return ConditionField(Workload(name), "QuotaReserved", "reason") == "AwaitingApproval";
    })) << Workload(name).dump();
  }

  json Request(const std::string& job) {
    return GetJson("/apis/tessera.dev/v1/namespaces/team-a/approvalrequests/job-" + job);
  }
  json Workload(const std::string& job) {
    return GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/workloads/job-" + job);
  }
  CommandRun Decide(const std::string& token, ApproveOptions options) {
    return RunWith(As(token, "team-a"), [&](const CommandContext& c) { return RunApprove(c, options); });
  }
};

// The gate holds the workload: an ApprovalRequest naming alice, Pending, and the
// workload's QuotaReserved condition telling how to approve it.
TEST_F(ApproveTest, AGatedJobWaitsWithAnApprovalRequest) {
  SubmitBig();
  const json request = Request("big");
  EXPECT_EQ(request["spec"]["requester"], "alice");
  EXPECT_EQ(request["status"]["phase"], "Pending");
  EXPECT_EQ(request["spec"]["reasons"][0], "asks for 4 GPUs, above the 2 of ApprovalPolicy gate");
  const std::string message = ConditionField(Workload("big"), "QuotaReserved", "message");
  EXPECT_TRUE(Contains(message, "tessera approve job-big -n team-a")) << message;
  EXPECT_NE(ConditionField(Workload("big"), "Admitted", "status"), "True");
  // `get approvalrequests` lists it for the team.
  CommandRun r = Cli({"get", "approvalrequests", "-n", "team-a"}, kAlice);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(RowsWhere(r.out, "NAME", "job-big").empty()) << r.out;
}

// A denial needs a reason: refused before anything is sent (exit 2), in-process and on the command line.
TEST_F(ApproveTest, DenyWithoutAReasonIsRefused) {
  SubmitBig();
  CommandRun r = Decide("", {.name = "big", .approve = false});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: a denial needs a reason: tessera deny NAME --reason TEXT\n");
  r = Cli({"deny", "big", "-n", "team-a"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "--reason")) << r.err;
  EXPECT_EQ(Request("big")["status"]["phase"], "Pending");
}

// The admin approves by the Job's name: the request is Approved with who and
// why, and the workload is admitted.
TEST_F(ApproveTest, AdminApprovesAndTheWorkloadIsAdmitted) {
  SubmitBig();
  CommandRun r = Cli({"approve", "big", "-n", "team-a", "--reason", "budgeted"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big approved\n");
  EXPECT_EQ(r.err, "");
  const json request = Request("big");
  EXPECT_EQ(request["status"]["phase"], "Approved");
  ASSERT_EQ(request["status"]["approvals"].size(), 1u) << request.dump();
  EXPECT_EQ(request["status"]["approvals"][0]["user"], "admin");
  EXPECT_EQ(request["status"]["approvals"][0]["reason"], "budgeted");
  EXPECT_TRUE(Eventually([&] { return ConditionField(Workload("big"), "Admitted", "status") == "True"; }))
      << Workload("big").dump();
  // Deciding again on a request no longer pending: the server's Conflict, exit 1.
  r = Cli({"deny", "job-big", "-n", "team-a", "--reason", "changed my mind"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(r.err.starts_with("Error from server (Conflict)")) << r.err;
}

// carol, bound to ClusterRole admin in team-a, approves by the request's own name.
TEST_F(ApproveTest, ANamespaceAdminApproves) {
  SubmitBig();
  CommandRun r = Cli({"approve", "job-big", "-n", "team-a", "--reason", "ok by me"}, kCarol);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big approved\n");
  EXPECT_EQ(Request("big")["status"]["approvals"][0]["user"], "carol");
  EXPECT_TRUE(Eventually([&] { return ConditionField(Workload("big"), "Admitted", "status") == "True"; }))
      << Workload("big").dump();
}

// dave holds only update on approvalrequests/approval in team-a: exactly what
// the server names approvers by ("who may approve" in the workload's message),
// so `tessera approve` should work for him.
TEST_F(ApproveTest, AUserWithTheApprovalRuleApproves) {
  SubmitBig();
  const std::string message = ConditionField(Workload("big"), "QuotaReserved", "message");
  EXPECT_TRUE(Contains(message, "user dave")) << message;  // the server lists him as an approver
  CommandRun can = CanI(kDave, {.args = {"update", "approvalrequests"}, .subresource = "approval"}, "team-a");
  EXPECT_EQ(can.out, "yes\n");
  CommandRun r = Decide(kDave, {.name = "big", .reason = "approved by the budget owner"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big approved\n");
  EXPECT_EQ(Request("big")["status"]["phase"], "Approved");
}

// The server itself accepts dave's decision (update on approvalrequests/approval
// is all it asks): what fails in the test above is the CLI's first step, a GET
// of the ApprovalRequest, which that rule does not allow.
TEST_F(ApproveTest, TheServerAcceptsTheApprovalRuleAlone) {
  SubmitBig();
  json request = Request("big");
  request["status"]["conditions"].push_back(
      {{"type", "Approved"}, {"status", "True"}, {"reason", "TesseraApprove"}, {"message", "raw"}});
  ApiClient dave(server_->url(), kDave);
  auto r = dave.Request("PUT", "/apis/tessera.dev/v1/namespaces/team-a/approvalrequests/job-big/approval",
                        request.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Request("big")["status"]["phase"], "Approved");
  auto got = dave.Request("GET", "/apis/tessera.dev/v1/namespaces/team-a/approvalrequests/job-big");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 403) << got->body;
}

// A policy asking for two approvals: the first is counted and the command says it waits for more.
TEST_F(ApproveTest, TwoApprovalsNeeded) {
  Gate(2);
  SubmitBig();
  CommandRun r = Decide(kCarol, {.name = "big", .reason = "one"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big approved (1 of 2 approvals; it waits for more)\n");
  EXPECT_EQ(Request("big")["status"]["phase"], "Pending");
  r = Decide("", {.name = "big", .reason = "two"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big approved\n");
  EXPECT_EQ(Request("big")["status"]["phase"], "Approved");
}

// deny marks the request Denied with the reason; the workload is deactivated, saying why.
TEST_F(ApproveTest, DenyMarksItDeniedWithTheReason) {
  SubmitBig();
  CommandRun r = Cli({"deny", "big", "-n", "team-a", "--reason", "use the spot flavor"}, kCarol);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "approvalrequest.tessera.dev/job-big denied\n");
  const json request = Request("big");
  EXPECT_EQ(request["status"]["phase"], "Denied");
  EXPECT_TRUE(Contains(request.dump(), "use the spot flavor")) << request.dump();
  json workload;
  ASSERT_TRUE(Eventually([&] {
    workload = Workload("big");
    return ConditionField(workload, "QuotaReserved", "reason") == "ApprovalDenied";
  })) << workload.dump();
  EXPECT_EQ(workload["spec"]["active"], false);
  EXPECT_TRUE(Contains(ConditionField(workload, "QuotaReserved", "message"), "denied by carol")) << workload.dump();
  EXPECT_TRUE(Contains(ConditionField(workload, "QuotaReserved", "message"), "use the spot flavor")) << workload.dump();
  EXPECT_NE(ConditionField(workload, "Admitted", "status"), "True");
}

// Without the permission: kube-apiserver's 403 wording, exit 1, and the request stays Pending.
TEST_F(ApproveTest, ForbiddenWithoutThePermission) {
  SubmitBig();
  // alice (edit: may read the request, not decide it; and it is her own).
  CommandRun r = Decide(kAlice, {.name = "big", .reason = "mine"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Error from server (Forbidden): approvalrequests.tessera.dev \"job-big\" is forbidden: User \"alice\" "
            "cannot update resource \"approvalrequests/approval\" in API group \"tessera.dev\" in the namespace "
            "\"team-a\"\n");
  // bob, bound to nothing there.
  r = Cli({"deny", "big", "-n", "team-a", "--reason", "no"}, kBob);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.err.starts_with("Error from server (Forbidden): ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "User \"bob\" cannot")) << r.err;
  EXPECT_EQ(Request("big")["status"]["phase"], "Pending");
}

// A name that is neither a request nor a Job's.
TEST_F(ApproveTest, MissingRequest) {
  CommandRun r = Decide("", {.name = "nope", .reason = "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Error from server (NotFound): approvalrequests.tessera.dev \"nope\" not found (nor one for a job of that "
            "name) in namespace team-a\n");
}

}  // namespace
}  // namespace tessera
