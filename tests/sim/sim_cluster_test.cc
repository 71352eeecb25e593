// Tests of the simulator's cluster and policy set-up: --cluster specs (shorthand,
// node-list CSV, Node manifests), policies from manifests, the default policy, and
// the mapping of a trace's team to a queue name.
#include "sim/sim_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

// A file under the temp directory, removed when the test ends.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& contents)
      : path_(fs::temp_directory_path() / ("tessera_sim_cluster_test_" + name)) {
    std::ofstream out(path_, std::ios::binary);
    out << contents;
  }
  ~TempFile() { fs::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

std::vector<Node> Nodes(const std::string& spec) {
  Result<std::vector<Node>> nodes = LoadSimNodes(spec);
  EXPECT_TRUE(nodes.has_value()) << spec << ": " << nodes.error().ToString();
  return nodes.value_or(std::vector<Node>{});
}

Status NodesError(const std::string& spec) {
  Result<std::vector<Node>> nodes = LoadSimNodes(spec);
  EXPECT_FALSE(nodes.has_value()) << spec;
  return nodes.has_value() ? Status::Ok() : nodes.error();
}

Status PolicyError(std::string_view manifests) {
  Result<SimCluster> cluster = SimClusterFromManifests(Nodes("1x4xA100-80GB"), manifests);
  EXPECT_FALSE(cluster.has_value()) << manifests;
  return cluster.has_value() ? Status::Ok() : cluster.error();
}

std::string Label(const Node& n, const std::string& key) {
  const std::string* v = n.labels.Find(key);
  return v == nullptr ? "<none>" : *v;
}

// A flavor, one ClusterQueue "team-a" with 4 GPUs, and its LocalQueue in namespace "a".
constexpr std::string_view kOneQueuePolicy = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  cohort: all
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: a
  namespace: a
spec:
  clusterQueue: team-a
)";

// ---------------------------------------------------------------------------
// LoadSimNodes: shorthand

TEST(LoadSimNodesTest, ShorthandMakesReadyNodesOfOneModel) {
  // 2 nodes x 4 A100s: 16 cores and 128 GiB per GPU, devices 0..3 of 80 GiB, labelled.
  std::vector<Node> nodes = Nodes("2x4xA100-80GB");
  ASSERT_EQ(nodes.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Node& n = nodes[i];
    EXPECT_EQ(n.name, "node-" + std::to_string(i));
    EXPECT_TRUE(n.Schedulable());
    EXPECT_EQ(n.cpu_milli, 64000);           // 16000 x 4
    EXPECT_EQ(n.memory_bytes, 512 * kGiB);   // 128 GiB x 4
    EXPECT_EQ(n.rack, "rack-0");
    EXPECT_EQ(Label(n, std::string(kGpuProductLabel)), "A100-80GB");
    EXPECT_EQ(Label(n, "topology.kubernetes.io/rack"), "rack-0");
    ASSERT_EQ(n.gpus.size(), 4u);
    for (int d = 0; d < 4; ++d) {
      EXPECT_EQ(n.gpus[d].index, d);
      EXPECT_EQ(n.gpus[d].model, "A100-80GB");
      EXPECT_EQ(n.gpus[d].memory_bytes, 80 * kGiB);
    }
    EXPECT_EQ(n.GpuMilli(), 4000);
  }
  EXPECT_NE(nodes[0].gpus[0].uuid, nodes[1].gpus[0].uuid);
}

TEST(LoadSimNodesTest, GroupsAreJoinedByCommasAndRacksHold32Nodes) {
  // 33 H100 nodes then 2 L40S nodes: node-32 opens rack-1; names run on across groups.
  std::vector<Node> nodes = Nodes("33x8xH100-80GB,2x4xL40S-48GB");
  ASSERT_EQ(nodes.size(), 35u);
  EXPECT_EQ(nodes[31].rack, "rack-0");
  EXPECT_EQ(nodes[32].rack, "rack-1");
  EXPECT_EQ(nodes[33].name, "node-33");
  EXPECT_EQ(Label(nodes[33], std::string(kGpuProductLabel)), "L40S-48GB");
  EXPECT_EQ(nodes[33].gpus.size(), 4u);
  int64_t gpus = 0;
  for (const Node& n : nodes) gpus += static_cast<int64_t>(n.gpus.size());
  EXPECT_EQ(gpus, 33 * 8 + 2 * 4);
}

TEST(LoadSimNodesTest, ZeroGpuNodesHaveTheCpuOfOne) {
  // "1x0xcpu": a CPU-only node still gets 16 cores and 128 GiB (as for one GPU).
  std::vector<Node> nodes = Nodes("1x0xcpu");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0].gpus.empty());
  EXPECT_EQ(nodes[0].cpu_milli, 16000);
  EXPECT_EQ(nodes[0].memory_bytes, 128 * kGiB);
}

TEST(LoadSimNodesTest, EmptySpecSaysItIsRequired) {
  Status s = NodesError("");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--cluster: required (like 125x8xA100-80GB)");
}

TEST(LoadSimNodesTest, MalformedShorthandNamesTheGroupAndTheForms) {
  // Each bad group is quoted, with the three forms --cluster takes.
  for (const char* spec : {"3x", "axbxc", "2x4x", "0x4xA100", "-1x4xA100", "2x-1xA100", "2x4", "x4xA100"}) {
    Status s = NodesError(spec);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << spec;
    EXPECT_EQ(s.message(), std::string("--cluster: \"") + spec +
                               "\" is not NODESxGPUSxMODEL (like 125x8xA100-80GB), a node-list .csv, or a "
                               ".yaml/.json file of Node manifests")
        << spec;
  }
  // In a list, the offending group is named, including an empty one after a comma.
  EXPECT_THAT(NodesError("2x4xA100,3x").message(), HasSubstr("\"3x\" is not NODESxGPUSxMODEL"));
  EXPECT_THAT(NodesError("2x4xA100,").message(), HasSubstr("\"\" is not NODESxGPUSxMODEL"));
}

// ---------------------------------------------------------------------------
// LoadSimNodes: node-list CSV and Node manifests

TEST(LoadSimNodesTest, CsvNodeListInAnyColumnOrder) {
  // sn,cpu_milli,memory_mib,gpu,model in another order with an extra column; a
  // CPU-only node has no model label.
  TempFile file("nodes.csv",
                "model,gpu,sn,extra,memory_mib,cpu_milli\n"
                "V100M16,8,n-a,x,262144,96000\n"
                ",0,n-b,y,1024,4000\n");
  std::vector<Node> nodes = Nodes(file.path());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "n-a");
  EXPECT_EQ(nodes[0].cpu_milli, 96000);
  EXPECT_EQ(nodes[0].memory_bytes, 262144 * kMiB);
  EXPECT_EQ(nodes[0].gpus.size(), 8u);
  EXPECT_EQ(nodes[0].gpus[7].model, "V100M16");
  EXPECT_EQ(Label(nodes[0], std::string(kGpuProductLabel)), "V100M16");
  EXPECT_EQ(nodes[0].rack, "rack-0");
  EXPECT_EQ(nodes[1].name, "n-b");
  EXPECT_TRUE(nodes[1].gpus.empty());
  EXPECT_EQ(Label(nodes[1], std::string(kGpuProductLabel)), "<none>");
  EXPECT_TRUE(nodes[1].Schedulable());
}

TEST(LoadSimNodesTest, CsvErrorsNameTheFileAndWhatToWrite) {
  // A missing file, a missing column and a malformed number.
  Status missing = NodesError("/nonexistent/nodes.csv");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "cannot open /nonexistent/nodes.csv: no such file, or not readable");

  TempFile no_model("no_model.csv", "sn,cpu_milli,memory_mib,gpu\nn,1,1,1\n");
  EXPECT_EQ(NodesError(no_model.path()).message(),
            no_model.path() + ": missing column \"model\" (a node list has sn,cpu_milli,memory_mib,gpu,model)");

  TempFile bad("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,2,T4\nn2,1000,1024,two,T4\n");
  EXPECT_EQ(NodesError(bad.path()).message(),
            bad.path() + ": line 3: cpu_milli, memory_mib and gpu must be whole numbers >= 0");

  TempFile negative("negative.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,-5,1024,2,T4\n");
  EXPECT_THAT(NodesError(negative.path()).message(), HasSubstr("line 2: cpu_milli, memory_mib and gpu"));
}

TEST(LoadSimNodesTest, OpenbNodeListFromSharedTraces) {
  // README: 1213 GPU nodes with 6212 GPUs; the first is openb-node-0000, 2 x P100,
  // 64 cores, 256 GiB.
  const fs::path path =
      fs::path(TESSERA_SOURCE_DIR) / ".." / "shared" / "traces" / "alibaba-openb-2023" / "openb_node_list_gpu_node.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path << " (the shared traces)";
  std::vector<Node> nodes = Nodes(path.string());
  ASSERT_EQ(nodes.size(), 1213u);
  int64_t gpus = 0;
  std::map<std::string, int> models;
  for (const Node& n : nodes) {
    gpus += static_cast<int64_t>(n.gpus.size());
    ++models[Label(n, std::string(kGpuProductLabel))];
  }
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(nodes[0].name, "openb-node-0000");
  EXPECT_EQ(nodes[0].gpus.size(), 2u);
  EXPECT_EQ(nodes[0].cpu_milli, 64000);
  EXPECT_EQ(nodes[0].memory_bytes, 262144 * kMiB);
  EXPECT_EQ(Label(nodes[0], std::string(kGpuProductLabel)), "P100");
  EXPECT_EQ(models, (std::map<std::string, int>{{"A10", 2},
                                                {"G2", 549},
                                                {"G3", 39},
                                                {"P100", 134},
                                                {"T4", 404},
                                                {"V100M16", 55},
                                                {"V100M32", 30}}));
  EXPECT_EQ(nodes[1212].rack, "rack-37");  // 1212 / 32
}

TEST(LoadSimNodesTest, NodeManifestsInYaml) {
  // Node manifests as the API prints them: allocatable GPUs become generic devices;
  // every node is Ready whatever its conditions say; other kinds are skipped.
  TempFile file("nodes.yaml", R"(
apiVersion: v1
kind: Node
metadata:
  name: gpu-a
  labels:
    nvidia.com/gpu.product: H100-80GB
status:
  allocatable:
    cpu: "32"
    memory: 256Gi
    nvidia.com/gpu: "4"
  conditions:
  - type: Ready
    status: "False"
---
apiVersion: v1
kind: Namespace
metadata:
  name: ignored
)");
  std::vector<Node> nodes = Nodes(file.path());
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "gpu-a");
  EXPECT_EQ(nodes[0].cpu_milli, 32000);
  EXPECT_EQ(nodes[0].memory_bytes, 256 * kGiB);
  EXPECT_EQ(nodes[0].gpus.size(), 4u);
  EXPECT_TRUE(nodes[0].ready);
  EXPECT_EQ(Label(nodes[0], std::string(kGpuProductLabel)), "H100-80GB");
}

TEST(LoadSimNodesTest, ManifestFileWithoutNodesIsAnError) {
  TempFile file("no_nodes.json", R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})");
  EXPECT_EQ(NodesError(file.path()).message(), file.path() + ": no Node manifests in it");
  EXPECT_EQ(NodesError("/nonexistent/nodes.yaml").code(), StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------
// SimClusterFromManifests

TEST(SimClusterFromManifestsTest, ReadsFlavorQueuesAndDefaultPriorityClasses) {
  // One flavor, one ClusterQueue in cohort "all", one LocalQueue in namespace "a";
  // without PriorityClasses the four shipped defaults apply, none a global default.
  Result<SimCluster> cluster = SimClusterFromManifests(Nodes("1x4xA100-80GB"), kOneQueuePolicy);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  EXPECT_TRUE(cluster->warnings.empty());
  EXPECT_EQ(cluster->base.nodes.size(), 1u);
  EXPECT_EQ(cluster->TotalGpuMilli(), 4000);
  ASSERT_EQ(cluster->base.flavors.size(), 1u);
  EXPECT_EQ(cluster->base.flavors[0].name, "default");
  ASSERT_EQ(cluster->base.cluster_queues.size(), 1u);
  EXPECT_EQ(cluster->base.cluster_queues[0].name, "team-a");
  EXPECT_TRUE(cluster->base.cluster_queues[0].cohort.valid());
  ASSERT_EQ(cluster->base.local_queues.size(), 1u);
  EXPECT_EQ(cluster->base.local_queues[0].namespace_name, "a");
  EXPECT_EQ(cluster->base.local_queues[0].name, "a");
  EXPECT_EQ(cluster->base.local_queues[0].cluster_queue.value(), 0);
  ASSERT_EQ(cluster->base.namespaces.size(), 1u);
  EXPECT_EQ(cluster->base.namespaces[0].name, "a");
  EXPECT_TRUE(cluster->base.workloads.empty());

  std::vector<std::string> classes;
  for (const PriorityClass& pc : cluster->priority_classes) classes.push_back(pc.name);
  EXPECT_THAT(classes, ElementsAre("production", "training", "development", "batch"));
  EXPECT_EQ(cluster->DefaultPriorityClass(), nullptr);
  ASSERT_NE(cluster->FindPriorityClass("production"), nullptr);
  EXPECT_TRUE(cluster->FindPriorityClass("production")->non_preemptible);
  ASSERT_NE(cluster->FindPriorityClass("batch"), nullptr);
  EXPECT_EQ(cluster->FindPriorityClass("batch")->preemption_policy, PreemptionPolicy::kNever);
  EXPECT_EQ(cluster->FindPriorityClass("nope"), nullptr);
}

TEST(SimClusterFromManifestsTest, PriorityClassManifestsReplaceTheDefaults) {
  // Two classes given: only they exist; the globalDefault one is the default; the
  // annotation makes a class non-preemptible.
  std::string policy = std::string(kOneQueuePolicy) + R"(
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: serving
  annotations:
    tessera.dev/non-preemptible: "true"
value: 500
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: normal
value: 10
globalDefault: true
preemptionPolicy: Never
)";
  Result<SimCluster> cluster = SimClusterFromManifests(Nodes("1x4xA100-80GB"), policy);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  ASSERT_EQ(cluster->priority_classes.size(), 2u);
  EXPECT_EQ(cluster->FindPriorityClass("production"), nullptr);
  const PriorityClass* serving = cluster->FindPriorityClass("serving");
  ASSERT_NE(serving, nullptr);
  EXPECT_EQ(serving->value, 500);
  EXPECT_TRUE(serving->non_preemptible);
  const PriorityClass* normal = cluster->DefaultPriorityClass();
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->name, "normal");
  EXPECT_EQ(normal->value, 10);
  EXPECT_EQ(normal->preemption_policy, PreemptionPolicy::kNever);
}

TEST(SimClusterFromManifestsTest, OtherKindsAreIgnoredWithAWarning) {
  // A Pod and two Nodes in the policy file: counted per kind, named, and ignored.
  std::string policy = std::string(kOneQueuePolicy) + R"(
---
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Node
metadata:
  name: n2
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: a
spec:
  containers:
  - name: c
    image: busybox
)";
  Result<SimCluster> cluster = SimClusterFromManifests(Nodes("1x4xA100-80GB"), policy);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  EXPECT_THAT(cluster->warnings,
              ElementsAre("2 Node ignored: the simulator reads ResourceFlavor, ClusterQueue, LocalQueue, "
                          "PriorityClass, Namespace and ResourceQuota",
                          "1 Pod ignored: the simulator reads ResourceFlavor, ClusterQueue, LocalQueue, "
                          "PriorityClass, Namespace and ResourceQuota"));
  EXPECT_EQ(cluster->base.nodes.size(), 1u);  // the --cluster nodes only
}

TEST(SimClusterFromManifestsTest, NoClusterQueueIsAnError) {
  Status s = PolicyError(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
)");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "the policy has no ClusterQueue: add one per team (kueue.x-k8s.io/v1beta1)");
  // Nothing at all is the same error.
  EXPECT_EQ(PolicyError("").message(), s.message());
}

TEST(SimClusterFromManifestsTest, ClusterQueueNamingAMissingFlavorIsAnError) {
  Status s = PolicyError(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: spot
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 4
)");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ClusterQueue team-a: flavor spot does not exist; create the ResourceFlavor");
}

TEST(SimClusterFromManifestsTest, LocalQueueNamingAMissingClusterQueueIsAnError) {
  std::string policy = std::string(kOneQueuePolicy) + R"(
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: b
  namespace: b
spec:
  clusterQueue: team-b
)";
  Status s = PolicyError(policy);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "LocalQueue b: spec.clusterQueue: ClusterQueue \"team-b\" is not in the policy");
}

TEST(SimClusterFromManifestsTest, InvalidManifestIsAnErrorNamingTheField) {
  // A misspelled field ("nominalQuta") is refused as the API server would, with
  // where it is.
  Status s = PolicyError(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - name: nvidia.com/gpu
        nominalQuta: 4
)");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "document 2 (line 7): spec.resourceGroups[0].flavors[0].resources[0].nominalQuta: unknown field; did "
            "you mean \"nominalQuota\"?; spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: required");
}

TEST(SimClusterFromManifestsTest, UnparsableYamlIsAnError) {
  Status s = PolicyError("kind: [unclosed\n");
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.message().empty());
}

// ---------------------------------------------------------------------------
// DefaultPolicyManifests

TEST(DefaultPolicyManifestsTest, EqualGpuSharesRemainderToTheFirstTeams) {
  // 10 GPUs among 3 teams: 4, 3, 3; each a ClusterQueue in cohort "all" with a
  // LocalQueue of its name in its namespace; teams mapping to the same name ("ML"
  // and "ml") make one queue.
  std::vector<Node> nodes = Nodes("2x4xA100-80GB,1x2xT4");
  const std::string manifests = DefaultPolicyManifests(nodes, {"ML", "cv", "ml", "nlp"});
  Result<SimCluster> cluster = SimClusterFromManifests(nodes, manifests);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  EXPECT_TRUE(cluster->warnings.empty());
  const ClusterSnapshot& s = cluster->base;
  ASSERT_EQ(s.cluster_queues.size(), 3u);
  std::map<std::string, int64_t> nominal;
  for (const ClusterQueue& cq : s.cluster_queues) {
    ASSERT_EQ(cq.resource_groups.size(), 1u);
    ASSERT_EQ(cq.resource_groups[0].flavors.size(), 1u);
    const ResourceQuotaSpec* gpu = cq.resource_groups[0].flavors[0].Find(ResourceKind::kGpu);
    ASSERT_NE(gpu, nullptr);
    nominal[cq.name] = gpu->nominal;
    const ResourceQuotaSpec* cpu = cq.resource_groups[0].flavors[0].Find(ResourceKind::kCpu);
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(cpu->nominal, 2 * 64000 + 32000);  // the whole cluster's CPU
    EXPECT_EQ(cq.preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kAny);
    EXPECT_EQ(cq.preemption.within_cluster_queue, WithinClusterQueuePolicy::kLowerPriority);
    ASSERT_TRUE(cq.cohort.valid());
    EXPECT_EQ(s.cohorts[cq.cohort.value()].name, "all");
  }
  EXPECT_EQ(nominal, (std::map<std::string, int64_t>{{"ml", 4000}, {"cv", 3000}, {"nlp", 3000}}));
  ASSERT_EQ(s.local_queues.size(), 3u);
  for (const LocalQueue& lq : s.local_queues) {
    EXPECT_EQ(lq.name, lq.namespace_name);
    EXPECT_EQ(s.cluster_queues[lq.cluster_queue.value()].name, lq.name);
  }
  EXPECT_EQ(cluster->priority_classes.size(), 4u);
}

TEST(DefaultPolicyManifestsTest, NoTeamsMakesOneDefaultQueue) {
  std::vector<Node> nodes = Nodes("1x8xH100-80GB");
  Result<SimCluster> cluster = SimClusterFromManifests(nodes, DefaultPolicyManifests(nodes, {}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  ASSERT_EQ(cluster->base.cluster_queues.size(), 1u);
  EXPECT_EQ(cluster->base.cluster_queues[0].name, "default");
  EXPECT_EQ(cluster->base.cluster_queues[0].resource_groups[0].flavors[0].Find(ResourceKind::kGpu)->nominal, 8000);
  ASSERT_EQ(cluster->base.local_queues.size(), 1u);
  EXPECT_EQ(cluster->base.local_queues[0].namespace_name, "default");
}

TEST(DefaultPolicyManifestsTest, TeamsWithNoTeamNameGoToDefault) {
  // "" is the "default" team; with "a" that is two queues of 2 GPUs each.
  std::vector<Node> nodes = Nodes("1x4xA100-80GB");
  Result<SimCluster> cluster = SimClusterFromManifests(nodes, DefaultPolicyManifests(nodes, {"", "a"}));
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  ASSERT_EQ(cluster->base.cluster_queues.size(), 2u);
  EXPECT_EQ(cluster->base.cluster_queues[0].name, "default");
  EXPECT_EQ(cluster->base.cluster_queues[1].name, "a");
}

// ---------------------------------------------------------------------------
// QueueNameForTeam

TEST(QueueNameForTeamTest, SanitisesToAKubernetesName) {
  // Lower case; anything outside [a-z0-9-] becomes '-'; dashes trimmed at both
  // ends; "default" for nothing left; at most 63 characters.
  EXPECT_EQ(QueueNameForTeam(""), "default");
  EXPECT_EQ(QueueNameForTeam("ml"), "ml");
  EXPECT_EQ(QueueNameForTeam("ML-Research"), "ml-research");
  EXPECT_EQ(QueueNameForTeam("team a/b.c"), "team-a-b-c");
  EXPECT_EQ(QueueNameForTeam("_x_"), "x");
  EXPECT_EQ(QueueNameForTeam("--a--"), "a");
  EXPECT_EQ(QueueNameForTeam("___"), "default");
  EXPECT_EQ(QueueNameForTeam("6214e9"), "6214e9");
  EXPECT_EQ(QueueNameForTeam("caf\xC3\xA9"), "caf");  // each byte of é becomes '-', then trimmed
  EXPECT_EQ(QueueNameForTeam(std::string(100, 'A')), std::string(63, 'a'));
}

TEST(QueueNameForTeamTest, TruncationLeavesNoTrailingDash) {
  // 62 letters, a '/', a letter: cut to 63 the name would end in '-', which no
  // Kubernetes name may; the dash goes too.
  const std::string name = QueueNameForTeam(std::string(62, 'a') + "/b");
  EXPECT_EQ(name, std::string(62, 'a'));
}

}  // namespace
}  // namespace tessera
