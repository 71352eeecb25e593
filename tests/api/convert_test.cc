// Conversions between API objects and domain types (api/convert.h), and the
// RFC 3339 timestamps they read and write (common/time_format.h). Fixtures are the
// seed manifests (../shared/examples/seed) and small YAML objects, each checked
// by ValidateManifest first, since the conversions are given validated objects.
#include "api/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/seed_dir.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/node_registration.h"
#include "api/manifest.h"
#include "common/time_format.h"
#include "api/validation.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::tessera::testing::SeedDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

#ifndef TESSERA_SOURCE_DIR
#define TESSERA_SOURCE_DIR "."
#endif

constexpr int64_t kGi = int64_t{1} << 30;

// ============================================================================
// Fixtures.


// The object of `kind` named `name` in the seed file `file`; null (and a test
// failure) when missing.
json SeedObject(const std::string& file, std::string_view kind, std::string_view name) {
  const fs::path dir = SeedDir();
  if (dir.empty()) {
    ADD_FAILURE() << "seed manifests not found (see SeedManifestsTest.SeedDirectoryHoldsTheSevenManifests)";
    return json();
  }
  std::ifstream in(dir / file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto docs = ParseManifests(text.str());
  if (!docs) {
    ADD_FAILURE() << file << ": " << docs.error().ToString();
    return json();
  }
  for (const ManifestDocument& doc : *docs) {
    if (doc.object.value("kind", "") == kind && doc.object["metadata"].value("name", "") == name) {
      return doc.object;
    }
  }
  ADD_FAILURE() << file << " has no " << kind << " " << name;
  return json();
}

// One YAML object, which must validate (conversions take validated objects).
json Valid(std::string_view yaml) {
  auto obj = ParseSingleObject(yaml, ManifestFormat::kYaml);
  if (!obj) {
    ADD_FAILURE() << obj.error().ToString();
    return json();
  }
  auto kind = ValidateManifest(*obj);
  EXPECT_TRUE(kind.has_value()) << kind.error().ToString() << "\n" << yaml;
  return *obj;
}

// A resolver that knows `names`, in order: names[i] has id i.
template <typename Id>
std::function<Id(std::string_view)> IdsOf(std::vector<std::string> names) {
  return [names = std::move(names)](std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return Id(static_cast<int32_t>(i));
    }
    return Id();
  };
}

template <typename Id>
std::function<std::string(Id)> NamesOf(std::vector<std::string> names) {
  return [names = std::move(names)](Id id) { return names.at(static_cast<size_t>(id.value())); };
}

// The default classes (development is the global default: 1000).
struct Classes {
  std::vector<PriorityClass> all = DefaultPriorityClasses();

  std::function<const PriorityClass*(std::string_view)> Lookup() const {
    return [this](std::string_view name) -> const PriorityClass* {
      for (const PriorityClass& pc : all) {
        if (pc.name == name) return &pc;
      }
      return nullptr;
    };
  }
  const PriorityClass* Default() const { return Lookup()("development"); }
};

const std::vector<std::string> kFlavors = {"a100-spot", "a100-ondemand"};
const std::vector<std::string> kQueues = {"gpu-cluster-queue"};
const std::vector<std::string> kNodes = {"n1", "n2"};

// WorkloadFromJson with the default classes and resolvers that know kQueues,
// kFlavors and kNodes.
Result<Workload> ToWorkload(const json& obj, const Classes& classes = Classes()) {
  return WorkloadFromJson(obj, classes.Lookup(), classes.Default(), IdsOf<ClusterQueueId>(kQueues),
                          IdsOf<FlavorId>(kFlavors), IdsOf<NodeId>(kNodes));
}

// The error message of a conversion that must fail.
template <typename T>
std::string ErrorOf(const Result<T>& r) {
  EXPECT_FALSE(r.has_value());
  if (r) return "";
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  return r.error().message();
}

// A two-pod-set Workload: "launcher" (1 pod, 1 cpu) and "worker" (2 pods, 0.5 GPU each).
constexpr std::string_view kTwoPodSets = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: train
  namespace: team-nlp
  creationTimestamp: "2026-11-29T16:00:00Z"
spec:
  queueName: team-nlp-queue
  podSets:
    - name: launcher
      count: 1
      template:
        spec:
          containers: [{name: main, resources: {requests: {cpu: "1"}}}]
    - name: worker
      count: 2
      template:
        spec:
          containers: [{name: main, resources: {requests: {nvidia.com/gpu: "0.5"}}}]
)";

// The Workload of a one-container pod set whose pod spec is `pod_spec` (YAML
// flow), with `extra` lines appended under spec.
json OnePodSet(std::string_view pod_spec, std::string_view extra = "") {
  return Valid(std::string(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  podSets:
    - name: main
      count: 1
      template:
        spec: )") + std::string(pod_spec) + "\n" + std::string(extra));
}

// ============================================================================
// RFC 3339.

// A UTC timestamp in whole seconds parses to milliseconds since the epoch.
TEST(Rfc3339Test, ParsesUtcSeconds) {
  auto t = ParseRfc3339("2026-11-29T16:15:31Z");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  // 20786 days since 1970-01-01 * 86400 + 16h 15m 31s = 1795910400 + 58531 = 1795968931 s
  EXPECT_EQ(t->ms, int64_t{1795968931} * 1000);
}

// Fractional seconds are kept to the millisecond; finer digits are dropped.
TEST(Rfc3339Test, FractionalSecondsKeepMilliseconds) {
  const int64_t base = int64_t{1795968931} * 1000;
  EXPECT_EQ(ParseRfc3339("2026-11-29T16:15:31.5Z")->ms, base + 500);       // .5 -> 500 ms
  EXPECT_EQ(ParseRfc3339("2026-11-29T16:15:31.123456Z")->ms, base + 123);  // microseconds truncated
}

// A numeric offset is converted to UTC: 18:15 at +02:00 is 16:15Z.
TEST(Rfc3339Test, OffsetConvertsToUtc) {
  EXPECT_EQ(ParseRfc3339("2026-11-29T18:15:31+02:00")->ms, ParseRfc3339("2026-11-29T16:15:31Z")->ms);
}

// Formatting writes what parses back: whole seconds plain, milliseconds when set.
TEST(Rfc3339Test, FormatRoundTrips) {
  for (std::string text : {"2026-11-29T16:15:31Z", "2026-11-29T16:15:31.250Z", "1970-01-01T00:00:00Z",
                           "2024-02-29T23:59:59Z"}) {
    auto t = ParseRfc3339(text);
    ASSERT_TRUE(t.has_value()) << text;
    EXPECT_EQ(FormatRfc3339(*t), text);
  }
}

// An impossible date is refused with the text and the reason.
TEST(Rfc3339Test, ErrorNamesTheTextAndTheProblem) {
  std::string message = ErrorOf(ParseRfc3339("2026-02-30T00:00:00Z"));  // 2026 is not a leap year
  EXPECT_THAT(message, HasSubstr("\"2026-02-30T00:00:00Z\""));
  EXPECT_THAT(message, HasSubstr("day out of range"));
  EXPECT_THAT(ErrorOf(ParseRfc3339("2026-11-29 16:15:31")), HasSubstr("'T'"));
  EXPECT_THAT(ErrorOf(ParseRfc3339("2026-11-29T16:15:31")), HasSubstr("missing time zone"));
}

// ============================================================================
// ResourceFlavor.

// nodeLabels select the nodes; tolerations go to the pods; nodeTaints are ignored.
TEST(ResourceFlavorFromJsonTest, ReadsNodeLabelsAndTolerations) {
  json obj = Valid(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a100-spot}
spec:
  nodeLabels: {tessera.dev/flavor: a100-spot}
  nodeTaints: [{key: spot, value: "true", effect: NoSchedule}]
  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
)");
  auto flavor = ResourceFlavorFromJson(obj);
  ASSERT_TRUE(flavor.has_value()) << flavor.error().ToString();
  EXPECT_EQ(flavor->name, "a100-spot");
  EXPECT_EQ(flavor->node_labels, (Labels{{"tessera.dev/flavor", "a100-spot"}}));
  ASSERT_EQ(flavor->tolerations.size(), 1u);
  EXPECT_EQ(flavor->tolerations[0], (Toleration{.key = "spot",
                                                 .op = Toleration::Operator::kExists,
                                                 .effect = TaintEffect::kNoSchedule}));
}

// ============================================================================
// ClusterQueue.

// The seed's queue: one group over cpu, memory and GPUs, spot tried before
// on-demand, nominal quotas in domain units; no borrowing limit is unlimited.
TEST(ClusterQueueFromJsonTest, SeedQueueHasBothFlavorsAndQuotas) {
  json obj = SeedObject("06-kueue.yaml", "ClusterQueue", "gpu-cluster-queue");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>(kFlavors), IdsOf<CohortId>({}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->name, "gpu-cluster-queue");
  EXPECT_TRUE(cq->inactive_reason.empty()) << cq->inactive_reason;
  EXPECT_FALSE(cq->cohort.valid());
  ASSERT_EQ(cq->resource_groups.size(), 1u);
  const ResourceGroup& g = cq->resource_groups[0];
  EXPECT_EQ(g.covered_resources,
            (std::vector<ResourceKind>{ResourceKind::kCpu, ResourceKind::kMemory, ResourceKind::kGpu}));
  ASSERT_EQ(g.flavors.size(), 2u);
  EXPECT_EQ(g.flavors[0].flavor, FlavorId(0));  // a100-spot first
  EXPECT_EQ(g.flavors[1].flavor, FlavorId(1));  // then a100-ondemand
  const FlavorQuotas& spot = g.flavors[0];
  EXPECT_EQ(spot.Find(ResourceKind::kCpu)->nominal, 128000);          // 128 cpu in millicores
  EXPECT_EQ(spot.Find(ResourceKind::kMemory)->nominal, 512 * kGi);    // 512Gi in bytes
  EXPECT_EQ(spot.Find(ResourceKind::kGpu)->nominal, 16000);           // 16 GPUs in milli-GPU
  EXPECT_TRUE(spot.Find(ResourceKind::kGpu)->borrowing_limit.unlimited());
  EXPECT_TRUE(spot.Find(ResourceKind::kGpu)->lending_limit.unlimited());
  const FlavorQuotas& ondemand = g.flavors[1];
  EXPECT_EQ(ondemand.Find(ResourceKind::kCpu)->nominal, 64000);        // 64 cpu
  EXPECT_EQ(ondemand.Find(ResourceKind::kMemory)->nominal, 256 * kGi);  // 256Gi
  EXPECT_EQ(ondemand.Find(ResourceKind::kGpu)->nominal, 8000);          // 8 GPUs
}

// The seed's queue preempts lower priority within itself, and nothing else;
// its empty namespaceSelector selects every namespace.
TEST(ClusterQueueFromJsonTest, SeedQueuePreemptsLowerPriority) {
  json obj = SeedObject("06-kueue.yaml", "ClusterQueue", "gpu-cluster-queue");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>(kFlavors), IdsOf<CohortId>({}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->preemption.within_cluster_queue, WithinClusterQueuePolicy::kLowerPriority);
  EXPECT_EQ(cq->preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kNever);
  EXPECT_EQ(cq->preemption.borrow_within_cohort, BorrowWithinCohortPolicy::kNever);
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  ASSERT_TRUE(cq->namespace_selector.has_value());
  EXPECT_TRUE(cq->namespace_selector->empty());
}

// A flavor that does not exist makes the queue inactive with a reason, not an error.
TEST(ClusterQueueFromJsonTest, UnknownFlavorMakesQueueInactive) {
  json obj = SeedObject("06-kueue.yaml", "ClusterQueue", "gpu-cluster-queue");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>({}), IdsOf<CohortId>({}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->inactive_reason, "flavor a100-spot does not exist; create the ResourceFlavor");
  EXPECT_FALSE(cq->resource_groups[0].flavors[0].flavor.valid());
}

// A queue in a cohort reads its cohort id and its borrowing and lending limits.
TEST(ClusterQueueFromJsonTest, CohortQueueReadsLimits) {
  json obj = Valid(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: a100-ondemand
          resources: [{name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4, lendingLimit: "2"}]
)");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>(kFlavors), IdsOf<CohortId>({"other", "research"}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->cohort, CohortId(1));
  const ResourceQuotaSpec* gpu = cq->resource_groups[0].flavors[0].Find(ResourceKind::kGpu);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->nominal, 8000);                      // 8 GPUs
  EXPECT_EQ(gpu->borrowing_limit, Limit::Of(4000));   // 4 GPUs above nominal
  EXPECT_EQ(gpu->lending_limit, Limit::Of(2000));     // 2 of its 8 lent
}

// queueingStrategy, fairSharing weight (in thousandths) and stopPolicy.
TEST(ClusterQueueFromJsonTest, ReadsStrategyWeightAndStopPolicy) {
  json obj = Valid(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  queueingStrategy: StrictFIFO
  fairSharing: {weight: "0.5"}
  stopPolicy: Hold
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
)");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>(kFlavors), IdsOf<CohortId>({}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(cq->fair_weight_milli, 500);  // 0.5 * 1000
  EXPECT_TRUE(cq->stopped);
  EXPECT_EQ(cq->preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kAny);
  EXPECT_EQ(cq->preemption.borrow_within_cohort, BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(cq->preemption.borrow_max_priority_threshold, 100);
  EXPECT_FALSE(cq->namespace_selector.has_value());  // absent: every namespace
}

// A namespaceSelector expression labels cannot express makes the queue inactive
// (rather than admitting namespaces it should not); In with one value is a label.
TEST(ClusterQueueFromJsonTest, UnsupportedNamespaceSelectorMakesQueueInactive) {
  json obj = Valid(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector:
    matchExpressions:
      - {key: team, operator: In, values: [nlp]}
      - {key: tier, operator: NotIn, values: [dev]}
)");
  auto cq = ClusterQueueFromJson(obj, IdsOf<FlavorId>(kFlavors), IdsOf<CohortId>({}));
  ASSERT_TRUE(cq.has_value()) << cq.error().ToString();
  EXPECT_EQ(cq->namespace_selector, (Labels{{"team", "nlp"}}));
  EXPECT_THAT(cq->inactive_reason, StartsWith("spec.namespaceSelector.matchExpressions[1]: operator NotIn"));
}

// ============================================================================
// LocalQueue, PriorityClass, ResourceQuota.

// The seed's LocalQueue: its namespace, name and the ClusterQueue it names.
TEST(LocalQueueFromJsonTest, SeedLocalQueueNamesItsClusterQueue) {
  auto lq = LocalQueueFromJson(SeedObject("06-kueue.yaml", "LocalQueue", "team-nlp-queue"));
  ASSERT_TRUE(lq.has_value()) << lq.error().ToString();
  EXPECT_EQ(lq->namespace_name, "team-nlp");
  EXPECT_EQ(lq->name, "team-nlp-queue");
  EXPECT_EQ(lq->cluster_queue_name, "gpu-cluster-queue");
  EXPECT_FALSE(lq->cluster_queue.valid());  // resolved by the snapshot builder
}

// The seed's classes keep value, global default and preemption policy:
// exploratory (the default) never preempts.
TEST(PriorityClassFromJsonTest, SeedClassesKeepValuesAndPolicies) {
  auto exploratory = PriorityClassFromJson(SeedObject("05-priorityclasses.yaml", "PriorityClass", "exploratory"));
  ASSERT_TRUE(exploratory.has_value()) << exploratory.error().ToString();
  EXPECT_EQ(exploratory->name, "exploratory");
  EXPECT_EQ(exploratory->value, 1000);
  EXPECT_TRUE(exploratory->global_default);
  EXPECT_EQ(exploratory->preemption_policy, PreemptionPolicy::kNever);
  EXPECT_FALSE(exploratory->non_preemptible);

  auto production =
      PriorityClassFromJson(SeedObject("05-priorityclasses.yaml", "PriorityClass", "production-inference"));
  ASSERT_TRUE(production.has_value()) << production.error().ToString();
  EXPECT_EQ(production->value, 1000000);
  EXPECT_FALSE(production->global_default);
  EXPECT_EQ(production->preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
}

// The annotation tessera.dev/non-preemptible: "true" marks a class whose work is never a victim.
TEST(PriorityClassFromJsonTest, NonPreemptibleAnnotationMarksClass) {
  json obj = Valid(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: serving, annotations: {tessera.dev/non-preemptible: "true"}}
value: 2000000
)");
  auto pc = PriorityClassFromJson(obj);
  ASSERT_TRUE(pc.has_value()) << pc.error().ToString();
  EXPECT_TRUE(pc->non_preemptible);
  EXPECT_EQ(pc->preemption_policy, PreemptionPolicy::kPreemptLowerPriority);  // the default
}

// tessera.dev/preemptible: "false" (DESIGN.md section 12's spelling) marks it too; "true" does not.
TEST(PriorityClassFromJsonTest, PreemptibleFalseMarksClassNeverPreempted) {
  json obj = Valid(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: production-inference, annotations: {tessera.dev/preemptible: "false"}}
value: 1000000
)");
  auto pc = PriorityClassFromJson(obj);
  ASSERT_TRUE(pc.has_value()) << pc.error().ToString();
  EXPECT_TRUE(pc->non_preemptible);
  obj["metadata"]["annotations"]["tessera.dev/preemptible"] = "true";
  EXPECT_FALSE(PriorityClassFromJson(obj)->non_preemptible);
}

// The seed's ml-team-quota: GPU requests and limits in milli-GPU;
// persistentvolumeclaims is not a scheduled resource and is ignored.
TEST(ResourceQuotaFromJsonTest, SeedQuotaCountsGpusInMilli) {
  auto q = ResourceQuotaFromJson(SeedObject("02-resourcequotas.yaml", "ResourceQuota", "ml-team-quota"));
  ASSERT_TRUE(q.has_value()) << q.error().ToString();
  EXPECT_EQ(q->name, "ml-team-quota");
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kGpu)], 8000);  // 8 GPUs
  EXPECT_EQ(q->hard_limits[static_cast<int>(ResourceKind::kGpu)], 16000);   // 16 GPUs
  for (ResourceKind k : {ResourceKind::kCpu, ResourceKind::kMemory, ResourceKind::kGpuMemory, ResourceKind::kPods}) {
    EXPECT_FALSE(q->hard_requests[static_cast<int>(k)].has_value()) << ResourceName(k);
    EXPECT_FALSE(q->hard_limits[static_cast<int>(k)].has_value()) << ResourceName(k);
  }
}

// The seed's gpu-quota: cpu in millicores, memory in bytes, pods as a count.
TEST(ResourceQuotaFromJsonTest, SeedQuotaReadsCpuMemoryAndPods) {
  auto q = ResourceQuotaFromJson(SeedObject("02-resourcequotas.yaml", "ResourceQuota", "gpu-quota"));
  ASSERT_TRUE(q.has_value()) << q.error().ToString();
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kCpu)], 64000);        // 64 cpu
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kMemory)], 256 * kGi);  // 256Gi
  EXPECT_EQ(q->hard_limits[static_cast<int>(ResourceKind::kCpu)], 128000);          // 128 cpu
  EXPECT_EQ(q->hard_limits[static_cast<int>(ResourceKind::kMemory)], 512 * kGi);    // 512Gi
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kPods)], 50);
}

// Bare cpu and memory mean requests, as in Kubernetes.
TEST(ResourceQuotaFromJsonTest, BareCpuAndMemoryMeanRequests) {
  json obj = Valid(R"(
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ns}
spec:
  hard: {cpu: 500m, memory: 1Gi, count/jobs.batch: "10"}
)");
  auto q = ResourceQuotaFromJson(obj);
  ASSERT_TRUE(q.has_value()) << q.error().ToString();
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kCpu)], 500);
  EXPECT_EQ(q->hard_requests[static_cast<int>(ResourceKind::kMemory)], kGi);
  EXPECT_FALSE(q->hard_limits[static_cast<int>(ResourceKind::kCpu)].has_value());
}

// ============================================================================
// Node.

Node AgentNode() {
  Node n;
  n.name = "gpu-node-1";
  n.labels = Labels{{"tessera.dev/flavor", "a100-spot"}};
  n.rack = "rack-a";
  n.cpu_milli = 96000;
  n.memory_bytes = 512 * kGi;
  for (int32_t i = 0; i < 4; ++i) {
    n.gpus.push_back(GpuDevice{.index = i,
                               .uuid = "GPU-" + std::to_string(i),
                               .model = "A100-80GB",
                               .memory_bytes = 80 * kGi,
                               .nvlink_domain = i / 2});
  }
  return n;
}

// What an agent registers converts back to the node it described.
TEST(NodeFromJsonTest, RoundTripsThroughNodeObject) {
  const Node original = AgentNode();
  json obj = NodeObject(original, /*simulated_gpus=*/false, "2026-11-29T16:15:31Z");
  ASSERT_TRUE(ValidateManifest(obj).has_value());
  auto node = NodeFromJson(obj);
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  EXPECT_EQ(node->name, original.name);
  EXPECT_EQ(node->rack, "rack-a");
  EXPECT_EQ(node->cpu_milli, 96000);
  EXPECT_EQ(node->memory_bytes, 512 * kGi);
  EXPECT_EQ(node->gpus, original.gpus);
  EXPECT_TRUE(node->ready);
  EXPECT_FALSE(node->unschedulable);
  EXPECT_TRUE(node->labels.Matches(original.labels));  // plus hostname, rack and product labels
}

// A node reporting Ready "False", or cordoned, says so.
TEST(NodeFromJsonTest, NotReadyAndCordonedNodeSaysSo) {
  Node original = AgentNode();
  original.ready = false;
  original.unschedulable = true;
  auto node = NodeFromJson(NodeObject(original, false, "2026-11-29T16:15:31Z"));
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  EXPECT_FALSE(node->ready);
  EXPECT_TRUE(node->unschedulable);
  EXPECT_FALSE(node->Schedulable());
}

// Without the inventory annotation, allocatable nvidia.com/gpu becomes generic
// 80Gi devices; taints are read; no Ready condition means not ready.
TEST(NodeFromJsonTest, NodeWithoutInventoryGetsGenericDevices) {
  json obj = Valid(R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  taints: [{key: spot, value: "true", effect: NoSchedule}]
)");
  obj["status"] = {{"allocatable", {{"cpu", "32"}, {"memory", "128Gi"}, {"nvidia.com/gpu", "2"}}}};
  auto node = NodeFromJson(obj);
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  ASSERT_EQ(node->gpus.size(), 2u);
  EXPECT_EQ(node->gpus[1].index, 1);
  EXPECT_EQ(node->gpus[1].memory_bytes, 80 * kGi);
  EXPECT_EQ(node->gpus[1].nvlink_domain, 0);
  EXPECT_EQ(node->cpu_milli, 32000);
  ASSERT_EQ(node->taints.size(), 1u);
  EXPECT_EQ(node->taints[0], (Taint{.key = "spot", .value = "true", .effect = TaintEffect::kNoSchedule}));
  EXPECT_FALSE(node->ready);
}

// Devices are ordered by index whatever order the annotation lists them in, since
// admissions name devices by position.
TEST(NodeFromJsonTest, InventoryIsSortedByIndex) {
  json obj = NodeObject(AgentNode(), false, "2026-11-29T16:15:31Z");
  json devices = json::parse(obj["metadata"]["annotations"]["tessera.dev/gpus"].get<std::string>());
  std::reverse(devices.begin(), devices.end());
  obj["metadata"]["annotations"]["tessera.dev/gpus"] = devices.dump();
  auto node = NodeFromJson(obj);
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  EXPECT_EQ(node->gpus, AgentNode().gpus);
}

// A broken inventory is an error naming the annotation.
TEST(NodeFromJsonTest, BrokenInventoryErrorNamesAnnotation) {
  json obj = NodeObject(AgentNode(), false, "2026-11-29T16:15:31Z");
  obj["metadata"]["annotations"]["tessera.dev/gpus"] = R"([{"index": 0}])";
  EXPECT_EQ(ErrorOf(NodeFromJson(obj)), "metadata.annotations[tessera.dev/gpus][0].memoryBytes: required");
  obj["metadata"]["annotations"]["tessera.dev/gpus"] = "[{";
  EXPECT_THAT(ErrorOf(NodeFromJson(obj)), StartsWith("metadata.annotations[tessera.dev/gpus]: not valid JSON"));
}

// ============================================================================
// Jobs -> Workloads.

json SeedVolcanoJob() {
  json job = SeedObject("07-volcano-job.yaml", "Job", "distributed-llm-training");
  job["metadata"]["uid"] = "uid-1";  // as the store assigns
  return job;
}

// The seed's Volcano job becomes a Workload owned by it: one pod set per task,
// the gang minAvailable 4 of 4 workers; no queue named, so "default".
TEST(WorkloadForJobTest, SeedVolcanoJobBecomesGangWorkload) {
  auto wl = WorkloadForJob(SeedVolcanoJob());
  ASSERT_TRUE(wl.has_value()) << wl.error().ToString();
  EXPECT_TRUE(ValidateManifest(*wl).has_value()) << ValidateManifest(*wl).error().ToString();
  EXPECT_EQ((*wl)["metadata"]["name"], "vcjob-distributed-llm-training");
  EXPECT_EQ((*wl)["metadata"]["namespace"], "team-nlp");
  EXPECT_EQ((*wl)["metadata"]["labels"]["tessera.dev/job-name"], "distributed-llm-training");
  EXPECT_EQ((*wl)["metadata"]["ownerReferences"],
            json::parse(R"([{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                             "name": "distributed-llm-training", "uid": "uid-1", "controller": true}])"));
  EXPECT_EQ((*wl)["spec"]["queueName"], "default");
  const json& pod_sets = (*wl)["spec"]["podSets"];
  ASSERT_EQ(pod_sets.size(), 1u);
  EXPECT_EQ(pod_sets[0]["name"], "worker");
  EXPECT_EQ(pod_sets[0]["count"], 4);
  EXPECT_EQ(pod_sets[0]["minCount"], 4);
  EXPECT_EQ(pod_sets[0]["template"], SeedVolcanoJob()["spec"]["tasks"][0]["template"]);
}

// The seed job's Workload, converted, asks for 4 GPUs per pod, 4 pods all or
// nothing, at the global default class's priority.
TEST(WorkloadForJobTest, SeedVolcanoWorkloadConvertsToDomain) {
  auto wl = WorkloadForJob(SeedVolcanoJob());
  ASSERT_TRUE(wl.has_value()) << wl.error().ToString();
  auto w = ToWorkload(*wl);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->Key(), "team-nlp/vcjob-distributed-llm-training");
  EXPECT_EQ(w->local_queue_name, "default");
  EXPECT_EQ(w->priority, 1000);  // development, the global default
  EXPECT_EQ(w->priority_class, "development");
  ASSERT_EQ(w->pod_sets.size(), 1u);
  const PodSet& ps = w->pod_sets[0];
  EXPECT_EQ(ps.name, "worker");
  EXPECT_EQ(ps.count, 4);
  EXPECT_EQ(ps.MinCount(), 4);
  EXPECT_EQ(ps.requests.gpu(), 4000);  // 4 GPUs per pod
  EXPECT_EQ(ps.requests.get(ResourceKind::kPods), 1);
  EXPECT_EQ(w->TotalRequests().gpu(), 16000);  // 4 pods * 4 GPUs
  EXPECT_FALSE(w->admitted());
  EXPECT_TRUE(w->max_run.infinite());
}

// A batch/v1 Job: queue from the kueue label, one gang pod set of parallelism
// pods, the template's priority class, activeDeadlineSeconds as max run.
TEST(WorkloadForJobTest, BatchJobUsesQueueLabelAndParallelism) {
  json job = Valid(R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
  namespace: team-a
  uid: uid-2
  labels: {kueue.x-k8s.io/queue-name: team-a-queue}
spec:
  parallelism: 3
  activeDeadlineSeconds: 7200
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]
)");
  auto wl = WorkloadForJob(job);
  ASSERT_TRUE(wl.has_value()) << wl.error().ToString();
  EXPECT_TRUE(ValidateManifest(*wl).has_value()) << ValidateManifest(*wl).error().ToString();
  EXPECT_EQ((*wl)["metadata"]["name"], "job-sweep");
  EXPECT_EQ((*wl)["metadata"]["ownerReferences"][0]["apiVersion"], "batch/v1");
  EXPECT_EQ((*wl)["metadata"]["annotations"]["tessera.dev/max-run-seconds"], "7200");
  EXPECT_EQ((*wl)["spec"]["queueName"], "team-a-queue");
  EXPECT_EQ((*wl)["spec"]["priorityClassName"], "training");
  const json& ps = (*wl)["spec"]["podSets"][0];
  EXPECT_EQ(ps["name"], "main");
  EXPECT_EQ(ps["count"], 3);
  EXPECT_EQ(ps["minCount"], 3);

  auto w = ToWorkload(*wl);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->priority, 100000);  // training
  EXPECT_EQ(w->max_run, Duration::Seconds(7200));
  EXPECT_EQ(w->pod_sets[0].requests.gpu(), 1000);  // the limit stands in for the missing request
}

// A batch/v1 Job runs no more pods at once than it has completions (Kueue's count).
TEST(WorkloadForJobTest, BatchJobCountCappedByCompletions) {
  json job = Valid(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, uid: u}
spec:
  parallelism: 5
  completions: 2
  template: {spec: {restartPolicy: Never, containers: [{name: main}]}}
)");
  auto wl = WorkloadForJob(job);
  ASSERT_TRUE(wl.has_value()) << wl.error().ToString();
  EXPECT_EQ((*wl)["spec"]["podSets"][0]["count"], 2);  // min(5, 2)
  EXPECT_EQ((*wl)["spec"]["queueName"], "default");     // no queue label
}

// Volcano's gang goes to the first tasks; a task past it still needs one pod,
// the least a pod set can need.
TEST(WorkloadForJobTest, VolcanoGangFillsFirstTasks) {
  json job = Valid(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi, namespace: ns, uid: u, labels: {kueue.x-k8s.io/queue-name: from-label}}
spec:
  minAvailable: 3
  queue: research
  priorityClassName: training
  tasks:
    - {name: launcher, replicas: 1, template: {spec: {containers: [{name: c}]}}}
    - {name: worker, replicas: 4, template: {spec: {containers: [{name: c}]}}}
    - {name: eval, replicas: 2, template: {spec: {containers: [{name: c}]}}}
)");
  auto wl = WorkloadForJob(job);
  ASSERT_TRUE(wl.has_value()) << wl.error().ToString();
  const json& ps = (*wl)["spec"]["podSets"];
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0]["minCount"], 1);  // gang 3: launcher takes 1, 2 left
  EXPECT_EQ(ps[1]["minCount"], 2);  // worker takes the 2 left
  EXPECT_EQ(ps[2]["minCount"], 1);  // past the gang: one pod
  EXPECT_EQ(ps[1]["count"], 4);
  EXPECT_EQ((*wl)["spec"]["queueName"], "research");  // spec.queue wins over the label
  EXPECT_EQ((*wl)["spec"]["priorityClassName"], "training");
}

// A job without a uid cannot own its Workload: the error names the field.
TEST(WorkloadForJobTest, JobWithoutUidIsRefused) {
  json job = SeedObject("07-volcano-job.yaml", "Job", "distributed-llm-training");
  EXPECT_THAT(ErrorOf(WorkloadForJob(job)), StartsWith("metadata.uid: required"));
}

// Only Jobs are translated.
TEST(WorkloadForJobTest, OtherKindsAreRefused) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"uid", "u"}}}};
  EXPECT_THAT(ErrorOf(WorkloadForJob(pod)), HasSubstr("expected a batch/v1 Job or a batch.volcano.sh/v1alpha1 Job"));
}

// ============================================================================
// Workload.

// A named class gives priority and policy; spec.priority overrides the value only.
TEST(WorkloadFromJsonTest, PriorityFromNamedClassOrSpec) {
  json obj = OnePodSet("{containers: [{name: c}]}", "  priorityClassName: batch");
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->priority, 0);  // batch
  EXPECT_EQ(w->preemption_policy, PreemptionPolicy::kNever);

  obj["spec"]["priority"] = 42;
  w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->priority, 42);
  EXPECT_EQ(w->priority_class, "batch");
  EXPECT_EQ(w->preemption_policy, PreemptionPolicy::kNever);
}

// A class that does not exist falls back to the global default; with none, 0.
TEST(WorkloadFromJsonTest, MissingClassFallsBackToDefault) {
  json obj = OnePodSet("{containers: [{name: c}]}", "  priorityClassName: no-such-class");
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->priority, 1000);  // development
  Classes none{.all = {}};
  w = ToWorkload(obj, none);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->priority, 0);
  EXPECT_EQ(w->priority_class, "no-such-class");
}

// Production work is never a victim.
TEST(WorkloadFromJsonTest, NonPreemptibleComesFromClass) {
  auto w = ToWorkload(OnePodSet("{containers: [{name: c}]}", "  priorityClassName: production"));
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_TRUE(w->non_preemptible);
  EXPECT_EQ(w->priority, 1000000);
}

// A pod is charged its containers' sum, or its largest init container if more;
// a limit stands in for a missing request and a request for a missing limit.
TEST(WorkloadFromJsonTest, PodChargeSumsContainersAndTakesInitMax) {
  auto w = ToWorkload(OnePodSet(R"({
    initContainers: [{name: init, resources: {requests: {cpu: "2", memory: 512Mi}}}],
    containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "2"}}},
                 {name: b, resources: {limits: {cpu: 500m, memory: 1Gi}}}]})"));
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  const PodSet& ps = w->pod_sets[0];
  EXPECT_EQ(ps.requests.cpu(), 2000);           // max(1000 + 500, init 2000)
  EXPECT_EQ(ps.requests.memory(), 2 * kGi);     // max(1Gi + 1Gi, init 512Mi)
  EXPECT_EQ(ps.limits.cpu(), 2500);             // max(2000 + 500, init 2000)
  EXPECT_EQ(ps.limits.memory(), 2 * kGi);       // a's request as its limit + b's 1Gi
  EXPECT_EQ(ps.requests.get(ResourceKind::kPods), 1);
}

// Sidecars (init containers that keep running) add to the containers' charge.
TEST(WorkloadFromJsonTest, SidecarsAddToContainers) {
  auto w = ToWorkload(OnePodSet(R"({
    initContainers: [{name: proxy, restartPolicy: Always, resources: {requests: {cpu: 250m}}}],
    containers: [{name: a, resources: {requests: {cpu: "1"}}}]})"));
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->pod_sets[0].requests.cpu(), 1250);  // 1000 + sidecar 250
}

// Fractions that sum past one GPU in a pod are not a valid GPU request.
TEST(WorkloadFromJsonTest, FractionsSummingPastOneGpuAreAnError) {
  auto w = ToWorkload(OnePodSet(R"({containers: [
    {name: a, resources: {requests: {nvidia.com/gpu: "0.5"}, limits: {nvidia.com/gpu: "0.5"}}},
    {name: b, resources: {requests: {nvidia.com/gpu: "0.75"}, limits: {nvidia.com/gpu: "0.75"}}}]})"));
  EXPECT_THAT(ErrorOf(w), StartsWith("spec.podSets[0].template.spec: the containers together ask for 1.25 GPUs"));
}

// Selector, tolerations, GPU memory and the topology annotation reach the pod set.
TEST(WorkloadFromJsonTest, PodSetPlacementRules) {
  json obj = Valid(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  podSets:
    - name: replica
      count: 3
      template:
        metadata: {annotations: {tessera.dev/topology: spread}}
        spec:
          nodeSelector: {tessera.dev/flavor: a100-spot}
          tolerations: [{key: spot, operator: Equal, value: "true"}]
          containers: [{name: c, resources: {requests: {tessera.dev/gpu-memory: 20Gi}}}]
)");
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  const PodSet& ps = w->pod_sets[0];
  EXPECT_EQ(ps.topology, TopologyPreference::kSpread);
  EXPECT_EQ(ps.node_selector, (Labels{{"tessera.dev/flavor", "a100-spot"}}));
  ASSERT_EQ(ps.tolerations.size(), 1u);
  EXPECT_EQ(ps.tolerations[0], (Toleration{.key = "spot", .value = "true"}));
  EXPECT_EQ(ps.requests.get(ResourceKind::kGpuMemory), 20 * kGi);
}

// An unknown topology is an error naming the annotation.
TEST(WorkloadFromJsonTest, UnknownTopologyIsAnError) {
  json obj = OnePodSet("{containers: [{name: c}]}");
  obj["spec"]["podSets"][0]["template"]["metadata"]["annotations"]["tessera.dev/topology"] = "racks";
  EXPECT_EQ(ErrorOf(ToWorkload(obj)),
            "spec.podSets[0].template.metadata.annotations[tessera.dev/topology]: unsupported value \"racks\" "
            "(use spread, node, rack or nvlink)");
}

// Both runtime limits set: the smaller one ends the run first.
TEST(WorkloadFromJsonTest, MaxRunTakesTheSmallerLimit) {
  json obj = OnePodSet("{containers: [{name: c}]}", "  maximumExecutionTimeSeconds: 3600");
  obj["metadata"]["annotations"]["tessera.dev/max-run-seconds"] = "600";
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->max_run, Duration::Seconds(600));  // min(600, 3600)
}

// A malformed max-run annotation is an error naming it.
TEST(WorkloadFromJsonTest, BadMaxRunAnnotationIsAnError) {
  json obj = OnePodSet("{containers: [{name: c}]}");
  obj["metadata"]["annotations"]["tessera.dev/max-run-seconds"] = "1h";
  EXPECT_EQ(ErrorOf(ToWorkload(obj)),
            "metadata.annotations[tessera.dev/max-run-seconds]: \"1h\" is not a positive whole number of seconds");
}

// Creation time and the last checkpoint are read from RFC 3339.
TEST(WorkloadFromJsonTest, ReadsCreationTimeAndLastCheckpoint) {
  json obj = OnePodSet("{containers: [{name: c}]}");
  obj["metadata"]["creationTimestamp"] = "2026-11-29T16:15:31Z";
  obj["metadata"]["annotations"]["tessera.dev/last-checkpoint"] = "2026-11-29T16:45:31Z";
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->creation_time, Timestamp::FromSeconds(1795968931));
  ASSERT_TRUE(w->last_checkpoint.has_value());
  EXPECT_EQ(*w->last_checkpoint - w->creation_time, Duration::Seconds(1800));  // 30 minutes later
}

// An Evicted condition or a deletion timestamp marks the workload evicting.
TEST(WorkloadFromJsonTest, EvictedOrDeletedIsEvicting) {
  json obj = OnePodSet("{containers: [{name: c}]}");
  EXPECT_FALSE(ToWorkload(obj)->evicting);
  obj["status"]["conditions"] = json::parse(R"([{"type": "Evicted", "status": "True", "reason": "Preempted"}])");
  EXPECT_TRUE(ToWorkload(obj)->evicting);
  obj["status"].erase("conditions");
  obj["metadata"]["deletionTimestamp"] = "2026-11-29T16:15:31Z";
  EXPECT_TRUE(ToWorkload(obj)->evicting);
}

// Two pod sets with one name cannot be told apart by an admission.
TEST(WorkloadFromJsonTest, DuplicatePodSetNamesAreAnError) {
  json obj = OnePodSet("{containers: [{name: c}]}");
  obj["spec"]["podSets"].push_back(obj["spec"]["podSets"][0]);
  EXPECT_EQ(ErrorOf(ToWorkload(obj)), "spec.podSets[1].name: duplicate pod set name \"main\"");
}

// ============================================================================
// Admission.

// An admission of kTwoPodSets: launcher on n1 (no GPU), two workers sharing
// device 1 of n2 (0.5 each) in a100-ondemand.
Admission SampleAdmission() {
  Admission a;
  a.cluster_queue = ClusterQueueId(0);
  a.pod_sets.push_back(PodSetAssignment{.flavor = FlavorId(1), .count = 1, .pods = {PodPlacement{.node = NodeId(0)}}});
  a.pod_sets.push_back(PodSetAssignment{
      .flavor = FlavorId(1),
      .count = 2,
      .pods = {PodPlacement{.node = NodeId(1), .gpus = {DeviceShare{.device = 1, .milli = 500}}},
               PodPlacement{.node = NodeId(1), .gpus = {DeviceShare{.device = 1, .milli = 500}}}}});
  return a;
}

json AdmittedTwoPodSets(const Admission& a, const std::string& admitted_at) {
  json obj = Valid(kTwoPodSets);
  auto w = ToWorkload(obj);
  EXPECT_TRUE(w.has_value()) << w.error().ToString();
  obj["status"]["admission"] = AdmissionToJson(a, *w, NamesOf<ClusterQueueId>(kQueues), NamesOf<FlavorId>(kFlavors),
                                               NamesOf<NodeId>(kNodes), admitted_at);
  return obj;
}

// The scheduler's decision, written as status.admission and read back, is the same Admission.
TEST(AdmissionTest, RoundTripsThroughJson) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "2026-11-29T16:15:31Z");
  auto w = ToWorkload(obj);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_TRUE(w->admission.has_value());
  EXPECT_EQ(*w->admission, SampleAdmission());
  EXPECT_EQ(w->start_time, Timestamp::FromSeconds(1795968931));
}

// The JSON is Kueue's format plus placements: flavors per requested resource.
TEST(AdmissionTest, JsonNamesQueueFlavorsAndNodes) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "2026-11-29T16:15:31Z");
  EXPECT_EQ(obj["status"]["admission"], json::parse(R"({
    "clusterQueue": "gpu-cluster-queue",
    "admittedAt": "2026-11-29T16:15:31Z",
    "podSetAssignments": [
      {"name": "launcher", "flavors": {"cpu": "a100-ondemand"}, "count": 1,
       "placements": [{"node": "n1", "devices": []}]},
      {"name": "worker", "flavors": {"nvidia.com/gpu": "a100-ondemand"}, "count": 2,
       "placements": [{"node": "n2", "devices": [{"index": 1, "milli": 500}]},
                      {"node": "n2", "devices": [{"index": 1, "milli": 500}]}]}]})"));
}

// A placement on a node that no longer exists is an error naming the node.
TEST(AdmissionTest, UnknownNodeIsAnError) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "2026-11-29T16:15:31Z");
  obj["status"]["admission"]["podSetAssignments"][1]["placements"][1]["node"] = "n9";
  EXPECT_EQ(ErrorOf(ToWorkload(obj)),
            "status.admission.podSetAssignments[1].placements[1].node: node \"n9\" does not exist");
}

// An assignment in a flavor that no longer exists is an error naming the flavor.
TEST(AdmissionTest, UnknownFlavorIsAnError) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "2026-11-29T16:15:31Z");
  obj["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"] = "h100";
  EXPECT_EQ(ErrorOf(ToWorkload(obj)),
            "status.admission.podSetAssignments[0].flavors: flavor \"h100\" does not exist");
}

// Every pod set needs an assignment.
TEST(AdmissionTest, MissingAssignmentIsAnError) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "2026-11-29T16:15:31Z");
  obj["status"]["admission"]["podSetAssignments"].erase(0);
  EXPECT_EQ(ErrorOf(ToWorkload(obj)),
            "status.admission.podSetAssignments: no assignment for pod set \"launcher\"");
}

// A bad admittedAt is an error naming the field and the text.
TEST(AdmissionTest, BadAdmittedAtIsAnError) {
  json obj = AdmittedTwoPodSets(SampleAdmission(), "yesterday");
  EXPECT_THAT(ErrorOf(ToWorkload(obj)), StartsWith("status.admission.admittedAt: timestamp \"yesterday\""));
}

}  // namespace
}  // namespace tessera
