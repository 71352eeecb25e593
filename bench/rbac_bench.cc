// RBAC decisions from the index by subject (DESIGN.md section 10: at most 2 us
// a decision with 10,000 RoleBindings).
//
// The cluster: 1,000 namespaces with 10 RoleBindings each (10,000 in all) and
// 50 ClusterRoleBindings. Roles as kube ships them, in size: edit and view
// (~20 rules each), admin aggregating edit plus its own rules, a per-namespace
// Role "ci-runner", and the cluster-wide discovery, basic-user, node and
// cluster-admin roles. Each namespace binds its owner (admin), four developers
// (edit), its team group (edit), its viewers group (view), its ci
// ServiceAccount (the Role), the monitoring ServiceAccount (view: one subject
// bound in every namespace) and the auditors group (view: one group bound in
// every namespace).
//
// The cases, one decision per iteration:
//   allowed: a developer creating a deployment in their namespace;
//   denied:  the same developer in another namespace (every binding of the
//            user and of system:authenticated is looked at, none grants);
//   groups:  a user in 5 groups (system:authenticated, auditors, a viewers
//            group, two team groups) updating a deployment, allowed through
//            the last group only after the others' bindings are tried.
//
// Ends with one BENCH line per case (CPU ns per decision) and
// `BENCH rbac_decision_ns <median of the cases> ns`. Run: build/bench/rbac_bench [--benchmark_min_time=0.5]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "auth/rbac.h"

namespace tessera {
namespace {

constexpr int kNamespaces = 1000;
constexpr int kClusterRoleBindings = 50;

PolicyRule Rule(std::vector<std::string> groups, std::vector<std::string> resources, std::vector<std::string> verbs) {
  PolicyRule r;
  r.api_groups = std::move(groups);
  r.resources = std::move(resources);
  r.verbs = std::move(verbs);
  return r;
}

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kWrite = {"create", "delete", "deletecollection", "patch", "update"};

std::vector<std::string> ReadWrite() {
  std::vector<std::string> v = kRead;
  v.insert(v.end(), kWrite.begin(), kWrite.end());
  return v;
}

// kube's view, in substance: 20 read rules.
std::vector<PolicyRule> ViewRules() {
  return {
      Rule({""}, {"pods", "pods/log", "pods/status"}, kRead),
      Rule({""}, {"services", "services/status", "endpoints"}, kRead),
      Rule({""}, {"configmaps"}, kRead),
      Rule({""}, {"persistentvolumeclaims", "persistentvolumeclaims/status"}, kRead),
      Rule({""}, {"replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status"}, kRead),
      Rule({""}, {"serviceaccounts"}, kRead),
      Rule({""}, {"bindings", "events", "limitranges", "namespaces/status", "resourcequotas"}, kRead),
      Rule({""}, {"namespaces"}, kRead),
      Rule({"discovery.k8s.io"}, {"endpointslices"}, kRead),
      Rule({"apps"}, {"controllerrevisions", "daemonsets", "daemonsets/status"}, kRead),
      Rule({"apps"}, {"deployments", "deployments/scale", "deployments/status"}, kRead),
      Rule({"apps"}, {"replicasets", "replicasets/scale", "replicasets/status"}, kRead),
      Rule({"apps"}, {"statefulsets", "statefulsets/scale", "statefulsets/status"}, kRead),
      Rule({"autoscaling"}, {"horizontalpodautoscalers", "horizontalpodautoscalers/status"}, kRead),
      Rule({"batch"}, {"cronjobs", "cronjobs/status", "jobs", "jobs/status"}, kRead),
      Rule({"extensions"}, {"daemonsets", "deployments", "ingresses", "networkpolicies", "replicasets"}, kRead),
      Rule({"policy"}, {"poddisruptionbudgets", "poddisruptionbudgets/status"}, kRead),
      Rule({"networking.k8s.io"}, {"ingresses", "ingresses/status", "networkpolicies"}, kRead),
      Rule({"tessera.dev"}, {"queues", "workloads", "workloads/status"}, kRead),
      Rule({"kueue.x-k8s.io"}, {"localqueues", "workloads"}, kRead),
  };
}

// kube's edit, in substance: 20 write rules (the read ones come through view).
std::vector<PolicyRule> EditRules() {
  return {
      Rule({""}, {"pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"}, kRead),
      Rule({""}, {"serviceaccounts"}, {"impersonate"}),
      Rule({""}, {"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"}, kWrite),
      Rule({""}, {"pods/eviction"}, {"create"}),
      Rule({""}, {"configmaps", "events", "persistentvolumeclaims", "replicationcontrollers"}, kWrite),
      Rule({""}, {"replicationcontrollers/scale", "secrets", "serviceaccounts", "services"}, kWrite),
      Rule({""}, {"services/proxy", "endpoints"}, kWrite),
      Rule({""}, {"serviceaccounts/token"}, {"create"}),
      Rule({"apps"}, {"daemonsets", "deployments", "deployments/rollback", "deployments/scale"}, kWrite),
      Rule({"apps"}, {"replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"}, kWrite),
      Rule({"autoscaling"}, {"horizontalpodautoscalers"}, kWrite),
      Rule({"batch"}, {"cronjobs", "jobs"}, kWrite),
      Rule({"extensions"}, {"daemonsets", "deployments", "deployments/rollback", "deployments/scale"}, kWrite),
      Rule({"extensions"}, {"ingresses", "networkpolicies", "replicasets", "replicasets/scale"}, kWrite),
      Rule({"policy"}, {"poddisruptionbudgets"}, kWrite),
      Rule({"networking.k8s.io"}, {"ingresses", "networkpolicies"}, kWrite),
      Rule({"coordination.k8s.io"}, {"leases"}, ReadWrite()),
      Rule({"discovery.k8s.io"}, {"endpointslices"}, kWrite),
      Rule({"tessera.dev"}, {"workloads"}, kWrite),
      Rule({"kueue.x-k8s.io"}, {"workloads"}, kWrite),
  };
}

RbacRole ClusterRole(std::string name, std::vector<PolicyRule> rules, std::map<std::string, std::string> labels = {}) {
  RbacRole r;
  r.name = std::move(name);
  r.rules = std::move(rules);
  r.labels = std::move(labels);
  return r;
}

RbacSubject Subject(RbacSubject::Kind kind, std::string name, std::string ns = "") {
  return RbacSubject{kind, std::move(name), std::move(ns)};
}

RbacBinding Binding(std::string ns, std::string name, bool cluster_role, std::string role,
                    std::vector<RbacSubject> subjects) {
  RbacBinding b;
  b.ns = std::move(ns);
  b.name = std::move(name);
  b.role_is_cluster_role = cluster_role;
  b.role_name = std::move(role);
  b.subjects = std::move(subjects);
  return b;
}

std::string Ns(int i) { return fmt::format("ns-{}", i); }

// The index, built once per process (Google Benchmark calls each function
// several times to size its iteration count).
const RbacIndex& Cluster() {
  static RbacIndex* index = [] {
    std::vector<RbacRole> roles;
    const std::map<std::string, std::string> to_admin = {{"rbac.authorization.k8s.io/aggregate-to-admin", "true"}};
    const std::map<std::string, std::string> to_edit = {{"rbac.authorization.k8s.io/aggregate-to-edit", "true"}};
    // As kube ships them: edit aggregates view and system:aggregate-to-edit (its
    // write rules), admin aggregates edit and system:aggregate-to-admin; an
    // aggregated role's own rules are the aggregation's, so none are given here.
    RbacRole view = ClusterRole("view", ViewRules(), to_edit);
    RbacRole edit_rules = ClusterRole("system:aggregate-to-edit", EditRules(), to_edit);
    RbacRole edit = ClusterRole("edit", {}, to_admin);
    edit.aggregation.emplace();
    edit.aggregation->push_back(LabelSelectorTerms{.match_labels = to_edit});
    RbacRole admin_rules =
        ClusterRole("system:aggregate-to-admin",
                    {Rule({"rbac.authorization.k8s.io"}, {"roles", "rolebindings"}, ReadWrite()),
                     Rule({"authorization.k8s.io"}, {"localsubjectaccessreviews"}, {"create"})},
                    to_admin);
    RbacRole admin = ClusterRole("admin", {});
    admin.aggregation.emplace();
    admin.aggregation->push_back(LabelSelectorTerms{.match_labels = to_admin});
    roles.push_back(std::move(view));
    roles.push_back(std::move(edit_rules));
    roles.push_back(std::move(edit));
    roles.push_back(std::move(admin_rules));
    roles.push_back(std::move(admin));
    roles.push_back(ClusterRole("cluster-admin", {Rule({"*"}, {"*"}, {"*"}), [] {
                                                    PolicyRule urls;
                                                    urls.verbs = {"*"};
                                                    urls.non_resource_urls = {"*"};
                                                    return urls;
                                                  }()}));
    PolicyRule discovery;
    discovery.verbs = {"get"};
    discovery.non_resource_urls = {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version"};
    roles.push_back(ClusterRole("system:discovery", {discovery}));
    roles.push_back(ClusterRole(
        "system:basic-user",
        {Rule({"authorization.k8s.io"}, {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, {"create"}),
         Rule({"authentication.k8s.io"}, {"selfsubjectreviews"}, {"create"})}));
    roles.push_back(ClusterRole("system:node", {Rule({""}, {"nodes", "nodes/status"}, ReadWrite()),
                                                Rule({""}, {"pods", "pods/status"}, ReadWrite()),
                                                Rule({"coordination.k8s.io"}, {"leases"}, ReadWrite())}));
    for (int i = 0; i < kNamespaces; ++i) {
      RbacRole ci;
      ci.ns = Ns(i);
      ci.name = "ci-runner";
      ci.rules = {Rule({"batch"}, {"jobs"}, ReadWrite()), Rule({""}, {"configmaps", "secrets"}, kRead),
                  Rule({""}, {"pods", "pods/log"}, kRead), Rule({"tessera.dev"}, {"workloads"}, ReadWrite())};
      roles.push_back(std::move(ci));
    }

    using K = RbacSubject::Kind;
    std::vector<RbacBinding> bindings;
    for (int i = 0; i < kNamespaces; ++i) {
      const std::string ns = Ns(i);
      bindings.push_back(Binding(ns, "owner", true, "admin", {Subject(K::kUser, fmt::format("owner-{}", i))}));
      for (int k = 1; k <= 4; ++k) {
        bindings.push_back(
            Binding(ns, fmt::format("dev-{}", k), true, "edit", {Subject(K::kUser, fmt::format("dev-{}-{}", i, k))}));
      }
      bindings.push_back(Binding(ns, "team", true, "edit", {Subject(K::kGroup, fmt::format("team-{}", i))}));
      bindings.push_back(Binding(ns, "viewers", true, "view", {Subject(K::kGroup, fmt::format("viewers-{}", i))}));
      bindings.push_back(Binding(ns, "ci", false, "ci-runner", {Subject(K::kServiceAccount, "builder")}));
      bindings.push_back(
          Binding(ns, "monitoring", true, "view", {Subject(K::kServiceAccount, "prometheus", "monitoring")}));
      bindings.push_back(Binding(ns, "auditors", true, "view", {Subject(K::kGroup, "auditors")}));
    }
    bindings.push_back(Binding("", "cluster-admin", true, "cluster-admin", {Subject(K::kGroup, "system:masters")}));
    bindings.push_back(
        Binding("", "system:discovery", true, "system:discovery", {Subject(K::kGroup, "system:authenticated")}));
    bindings.push_back(
        Binding("", "system:basic-user", true, "system:basic-user", {Subject(K::kGroup, "system:authenticated")}));
    for (int n = 0; bindings.size() < size_t{kNamespaces * 10 + kClusterRoleBindings}; ++n) {
      bindings.push_back(Binding("", fmt::format("system:node:n-{}", n), true, "system:node",
                                 {Subject(K::kUser, fmt::format("system:node:n-{}", n))}));
    }
    auto* built = new RbacIndex();
    built->Reset(std::move(roles), std::move(bindings));
    return built;
  }();
  return *index;
}

UserInfo User(std::string name, std::vector<std::string> groups) {
  UserInfo u;
  u.name = std::move(name);
  u.groups = std::move(groups);
  return u;
}

void Decide(benchmark::State& state, const UserInfo& user, const RbacAttributes& ask, bool want) {
  const RbacIndex& index = Cluster();
  if (index.Allowed(user, ask) != want) {
    state.SkipWithError("the decision is not the expected one");
    return;
  }
  for (auto _ : state) {
    bool allowed = index.Allowed(user, ask);
    benchmark::DoNotOptimize(allowed);
  }
  state.counters["bindings"] = static_cast<double>(index.bindings());
}

RbacAttributes Deployments(std::string_view verb, std::string_view ns) {
  RbacAttributes a;
  a.verb = verb;
  a.api_group = "apps";
  a.resource = "deployments";
  a.ns = ns;
  return a;
}

void BM_RbacAllowedInOwnNamespace(benchmark::State& state) {
  Decide(state, User("dev-42-1", {"system:authenticated"}), Deployments("create", "ns-42"), true);
}
BENCHMARK(BM_RbacAllowedInOwnNamespace)->Unit(benchmark::kNanosecond);

void BM_RbacDeniedInOtherNamespace(benchmark::State& state) {
  Decide(state, User("dev-42-1", {"system:authenticated"}), Deployments("create", "ns-43"), false);
}
BENCHMARK(BM_RbacDeniedInOtherNamespace)->Unit(benchmark::kNanosecond);

void BM_RbacUserInFiveGroups(benchmark::State& state) {
  Decide(state, User("carol", {"system:authenticated", "auditors", "viewers-17", "team-99", "team-42"}),
         Deployments("update", "ns-42"), true);
}
BENCHMARK(BM_RbacUserInFiveGroups)->Unit(benchmark::kNanosecond);

// Prints as the console reporter does, and keeps each benchmark's CPU time per
// iteration (in ns, the unit every benchmark above reports in). CPU rather than
// wall time: a decision runs on one thread without waiting, and on a shared
// 2-core machine the wall time also counts the time other tenants held the core.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      if (run.error_occurred) {
        failed_ = true;
      } else {
        ns_[run.run_name.function_name].push_back(run.GetAdjustedCPUTime());
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // The median over the repetitions of `name`; negative when it did not run.
  double Ns(const std::string& name) const {
    auto it = ns_.find(name);
    if (it == ns_.end() || it->second.empty()) return -1;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  bool failed() const { return failed_; }

 private:
  std::map<std::string, std::vector<double>> ns_;
  bool failed_ = false;
};

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tessera::RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  const std::pair<const char*, const char*> cases[] = {
      {"rbac_decision_allowed_ns", "BM_RbacAllowedInOwnNamespace"},
      {"rbac_decision_denied_ns", "BM_RbacDeniedInOtherNamespace"},
      {"rbac_decision_groups_ns", "BM_RbacUserInFiveGroups"},
  };
  std::vector<double> measured;
  for (const auto& [line, benchmark_name] : cases) {
    const double ns = reporter.Ns(benchmark_name);
    if (ns < 0) continue;  // filtered out, or failed
    measured.push_back(ns);
    std::printf("BENCH %s %.1f ns\n", line, ns);
  }
  if (measured.empty()) {
    std::fprintf(stderr, "rbac_bench: no decision was measured\n");
    return 1;
  }
  std::sort(measured.begin(), measured.end());
  const size_t n = measured.size();
  const double median = n % 2 == 1 ? measured[n / 2] : (measured[n / 2 - 1] + measured[n / 2]) / 2;
  std::printf("BENCH rbac_decision_ns %.1f ns\n", median);
  return reporter.failed() ? 1 : 0;
}
