#include "api/validation.h"
#include "tests/testing/manifest_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/manifest.h"

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::ErrorOf;
using testing::FromYaml;

// Valid objects that each test changes in one place.
json VolcanoJob() {
  return FromYaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: train
  namespace: team-nlp
spec:
  minAvailable: 2
  schedulerName: volcano
  queue: default
  tasks:
    - replicas: 2
      name: worker
      template:
        spec:
          containers:
            - name: trainer
              image: trainer:v1
              resources:
                requests: {nvidia.com/gpu: "1", cpu: 500m, memory: 8Gi}
                limits: {nvidia.com/gpu: "1"}
          restartPolicy: OnFailure
)");
}

json ClusterQueue() {
  return FromYaml(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: a100-spot
          resources:
            - {name: cpu, nominalQuota: 128}
            - {name: memory, nominalQuota: 512Gi}
            - {name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 4, lendingLimit: 8}
        - name: a100-ondemand
          resources:
            - {name: cpu, nominalQuota: 64}
            - {name: memory, nominalQuota: 256Gi}
            - {name: nvidia.com/gpu, nominalQuota: 8}
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  queueingStrategy: BestEffortFIFO
  fairSharing: {weight: "2"}
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: TryNextFlavor}
)");
}

json BatchJob() {
  return FromYaml(R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: sample
  namespace: team-nlp
  labels: {kueue.x-k8s.io/queue-name: team-nlp-queue}
spec:
  parallelism: 3
  completions: 3
  backoffLimit: 2
  suspend: true
  ttlSecondsAfterFinished: 600
  template:
    spec:
      priorityClassName: exploratory
      nodeSelector: {gpu: a100}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: main
          image: python:3.12
          command: [python, train.py]
          args: ["--epochs", "3"]
          workingDir: /work
          env:
            - {name: EPOCHS, value: "3"}
            - name: POD
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          ports: [{containerPort: 8080, name: http}]
          volumeMounts: [{name: data, mountPath: /data}]
          imagePullPolicy: IfNotPresent
          securityContext: {runAsUser: 1000}
          resources:
            requests: {cpu: "2", memory: 4Gi, nvidia.com/gpu: "0.25"}
      volumes: [{name: data, emptyDir: {}}]
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
)");
}

void ExpectValid(const json& object) {
  auto kind = ValidateManifest(object);
  EXPECT_TRUE(kind.has_value()) << kind.error().ToString();
}

json& Container(json& job) { return job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]; }

// ============================================================================
// Valid objects.

// The fixtures above are valid: each test below breaks them in one place.
TEST(ValidationTest, FixturesAreValid) {
  ExpectValid(VolcanoJob());
  ExpectValid(ClusterQueue());
  ExpectValid(BatchJob());
}

// A Workload with pod sets, a priority and a queue validates.
TEST(ValidationTest, WorkloadIsValid) {
  ExpectValid(FromYaml(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: job-sample-1, namespace: team-nlp}
spec:
  queueName: team-nlp-queue
  priorityClassName: scheduled-training
  priority: 100000
  active: true
  podSets:
    - name: workers
      count: 4
      minCount: 2
      template:
        spec:
          containers: [{name: w, image: x, resources: {requests: {nvidia.com/gpu: "2"}}}]
)"));
}

// A Node as an agent registers it: taints and a status the server keeps.
TEST(ValidationTest, NodeWithTaintsAndStatusIsValid) {
  ExpectValid(FromYaml(R"(
apiVersion: v1
kind: Node
metadata: {name: gpu-node-1.rack-a, labels: {tessera.dev/flavor: a100-spot}}
spec:
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
status:
  capacity: {nvidia.com/gpu: "8"}
)"));
}

// A Node's pod range: an IPv4 network, one of them, podCIDR the first of
// podCIDRs; each error names the field.
TEST(ValidationTest, NodePodCidrMustBeOneIpv4Network) {
  const json node = FromYaml("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  json valid = node;
  valid["spec"] = {{"podCIDR", "10.244.3.0/24"}, {"podCIDRs", json::array({"10.244.3.0/24"})}};
  ExpectValid(valid);
  json empty = node;
  empty["spec"] = {{"podCIDR", ""}};  // none yet
  ExpectValid(empty);
  json host_bits = node;
  host_bits["spec"] = {{"podCIDR", "10.244.3.7/24"}};
  EXPECT_EQ(ErrorOf(host_bits),
            "spec.podCIDR: Invalid value: \"10.244.3.7/24\" has host bits set: the /24 network that holds 10.244.3.7 "
            "is 10.244.3.0/24; write that");
  json two = node;
  two["spec"] = {{"podCIDRs", json::array({"10.244.3.0/24", "fd00::/64"})}};
  EXPECT_THAT(ErrorOf(two), StartsWith("spec.podCIDRs[1]: Invalid value: \"fd00::/64\""));
  EXPECT_THAT(ErrorOf(two), HasSubstr("spec.podCIDRs: Invalid value: [\"10.244.3.0/24\",\"fd00::/64\"]: may specify no "
                                      "more than one CIDR (only IPv4 is supported)"));
  json mismatch = node;
  mismatch["spec"] = {{"podCIDR", "10.244.3.0/24"}, {"podCIDRs", json::array({"10.244.4.0/24"})}};
  EXPECT_EQ(ErrorOf(mismatch),
            "spec.podCIDR: Invalid value: \"10.244.3.0/24\": must be the first of spec.podCIDRs (\"10.244.4.0/24\")");
}

// As kube-apiserver: an update may give a Node its range ("" to valid) or
// keep it (in either field), but not move or drop it.
TEST(ValidationTest, NodePodCidrChangesOnlyFromEmpty) {
  const KindInfo& kind = *FindKindByStoreKey("/Node");
  const json none = FromYaml("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  json set = none;
  set["spec"] = {{"podCIDR", "10.244.3.0/24"}, {"podCIDRs", json::array({"10.244.3.0/24"})}};
  json only_single = none;
  only_single["spec"] = {{"podCIDR", "10.244.3.0/24"}};
  json moved = none;
  moved["spec"] = {{"podCIDR", "10.244.4.0/24"}, {"podCIDRs", json::array({"10.244.4.0/24"})}};
  const std::string forbidden =
      "spec.podCIDR: Forbidden: node updates may not change podCIDR except from \"\" to valid";
  EXPECT_TRUE(ValidateUpdate(kind, none, set).ok());
  EXPECT_TRUE(ValidateUpdate(kind, none, none).ok());
  EXPECT_TRUE(ValidateUpdate(kind, set, set).ok());
  EXPECT_TRUE(ValidateUpdate(kind, set, only_single).ok());  // the same range, in podCIDR alone
  EXPECT_EQ(ValidateUpdate(kind, set, moved).message(), forbidden);
  EXPECT_EQ(ValidateUpdate(kind, set, none).message(), forbidden);
  EXPECT_EQ(ValidateUpdate(kind, only_single, moved).message(), forbidden);
}

// RBAC names are path segments: a ClusterRole may be called "system:gpu-viewer".
TEST(ValidationTest, ClusterRoleNameMayContainColon) {
  ExpectValid(FromYaml(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:gpu-viewer"}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get, list]}]
)"));
}

// A RoleBinding names its subjects and its role.
TEST(ValidationTest, RoleBindingIsValid) {
  ExpectValid(FromYaml(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-members, namespace: team-nlp}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: Role, name: gpu-workload-role, apiGroup: rbac.authorization.k8s.io}
)"));
}

// `status` is accepted with any content and not checked; null metadata fields
// (as kubectl writes `creationTimestamp: null`) are absent fields.
TEST(ValidationTest, StatusAndNullFieldsAreAccepted) {
  json job = VolcanoJob();
  job["status"] = {{"state", {{"phase", "Running"}}}, {"anything", 3}};
  job["metadata"]["creationTimestamp"] = nullptr;
  job["spec"]["priorityClassName"] = nullptr;
  ExpectValid(job);
}

// Fractions of a GPU below one are valid, as decimals or in milli-units.
TEST(ValidationTest, GpuFractionBelowOneIsValid) {
  json job = VolcanoJob();
  Container(job)["resources"]["requests"]["nvidia.com/gpu"] = "0.25";
  Container(job)["resources"]["limits"]["nvidia.com/gpu"] = "250m";
  ExpectValid(job);
}

// ConfigMaps: text data and base64 binaryData, no key in both; an immutable
// ConfigMap or Secret keeps its data; a claim's spec does not change.
TEST(ValidationTest, ConfigMapsImmutableObjectsAndClaims) {
  json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "app"}, {"namespace", "a"}}},
          {"data", {{"mode", "fast"}}}, {"binaryData", {{"blob", "AAEC"}}}};
  ExpectValid(cm);
  json dup = cm;
  dup["binaryData"]["mode"] = "AAEC";
  auto refused = ValidateManifest(dup);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("binaryData.mode: Invalid value: duplicate of key present in data"),
            std::string::npos)
      << refused.error().message();
  json bad_key = cm;
  bad_key["data"]["no/slash"] = "x";
  EXPECT_FALSE(ValidateManifest(bad_key).has_value());
  const KindInfo& cm_kind = *FindKindByStoreKey("/ConfigMap");
  json frozen = cm;
  frozen["immutable"] = true;
  json changed = frozen;
  changed["data"]["mode"] = "slow";
  EXPECT_TRUE(ValidateUpdate(cm_kind, cm, changed).ok()) << "a mutable one changes";
  Status s = ValidateUpdate(cm_kind, frozen, changed);
  EXPECT_EQ(s.message(), "data: Forbidden: field is immutable when `immutable` is set (delete the ConfigMap and create it again)");
  json claim{{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}, {"metadata", {{"name", "d"}, {"namespace", "a"}}},
             {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  ExpectValid(claim);
  json zero = claim;
  zero["spec"]["resources"]["requests"]["storage"] = "0";
  EXPECT_FALSE(ValidateManifest(zero).has_value());
  json no_modes = claim;
  no_modes["spec"].erase("accessModes");
  EXPECT_FALSE(ValidateManifest(no_modes).has_value());
  json bigger = claim;
  bigger["spec"]["resources"]["requests"]["storage"] = "2Gi";
  EXPECT_FALSE(ValidateUpdate(*FindKindByStoreKey("/PersistentVolumeClaim"), claim, bigger).ok());
}

// Pod volumes: the sources Tessera mounts, field by field; one source each.
TEST(ValidationTest, VolumesAreCheckedFieldByField) {
  json job = VolcanoJob();
  json& spec = job["spec"]["tasks"][0]["template"]["spec"];
  spec["volumes"] = {{{"name", "cfg"}, {"configMap", {{"name", "app"}, {"items", {{{"key", "k"}, {"path", "a/b"}}}}}}},
                     {{"name", "pw"}, {"secret", {{"secretName", "db"}, {"defaultMode", 0400}}}},
                     {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "ds"}}}},
                     {{"name", "nfs"}, {"nfs", {{"server", "x"}, {"path", "/"}}}}};
  ExpectValid(job);
  const auto refused = [&](const json& volume, const std::string& text) {
    json bad = VolcanoJob();
    bad["spec"]["tasks"][0]["template"]["spec"]["volumes"] = {volume};
    auto kind = ValidateManifest(bad);
    ASSERT_FALSE(kind.has_value()) << volume.dump();
    EXPECT_NE(kind.error().message().find(text), std::string::npos) << kind.error().message();
  };
  refused({{"name", "c"}, {"configMap", {{"name", "a"}, {"items", {{{"key", "k"}, {"path", "../x"}}}}}}},
          "spec.tasks[0].template.spec.volumes[0].configMap.items[0].path: Invalid value: \"../x\"");
  refused({{"name", "s"}, {"secret", {{"secretName", "a"}, {"defaultMode", 01000}}}},
          "volumes[0].secret.defaultMode");
  refused({{"name", "h"}, {"hostPath", {{"path", "data"}}}}, "volumes[0].hostPath.path: Invalid value: \"data\"");
  refused({{"name", "two"}, {"emptyDir", json::object()}, {"hostPath", {{"path", "/x"}}}},
          "volumes[0]: Forbidden: may not specify more than 1 volume type");
  refused({{"name", "p"}, {"persistentVolumeClaim", json::object()}}, "persistentVolumeClaim.claimName");
}

// ============================================================================
// Kind and apiVersion.

// An unknown kind is refused naming the field and what the apiVersion serves.
TEST(ValidationTest, UnknownKindIsRefused) {
  json obj = {{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ClusterQeue"},
              {"metadata", {{"name", "a"}}}};
  std::string msg = ErrorOf(obj);
  EXPECT_THAT(msg, StartsWith("kind: unknown kind \"ClusterQeue\""));
  EXPECT_THAT(msg, HasSubstr("did you mean \"ClusterQueue\"?"));
}

// A known kind under the wrong apiVersion says which apiVersions serve it.
TEST(ValidationTest, UnknownApiVersionIsRefused) {
  json obj = {{"apiVersion", "batch/v2"}, {"kind", "Job"}, {"metadata", {{"name", "a"}}}};
  EXPECT_EQ(ErrorOf(obj),
            "apiVersion: kind Job is not served as \"batch/v2\"; use batch/v1 or "
            "batch.volcano.sh/v1alpha1");
}

// apiVersion and kind are required.
TEST(ValidationTest, MissingApiVersionIsRefused) {
  EXPECT_THAT(ErrorOf({{"kind", "Pod"}}), StartsWith("apiVersion: required"));
  EXPECT_THAT(ErrorOf({{"apiVersion", "v1"}}), StartsWith("kind: required"));
}

// ValidateObject checks that the object is of the kind it is given.
TEST(ValidationTest, ObjectOfAnotherKindIsRefused) {
  const KindInfo* batch = FindKindByApiVersion("batch/v1", "Job");
  Status s = ValidateObject(*batch, VolcanoJob());
  EXPECT_THAT(s.message(), StartsWith("apiVersion: expected \"batch/v1\" for kind Job"));
}

// ============================================================================
// Metadata.

// metadata.name is required.
TEST(ValidationTest, MissingNameIsRefused) {
  json job = VolcanoJob();
  job["metadata"].erase("name");
  EXPECT_THAT(ErrorOf(job), StartsWith("metadata.name: required"));
}

// Names are lower-case DNS names: "Team_NLP" is refused with the rule.
TEST(ValidationTest, InvalidNameIsRefused) {
  json cq = ClusterQueue();
  cq["metadata"]["name"] = "Team_NLP";
  std::string msg = ErrorOf(cq);
  EXPECT_THAT(msg, StartsWith("metadata.name: \"Team_NLP\": a lowercase RFC 1123 subdomain"));
}

// A Namespace name is a DNS label: no dots, unlike most names.
TEST(ValidationTest, NamespaceNameIsDnsLabel) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team.nlp"}}}};
  EXPECT_THAT(ErrorOf(ns), StartsWith("metadata.name: \"team.nlp\": a lowercase RFC 1123 label"));
}

// Label values must be strings; a bare true is a boolean and refused with a hint.
TEST(ValidationTest, LabelValueMustBeString) {
  json job = VolcanoJob();
  job["metadata"]["labels"] = {{"preemptible", true}};
  EXPECT_EQ(ErrorOf(job),
            "metadata.labels[preemptible]: expected a string, got boolean true (quote it: \"true\")");
}

// Label keys follow Kubernetes' syntax.
TEST(ValidationTest, InvalidLabelKeyIsRefused) {
  json job = VolcanoJob();
  job["metadata"]["labels"] = {{"team nlp", "a"}};
  EXPECT_THAT(ErrorOf(job), StartsWith("metadata.labels[team nlp]: \"team nlp\" is not a valid key"));
}

// An unknown metadata field is refused with a suggestion.
TEST(ValidationTest, UnknownMetadataFieldIsRefused) {
  json job = VolcanoJob();
  job["metadata"]["label"] = {{"a", "b"}};
  EXPECT_EQ(ErrorOf(job), "metadata.label: unknown field; did you mean \"labels\"?");
}

// ============================================================================
// Unknown fields and types.

// The brief's example: a misspelt field deep in a Volcano task.
TEST(ValidationTest, UnknownFieldNamesFullPathAndSuggestion) {
  json job = VolcanoJob();
  Container(job)["resoures"] = Container(job)["resources"];
  Container(job).erase("resources");
  EXPECT_EQ(ErrorOf(job),
            "spec.tasks[0].template.spec.containers[0].resoures: unknown field; did you mean "
            "\"resources\"?");
}

// A top-level field that does not exist is refused.
TEST(ValidationTest, UnknownTopLevelFieldIsRefused) {
  json job = VolcanoJob();
  job["spce"] = json::object();
  EXPECT_THAT(ErrorOf(job), StartsWith("spce: unknown field; did you mean \"spec\"?"));
}

// An integer field given a string is refused, with a hint to drop the quotes.
TEST(ValidationTest, IntegerFieldGivenStringIsRefused) {
  json job = VolcanoJob();
  job["spec"]["minAvailable"] = "2";
  EXPECT_EQ(ErrorOf(job),
            "spec.minAvailable: expected an integer, got string \"2\" (remove the quotes)");
}

// A string field given a number is refused (env values are strings).
TEST(ValidationTest, StringFieldGivenNumberIsRefused) {
  json job = BatchJob();
  job["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = 3;
  EXPECT_EQ(ErrorOf(job),
            "spec.template.spec.containers[0].env[0].value: expected a string, got integer 3 "
            "(quote it: \"3\")");
}

// A boolean field given YAML 1.1's "yes" (a string in 1.2) is refused.
TEST(ValidationTest, BooleanFieldGivenYesIsRefused) {
  json job = BatchJob();
  job["spec"]["suspend"] = "yes";
  EXPECT_EQ(ErrorOf(job), "spec.suspend: expected true or false, got string \"yes\"");
}

// A list given an object is refused.
TEST(ValidationTest, ListFieldGivenObjectIsRefused) {
  json job = VolcanoJob();
  job["spec"]["tasks"] = {{"name", "worker"}};
  EXPECT_EQ(ErrorOf(job), "spec.tasks: expected a list, got an object");
}

// Negative counts are refused.
TEST(ValidationTest, NegativeReplicasAreRefused) {
  json job = VolcanoJob();
  job["spec"]["tasks"][0]["replicas"] = -1;
  EXPECT_EQ(ErrorOf(job), "spec.tasks[0].replicas: -1 must be at least 0");
}

// Several problems are all reported, each with its path.
TEST(ValidationTest, SeveralErrorsAreAllReported) {
  json job = VolcanoJob();
  job["spec"]["maxRetry"] = "3";
  job["spec"]["queu"] = "default";
  std::string msg = ErrorOf(job);
  EXPECT_THAT(msg, HasSubstr("spec.maxRetry: expected an integer"));
  EXPECT_THAT(msg, HasSubstr("spec.queu: unknown field; did you mean \"queue\"?"));
}

// ============================================================================
// Quantities.

// The brief's example: a malformed nominalQuota names its full path and suffix.
TEST(ValidationTest, MalformedQuantityIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]["nominalQuota"] = "1.5x";
  EXPECT_THAT(ErrorOf(cq),
              StartsWith("spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: quantity "
                         "\"1.5x\": unknown suffix \"x\""));
}

// A negative request is refused.
TEST(ValidationTest, NegativeQuantityIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["requests"]["cpu"] = "-1";
  EXPECT_EQ(ErrorOf(job),
            "spec.tasks[0].template.spec.containers[0].resources.requests[cpu]: quantity \"-1\": "
            "must not be negative");
}

// 1.5 GPUs is neither a fraction below one nor whole: refused, naming the value.
TEST(ValidationTest, GpuOneAndAHalfIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["requests"]["nvidia.com/gpu"] = "1.5";
  Container(job)["resources"]["limits"]["nvidia.com/gpu"] = "2";
  std::string msg = ErrorOf(job);
  EXPECT_THAT(msg, StartsWith("spec.tasks[0].template.spec.containers[0].resources.requests[nvidia.com/gpu]: "
                              "nvidia.com/gpu \"1.5\""));
  EXPECT_THAT(msg, HasSubstr("fraction below one"));
}

// A plain YAML number 1.5 (a float) gets the same GPU rule.
TEST(ValidationTest, GpuFloatOneAndAHalfIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["limits"]["nvidia.com/gpu"] = 1.5;
  EXPECT_THAT(ErrorOf(job), HasSubstr("limits[nvidia.com/gpu]: nvidia.com/gpu \"1.5\""));
}

// The GPU rule applies to ClusterQueue quotas too.
TEST(ValidationTest, GpuQuotaOneAndAHalfIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = "1.5";
  EXPECT_THAT(ErrorOf(cq), StartsWith("spec.resourceGroups[0].flavors[0].resources[2].nominalQuota: "
                                      "nvidia.com/gpu \"1.5\""));
}

// ...and to ResourceQuota's requests.nvidia.com/gpu.
TEST(ValidationTest, ResourceQuotaGpuOneAndAHalfIsRefused) {
  json quota = FromYaml(R"(
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: team-nlp}
spec: {hard: {requests.nvidia.com/gpu: "1.5", pods: "10"}}
)");
  EXPECT_THAT(ErrorOf(quota), StartsWith("spec.hard[requests.nvidia.com/gpu]: nvidia.com/gpu \"1.5\""));
}

// Memory is whole bytes: "512m" (millibytes, a classic slip for 512Mi) is refused.
TEST(ValidationTest, MemoryInMillibytesIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["requests"]["memory"] = "512m";
  EXPECT_THAT(ErrorOf(job), HasSubstr("requests[memory]: quantity \"512m\": not a whole number"));
}

// A quantity given a boolean is refused.
TEST(ValidationTest, QuantityGivenBooleanIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["fairSharing"]["weight"] = true;
  EXPECT_THAT(ErrorOf(cq), StartsWith("spec.fairSharing.weight: expected a quantity"));
}

// "gpu" is not a resource; the hint names the one meant.
TEST(ValidationTest, UnqualifiedGpuResourceIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["requests"]["gpu"] = "1";
  EXPECT_THAT(ErrorOf(job), HasSubstr("requests[gpu]: unknown resource \"gpu\"; did you mean "
                                      "\"nvidia.com/gpu\"?"));
}

// A request above its limit is refused.
TEST(ValidationTest, RequestAboveLimitIsRefused) {
  json job = VolcanoJob();
  Container(job)["resources"]["limits"]["cpu"] = "250m";
  EXPECT_EQ(ErrorOf(job),
            "spec.tasks[0].template.spec.containers[0].resources.requests[cpu]: 500m is more than "
            "the limit 250m");
}

// ============================================================================
// Enums and cross-field rules.

// An enum value in the wrong case is refused with the right spelling.
TEST(ValidationTest, EnumValueIsRefusedWithSuggestion) {
  json cq = ClusterQueue();
  cq["spec"]["preemption"]["withinClusterQueue"] = "lowerPriority";
  EXPECT_EQ(ErrorOf(cq),
            "spec.preemption.withinClusterQueue: unsupported value \"lowerPriority\"; did you mean "
            "\"LowerPriority\"? (supported: Never, LowerPriority, LowerOrNewerEqualPriority)");
}

// queueingStrategy takes StrictFIFO or BestEffortFIFO only.
TEST(ValidationTest, QueueingStrategyEnum) {
  json cq = ClusterQueue();
  cq["spec"]["queueingStrategy"] = "FIFO";
  EXPECT_THAT(ErrorOf(cq), StartsWith("spec.queueingStrategy: unsupported value \"FIFO\""));
}

// A taint effect outside NoSchedule/PreferNoSchedule/NoExecute is refused.
TEST(ValidationTest, TaintEffectEnum) {
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}},
               {"spec", {{"taints", {{{"key", "gpu"}, {"effect", "NoScheduling"}}}}}}};
  EXPECT_THAT(ErrorOf(node), StartsWith("spec.taints[0].effect: unsupported value \"NoScheduling\"; "
                                        "did you mean \"NoSchedule\"?"));
}

// PriorityClass preemptionPolicy takes PreemptLowerPriority or Never.
TEST(ValidationTest, PreemptionPolicyEnum) {
  json pc = {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
             {"metadata", {{"name", "p"}}}, {"value", 10}, {"preemptionPolicy", "Always"}};
  EXPECT_THAT(ErrorOf(pc), StartsWith("preemptionPolicy: unsupported value \"Always\""));
}

// A PriorityClass needs a value, at most one billion (higher are system classes).
TEST(ValidationTest, PriorityClassValueRequiredAndBounded) {
  json pc = {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
             {"metadata", {{"name", "p"}}}};
  EXPECT_EQ(ErrorOf(pc), "value: required");
  pc["value"] = 2000000000;
  EXPECT_EQ(ErrorOf(pc), "value: 2000000000 must be at most 1000000000");
}

// A batch Job's pods restart OnFailure or Never; Always (the pod default) is refused.
TEST(ValidationTest, BatchJobRestartPolicyAlwaysIsRefused) {
  json job = BatchJob();
  job["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  EXPECT_THAT(ErrorOf(job), StartsWith("spec.template.spec.restartPolicy: unsupported value \"Always\""));
}

// Volcano's minAvailable (the gang) cannot exceed the tasks' replicas.
TEST(ValidationTest, VolcanoMinAvailableAboveReplicasIsRefused) {
  json job = VolcanoJob();
  job["spec"]["minAvailable"] = 5;
  EXPECT_EQ(ErrorOf(job), "spec.minAvailable: 5 is more than the 2 replicas of all tasks together");
}

// A Volcano job needs at least one task.
TEST(ValidationTest, VolcanoJobWithoutTasksIsRefused) {
  json job = VolcanoJob();
  job["spec"]["tasks"] = json::array();
  EXPECT_EQ(ErrorOf(job), "spec.tasks: must not be empty");
}

// A pod spec needs a container, and each container a name.
TEST(ValidationTest, ContainerNameIsRequired) {
  json job = VolcanoJob();
  Container(job).erase("name");
  EXPECT_EQ(ErrorOf(job), "spec.tasks[0].template.spec.containers[0].name: required");
}

// Kueue refuses borrowingLimit on a queue with no cohort to borrow from.
TEST(ValidationTest, BorrowingLimitWithoutCohortIsRefused) {
  json cq = ClusterQueue();
  cq["spec"].erase("cohort");
  EXPECT_THAT(ErrorOf(cq),
              StartsWith("spec.resourceGroups[0].flavors[0].resources[2].borrowingLimit: must not be "
                         "set when spec.cohort is empty"));
}

// A flavor's resource must be one of the group's coveredResources.
TEST(ValidationTest, FlavorResourceOutsideCoveredResourcesIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["name"] = "pods";
  EXPECT_THAT(ErrorOf(cq), StartsWith("spec.resourceGroups[0].flavors[0].resources[0].name: \"pods\" "
                                      "is not in this group's coveredResources"));
}

// lendingLimit cannot exceed nominalQuota.
TEST(ValidationTest, LendingLimitAboveNominalIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["lendingLimit"] = 32;
  EXPECT_EQ(ErrorOf(cq),
            "spec.resourceGroups[0].flavors[0].resources[2].lendingLimit: 32 is more than "
            "nominalQuota 16");
}

// A ClusterRoleBinding can only point at a ClusterRole.
TEST(ValidationTest, ClusterRoleBindingToRoleIsRefused) {
  json crb = FromYaml(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: platform}]
roleRef: {kind: Role, name: admin}
)");
  EXPECT_THAT(ErrorOf(crb), StartsWith("roleRef.kind: unsupported value \"Role\""));
}

// Selector operators In/NotIn need values.
TEST(ValidationTest, SelectorInWithoutValuesIsRefused) {
  json cq = ClusterQueue();
  cq["spec"]["namespaceSelector"] = {{"matchExpressions", {{{"key", "team"}, {"operator", "In"}}}}};
  EXPECT_EQ(ErrorOf(cq), "spec.namespaceSelector.matchExpressions[0].values: required for operator In");
}

// NetworkPolicy peers have a real schema: a misspelt selector is caught.
TEST(ValidationTest, NetworkPolicyPeerUnknownFieldIsRefused) {
  json np = FromYaml(R"(
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: team-nlp}
spec:
  podSelector: {}
  ingress: [{from: [{namespaceSelectr: {}}]}]
)");
  EXPECT_EQ(ErrorOf(np),
            "spec.ingress[0].from[0].namespaceSelectr: unknown field; did you mean "
            "\"namespaceSelector\"?");
}

// A namespaced Role cannot grant non-resource URLs.
TEST(ValidationTest, RoleWithNonResourceUrlsIsRefused) {
  json role = FromYaml(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: team-nlp}
rules: [{nonResourceURLs: [/metrics], verbs: [get]}]
)");
  EXPECT_THAT(ErrorOf(role), StartsWith("rules[0].nonResourceURLs: a namespaced Role cannot grant"));
}

// YAML's 1e3 is a float; where an integer is expected, a whole float is that integer.
TEST(ValidationTest, WholeFloatIsAcceptedAsInteger) {
  json job = BatchJob();
  job["spec"]["ttlSecondsAfterFinished"] = 1e3;
  ExpectValid(job);
  job["spec"]["ttlSecondsAfterFinished"] = 2.5;
  EXPECT_EQ(ErrorOf(job), "spec.ttlSecondsAfterFinished: expected an integer, got number 2.5");
}

// An empty metadata.namespace means "the request's namespace"; a malformed one is refused.
TEST(ValidationTest, EmptyNamespaceIsAcceptedMalformedIsRefused) {
  json job = VolcanoJob();
  job["metadata"]["namespace"] = "";
  ExpectValid(job);
  job["metadata"]["namespace"] = "Team_NLP";
  EXPECT_THAT(ErrorOf(job), StartsWith("metadata.namespace: \"Team_NLP\": a lowercase RFC 1123 label"));
}

// ============================================================================
// Name helpers used outside manifests.

TEST(ValidationTest, NameRules) {
  EXPECT_TRUE(ValidateName(NameRule::kDns1123Label, "team-nlp").ok());
  EXPECT_FALSE(ValidateName(NameRule::kDns1123Label, "team.nlp").ok());
  EXPECT_FALSE(ValidateName(NameRule::kDns1123Label, std::string(64, 'a')).ok());  // > 63
  EXPECT_TRUE(ValidateName(NameRule::kDns1123Subdomain, "a100.spot").ok());
  EXPECT_FALSE(ValidateName(NameRule::kDns1123Subdomain, "-a").ok());
  EXPECT_TRUE(ValidateName(NameRule::kPathSegment, "system:node").ok());
  EXPECT_FALSE(ValidateName(NameRule::kPathSegment, "a/b").ok());
  EXPECT_FALSE(ValidateName(NameRule::kPathSegment, "..").ok());
}

TEST(ValidationTest, LabelRules) {
  EXPECT_TRUE(ValidateLabelKey("kueue.x-k8s.io/queue-name").ok());
  EXPECT_TRUE(ValidateLabelKey("app").ok());
  EXPECT_FALSE(ValidateLabelKey("Kueue_/x").ok());
  EXPECT_FALSE(ValidateLabelKey("").ok());
  EXPECT_TRUE(ValidateLabelValue("").ok());
  EXPECT_TRUE(ValidateLabelValue("A100_80GB.v2").ok());
  EXPECT_FALSE(ValidateLabelValue("-a").ok());
  EXPECT_FALSE(ValidateLabelValue(std::string(64, 'a')).ok());  // > 63
}

// QuantityText reads numbers as validation does: 128 -> "128", 0.5 -> "0.5".
TEST(ValidationTest, QuantityTextOfNumbersAndStrings) {
  EXPECT_EQ(QuantityText(json(128)).value(), "128");
  EXPECT_EQ(QuantityText(json(0.5)).value(), "0.5");
  EXPECT_EQ(QuantityText(json("256Gi")).value(), "256Gi");
  EXPECT_FALSE(QuantityText(json(true)).has_value());
}


// ============================================================================
// Container probes, as Kubernetes validates them (docs/agent.md "Probes").

TEST(ValidationTest, ProbesWithEachHandlerAreValid) {
  json job = BatchJob();
  json& c = job["spec"]["template"]["spec"]["containers"][0];
  c["readinessProbe"] = FromYaml(R"({httpGet: {path: /healthz, port: http, httpHeaders: [{name: X-A, value: "1"}]},
      periodSeconds: 2, successThreshold: 2})");
  c["livenessProbe"] = FromYaml(R"({exec: {command: [cat, /tmp/healthy]}, failureThreshold: 5,
      terminationGracePeriodSeconds: 10})");
  c["startupProbe"] = FromYaml(R"({tcpSocket: {port: 8080}, initialDelaySeconds: 0, timeoutSeconds: 3})");
  ExpectValid(job);
}

TEST(ValidationTest, ProbesAreRefusedNamingTheField) {
  const std::string at = "spec.template.spec.containers[0].";
  auto refused = [&](const char* probe, const char* yaml) {
    json job = BatchJob();
    job["spec"]["template"]["spec"]["containers"][0][probe] = FromYaml(yaml);
    return ErrorOf(job);
  };
  EXPECT_EQ(refused("readinessProbe", "{periodSeconds: 3}"),
            at + "readinessProbe: Required value: must specify a handler type (httpGet, tcpSocket or exec)");
  EXPECT_EQ(refused("readinessProbe", "{exec: {command: [ls]}, tcpSocket: {port: 80}}"),
            at + "readinessProbe: Forbidden: may not specify more than 1 handler type");
  EXPECT_THAT(refused("livenessProbe", "{grpc: {port: 9000}}"),
              StartsWith(at + "livenessProbe.grpc: Unsupported value: Tessera's agent does not run gRPC probes yet"));
  EXPECT_EQ(refused("livenessProbe", "{tcpSocket: {port: 80}, successThreshold: 3}"),
            at + "livenessProbe.successThreshold: Invalid value: 3: must be 1");
  EXPECT_EQ(refused("readinessProbe", "{tcpSocket: {port: 80}, terminationGracePeriodSeconds: 5}"),
            at + "readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes");
  EXPECT_EQ(refused("startupProbe", "{httpGet: {port: 70000}}"),
            at + "startupProbe.httpGet.port: Invalid value: 70000: must be between 1 and 65535, inclusive");
  EXPECT_THAT(refused("startupProbe", "{httpGet: {port: metrics}}"),
              StartsWith(at + "startupProbe.httpGet.port: Invalid value: \"metrics\": the container has no port of "
                              "that name"));
  EXPECT_THAT(refused("readinessProbe", "{tcpSocket: {port: 80}, periodSeconds: 0}"),
              StartsWith(at + "readinessProbe.periodSeconds: "));
  EXPECT_THAT(refused("readinessProbe", "{exec: {}}"), StartsWith(at + "readinessProbe.exec.command: Required value"));
}

}  // namespace
}  // namespace tessera
