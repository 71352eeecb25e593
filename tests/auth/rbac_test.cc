#include "auth/rbac.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Counts the allocations of the calling thread while asked to, so that a test
// can check that a decision allocates nothing (rbac.h's cost contract).
// Replaces the global operator new of this test binary; it only counts.
namespace {
thread_local bool counting_allocations = false;
thread_local int allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting_allocations) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC cannot see that the operator new above is malloc's, so it warns on free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tessera {

// Readable failures: rules as kube prints them.
void PrintTo(const PolicyRule& rule, std::ostream* os) { *os << PolicyRuleString(rule); }
void PrintTo(const RbacSubject& s, std::ostream* os) {
  static constexpr const char* kKinds[] = {"User", "Group", "ServiceAccount"};
  *os << kKinds[static_cast<int>(s.kind)] << " " << (s.ns.empty() ? "" : s.ns + "/") << s.name;
}

namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------
// Builders.

class RuleBuilder {
 public:
  RuleBuilder& Verbs(std::vector<std::string> v) {
    rule_.verbs = std::move(v);
    return *this;
  }
  RuleBuilder& Groups(std::vector<std::string> v) {
    rule_.api_groups = std::move(v);
    return *this;
  }
  RuleBuilder& Resources(std::vector<std::string> v) {
    rule_.resources = std::move(v);
    return *this;
  }
  RuleBuilder& Names(std::vector<std::string> v) {
    rule_.resource_names = std::move(v);
    return *this;
  }
  RuleBuilder& Urls(std::vector<std::string> v) {
    rule_.non_resource_urls = std::move(v);
    return *this;
  }
  PolicyRule Build() const { return rule_; }
  operator PolicyRule() const { return rule_; }  // NOLINT: a builder reads as the value it builds

 private:
  PolicyRule rule_;
};
RuleBuilder MakeRule() { return RuleBuilder(); }
// A core-group ("") resource rule, the most common shape.
PolicyRule CoreRule(std::vector<std::string> verbs, std::vector<std::string> resources) {
  return MakeRule().Verbs(std::move(verbs)).Groups({""}).Resources(std::move(resources));
}

// A request: resource requests by default; the views point at literals.
class RequestBuilder {
 public:
  explicit RequestBuilder(std::string_view verb) { a_.verb = verb; }
  RequestBuilder& Group(std::string_view g) {
    a_.api_group = g;
    return *this;
  }
  RequestBuilder& Resource(std::string_view r) {
    a_.resource = r;
    return *this;
  }
  RequestBuilder& Sub(std::string_view s) {
    a_.subresource = s;
    return *this;
  }
  RequestBuilder& Ns(std::string_view n) {
    a_.ns = n;
    return *this;
  }
  RequestBuilder& Name(std::string_view n) {
    a_.name = n;
    return *this;
  }
  RequestBuilder& Path(std::string_view p) {
    a_.resource_request = false;
    a_.path = p;
    return *this;
  }
  operator RbacAttributes() const { return a_; }  // NOLINT
  RbacAttributes Build() const { return a_; }

 private:
  RbacAttributes a_;
};
RequestBuilder Ask(std::string_view verb) { return RequestBuilder(verb); }
// "verb resource" in the core group, in namespace ns.
RbacAttributes AskCore(std::string_view verb, std::string_view resource, std::string_view ns) {
  return Ask(verb).Resource(resource).Ns(ns);
}
RbacAttributes AskUrl(std::string_view verb, std::string_view path) { return Ask(verb).Path(path); }

class RoleBuilder {
 public:
  RoleBuilder(std::string ns, std::string name) {
    role_.ns = std::move(ns);
    role_.name = std::move(name);
  }
  RoleBuilder& Rule(PolicyRule r) {
    role_.rules.push_back(std::move(r));
    return *this;
  }
  RoleBuilder& Label(std::string k, std::string v) {
    role_.labels[std::move(k)] = std::move(v);
    return *this;
  }
  // Adds an aggregationRule selector (creating the rule when absent).
  RoleBuilder& AggregateFrom(LabelSelectorTerms selector) {
    if (!role_.aggregation.has_value()) role_.aggregation.emplace();
    role_.aggregation->push_back(std::move(selector));
    return *this;
  }
  RoleBuilder& AggregateLabel(std::string k, std::string v) {
    LabelSelectorTerms s;
    s.match_labels[std::move(k)] = std::move(v);
    return AggregateFrom(std::move(s));
  }
  operator RbacRole() const { return role_; }  // NOLINT
  RbacRole Build() const { return role_; }

 private:
  RbacRole role_;
};
RoleBuilder MakeRole(std::string ns, std::string name) { return RoleBuilder(std::move(ns), std::move(name)); }
RoleBuilder MakeClusterRole(std::string name) { return RoleBuilder("", std::move(name)); }

class BindingBuilder {
 public:
  BindingBuilder(std::string ns, std::string name) {
    b_.ns = std::move(ns);
    b_.name = std::move(name);
  }
  BindingBuilder& ToClusterRole(std::string name) {
    b_.role_is_cluster_role = true;
    b_.role_name = std::move(name);
    return *this;
  }
  BindingBuilder& ToRole(std::string name) {
    b_.role_is_cluster_role = false;
    b_.role_name = std::move(name);
    return *this;
  }
  BindingBuilder& User(std::string name) { return Subject(RbacSubject::Kind::kUser, std::move(name), ""); }
  BindingBuilder& Group(std::string name) { return Subject(RbacSubject::Kind::kGroup, std::move(name), ""); }
  BindingBuilder& ServiceAccount(std::string name, std::string ns = "") {
    return Subject(RbacSubject::Kind::kServiceAccount, std::move(name), std::move(ns));
  }
  operator RbacBinding() const { return b_; }  // NOLINT
  RbacBinding Build() const { return b_; }

 private:
  BindingBuilder& Subject(RbacSubject::Kind kind, std::string name, std::string ns) {
    b_.subjects.push_back(RbacSubject{kind, std::move(name), std::move(ns)});
    return *this;
  }
  RbacBinding b_;
};
BindingBuilder MakeRoleBinding(std::string ns, std::string name) {
  return BindingBuilder(std::move(ns), std::move(name));
}
BindingBuilder MakeClusterRoleBinding(std::string name) { return BindingBuilder("", std::move(name)); }

UserInfo MakeUser(std::string name, std::vector<std::string> groups = {}) {
  UserInfo u;
  u.name = std::move(name);
  u.groups = std::move(groups);
  return u;
}

RbacSubject UserSubject(std::string name) { return {RbacSubject::Kind::kUser, std::move(name), ""}; }
RbacSubject GroupSubject(std::string name) { return {RbacSubject::Kind::kGroup, std::move(name), ""}; }
RbacSubject SaSubject(std::string ns, std::string name) {
  return {RbacSubject::Kind::kServiceAccount, std::move(name), std::move(ns)};
}

LabelRequirement Requirement(std::string key, LabelRequirement::Op op, std::vector<std::string> values = {}) {
  return LabelRequirement{std::move(key), op, std::move(values)};
}

// ---------------------------------------------------------------------------
// RuleAllows: the matching rules of rbac.h, one per test.

TEST(RbacRuleTest, VerbStarMatchesEveryVerb) {
  // A rule for "*" verbs on pods allows get, delete and a custom verb alike.
  const PolicyRule rule = CoreRule({"*"}, {"pods"});
  EXPECT_TRUE(RuleAllows(rule, AskCore("get", "pods", "a")));
  EXPECT_TRUE(RuleAllows(rule, AskCore("delete", "pods", "a")));
  EXPECT_TRUE(RuleAllows(rule, AskCore("escalate", "pods", "a")));
}

TEST(RbacRuleTest, VerbMustBeListed) {
  // get and list are held; watch is not.
  const PolicyRule rule = CoreRule({"get", "list"}, {"pods"});
  EXPECT_TRUE(RuleAllows(rule, AskCore("list", "pods", "a")));
  EXPECT_FALSE(RuleAllows(rule, AskCore("watch", "pods", "a")));
}

TEST(RbacRuleTest, CoreGroupIsTheEmptyStringAndOtherGroupsMustBeListed) {
  // apiGroups [""] is the core group only: pods yes, apps/deployments no.
  const PolicyRule rule = MakeRule().Verbs({"get"}).Groups({""}).Resources({"*"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Group("apps").Resource("deployments")));
}

TEST(RbacRuleTest, ApiGroupStarMatchesEveryGroup) {
  // apiGroups ["*"] covers the core group and any named group.
  const PolicyRule rule = MakeRule().Verbs({"get"}).Groups({"*"}).Resources({"deployments", "pods"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods")));
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Group("apps").Resource("deployments")));
}

TEST(RbacRuleTest, ResourceStarMatchesEveryResourceAndSubresource) {
  // resources ["*"]: pods, pods/log and deployments/status.
  const PolicyRule rule = MakeRule().Verbs({"get"}).Groups({"*"}).Resources({"*"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods")));
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods").Sub("log")));
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Group("apps").Resource("deployments").Sub("status")));
}

TEST(RbacRuleTest, PlainResourceDoesNotCoverItsSubresources) {
  // "pods" allows a pod, not its log or exec.
  const PolicyRule rule = CoreRule({"get", "create"}, {"pods"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods").Name("p")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("pods").Sub("log").Name("p")));
  EXPECT_FALSE(RuleAllows(rule, Ask("create").Resource("pods").Sub("exec").Name("p")));
}

TEST(RbacRuleTest, ResourceSlashSubresourceMatchesOnlyThatSubresource) {
  // "pods/log": the log, not the pod itself, nor exec, nor another resource's log.
  const PolicyRule rule = CoreRule({"get"}, {"pods/log"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("pods").Sub("log")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("pods")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("pods").Sub("exec")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("nodes").Sub("log")));
}

TEST(RbacRuleTest, StarSlashSubresourceMatchesThatSubresourceOfEveryResource) {
  // "*/status": deployments/status and jobs/status, but no object and no other subresource.
  const PolicyRule rule = MakeRule().Verbs({"update"}).Groups({"*"}).Resources({"*/status"});
  EXPECT_TRUE(RuleAllows(rule, Ask("update").Group("apps").Resource("deployments").Sub("status")));
  EXPECT_TRUE(RuleAllows(rule, Ask("update").Group("batch").Resource("jobs").Sub("status")));
  EXPECT_FALSE(RuleAllows(rule, Ask("update").Group("batch").Resource("jobs")));
  EXPECT_FALSE(RuleAllows(rule, Ask("update").Group("batch").Resource("jobs").Sub("scale")));
  EXPECT_FALSE(RuleAllows(rule, Ask("update").Group("batch").Resource("jobs").Sub("statuses")));
}

TEST(RbacRuleTest, ResourceSlashStarGrantsNoSubresource) {
  // "pods/*" is no wildcard in Kubernetes' ResourceMatches: it grants neither pods nor their subresources.
  const PolicyRule rule = CoreRule({"get", "create"}, {"pods/*"});
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("pods").Sub("log")));
  EXPECT_FALSE(RuleAllows(rule, Ask("create").Resource("pods").Sub("exec")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("pods")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("services").Sub("proxy")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("podsx").Sub("log")));
}

TEST(RbacRuleTest, ResourceNamesRestrictTheRuleToTheNamedObjects) {
  // Only the configmap "settings" may be read.
  const PolicyRule rule =
      MakeRule().Verbs({"get", "update"}).Groups({""}).Resources({"configmaps"}).Names({"settings"});
  EXPECT_TRUE(RuleAllows(rule, Ask("get").Resource("configmaps").Ns("a").Name("settings")));
  EXPECT_TRUE(RuleAllows(rule, Ask("update").Resource("configmaps").Ns("a").Name("settings")));
  EXPECT_FALSE(RuleAllows(rule, Ask("get").Resource("configmaps").Ns("a").Name("other")));
}

TEST(RbacRuleTest, ResourceNamesNeverMatchRequestsThatNameNoObject) {
  // list, watch, create and deletecollection carry no name, so a named rule refuses them all.
  const PolicyRule rule = MakeRule().Verbs({"*"}).Groups({""}).Resources({"configmaps"}).Names({"settings"});
  for (const char* verb : {"list", "watch", "create", "deletecollection"}) {
    EXPECT_FALSE(RuleAllows(rule, Ask(verb).Resource("configmaps").Ns("a"))) << verb;
  }
}

TEST(RbacRuleTest, NonResourceUrlMatchesItsExactPath) {
  // "/metrics" allows /metrics, not /metrics/cadvisor nor /metric.
  const PolicyRule rule = MakeRule().Verbs({"get"}).Urls({"/metrics"});
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/metrics")));
  EXPECT_FALSE(RuleAllows(rule, AskUrl("get", "/metrics/cadvisor")));
  EXPECT_FALSE(RuleAllows(rule, AskUrl("get", "/metric")));
  EXPECT_FALSE(RuleAllows(rule, AskUrl("post", "/metrics")));
}

TEST(RbacRuleTest, NonResourceUrlStarMatchesEveryPath) {
  // "*" allows any path.
  const PolicyRule rule = MakeRule().Verbs({"*"}).Urls({"*"});
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/healthz")));
  EXPECT_TRUE(RuleAllows(rule, AskUrl("post", "/apis/batch/v1")));
}

TEST(RbacRuleTest, NonResourceUrlEndingInStarIsAPrefix) {
  // "/apis/*" allows /apis/ and everything under it, not /apis itself; "/healthz*" also /healthzx.
  const PolicyRule rule = MakeRule().Verbs({"get"}).Urls({"/apis/*", "/healthz*"});
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/apis/")));
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/apis/batch/v1")));
  EXPECT_FALSE(RuleAllows(rule, AskUrl("get", "/apis")));
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/healthz")));
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/healthz/ready")));
  EXPECT_TRUE(RuleAllows(rule, AskUrl("get", "/healthzx")));
}

TEST(RbacRuleTest, ResourceRulesAndNonResourceRulesNeverMatchTheOtherKind) {
  // A rule for everything of every resource grants no URL; a rule for every URL grants no resource.
  const PolicyRule resources = MakeRule().Verbs({"*"}).Groups({"*"}).Resources({"*"});
  const PolicyRule urls = MakeRule().Verbs({"*"}).Urls({"*"});
  EXPECT_FALSE(RuleAllows(resources, AskUrl("get", "/metrics")));
  EXPECT_FALSE(RuleAllows(urls, AskCore("get", "pods", "a")));
}

// ---------------------------------------------------------------------------
// The index: scopes and subjects.

class RbacIndexTest : public ::testing::Test {
 protected:
  RbacIndexTest() {
    index_.PutRole(MakeClusterRole("pod-reader").Rule(CoreRule({"get", "list"}, {"pods"})));
    index_.PutRole(MakeClusterRole("metrics").Rule(MakeRule().Verbs({"get"}).Urls({"/metrics"})));
    index_.PutRole(
        MakeRole("team-a", "deployer").Rule(MakeRule().Verbs({"create"}).Groups({"apps"}).Resources({"deployments"})));
  }
  RbacIndex index_;
};

TEST_F(RbacIndexTest, RoleBindingGrantsOnlyInItsNamespace) {
  // alice reads pods in team-a through a RoleBinding there, and nowhere else.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  const UserInfo alice = MakeUser("alice");
  EXPECT_TRUE(index_.Allowed(alice, AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(alice, AskCore("get", "pods", "team-b")));
}

TEST_F(RbacIndexTest, RoleBindingGrantsNothingAtTheClusterScope) {
  // Listing pods across all namespaces (ns "") is not granted by a RoleBinding.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), AskCore("list", "pods", "")));
}

TEST_F(RbacIndexTest, RoleBindingGrantsNoNonResourceUrls) {
  // A RoleBinding to a ClusterRole with a URL rule does not grant the URL.
  index_.PutBinding(MakeRoleBinding("team-a", "m").ToClusterRole("metrics").User("alice"));
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), AskUrl("get", "/metrics")));
  // Not even when a caller fills the namespace of a non-resource request.
  RbacAttributes odd = AskUrl("get", "/metrics");
  odd.ns = "team-a";
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), odd));
}

TEST_F(RbacIndexTest, RoleBindingToARoleGrantsThatRoleOfItsNamespace) {
  // team-a/deploy binds the Role team-a/deployer; a binding in team-b to "deployer" finds no Role.
  index_.PutBinding(MakeRoleBinding("team-a", "deploy").ToRole("deployer").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-b", "deploy").ToRole("deployer").User("alice"));
  const UserInfo alice = MakeUser("alice");
  EXPECT_TRUE(index_.Allowed(alice, Ask("create").Group("apps").Resource("deployments").Ns("team-a")));
  EXPECT_FALSE(index_.Allowed(alice, Ask("create").Group("apps").Resource("deployments").Ns("team-b")));
}

TEST_F(RbacIndexTest, RoleBindingToAClusterRoleGrantsItsRulesInTheBindingsNamespace) {
  // The ClusterRole pod-reader, bound in team-b, grants reading pods in team-b.
  index_.PutBinding(MakeRoleBinding("team-b", "read").ToClusterRole("pod-reader").User("bob"));
  EXPECT_TRUE(index_.Allowed(MakeUser("bob"), AskCore("list", "pods", "team-b")));
}

TEST_F(RbacIndexTest, ClusterRoleBindingGrantsEverywhere) {
  // In every namespace, at the cluster scope, and for URLs.
  index_.PutBinding(MakeClusterRoleBinding("read-all").ToClusterRole("pod-reader").User("carol"));
  index_.PutBinding(MakeClusterRoleBinding("metrics").ToClusterRole("metrics").User("carol"));
  const UserInfo carol = MakeUser("carol");
  EXPECT_TRUE(index_.Allowed(carol, AskCore("get", "pods", "team-a")));
  EXPECT_TRUE(index_.Allowed(carol, AskCore("get", "pods", "anywhere")));
  EXPECT_TRUE(index_.Allowed(carol, AskCore("list", "pods", "")));
  EXPECT_TRUE(index_.Allowed(carol, AskUrl("get", "/metrics")));
  EXPECT_FALSE(index_.Allowed(carol, AskCore("delete", "pods", "team-a")));  // the role holds get, list
}

TEST_F(RbacIndexTest, ClusterRoleBindingToARoleGrantsNothing) {
  // A roleRef kind Role at the cluster scope names nothing that can exist.
  index_.PutBinding(MakeClusterRoleBinding("odd").ToRole("pod-reader").User("carol"));
  EXPECT_FALSE(index_.Allowed(MakeUser("carol"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, ServiceAccountSubjectWithANamespaceMatchesItsUserName) {
  // A RoleBinding in team-a naming ci/builder grants system:serviceaccount:ci:builder.
  index_.PutBinding(MakeRoleBinding("team-a", "ci").ToClusterRole("pod-reader").ServiceAccount("builder", "ci"));
  EXPECT_TRUE(index_.Allowed(MakeUser("system:serviceaccount:ci:builder"), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("system:serviceaccount:team-a:builder"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, ServiceAccountSubjectWithoutANamespaceIsOfTheRoleBindingsNamespace) {
  // No namespace on the subject: the binding's, team-a.
  index_.PutBinding(MakeRoleBinding("team-a", "sa").ToClusterRole("pod-reader").ServiceAccount("default"));
  EXPECT_TRUE(index_.Allowed(MakeUser(ServiceAccountUserName("team-a", "default")), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("default"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, ClusterRoleBindingServiceAccountWithoutANamespaceMatchesNobody) {
  // appliesToUser: no namespace to default to, so no ServiceAccount is named.
  index_.PutBinding(MakeClusterRoleBinding("sa").ToClusterRole("pod-reader").ServiceAccount("default"));
  EXPECT_FALSE(index_.Allowed(MakeUser("system:serviceaccount::default"), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("system:serviceaccount:team-a:default"), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("default"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, UserSubjectNamingAServiceAccountsUserNameMatchesIt) {
  // Kind User with the ServiceAccount's user name is the same identity.
  index_.PutBinding(
      MakeRoleBinding("team-a", "u").ToClusterRole("pod-reader").User("system:serviceaccount:ci:builder"));
  EXPECT_TRUE(index_.Allowed(MakeUser("system:serviceaccount:ci:builder"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, GroupSubjectMatchesEveryMemberAndOnlyMembers) {
  // Members of "devs" read pods in team-a; a user named "devs" is not a member.
  index_.PutBinding(MakeRoleBinding("team-a", "devs").ToClusterRole("pod-reader").Group("devs"));
  EXPECT_TRUE(index_.Allowed(MakeUser("dan", {"system:authenticated", "devs"}), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("devs", {"system:authenticated"}), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, UserSubjectMatchesOnlyThatExactName) {
  // Names compare exactly: "Alice" is not "alice".
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  EXPECT_FALSE(index_.Allowed(MakeUser("Alice"), AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(MakeUser("alice2"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, NoBindingNoPermission) {
  // Nothing is bound to erin: every request is denied.
  const UserInfo erin = MakeUser("erin", {"system:authenticated"});
  EXPECT_FALSE(index_.Allowed(erin, AskCore("get", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(erin, AskUrl("get", "/metrics")));
}

TEST_F(RbacIndexTest, BindingToAMissingRoleGrantsNothingUntilTheRoleAppears) {
  // "later" does not exist yet; once created, the binding grants its rules; once deleted, nothing.
  index_.PutBinding(MakeRoleBinding("team-a", "later").ToClusterRole("later").User("alice"));
  const UserInfo alice = MakeUser("alice");
  EXPECT_FALSE(index_.Allowed(alice, AskCore("get", "secrets", "team-a")));
  index_.PutRole(MakeClusterRole("later").Rule(CoreRule({"get"}, {"secrets"})));
  EXPECT_TRUE(index_.Allowed(alice, AskCore("get", "secrets", "team-a")));
  index_.RemoveRole("", "later");
  EXPECT_FALSE(index_.Allowed(alice, AskCore("get", "secrets", "team-a")));
}

TEST_F(RbacIndexTest, RoleUpdateChangesWhatItsBindingsGrant) {
  // pod-reader gains watch and loses list.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  index_.PutRole(MakeClusterRole("pod-reader").Rule(CoreRule({"get", "watch"}, {"pods"})));
  const UserInfo alice = MakeUser("alice");
  EXPECT_TRUE(index_.Allowed(alice, AskCore("watch", "pods", "team-a")));
  EXPECT_FALSE(index_.Allowed(alice, AskCore("list", "pods", "team-a")));
}

TEST_F(RbacIndexTest, RoleRemovalRevokesWhatItsBindingsGranted) {
  // Deleting the Role team-a/deployer leaves its binding granting nothing.
  index_.PutBinding(MakeRoleBinding("team-a", "deploy").ToRole("deployer").User("alice"));
  index_.RemoveRole("team-a", "deployer");
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), Ask("create").Group("apps").Resource("deployments").Ns("team-a")));
  EXPECT_EQ(index_.roles(), 2u);  // pod-reader, metrics
}

TEST_F(RbacIndexTest, BindingUpdateReplacesItsSubjects) {
  // The binding "read" moves from alice to bob.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("bob"));
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), AskCore("get", "pods", "team-a")));
  EXPECT_TRUE(index_.Allowed(MakeUser("bob"), AskCore("get", "pods", "team-a")));
  EXPECT_EQ(index_.bindings(), 1u);
}

TEST_F(RbacIndexTest, BindingUpdateCanChangeItsRole) {
  // "read" now points at metrics: pods no longer readable.
  index_.PutBinding(MakeClusterRoleBinding("read").ToClusterRole("pod-reader").User("alice"));
  index_.PutBinding(MakeClusterRoleBinding("read").ToClusterRole("metrics").User("alice"));
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), AskCore("get", "pods", "team-a")));
  EXPECT_TRUE(index_.Allowed(MakeUser("alice"), AskUrl("get", "/metrics")));
}

TEST_F(RbacIndexTest, BindingRemovalRevokesOnlyThatBinding) {
  // alice has two bindings in team-a; removing one keeps the other's grant.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-a", "deploy").ToRole("deployer").User("alice"));
  index_.RemoveBinding("team-a", "read");
  index_.RemoveBinding("team-a", "no-such-binding");  // does nothing
  const UserInfo alice = MakeUser("alice");
  EXPECT_FALSE(index_.Allowed(alice, AskCore("get", "pods", "team-a")));
  EXPECT_TRUE(index_.Allowed(alice, Ask("create").Group("apps").Resource("deployments").Ns("team-a")));
  EXPECT_EQ(index_.bindings(), 1u);
}

TEST_F(RbacIndexTest, RoleAndClusterRoleOfTheSameNameAreDistinct) {
  // A Role team-a/pod-reader (secrets) and the ClusterRole pod-reader (pods) are two roles.
  index_.PutRole(MakeRole("team-a", "pod-reader").Rule(CoreRule({"get"}, {"secrets"})));
  index_.PutBinding(MakeRoleBinding("team-a", "r").ToRole("pod-reader").User("alice"));
  const UserInfo alice = MakeUser("alice");
  EXPECT_TRUE(index_.Allowed(alice, AskCore("get", "secrets", "team-a")));
  EXPECT_FALSE(index_.Allowed(alice, AskCore("get", "pods", "team-a")));
  EXPECT_EQ(index_.roles(), 4u);  // pod-reader twice, metrics, deployer
}

TEST_F(RbacIndexTest, AllowedAllocatesNothing) {
  // A decision probes the maps with string_views and builds no "resource/sub"
  // string: allowed, denied, through a group, with a subresource and for a URL.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-a", "devs").ToRole("deployer").Group("devs"));
  index_.PutBinding(MakeClusterRoleBinding("m").ToClusterRole("metrics").Group("system:authenticated"));
  const UserInfo alice = MakeUser("alice", {"system:authenticated", "devs"});
  const RbacAttributes asks[] = {AskCore("get", "pods", "team-a"), AskCore("get", "pods", "team-b"),
                                 Ask("create").Group("apps").Resource("deployments").Ns("team-a"),
                                 Ask("get").Resource("pods").Sub("log").Ns("team-a"), AskUrl("get", "/metrics")};
  const bool want[] = {true, false, true, false, true};
  bool got[5] = {};
  allocations = 0;
  counting_allocations = true;
  for (int i = 0; i < 5; ++i) got[i] = index_.Allowed(alice, asks[i]);
  counting_allocations = false;
  EXPECT_EQ(allocations, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i], want[i]) << i;
}

TEST_F(RbacIndexTest, ResetReplacesEverything) {
  // After a relist holding one ClusterRole and one binding, the old bindings grant nothing.
  index_.PutBinding(MakeRoleBinding("team-a", "read").ToClusterRole("pod-reader").User("alice"));
  index_.Reset({MakeClusterRole("admin").Rule(MakeRule().Verbs({"*"}).Groups({"*"}).Resources({"*"}))},
               {MakeClusterRoleBinding("admins").ToClusterRole("admin").Group("system:masters")});
  EXPECT_FALSE(index_.Allowed(MakeUser("alice"), AskCore("get", "pods", "team-a")));
  EXPECT_TRUE(index_.Allowed(MakeUser("root", {"system:masters"}), AskCore("delete", "nodes", "")));
  EXPECT_EQ(index_.roles(), 1u);
  EXPECT_EQ(index_.bindings(), 1u);
  EXPECT_EQ(index_.RoleRules("", "pod-reader"), std::nullopt);
}

TEST_F(RbacIndexTest, ResetAppliesAggregation) {
  // A relist in which the aggregating role comes before the role it selects.
  index_.Reset({MakeClusterRole("view").AggregateLabel("view", "true"),
                MakeClusterRole("pods-view").Label("view", "true").Rule(CoreRule({"get"}, {"pods"}))},
               {MakeRoleBinding("team-a", "v").ToClusterRole("view").User("alice")});
  EXPECT_TRUE(index_.Allowed(MakeUser("alice"), AskCore("get", "pods", "team-a")));
}

TEST_F(RbacIndexTest, RoleRulesGivesARolesEffectiveRules) {
  // A Role by namespace and name, a ClusterRole by name alone; nullopt when absent.
  EXPECT_EQ(index_.RoleRules("", "pod-reader"), std::vector<PolicyRule>{CoreRule({"get", "list"}, {"pods"})});
  EXPECT_EQ(index_.RoleRules("team-a", "deployer"),
            std::vector<PolicyRule>{MakeRule().Verbs({"create"}).Groups({"apps"}).Resources({"deployments"})});
  EXPECT_EQ(index_.RoleRules("team-b", "deployer"), std::nullopt);
  EXPECT_EQ(index_.RoleRules("", "deployer"), std::nullopt);
}

TEST_F(RbacIndexTest, RulesForListsClusterBindingsThenTheNamespacesEachRuleOnce) {
  // alice: a ClusterRoleBinding to metrics, RoleBindings in team-a to pod-reader (twice: as
  // herself and through a group) and the Role deployer; in team-b only metrics applies.
  index_.PutBinding(MakeClusterRoleBinding("m").ToClusterRole("metrics").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-a", "a-read").ToClusterRole("pod-reader").User("alice"));
  index_.PutBinding(MakeRoleBinding("team-a", "b-read").ToClusterRole("pod-reader").Group("devs"));
  index_.PutBinding(MakeRoleBinding("team-a", "c-deploy").ToRole("deployer").User("alice"));
  const UserInfo alice = MakeUser("alice", {"devs"});
  const PolicyRule metrics = MakeRule().Verbs({"get"}).Urls({"/metrics"});
  const PolicyRule pods = CoreRule({"get", "list"}, {"pods"});
  const PolicyRule deploy = MakeRule().Verbs({"create"}).Groups({"apps"}).Resources({"deployments"});
  EXPECT_THAT(index_.RulesFor(alice, "team-a"), ElementsAre(metrics, pods, deploy));
  EXPECT_THAT(index_.RulesFor(alice, "team-b"), ElementsAre(metrics));
  EXPECT_THAT(index_.RulesFor(alice, ""), ElementsAre(metrics));  // the cluster scope: no RoleBinding
  EXPECT_THAT(index_.RulesFor(MakeUser("nobody"), "team-a"), IsEmpty());
}

TEST_F(RbacIndexTest, SubjectsAllowedListsClusterBindingsFirstThenByNameEachOnce) {
  // Who may get pods in team-a: the ClusterRoleBinding's group, then the RoleBindings of
  // team-a by name (a-read: alice and bob; z-read: alice again and the ServiceAccount, whose
  // namespace is filled in); team-b's binding and the URL-only binding do not count.
  index_.PutBinding(MakeRoleBinding("team-a", "z-read").ToClusterRole("pod-reader").User("alice").ServiceAccount("ci"));
  index_.PutBinding(MakeRoleBinding("team-a", "a-read").ToClusterRole("pod-reader").User("alice").User("bob"));
  index_.PutBinding(MakeRoleBinding("team-b", "read").ToClusterRole("pod-reader").User("carol"));
  index_.PutBinding(MakeClusterRoleBinding("readers").ToClusterRole("pod-reader").Group("auditors"));
  index_.PutBinding(MakeClusterRoleBinding("m").ToClusterRole("metrics").User("prometheus"));
  EXPECT_THAT(
      index_.SubjectsAllowed(AskCore("get", "pods", "team-a")),
      ElementsAre(GroupSubject("auditors"), UserSubject("alice"), UserSubject("bob"), SaSubject("team-a", "ci")));
  EXPECT_THAT(index_.SubjectsAllowed(AskUrl("get", "/metrics")), ElementsAre(UserSubject("prometheus")));
  EXPECT_THAT(index_.SubjectsAllowed(AskCore("delete", "pods", "team-a")), IsEmpty());
}

TEST_F(RbacIndexTest, CountsRolesAndBindings) {
  // Three roles from the fixture; two bindings, one per scope.
  index_.PutBinding(MakeClusterRoleBinding("m").ToClusterRole("metrics").User("a"));
  index_.PutBinding(MakeRoleBinding("team-a", "m").ToClusterRole("metrics").User("a"));
  EXPECT_EQ(index_.roles(), 3u);
  EXPECT_EQ(index_.bindings(), 2u);
  index_.RemoveRole("team-a", "no-such-role");  // does nothing
  EXPECT_EQ(index_.roles(), 3u);
}

// ---------------------------------------------------------------------------
// Aggregation.

TEST(RbacAggregationTest, SelectorsMatchLabelsAndExpressions) {
  // {app: x} plus tier In (a, b), env NotIn (prod), owner Exists, legacy DoesNotExist.
  LabelSelectorTerms s;
  s.match_labels["app"] = "x";
  s.match_expressions = {Requirement("tier", LabelRequirement::Op::kIn, {"a", "b"}),
                         Requirement("env", LabelRequirement::Op::kNotIn, {"prod"}),
                         Requirement("owner", LabelRequirement::Op::kExists),
                         Requirement("legacy", LabelRequirement::Op::kDoesNotExist)};
  const std::map<std::string, std::string> good = {{"app", "x"}, {"tier", "b"}, {"owner", "me"}};
  EXPECT_TRUE(s.Matches(good));
  auto with = [&good](std::string k, std::string v) {
    auto l = good;
    l[std::move(k)] = std::move(v);
    return l;
  };
  EXPECT_FALSE(s.Matches(with("app", "y")));
  EXPECT_FALSE(s.Matches(with("tier", "c")));
  EXPECT_FALSE(s.Matches(with("env", "prod")));
  EXPECT_TRUE(s.Matches(with("env", "dev")));
  EXPECT_FALSE(s.Matches(with("legacy", "")));
  EXPECT_FALSE(s.Matches({{"app", "x"}, {"tier", "a"}}));  // no owner
  EXPECT_TRUE(LabelSelectorTerms{}.Matches({}));           // an empty selector matches everything
}

TEST(RbacAggregationTest, AggregatedRoleHasTheSelectedRolesRulesByNameNotItsOwn) {
  // view selects view=true: a-view (services) then b-view (pods), in name order. The rule written
  // in view itself (get configmaps) is not its own: Kubernetes' aggregation controller replaces it.
  RbacIndex index;
  index.PutRole(MakeClusterRole("view").AggregateLabel("view", "true").Rule(CoreRule({"get"}, {"configmaps"})));
  index.PutRole(MakeClusterRole("b-view").Label("view", "true").Rule(CoreRule({"get"}, {"pods"})));
  index.PutRole(MakeClusterRole("a-view").Label("view", "true").Rule(CoreRule({"get"}, {"services"})));
  index.PutRole(MakeClusterRole("other").Label("view", "false").Rule(CoreRule({"get"}, {"secrets"})));
  EXPECT_THAT(*index.RoleRules("", "view"), ElementsAre(CoreRule({"get"}, {"services"}), CoreRule({"get"}, {"pods"})));
}

TEST(RbacAggregationTest, BindingsToTheAggregatedRoleGrantTheSelectedRules) {
  // alice is bound to view; a role joining view later widens her access at once.
  RbacIndex index;
  index.PutRole(MakeClusterRole("view").AggregateLabel("view", "true"));
  index.PutBinding(MakeRoleBinding("team-a", "v").ToClusterRole("view").User("alice"));
  const UserInfo alice = MakeUser("alice");
  EXPECT_FALSE(index.Allowed(alice, AskCore("get", "pods", "team-a")));
  index.PutRole(MakeClusterRole("pods-view").Label("view", "true").Rule(CoreRule({"get"}, {"pods"})));
  EXPECT_TRUE(index.Allowed(alice, AskCore("get", "pods", "team-a")));
  index.RemoveRole("", "pods-view");
  EXPECT_FALSE(index.Allowed(alice, AskCore("get", "pods", "team-a")));
}

TEST(RbacAggregationTest, SelectedRolesRuleChangesReachTheAggregatedRole) {
  // pods-view changes its rule from get to list; view follows.
  RbacIndex index;
  index.PutRole(MakeClusterRole("view").AggregateLabel("view", "true"));
  index.PutRole(MakeClusterRole("pods-view").Label("view", "true").Rule(CoreRule({"get"}, {"pods"})));
  index.PutRole(MakeClusterRole("pods-view").Label("view", "true").Rule(CoreRule({"list"}, {"pods"})));
  EXPECT_THAT(*index.RoleRules("", "view"), ElementsAre(CoreRule({"list"}, {"pods"})));
}

TEST(RbacAggregationTest, AggregationMatchesExpressions) {
  // A selector on tier In (gold): gold roles join, silver does not.
  LabelSelectorTerms gold;
  gold.match_expressions = {Requirement("tier", LabelRequirement::Op::kIn, {"gold"})};
  RbacIndex index;
  index.PutRole(MakeClusterRole("gold").AggregateFrom(gold));
  index.PutRole(MakeClusterRole("g").Label("tier", "gold").Rule(CoreRule({"get"}, {"pods"})));
  index.PutRole(MakeClusterRole("s").Label("tier", "silver").Rule(CoreRule({"get"}, {"secrets"})));
  EXPECT_THAT(*index.RoleRules("", "gold"), ElementsAre(CoreRule({"get"}, {"pods"})));
}

TEST(RbacAggregationTest, AggregationIsTransitive) {
  // admin selects admin-extras and edit, edit selects edit-extras and view, view selects
  // pods-view: admin has all three levels (as Kubernetes' admin/edit/view are built).
  RbacIndex index;
  index.PutRole(MakeClusterRole("admin").AggregateLabel("to-admin", "true"));
  index.PutRole(MakeClusterRole("admin-extras").Label("to-admin", "true").Rule(CoreRule({"*"}, {"roles"})));
  index.PutRole(MakeClusterRole("edit").Label("to-admin", "true").AggregateLabel("to-edit", "true"));
  index.PutRole(MakeClusterRole("edit-extras").Label("to-edit", "true").Rule(CoreRule({"create"}, {"pods"})));
  index.PutRole(MakeClusterRole("view").Label("to-edit", "true").AggregateLabel("to-view", "true"));
  index.PutRole(MakeClusterRole("pods-view").Label("to-view", "true").Rule(CoreRule({"get"}, {"pods"})));
  EXPECT_THAT(*index.RoleRules("", "admin"),
              ElementsAre(CoreRule({"*"}, {"roles"}), CoreRule({"create"}, {"pods"}), CoreRule({"get"}, {"pods"})));
  EXPECT_THAT(*index.RoleRules("", "view"), ElementsAre(CoreRule({"get"}, {"pods"})));
  index.PutBinding(MakeClusterRoleBinding("admins").ToClusterRole("admin").User("root"));
  EXPECT_TRUE(index.Allowed(MakeUser("root"), AskCore("get", "pods", "x")));
  // The leaf changes: the change reaches admin two levels up.
  index.PutRole(MakeClusterRole("pods-view").Label("to-view", "true").Rule(CoreRule({"watch"}, {"pods"})));
  EXPECT_FALSE(index.Allowed(MakeUser("root"), AskCore("get", "pods", "x")));
  EXPECT_TRUE(index.Allowed(MakeUser("root"), AskCore("watch", "pods", "x")));
}

TEST(RbacAggregationTest, ALabelChangeDropsARoleOutOfTheAggregation) {
  // pods-view's label goes from view=true to view=false: view loses its rule.
  RbacIndex index;
  index.PutRole(MakeClusterRole("view").AggregateLabel("view", "true"));
  index.PutRole(MakeClusterRole("pods-view").Label("view", "true").Rule(CoreRule({"get"}, {"pods"})));
  index.PutBinding(MakeClusterRoleBinding("v").ToClusterRole("view").User("alice"));
  EXPECT_TRUE(index.Allowed(MakeUser("alice"), AskCore("get", "pods", "x")));
  index.PutRole(MakeClusterRole("pods-view").Label("view", "false").Rule(CoreRule({"get"}, {"pods"})));
  EXPECT_FALSE(index.Allowed(MakeUser("alice"), AskCore("get", "pods", "x")));
  EXPECT_THAT(*index.RoleRules("", "view"), IsEmpty());
}

TEST(RbacAggregationTest, ARoleThatStopsAggregatingDropsTheSelectedRules) {
  // view loses its aggregationRule: its written rules become its own, in it and in what aggregates it.
  RbacIndex index;
  index.PutRole(MakeClusterRole("edit").AggregateLabel("to-edit", "true"));
  index.PutRole(MakeClusterRole("view")
                    .Label("to-edit", "true")
                    .AggregateLabel("to-view", "true")
                    .Rule(CoreRule({"get"}, {"a"})));
  index.PutRole(MakeClusterRole("leaf").Label("to-view", "true").Rule(CoreRule({"get"}, {"b"})));
  EXPECT_THAT(*index.RoleRules("", "edit"), ElementsAre(CoreRule({"get"}, {"b"})));
  index.PutRole(MakeClusterRole("view").Label("to-edit", "true").Rule(CoreRule({"get"}, {"a"})));
  EXPECT_THAT(*index.RoleRules("", "view"), ElementsAre(CoreRule({"get"}, {"a"})));
  EXPECT_THAT(*index.RoleRules("", "edit"), ElementsAre(CoreRule({"get"}, {"a"})));
}

TEST(RbacAggregationTest, ACycleEnds) {
  // a selects b and leaf-a, b selects c, c selects a: the walk ends, and each holds what the
  // cycle reaches that is not aggregated itself (leaf-a's rule).
  RbacIndex index;
  index.PutRole(MakeClusterRole("a").Label("name", "a").AggregateLabel("name", "b").AggregateLabel("leaf", "a"));
  index.PutRole(MakeClusterRole("leaf-a").Label("leaf", "a").Rule(CoreRule({"get"}, {"ra"})));
  index.PutRole(MakeClusterRole("b").Label("name", "b").AggregateLabel("name", "c").Rule(CoreRule({"get"}, {"rb"})));
  index.PutRole(MakeClusterRole("c").Label("name", "c").AggregateLabel("name", "a").Rule(CoreRule({"get"}, {"rc"})));
  const PolicyRule ra = CoreRule({"get"}, {"ra"});
  EXPECT_THAT(*index.RoleRules("", "a"), ElementsAre(ra));
  EXPECT_THAT(*index.RoleRules("", "b"), ElementsAre(ra));
  EXPECT_THAT(*index.RoleRules("", "c"), ElementsAre(ra));
}

TEST(RbacAggregationTest, ARoleSelectingItselfAddsNothing) {
  // self carries the label it selects: it selects nothing else, and its written rules are not its own.
  RbacIndex index;
  index.PutRole(MakeClusterRole("self").Label("x", "y").AggregateLabel("x", "y").Rule(CoreRule({"get"}, {"pods"})));
  EXPECT_THAT(*index.RoleRules("", "self"), IsEmpty());
}

TEST(RbacAggregationTest, AggregatedRulesAreDeduplicated) {
  // Two selected roles hold the same rule, and one role matches two selectors: the rule appears once.
  RbacIndex index;
  index.PutRole(MakeClusterRole("agg").AggregateLabel("x", "1").AggregateLabel("y", "1"));
  index.PutRole(MakeClusterRole("p").Label("x", "1").Label("y", "1").Rule(CoreRule({"get"}, {"pods"})));
  index.PutRole(
      MakeClusterRole("q").Label("x", "1").Rule(CoreRule({"get"}, {"pods"})).Rule(CoreRule({"get"}, {"nodes"})));
  EXPECT_THAT(*index.RoleRules("", "agg"), ElementsAre(CoreRule({"get"}, {"pods"}), CoreRule({"get"}, {"nodes"})));
}

TEST(RbacAggregationTest, AnEmptySelectorSelectsEveryClusterRoleButNoRole) {
  // {} selects every ClusterRole; a namespaced Role is never aggregated.
  RbacIndex index;
  index.PutRole(MakeClusterRole("all").AggregateFrom(LabelSelectorTerms{}));
  index.PutRole(MakeClusterRole("p").Rule(CoreRule({"get"}, {"pods"})));
  index.PutRole(MakeRole("team-a", "s").Rule(CoreRule({"get"}, {"secrets"})));
  EXPECT_THAT(*index.RoleRules("", "all"), ElementsAre(CoreRule({"get"}, {"pods"})));
}

TEST(RbacAggregationTest, AnAggregationRuleWithNoSelectorsSelectsNothing) {
  // aggregationRule: {clusterRoleSelectors: []}: no rules (the written ones are the aggregation's).
  RbacIndex index;
  RbacRole none = MakeClusterRole("none").Rule(CoreRule({"get"}, {"a"}));
  none.aggregation.emplace();
  index.PutRole(none);
  index.PutRole(MakeClusterRole("p").Rule(CoreRule({"get"}, {"pods"})));
  EXPECT_THAT(*index.RoleRules("", "none"), IsEmpty());
}

// ---------------------------------------------------------------------------
// UncoveredRules (rbac/validation.Covers), after policy_comparator_test.go.

TEST(RbacCoversTest, EverythingHeldCoversEverything) {
  // A "*" on verbs, groups and resources covers any resource rule.
  const std::vector<PolicyRule> owned = {MakeRule().Verbs({"*"}).Groups({"*"}).Resources({"*"})};
  EXPECT_THAT(UncoveredRules(owned,
                             std::vector<PolicyRule>{
                                 MakeRule().Verbs({"delete"}).Groups({"apps"}).Resources({"deployments/scale"})}),
              IsEmpty());
}

TEST(RbacCoversTest, AStarRequestedIsNotCoveredByAListOfEveryName) {
  // Holding every standard verb is not holding "*" (a future verb would escape).
  const std::vector<PolicyRule> owned = {
      CoreRule({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}, {"pods"})};
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{CoreRule({"*"}, {"pods"})}),
              ElementsAre(CoreRule({"*"}, {"pods"})));
  // Nor is holding every resource by name holding resources "*", or every group holding apiGroups "*".
  const std::vector<PolicyRule> by_name = {
      MakeRule().Verbs({"get"}).Groups({"", "apps"}).Resources({"pods", "deployments"})};
  EXPECT_THAT(
      UncoveredRules(by_name, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Groups({"*"}).Resources({"pods"})}),
      ElementsAre(MakeRule().Verbs({"get"}).Groups({"*"}).Resources({"pods"}).Build()));
}

TEST(RbacCoversTest, ANarrowerResourceNameIsCoveredButAWiderOneIsNot) {
  // Held: get on every configmap and on the secret "a". Asked: configmap "x" (covered),
  // secrets "a" and "b" (b is not), all secrets (not).
  const std::vector<PolicyRule> owned = {CoreRule({"get"}, {"configmaps"}),
                                         MakeRule().Verbs({"get"}).Groups({""}).Resources({"secrets"}).Names({"a"})};
  const PolicyRule named_cm = MakeRule().Verbs({"get"}).Groups({""}).Resources({"configmaps"}).Names({"x"});
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{named_cm}), IsEmpty());
  const PolicyRule two = MakeRule().Verbs({"get"}).Groups({""}).Resources({"secrets"}).Names({"a", "b"});
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{two}),
              ElementsAre(MakeRule().Verbs({"get"}).Groups({""}).Resources({"secrets"}).Names({"b"}).Build()));
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{CoreRule({"get"}, {"secrets"})}),
              ElementsAre(CoreRule({"get"}, {"secrets"})));
}

TEST(RbacCoversTest, SubresourcesAreCoveredByTheirOwnRowsNotByThePlainResource) {
  // Held: pods, */status, deployments/*. Asked pods/log: not covered by "pods"; jobs/status:
  // covered by "*/status"; deployments/scale: not by "deployments/*" (kube's resourceCoversAll).
  const std::vector<PolicyRule> owned = {
      MakeRule().Verbs({"get"}).Groups({"*"}).Resources({"pods", "*/status", "deployments/*"})};
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{CoreRule({"get"}, {"pods/log"})}),
              ElementsAre(CoreRule({"get"}, {"pods/log"})));
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Groups({"batch"}).Resources(
                                        {"jobs/status", "*/status"})}),
              IsEmpty());
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Groups({"apps"}).Resources(
                                        {"deployments/scale"})}),
              ElementsAre(MakeRule().Verbs({"get"}).Groups({"apps"}).Resources({"deployments/scale"})));
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Groups({"apps"}).Resources(
                                        {"deployments/*"})}),
              IsEmpty());
}

TEST(RbacCoversTest, ResourceSlashStarRequestedIsCoveredByTheSameTextOrStarSlashStar) {
  // kube's resourceCoversAll: "pods/*" is covered by "pods/*", "*/*" or "*", not by "*/log".
  const std::vector<PolicyRule> log_only = {MakeRule().Verbs({"get"}).Groups({""}).Resources({"*/log"})};
  EXPECT_THAT(UncoveredRules(log_only, std::vector<PolicyRule>{CoreRule({"get"}, {"pods/*"})}),
              ElementsAre(CoreRule({"get"}, {"pods/*"})));
  const std::vector<PolicyRule> every_sub = {MakeRule().Verbs({"get"}).Groups({""}).Resources({"*/*"})};
  EXPECT_THAT(UncoveredRules(every_sub, std::vector<PolicyRule>{CoreRule({"get"}, {"pods/*"})}), IsEmpty());
}

TEST(RbacCoversTest, NonResourceUrlsAreCoveredExactlyOrByAPrefix) {
  // Held: /healthz and /apis/*. Asked /apis/batch (covered), /apis/* (covered), /metrics (not).
  const std::vector<PolicyRule> owned = {MakeRule().Verbs({"get"}).Urls({"/healthz", "/apis/*"})};
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Urls(
                                        {"/healthz", "/apis/batch", "/apis/*", "/metrics"})}),
              ElementsAre(MakeRule().Verbs({"get"}).Urls({"/metrics"}).Build()));
  const std::vector<PolicyRule> all = {MakeRule().Verbs({"*"}).Urls({"*"})};
  EXPECT_THAT(UncoveredRules(all, std::vector<PolicyRule>{MakeRule().Verbs({"get", "post"}).Urls({"/anything"})}),
              IsEmpty());
}

TEST(RbacCoversTest, ResourceRulesAndUrlRulesDoNotCoverEachOther) {
  // Every resource held covers no URL; every URL held covers no resource.
  const std::vector<PolicyRule> resources = {MakeRule().Verbs({"*"}).Groups({"*"}).Resources({"*"})};
  const std::vector<PolicyRule> urls = {MakeRule().Verbs({"*"}).Urls({"*"})};
  EXPECT_THAT(UncoveredRules(resources, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Urls({"/metrics"})}),
              ElementsAre(MakeRule().Verbs({"get"}).Urls({"/metrics"}).Build()));
  EXPECT_THAT(UncoveredRules(urls, std::vector<PolicyRule>{CoreRule({"get"}, {"pods"})}),
              ElementsAre(CoreRule({"get"}, {"pods"})));
}

TEST(RbacCoversTest, ANamedRuleHeldDoesNotCoverAUrl) {
  // A URL request is covered only by a rule without resourceNames (kube's resourceNameMatches).
  const std::vector<PolicyRule> owned = {MakeRule().Verbs({"get"}).Urls({"/metrics"}).Names({"x"})};
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Urls({"/metrics"})}).size(), 1u);
}

TEST(RbacCoversTest, RequestedRulesBreakIntoAtomicRulesInOrder) {
  // {get, list} x {pods, services} against "get pods" held leaves three atomic rules,
  // group by resource by verb: list pods, get services, list services.
  const std::vector<PolicyRule> owned = {CoreRule({"get"}, {"pods"})};
  const std::vector<PolicyRule> asked = {CoreRule({"get", "list"}, {"pods", "services"}),
                                         MakeRule().Verbs({"get", "post"}).Urls({"/x"})};
  EXPECT_THAT(
      UncoveredRules(owned, asked),
      ElementsAre(CoreRule({"list"}, {"pods"}), CoreRule({"get"}, {"services"}), CoreRule({"list"}, {"services"}),
                  MakeRule().Verbs({"get"}).Urls({"/x"}).Build(), MakeRule().Verbs({"post"}).Urls({"/x"}).Build()));
}

TEST(RbacCoversTest, ARuleIsCoveredByTheUnionOfHeldRulesAtomByAtom) {
  // get pods from one held rule, list pods from another: together they cover {get, list} pods.
  const std::vector<PolicyRule> owned = {CoreRule({"get"}, {"pods"}), CoreRule({"list"}, {"pods"})};
  EXPECT_THAT(UncoveredRules(owned, std::vector<PolicyRule>{CoreRule({"get", "list"}, {"pods"})}), IsEmpty());
}

TEST(RbacCoversTest, NothingRequestedIsCovered) {
  // An empty request, or a rule without verbs, asks for nothing.
  EXPECT_THAT(UncoveredRules({}, {}), IsEmpty());
  EXPECT_THAT(UncoveredRules({}, std::vector<PolicyRule>{CoreRule({}, {"pods"})}), IsEmpty());
}

// ---------------------------------------------------------------------------
// PolicyRuleString: kube's CompactString.

TEST(RbacRuleStringTest, ResourceRuleAsKubePrintsIt) {
  // Go's %q of a []string: ["a" "b"].
  EXPECT_EQ(PolicyRuleString(MakeRule().Verbs({"create", "delete"}).Groups({"batch"}).Resources({"jobs"})),
            R"({APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "delete"]})");
}

TEST(RbacRuleStringTest, CoreGroupPrintsAsAnEmptyString) {
  EXPECT_EQ(PolicyRuleString(CoreRule({"get"}, {"pods", "pods/log"})),
            R"({APIGroups:[""], Resources:["pods" "pods/log"], Verbs:["get"]})");
}

TEST(RbacRuleStringTest, ResourceNamesComeAfterResources) {
  EXPECT_EQ(PolicyRuleString(MakeRule().Verbs({"get"}).Groups({""}).Resources({"configmaps"}).Names({"a", "b"})),
            R"({APIGroups:[""], Resources:["configmaps"], ResourceNames:["a" "b"], Verbs:["get"]})");
}

TEST(RbacRuleStringTest, NonResourceRuleAsKubePrintsIt) {
  EXPECT_EQ(PolicyRuleString(MakeRule().Verbs({"get"}).Urls({"/metrics"})),
            R"({NonResourceURLs:["/metrics"], Verbs:["get"]})");
}

TEST(RbacRuleStringTest, EmptyListsAreLeftOut) {
  // A rule holding nothing prints as {}.
  EXPECT_EQ(PolicyRuleString(PolicyRule{}), "{}");
  EXPECT_EQ(PolicyRuleString(MakeRule().Verbs({"get"})), R"({Verbs:["get"]})");
}

TEST(RbacRuleStringTest, StringsAreEscapedAsGoQuotes) {
  // Quote, backslash, newline, a control byte and an invalid UTF-8 byte escaped; é kept; NBSP as \u00a0.
  EXPECT_EQ(PolicyRuleString(MakeRule().Verbs(
                {"a\"b", "c\\d", "e\nf", std::string("g\x01h"), "caf\xc3\xa9", "x\xffy", "n\xc2\xa0o"})),
            R"({Verbs:["a\"b" "c\\d" "e\nf" "g\x01h" "café" "x\xffy" "n\u00a0o"]})");
}

// ---------------------------------------------------------------------------
// JSON conversions.

TEST(RbacJsonTest, ReadsARole) {
  // A Role with labels and two rules, as kube stores it.
  const json object = json::parse(R"({
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
    "metadata": {"namespace": "team-a", "name": "deployer", "labels": {"app": "ci"}},
    "rules": [{"apiGroups": ["apps"], "resources": ["deployments", "deployments/scale"], "verbs": ["create", "patch"]},
              {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get"]}]})");
  auto role = RbacRoleFromJson(object);
  ASSERT_TRUE(role.has_value()) << role.error().ToString();
  RbacRole want =
      MakeRole("team-a", "deployer")
          .Label("app", "ci")
          .Rule(MakeRule().Verbs({"create", "patch"}).Groups({"apps"}).Resources({"deployments", "deployments/scale"}))
          .Rule(MakeRule().Verbs({"get"}).Groups({""}).Resources({"configmaps"}).Names({"settings"}));
  EXPECT_EQ(*role, want);
}

TEST(RbacJsonTest, ReadsAnAggregatedClusterRole) {
  // An aggregationRule with matchLabels and matchExpressions, rules null (the controller fills them).
  const json object = json::parse(R"({
    "kind": "ClusterRole", "metadata": {"name": "view"},
    "aggregationRule": {"clusterRoleSelectors": [
      {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
      {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                            {"key": "legacy", "operator": "DoesNotExist"}]}]},
    "rules": null})");
  auto role = RbacRoleFromJson(object);
  ASSERT_TRUE(role.has_value()) << role.error().ToString();
  LabelSelectorTerms by_label;
  by_label.match_labels["rbac.authorization.k8s.io/aggregate-to-view"] = "true";
  LabelSelectorTerms by_expression;
  by_expression.match_expressions = {Requirement("tier", LabelRequirement::Op::kIn, {"a", "b"}),
                                     Requirement("legacy", LabelRequirement::Op::kDoesNotExist)};
  EXPECT_EQ(*role, MakeClusterRole("view").AggregateFrom(by_label).AggregateFrom(by_expression).Build());
}

TEST(RbacJsonTest, ReadsAClusterRoleWithNonResourceUrls) {
  const json object = json::parse(R"({"kind": "ClusterRole", "metadata": {"name": "m"},
    "rules": [{"nonResourceURLs": ["/metrics", "/healthz*"], "verbs": ["get"]}]})");
  auto role = RbacRoleFromJson(object);
  ASSERT_TRUE(role.has_value()) << role.error().ToString();
  EXPECT_EQ(role->rules, std::vector<PolicyRule>{MakeRule().Verbs({"get"}).Urls({"/metrics", "/healthz*"})});
  EXPECT_FALSE(role->aggregation.has_value());
}

TEST(RbacJsonTest, ReadsARoleBinding) {
  // The three subject kinds; a ServiceAccount with and without a namespace.
  const json object = json::parse(R"({
    "kind": "RoleBinding", "metadata": {"namespace": "team-a", "name": "devs"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
    "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                 {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"},
                 {"kind": "ServiceAccount", "name": "ci", "namespace": "tools"},
                 {"kind": "ServiceAccount", "name": "default"}]})");
  auto binding = RbacBindingFromJson(object);
  ASSERT_TRUE(binding.has_value()) << binding.error().ToString();
  EXPECT_EQ(*binding, MakeRoleBinding("team-a", "devs")
                          .ToRole("deployer")
                          .User("alice")
                          .Group("devs")
                          .ServiceAccount("ci", "tools")
                          .ServiceAccount("default")
                          .Build());
}

TEST(RbacJsonTest, ReadsAClusterRoleBindingWithoutSubjects) {
  const json object = json::parse(R"({"kind": "ClusterRoleBinding", "metadata": {"name": "nobody"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}})");
  auto binding = RbacBindingFromJson(object);
  ASSERT_TRUE(binding.has_value()) << binding.error().ToString();
  EXPECT_EQ(*binding, MakeClusterRoleBinding("nobody").ToClusterRole("view").Build());
}

TEST(RbacJsonTest, PolicyRulesRoundTrip) {
  // Encode, decode, encode: the same rules and the same bytes; verbs always present, other lists only when set.
  const std::vector<PolicyRule> rules = {MakeRule().Verbs({"get"}).Groups({""}).Resources({"pods"}).Names({"p"}),
                                         MakeRule().Verbs({"get"}).Urls({"/metrics"}), PolicyRule{}};
  const json encoded = PolicyRulesToJson(rules);
  EXPECT_EQ(encoded,
            json::parse(R"([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]},
                                     {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}, {"verbs": []}])"));
  auto decoded = PolicyRulesFromJson(encoded);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, rules);
  EXPECT_EQ(PolicyRulesToJson(*decoded).dump(), encoded.dump());
}

TEST(RbacJsonTest, PolicyRulesFromJsonNamesTheBadField) {
  auto r = PolicyRulesFromJson(json::parse(R"([{"verbs": ["get"]}, {"verbs": ["get", 3]}])"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("rules[1].verbs[1]: must be a string, not number"));
  EXPECT_FALSE(PolicyRulesFromJson(json::parse(R"({"verbs": []})")).has_value());  // not a list
}

// A malformed object: a valid one with one field replaced (or removed), and
// the field its error must name.
struct MalformedCase {
  const char* name;
  const char* base;     // "Role", "ClusterRole", "RoleBinding" or "ClusterRoleBinding"
  const char* pointer;  // JSON pointer of the field; "" for the whole object
  const char* value;    // the field's new value as JSON; nullptr: removed
  const char* message;  // a substring of the error
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

json ValidObject(std::string_view kind) {
  const json rules =
      json::parse(R"([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]},
                                     {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}])");
  const json subjects = json::parse(R"([{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                                        {"kind": "ServiceAccount", "name": "ci", "namespace": "tools"}])");
  const json role_ref =
      json::parse(R"({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"})");
  if (kind == "Role") {
    return {{"kind", "Role"}, {"metadata", {{"name", "x"}, {"namespace", "n"}}}, {"rules", rules}};
  }
  if (kind == "ClusterRole") {
    return {{"kind", "ClusterRole"},
            {"metadata", {{"name", "x"}, {"labels", {{"a", "b"}}}}},
            {"rules", rules},
            {"aggregationRule", json::parse(R"({"clusterRoleSelectors": [{"matchLabels": {"a": "b"},
                "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]})")}};
  }
  if (kind == "RoleBinding") {
    return {{"kind", "RoleBinding"},
            {"metadata", {{"name", "b"}, {"namespace", "n"}}},
            {"roleRef", role_ref},
            {"subjects", subjects}};
  }
  return {{"kind", "ClusterRoleBinding"}, {"metadata", {{"name", "b"}}}, {"roleRef", role_ref}, {"subjects", subjects}};
}

json Malformed(const MalformedCase& c) {
  json object = ValidObject(c.base);
  const json::json_pointer pointer(c.pointer);
  if (c.value == nullptr) {
    object.at(pointer.parent_pointer()).erase(pointer.back());
  } else {
    object[pointer] = json::parse(c.value);
  }
  return object;
}

TEST(RbacJsonTest, TheValidObjectsOfTheMalformedCasesAreValid) {
  // So each malformed case below fails for its one field only.
  EXPECT_TRUE(RbacRoleFromJson(ValidObject("Role")).has_value());
  EXPECT_TRUE(RbacRoleFromJson(ValidObject("ClusterRole")).has_value());
  EXPECT_TRUE(RbacBindingFromJson(ValidObject("RoleBinding")).has_value());
  EXPECT_TRUE(RbacBindingFromJson(ValidObject("ClusterRoleBinding")).has_value());
}

class RbacMalformedObjectTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(RbacMalformedObjectTest, IsAnInvalidArgumentNamingTheField) {
  const MalformedCase& c = GetParam();
  const json object = Malformed(c);
  const bool role = std::string_view(c.base).ends_with("Role");
  Status error;
  if (role) {
    if (auto r = RbacRoleFromJson(object); !r) error = r.error();
  } else {
    if (auto b = RbacBindingFromJson(object); !b) error = b.error();
  }
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument) << object.dump();
  EXPECT_THAT(error.message(), HasSubstr(c.message)) << object.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Roles, RbacMalformedObjectTest,
    ::testing::Values(
        MalformedCase{"NotAnObject", "Role", "", "[]", "object: must be an object, not array"},
        MalformedCase{"NoKind", "Role", "/kind", nullptr, "kind: is required"},
        MalformedCase{"WrongKind", "Role", "/kind", R"("RoleBinding")", "kind: must be Role or ClusterRole"},
        MalformedCase{"KindNotString", "Role", "/kind", "1", "kind: must be a string, not number"},
        MalformedCase{"NoMetadata", "Role", "/metadata", nullptr, "metadata: is required"},
        MalformedCase{"MetadataNotObject", "Role", "/metadata", R"("x")", "metadata: must be an object"},
        MalformedCase{"NoName", "ClusterRole", "/metadata/name", nullptr, "metadata.name: is required"},
        MalformedCase{"EmptyName", "ClusterRole", "/metadata/name", R"("")", "metadata.name: must not be empty"},
        MalformedCase{"NameNotString", "ClusterRole", "/metadata/name", "7", "metadata.name: must be a string"},
        MalformedCase{"RoleWithoutNamespace", "Role", "/metadata/namespace", nullptr,
                      "metadata.namespace: is required"},
        MalformedCase{"NamespaceNotString", "Role", "/metadata/namespace", "[]",
                      "metadata.namespace: must be a string"},
        MalformedCase{"LabelsNotObject", "ClusterRole", "/metadata/labels", "[]",
                      "metadata.labels: must be an object of strings"},
        MalformedCase{"LabelNotString", "ClusterRole", "/metadata/labels/a", "true",
                      "metadata.labels.a: must be a string, not boolean"},
        MalformedCase{"RulesNotList", "ClusterRole", "/rules", "{}", "ClusterRole x: rules: must be a list"},
        MalformedCase{"RuleNotObject", "ClusterRole", "/rules/0", R"("get")",
                      "rules[0]: must be an object, not string"},
        MalformedCase{"VerbsNotList", "Role", "/rules/0/verbs", R"("get")",
                      "Role n/x: rules[0].verbs: must be a list of strings"},
        MalformedCase{"VerbNotString", "Role", "/rules/0/verbs/0", "null",
                      "rules[0].verbs[0]: must be a string, not null"},
        MalformedCase{"ApiGroupNotString", "Role", "/rules/0/apiGroups/0", "1",
                      "rules[0].apiGroups[0]: must be a string"},
        MalformedCase{"ResourcesNotList", "Role", "/rules/0/resources", R"("pods")",
                      "rules[0].resources: must be a list of strings"},
        MalformedCase{"ResourceNameNotString", "Role", "/rules/0/resourceNames/0", "{}",
                      "rules[0].resourceNames[0]: must be a string, not object"},
        MalformedCase{"UrlNotString", "ClusterRole", "/rules/1/nonResourceURLs/0", "2",
                      "rules[1].nonResourceURLs[0]: must be a string"},
        MalformedCase{"AggregationOnARole", "Role", "/aggregationRule", "{}",
                      "aggregationRule: only a ClusterRole aggregates"},
        MalformedCase{"AggregationNotObject", "ClusterRole", "/aggregationRule", "[]",
                      "aggregationRule: must be an object"},
        MalformedCase{"SelectorsNotList", "ClusterRole", "/aggregationRule/clusterRoleSelectors", "{}",
                      "aggregationRule.clusterRoleSelectors: must be a list"},
        MalformedCase{"SelectorNotObject", "ClusterRole", "/aggregationRule/clusterRoleSelectors/0", "1",
                      "aggregationRule.clusterRoleSelectors[0]: must be an object"},
        MalformedCase{"MatchLabelsNotObject", "ClusterRole", "/aggregationRule/clusterRoleSelectors/0/matchLabels",
                      "[]", "aggregationRule.clusterRoleSelectors[0].matchLabels: must be an object of strings"},
        MalformedCase{"MatchLabelNotString", "ClusterRole", "/aggregationRule/clusterRoleSelectors/0/matchLabels/a",
                      "1", "aggregationRule.clusterRoleSelectors[0].matchLabels.a: must be a string"},
        MalformedCase{"MatchExpressionsNotList", "ClusterRole",
                      "/aggregationRule/clusterRoleSelectors/0/matchExpressions", "{}",
                      "aggregationRule.clusterRoleSelectors[0].matchExpressions: must be a list"},
        MalformedCase{"ExpressionWithoutKey", "ClusterRole",
                      "/aggregationRule/clusterRoleSelectors/0/matchExpressions/0/key", nullptr,
                      "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].key: is required"},
        MalformedCase{"UnknownOperator", "ClusterRole",
                      "/aggregationRule/clusterRoleSelectors/0/matchExpressions/0/operator", R"("Gt")",
                      "matchExpressions[0].operator: must be In, NotIn, Exists or DoesNotExist, not \"Gt\""},
        MalformedCase{"InWithoutValues", "ClusterRole",
                      "/aggregationRule/clusterRoleSelectors/0/matchExpressions/0/values", nullptr,
                      "matchExpressions[0].values: must not be empty for operator In"},
        MalformedCase{"ExistsWithValues", "ClusterRole", "/aggregationRule/clusterRoleSelectors/0/matchExpressions/0",
                      R"({"key": "a", "operator": "Exists", "values": ["v"]})",
                      "matchExpressions[0].values: must be empty for operator Exists"},
        MalformedCase{"ValueNotString", "ClusterRole",
                      "/aggregationRule/clusterRoleSelectors/0/matchExpressions/0/values/0", "1",
                      "matchExpressions[0].values[0]: must be a string"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Bindings, RbacMalformedObjectTest,
    ::testing::Values(
        MalformedCase{"WrongKind", "RoleBinding", "/kind", R"("Role")",
                      "kind: must be RoleBinding or ClusterRoleBinding, not \"Role\""},
        MalformedCase{"RoleBindingWithoutNamespace", "RoleBinding", "/metadata/namespace", nullptr,
                      "metadata.namespace: is required"},
        MalformedCase{"NoRoleRef", "RoleBinding", "/roleRef", nullptr, "RoleBinding n/b: roleRef: is required"},
        MalformedCase{"RoleRefNotObject", "RoleBinding", "/roleRef", R"("view")",
                      "roleRef: must be an object, not string"},
        MalformedCase{"RoleRefWithoutKind", "RoleBinding", "/roleRef/kind", nullptr, "roleRef.kind: is required"},
        MalformedCase{"RoleRefKindUnknown", "RoleBinding", "/roleRef/kind", R"("Group")",
                      "roleRef.kind: must be Role or ClusterRole, not \"Group\""},
        MalformedCase{"ClusterRoleBindingToARole", "ClusterRoleBinding", "/roleRef/kind", R"("Role")",
                      "ClusterRoleBinding b: roleRef.kind: must be ClusterRole, not \"Role\""},
        MalformedCase{"RoleRefWithoutName", "RoleBinding", "/roleRef/name", nullptr, "roleRef.name: is required"},
        MalformedCase{"RoleRefNameNotString", "RoleBinding", "/roleRef/name", "1",
                      "roleRef.name: must be a string, not number"},
        MalformedCase{"RoleRefOtherApiGroup", "RoleBinding", "/roleRef/apiGroup", R"("x.io")",
                      "roleRef.apiGroup: must be \"rbac.authorization.k8s.io\", not \"x.io\""},
        MalformedCase{"SubjectsNotList", "RoleBinding", "/subjects", "{}", "subjects: must be a list"},
        MalformedCase{"SubjectNotObject", "ClusterRoleBinding", "/subjects/0", R"("alice")",
                      "subjects[0]: must be an object, not string"},
        MalformedCase{"SubjectWithoutKind", "RoleBinding", "/subjects/0/kind", nullptr,
                      "subjects[0].kind: is required"},
        MalformedCase{"SubjectKindUnknown", "RoleBinding", "/subjects/0/kind", R"("Robot")",
                      "subjects[0].kind: must be User, Group or ServiceAccount, not \"Robot\""},
        MalformedCase{"SubjectWithoutName", "RoleBinding", "/subjects/1/name", nullptr,
                      "subjects[1].name: is required"},
        MalformedCase{"SubjectNamespaceNotString", "RoleBinding", "/subjects/1/namespace", "1",
                      "subjects[1].namespace: must be a string"},
        MalformedCase{"SubjectApiGroupNotString", "RoleBinding", "/subjects/0/apiGroup", "[]",
                      "subjects[0].apiGroup: must be a string"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------
// Concurrency.

TEST(RbacConcurrencyTest, ReadersGetConsistentAnswersWhileAWriterChangesBindings) {
  // alice's binding never changes, so she is always allowed; bob's is added and removed in a
  // loop (with role updates and relists in between), so he may be either; once the writer
  // stops with bob's binding in place, every reader sees him allowed.
  RbacIndex index;
  index.PutRole(MakeClusterRole("pod-reader").Rule(CoreRule({"get"}, {"pods"})));
  index.PutBinding(MakeRoleBinding("team-a", "alice").ToClusterRole("pod-reader").User("alice"));
  const UserInfo alice = MakeUser("alice", {"system:authenticated"});
  const UserInfo bob = MakeUser("bob", {"system:authenticated"});
  const RbacAttributes ask = AskCore("get", "pods", "team-a");

  std::atomic<bool> stop{false};
  std::atomic<int> alice_denied{0};
  std::atomic<int> started{0};
  std::vector<std::thread> readers;
  constexpr int kReaders = 3;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&] {
      bool first = true;
      while (!stop.load(std::memory_order_relaxed)) {
        if (!index.Allowed(alice, ask)) alice_denied.fetch_add(1);
        (void)index.Allowed(bob, ask);
        (void)index.RulesFor(bob, "team-a");
        if (std::exchange(first, false)) started.fetch_add(1);
        // Readers that never pause starve the writer (glibc's rwlock prefers
        // readers); requests in a server do pause between decisions.
        std::this_thread::yield();
      }
    });
  }
  // Every reader is deciding before the writer starts (on a loaded machine a
  // thread may otherwise start only after the writer is done).
  while (started.load() < kReaders) std::this_thread::yield();
  for (int i = 0; i < 400; ++i) {
    index.PutBinding(MakeRoleBinding("team-a", "bob").ToClusterRole("pod-reader").User("bob"));
    EXPECT_TRUE(index.Allowed(bob, ask));  // the writer reads its own change at once
    index.PutRole(MakeClusterRole("pod-reader").Rule(CoreRule({"get"}, {"pods"})).Label("i", std::to_string(i % 7)));
    index.RemoveBinding("team-a", "bob");
    EXPECT_FALSE(index.Allowed(bob, ask));
    if (i % 100 == 0) {
      index.Reset({MakeClusterRole("pod-reader").Rule(CoreRule({"get"}, {"pods"}))},
                  {MakeRoleBinding("team-a", "alice").ToClusterRole("pod-reader").User("alice")});
    }
  }
  index.PutBinding(MakeRoleBinding("team-a", "bob").ToClusterRole("pod-reader").User("bob"));
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(alice_denied.load(), 0);
  std::vector<std::thread> checkers;
  std::atomic<int> bob_denied{0};
  for (int t = 0; t < 3; ++t) {
    checkers.emplace_back([&] {
      if (!index.Allowed(bob, ask)) bob_denied.fetch_add(1);
    });
  }
  for (std::thread& t : checkers) t.join();
  EXPECT_EQ(bob_denied.load(), 0);
}

}  // namespace
}  // namespace tessera
