#include "api/kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/kind_definition.h"
#include "api/role_grants.h"

namespace tessera {
namespace {

// A manifest names its kind by apiVersion and kind; core kinds use "v1".
TEST(KindsTest, FindsCoreKindByApiVersionAndKind) {
  const KindInfo* pod = FindKindByApiVersion("v1", "Pod");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->group, "");
  EXPECT_EQ(pod->plural, "pods");
  EXPECT_TRUE(pod->namespaced);
  EXPECT_EQ(pod->store_key, "/Pod");
}

// Group kinds carry their group in the apiVersion and in the store key.
TEST(KindsTest, FindsGroupKindByApiVersionAndKind) {
  const KindInfo* cq = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ClusterQueue");
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->group, "kueue.x-k8s.io");
  EXPECT_EQ(cq->version, "v1beta1");
  EXPECT_FALSE(cq->namespaced);
  EXPECT_EQ(cq->store_key, "kueue.x-k8s.io/ClusterQueue");
}

// batch/v1 Job and Volcano's Job share the Kind "Job"; the apiVersion tells them apart.
TEST(KindsTest, ApiVersionSeparatesBatchJobFromVolcanoJob) {
  const KindInfo* batch = FindKindByApiVersion("batch/v1", "Job");
  const KindInfo* volcano = FindKindByApiVersion("batch.volcano.sh/v1alpha1", "Job");
  ASSERT_NE(batch, nullptr);
  ASSERT_NE(volcano, nullptr);
  EXPECT_NE(batch, volcano);
  EXPECT_EQ(batch->store_key, "batch/Job");
  EXPECT_EQ(volcano->store_key, "batch.volcano.sh/Job");
}

// Kind comparison is exact, as in Kubernetes; unknown pairs give nullptr.
TEST(KindsTest, UnknownApiVersionOrKindIsNotFound) {
  EXPECT_EQ(FindKindByApiVersion("v1", "pod"), nullptr);
  EXPECT_EQ(FindKindByApiVersion("v2", "Pod"), nullptr);
  EXPECT_EQ(FindKindByApiVersion("kueue.x-k8s.io/v1alpha1", "ClusterQueue"), nullptr);
  EXPECT_EQ(FindKindByApiVersion("v1", "Deployment"), nullptr);
}

// /api/v1/namespaces/ns/pods and /apis/{group}/{version}/{plural} resolve by group, version, plural.
TEST(KindsTest, FindsKindByUrlPathParts) {
  EXPECT_EQ(FindKindByResource("", "v1", "pods"), FindKindByApiVersion("v1", "Pod"));
  EXPECT_EQ(FindKindByResource("", "v1", "resourcequotas"), FindKindByApiVersion("v1", "ResourceQuota"));
  EXPECT_EQ(FindKindByResource("kueue.x-k8s.io", "v1beta1", "clusterqueues"),
            FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ClusterQueue"));
  EXPECT_EQ(FindKindByResource("batch.volcano.sh", "v1alpha1", "jobs"),
            FindKindByApiVersion("batch.volcano.sh/v1alpha1", "Job"));
  EXPECT_EQ(FindKindByResource("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
            FindKindByApiVersion("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"));
}

// A URL with a wrong version or an unknown plural serves nothing.
TEST(KindsTest, UnknownUrlPathPartsAreNotFound) {
  EXPECT_EQ(FindKindByResource("", "v1", "pod"), nullptr);       // singular
  EXPECT_EQ(FindKindByResource("", "v2", "pods"), nullptr);
  EXPECT_EQ(FindKindByResource("batch", "v1", "cronjobs"), nullptr);
}

// kubectl's short names work from the CLI.
TEST(KindsTest, CliShortNames) {
  EXPECT_EQ(FindKindByCliName("ns")->kind, "Namespace");
  EXPECT_EQ(FindKindByCliName("quota")->kind, "ResourceQuota");
  EXPECT_EQ(FindKindByCliName("po")->kind, "Pod");
  EXPECT_EQ(FindKindByCliName("no")->kind, "Node");
  EXPECT_EQ(FindKindByCliName("pc")->kind, "PriorityClass");
  EXPECT_EQ(FindKindByCliName("netpol")->kind, "NetworkPolicy");
  EXPECT_EQ(FindKindByCliName("cq")->kind, "ClusterQueue");
  EXPECT_EQ(FindKindByCliName("lq")->kind, "LocalQueue");
  EXPECT_EQ(FindKindByCliName("wl")->kind, "Workload");
  EXPECT_EQ(FindKindByCliName("rf")->kind, "ResourceFlavor");
  EXPECT_EQ(FindKindByCliName("vcjob")->group, "batch.volcano.sh");
}

// Plural, singular and Kind all resolve, in any case.
TEST(KindsTest, CliPluralSingularAndKindIgnoreCase) {
  const KindInfo* cq = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ClusterQueue");
  EXPECT_EQ(FindKindByCliName("clusterqueues"), cq);
  EXPECT_EQ(FindKindByCliName("clusterqueue"), cq);
  EXPECT_EQ(FindKindByCliName("ClusterQueue"), cq);
  EXPECT_EQ(FindKindByCliName("CLUSTERQUEUES"), cq);
  EXPECT_EQ(FindKindByCliName("CQ"), cq);
}

// "jobs" is batch/v1 (the built-in group wins, as in kubectl); a group suffix picks Volcano.
TEST(KindsTest, CliJobsPreferBatchAndGroupSuffixSelects) {
  EXPECT_EQ(FindKindByCliName("jobs")->group, "batch");
  EXPECT_EQ(FindKindByCliName("job")->group, "batch");
  EXPECT_EQ(FindKindByCliName("jobs.batch")->group, "batch");
  EXPECT_EQ(FindKindByCliName("jobs.batch.volcano.sh")->group, "batch.volcano.sh");
  EXPECT_EQ(FindKindByCliName("jobs.v1alpha1.batch.volcano.sh")->group, "batch.volcano.sh");
  EXPECT_EQ(FindKindByCliName("clusterqueues.kueue.x-k8s.io")->kind, "ClusterQueue");
}

// Names that match nothing, or a name with the wrong group, give nullptr.
TEST(KindsTest, CliUnknownNamesAreNotFound) {
  EXPECT_EQ(FindKindByCliName(""), nullptr);
  EXPECT_EQ(FindKindByCliName("deployments"), nullptr);
  EXPECT_EQ(FindKindByCliName("pods.batch"), nullptr);
  EXPECT_EQ(FindKindByCliName("jobs.v2.batch"), nullptr);
}

// Every kind from DESIGN.md section 4 is registered, with a store key found again by lookup.
TEST(KindsTest, RegistryHoldsEveryKindWithUniqueStoreKeys) {
  std::set<std::string_view> keys;
  for (const KindInfo& k : AllKinds()) {
    EXPECT_TRUE(keys.insert(k.store_key).second) << k.store_key;
    EXPECT_EQ(FindKindByStoreKey(k.store_key), &k);
    EXPECT_EQ(FindKindByResource(k.group, k.version, k.plural), &k);
    EXPECT_EQ(FindKindByApiVersion(k.api_version, k.kind), &k);
    std::string expected_key = std::string(k.group) + "/" + std::string(k.kind);
    EXPECT_EQ(k.store_key, expected_key);
    std::string expected_av = k.group.empty() ? std::string(k.version)
                                              : std::string(k.group) + "/" + std::string(k.version);
    EXPECT_EQ(k.api_version, expected_av);
  }
  // 10 core (with ServiceAccount, Secret, Service, ConfigMap, PersistentVolumeClaim) + PriorityClass + Lease
  // + 4 RBAC + 3 reviews + NetworkPolicy + EndpointSlice + 4 Kueue + 2 Jobs + tessera.dev's UsageRecord,
  // ApprovalPolicy, ApprovalRequest and Budget + TrainingJob + Pipeline and PipelineRun + Sweep + Notebook
  // + Template + InferenceService + SchedulingReview + SimulationReview
  EXPECT_EQ(keys.size(), 40u);
}

// Cluster-scoped kinds are those Kubernetes, Kueue and Volcano define so.
TEST(KindsTest, ScopeOfEachKind) {
  for (std::string_view cluster : {"/Namespace", "/Node", "scheduling.k8s.io/PriorityClass",
                                   "rbac.authorization.k8s.io/ClusterRole",
                                   "rbac.authorization.k8s.io/ClusterRoleBinding",
                                   "kueue.x-k8s.io/ResourceFlavor", "kueue.x-k8s.io/ClusterQueue"}) {
    EXPECT_FALSE(FindKindByStoreKey(cluster)->namespaced) << cluster;
  }
  for (std::string_view ns : {"/Pod", "/Event", "/ResourceQuota", "batch/Job", "batch.volcano.sh/Job",
                              "kueue.x-k8s.io/LocalQueue", "kueue.x-k8s.io/Workload",
                              "rbac.authorization.k8s.io/Role", "networking.k8s.io/NetworkPolicy", "/Service",
                              "discovery.k8s.io/EndpointSlice"}) {
    EXPECT_TRUE(FindKindByStoreKey(ns)->namespaced) << ns;
  }
}

// Error messages can list where a Kind is served.
TEST(KindsTest, ApiVersionsServingKindListsBothJobs) {
  auto versions = ApiVersionsServingKind("Job");
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0], "batch/v1");
  EXPECT_EQ(versions[1], "batch.volcano.sh/v1alpha1");
  EXPECT_TRUE(ApiVersionsServingKind("Deployment").empty());
}

// Each kind is described once: the registry holds a definition for every kind, in
// the lookups' order, and finds it from the lookups' pointers or from a copy.
TEST(KindDefinitionTest, EveryKindHasOneDefinitionInRegistryOrder) {
  ASSERT_EQ(AllDefinitions().size(), AllKinds().size());
  for (size_t i = 0; i < AllKinds().size(); ++i) {
    const KindInfo& k = AllKinds()[i];
    const KindDefinition& d = AllDefinitions()[i];
    EXPECT_EQ(d.info.store_key, k.store_key);
    EXPECT_EQ(d.info.plural, k.plural);
    EXPECT_EQ(FindDefinition(k), &d) << k.store_key;
    const KindInfo copy = k;
    EXPECT_EQ(FindDefinition(copy), &d) << k.store_key;
  }
  KindInfo unknown = AllKinds()[0];
  unknown.store_key = "example.com/Unknown";
  EXPECT_EQ(FindDefinition(unknown), nullptr);
}

// Validation has a schema for every kind, stored or answered.
TEST(KindDefinitionTest, EveryKindHasASchema) {
  for (const KindDefinition& d : AllDefinitions()) EXPECT_NE(d.schema, nullptr) << d.info.store_key;
}

// Every stored kind declares its columns: at least NAME and AGE, unless it prints
// as kubectl prints it otherwise (Events: LAST SEEN TYPE REASON OBJECT MESSAGE).
// Each column has a header, a description, a cell and a priority of 0 or 1.
TEST(KindDefinitionTest, EveryStoredKindPrintsNameAndAgeOrItsOwnColumns) {
  const std::set<std::string_view> own_columns = {"/Event"};
  for (const KindDefinition& d : AllDefinitions()) {
    if (!d.info.stored) continue;
    SCOPED_TRACE(d.info.store_key);
    ASSERT_FALSE(d.columns.empty());
    std::set<std::string_view> names;
    for (const PrinterColumn& c : d.columns) {
      EXPECT_FALSE(c.name.empty());
      EXPECT_FALSE(c.description.empty()) << c.name;
      EXPECT_TRUE(c.cell != nullptr) << c.name;
      EXPECT_TRUE(c.priority == 0 || c.priority == 1) << c.name;
      EXPECT_TRUE(names.insert(c.name).second) << "two columns named " << c.name;
    }
    if (own_columns.contains(d.info.store_key)) continue;
    EXPECT_TRUE(names.contains("NAME"));
    EXPECT_TRUE(names.contains("AGE"));
    EXPECT_EQ(d.columns.front().name, "NAME");
  }
}

// Every kind says what the default roles grant on it, "nothing" included; a grant
// names a subresource without a slash and at least one verb.
TEST(KindDefinitionTest, EveryKindDeclaresItsDefaultRoleGrants) {
  for (const KindDefinition& d : AllDefinitions()) {
    SCOPED_TRACE(d.info.store_key);
    ASSERT_TRUE(d.roles.has_value()) << "declare .roles (NoDefaultRoles() when none grants it)";
    for (const RoleGrant& g : d.roles->grants) {
      EXPECT_NE(g.verbs, 0);
      EXPECT_EQ(g.subresource.find('/'), std::string_view::npos);
    }
    // Kueue's per-kind roles are Kueue's kinds' (and batch/v1 Job's job-editor role).
    if (d.roles->kueue == KueueRoles::kBatchAdmin || d.roles->kueue == KueueRoles::kBatchAdminAndTeam) {
      EXPECT_EQ(d.info.group, "kueue.x-k8s.io");
    }
  }
  // A few as Kubernetes' roles have them: view reads pods and their logs; only edit reads Secrets.
  const auto grants = [](std::string_view key) { return FindDefinition(*FindKindByStoreKey(key))->roles->grants; };
  bool view_reads_logs = false;
  for (const RoleGrant& g : grants("/Pod")) view_reads_logs |= g.role == DefaultRole::kView && g.subresource == "log";
  EXPECT_TRUE(view_reads_logs);
  for (const RoleGrant& g : grants("/Secret")) EXPECT_NE(g.role, DefaultRole::kView);
  // pods/proxy and services/proxy: edit (so admin), every verb; never view.
  for (std::string_view key : {"/Pod", "/Service"}) {
    bool edit_proxies = false;
    for (const RoleGrant& g : grants(key)) {
      if (g.subresource != "proxy") continue;
      EXPECT_EQ(g.role, DefaultRole::kEdit) << key;
      edit_proxies |= g.role == DefaultRole::kEdit && g.verbs == verbs::kAll;
    }
    EXPECT_TRUE(edit_proxies) << key;
  }
  EXPECT_TRUE(grants("/Node").empty());
}

// The kinds whose fields are fixed once set carry the update rules that keep them.
TEST(KindDefinitionTest, UpdateRulesBelongToTheKindsWithFixedFields) {
  const std::set<std::string_view> with_rules = {
      "/Node", "/Service", "/Secret", "/ConfigMap", "/PersistentVolumeClaim", "discovery.k8s.io/EndpointSlice",
      "rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding",
      "tessera.dev/Pipeline"};
  for (const KindDefinition& d : AllDefinitions()) {
    EXPECT_EQ(!d.update_rules.empty(), with_rules.contains(d.info.store_key)) << d.info.store_key;
  }
}

// The controller that owns a kind's behaviour is named for docs and describe.
TEST(KindDefinitionTest, ControllersAreNamedForTheKindsWithBehaviour) {
  const auto controller = [](std::string_view key) { return FindDefinition(*FindKindByStoreKey(key))->controller; };
  EXPECT_EQ(controller("batch/Job"), "job-controller");
  EXPECT_EQ(controller("batch.volcano.sh/Job"), "job-controller");
  EXPECT_EQ(controller("/Namespace"), "namespace-controller");
  EXPECT_EQ(controller("discovery.k8s.io/EndpointSlice"), "endpointslice-controller");
  EXPECT_EQ(controller("tessera.dev/Budget"), "budget-controller");
  EXPECT_EQ(controller("/ConfigMap"), "");  // stored and read, no behaviour of its own
}

// Verbs print in alphabetical order, as Kubernetes' default roles list them.
TEST(RoleGrantsTest, VerbNamesAreAlphabetical) {
  EXPECT_EQ(VerbNames(verbs::kRead), (std::vector<std::string>{"get", "list", "watch"}));
  EXPECT_EQ(VerbNames(verbs::kWrite),
            (std::vector<std::string>{"create", "delete", "deletecollection", "patch", "update"}));
  EXPECT_EQ(VerbNames(verbs::kGet | verbs::kUpdate | verbs::kPatch),
            (std::vector<std::string>{"get", "patch", "update"}));
  EXPECT_TRUE(VerbNames(0).empty());
}

}  // namespace
}  // namespace tessera
