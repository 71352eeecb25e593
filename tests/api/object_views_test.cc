// The typed views over API documents (api/object_views.h): what they read from
// well-formed objects, and that a missing key, null or a value of the wrong type
// reads as absent (or as Kubernetes' default), never as a throw.
#include "api/object_views.h"

#include <gtest/gtest.h>

#include "tests/testing/manifest_checks.h"

namespace tessera {
namespace {

using nlohmann::json;
using testing::FromYaml;

// A Pod as an agent reports it: bound, running its second attempt after an OOM kill.
TEST(ObjectViewsTest, PodReadsPhaseNodeIpAndContainerStatuses) {
  const json pod = FromYaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: team-a, uid: u-1}
spec: {nodeName: gpu-1, restartPolicy: OnFailure, containers: [{name: main}]}
status:
  phase: Running
  podIP: 10.244.1.7
  containerStatuses:
    - name: main
      ready: true
      restartCount: 2
      state: {running: {startedAt: "2026-01-01T00:00:00Z"}}
      lastState: {terminated: {exitCode: 137, reason: OOMKilled, signal: 9}}
    - name: sidecar
      restartCount: 1
      state: {terminated: {exitCode: 0, reason: Completed}}
)");
  const PodView view(pod);
  EXPECT_EQ(view.Phase(), "Running");
  EXPECT_EQ(view.NodeName(), "gpu-1");
  EXPECT_EQ(view.PodIp(), "10.244.1.7");
  EXPECT_EQ(view.RestartPolicy(), "OnFailure");
  EXPECT_EQ(view.Metadata().Name(), "train-0");
  EXPECT_EQ(view.RestartCount(), 3);  // 2 + 1
  const std::vector<ContainerStatus> statuses = view.ContainerStatuses();
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].name, "main");
  EXPECT_TRUE(statuses[0].ready);
  EXPECT_FALSE(statuses[0].terminated.has_value());
  ASSERT_TRUE(statuses[0].last_terminated.has_value());
  EXPECT_EQ(statuses[0].last_terminated->exit_code, 137);
  EXPECT_EQ(statuses[0].last_terminated->signal, 9);
  EXPECT_EQ(statuses[0].last_terminated->reason, "OOMKilled");
  ASSERT_TRUE(statuses[1].terminated.has_value());
  EXPECT_EQ(statuses[1].terminated->exit_code, 0);
  EXPECT_EQ(statuses[1].terminated->reason, "Completed");
  EXPECT_FALSE(statuses[1].terminated->signal.has_value());
  EXPECT_FALSE(statuses[1].ready);
}

// A pod the scheduler has not bound and the agent has not reported on: every field absent.
TEST(ObjectViewsTest, PodWithoutStatusReadsEmpty) {
  const json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  const PodView view(pod);
  EXPECT_EQ(view.Phase(), "");
  EXPECT_EQ(view.NodeName(), "");
  EXPECT_EQ(view.PodIp(), "");
  EXPECT_EQ(view.RestartPolicy(), "Always");  // Kubernetes' default
  EXPECT_TRUE(view.ContainerStatuses().empty());
  EXPECT_EQ(view.RestartCount(), 0);
  EXPECT_EQ(view.Metadata().Name(), "");
}

// Values of the wrong type read as absent: a phase that is a number, statuses that are
// not a list, a restart count in quotes, an exit code that is not an integer.
TEST(ObjectViewsTest, PodFieldsOfTheWrongTypeReadAsAbsent) {
  const json wrong = json::parse(R"({
    "metadata": "train-0",
    "spec": {"nodeName": 7, "restartPolicy": null},
    "status": {"phase": 3, "podIP": ["10.0.0.1"], "containerStatuses": {"main": {}}}
  })");
  const PodView view(wrong);
  EXPECT_EQ(view.Phase(), "");
  EXPECT_EQ(view.NodeName(), "");
  EXPECT_EQ(view.PodIp(), "");
  EXPECT_EQ(view.RestartPolicy(), "Always");
  EXPECT_TRUE(view.ContainerStatuses().empty());
  EXPECT_EQ(view.Metadata().Name(), "");

  const json statuses = json::parse(R"({"status": {"containerStatuses": [
    "main",
    {"name": 5, "ready": "true", "restartCount": "2",
     "state": {"terminated": {"exitCode": 1.5, "signal": "9", "reason": 4}}, "lastState": {"terminated": "yes"}}
  ]}})");
  const std::vector<ContainerStatus> read = PodView(statuses).ContainerStatuses();
  ASSERT_EQ(read.size(), 1u);  // the string is skipped
  EXPECT_EQ(read[0].name, "");
  EXPECT_FALSE(read[0].ready);
  EXPECT_EQ(read[0].restart_count, 0);
  ASSERT_TRUE(read[0].terminated.has_value());  // it is an object, with nothing readable in it
  EXPECT_FALSE(read[0].terminated->exit_code.has_value());
  EXPECT_FALSE(read[0].terminated->signal.has_value());
  EXPECT_EQ(read[0].terminated->reason, "");
  EXPECT_FALSE(read[0].last_terminated.has_value());
}

// Metadata: names, labels and annotations by key, owner references and the controller's.
TEST(ObjectViewsTest, ObjectMetaReadsNamesLabelsAndOwners) {
  const json object = FromYaml(R"(
metadata:
  name: train-abc12
  namespace: team-a
  uid: 7f1c
  resourceVersion: "42"
  creationTimestamp: "2026-01-01T00:00:00Z"
  deletionTimestamp: "2026-01-01T01:00:00Z"
  labels: {tessera.dev/workload: train, app: x}
  annotations: {tessera.dev/gpu-devices: "0,1"}
  ownerReferences:
    - {apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload, name: train, uid: w-1}
    - {apiVersion: batch/v1, kind: Job, name: train, uid: j-1, controller: true, blockOwnerDeletion: true}
)");
  const ObjectMetaView meta(object);
  EXPECT_EQ(meta.Name(), "train-abc12");
  EXPECT_EQ(meta.Namespace(), "team-a");
  EXPECT_EQ(meta.Uid(), "7f1c");
  EXPECT_EQ(meta.ResourceVersion(), "42");
  EXPECT_EQ(meta.CreationTimestamp(), "2026-01-01T00:00:00Z");
  EXPECT_TRUE(meta.IsBeingDeleted());
  EXPECT_EQ(meta.Label("tessera.dev/workload"), "train");
  EXPECT_FALSE(meta.Label("missing").has_value());
  EXPECT_EQ(meta.Annotation("tessera.dev/gpu-devices"), "0,1");
  EXPECT_EQ(meta.Labels().size(), 2u);
  EXPECT_EQ(meta.Labels()[0].first, "app");  // by key
  ASSERT_EQ(meta.OwnerReferences().size(), 2u);
  EXPECT_FALSE(meta.OwnerReferences()[0].controller);
  ASSERT_TRUE(meta.ControllerRef().has_value());
  EXPECT_EQ(meta.ControllerRef()->kind, "Job");
  EXPECT_EQ(meta.ControllerRef()->uid, "j-1");
  EXPECT_TRUE(meta.ControllerRef()->block_owner_deletion);
}

// Metadata of the wrong shape reads as empty: labels as a list, a label value that is a
// number, owner references as an object, a reference that is a string.
TEST(ObjectViewsTest, ObjectMetaOfTheWrongShapeReadsAsEmpty) {
  const json object = json::parse(R"({"metadata": {
    "name": ["a"], "labels": ["app=x"], "annotations": {"n": 8, "s": "t"},
    "ownerReferences": {"kind": "Job"}, "deletionTimestamp": null}})");
  const ObjectMetaView meta(object);
  EXPECT_EQ(meta.Name(), "");
  EXPECT_FALSE(meta.IsBeingDeleted());
  EXPECT_TRUE(meta.Labels().empty());
  EXPECT_FALSE(meta.Label("app").has_value());
  EXPECT_FALSE(meta.Annotation("n").has_value());
  EXPECT_EQ(meta.Annotations().size(), 1u);  // only the string one
  EXPECT_TRUE(meta.OwnerReferences().empty());
  EXPECT_FALSE(meta.ControllerRef().has_value());

  const json refs =
      json::parse(R"({"metadata": {"ownerReferences": ["Job/train", {"kind": 3, "controller": "yes"}]}})");
  const std::vector<OwnerReference> read = ObjectMetaView(refs).OwnerReferences();
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].kind, "");
  EXPECT_FALSE(read[0].controller);
  const json not_an_object = "train";
  EXPECT_EQ(ObjectMetaView(not_an_object).Name(), "");
}

// Conditions by type, with their status, reason, message and time; the first of a type counts.
TEST(ObjectViewsTest, ConditionsFindByType) {
  const json object = FromYaml(R"(
status:
  conditions:
    - type: QuotaReserved
      status: "False"
      reason: Pending
      message: "team-a uses 8/8"
      lastTransitionTime: "2026-01-01T00:00:00Z"
    - {type: Admitted, status: "True"}
    - {type: Admitted, status: "False"}
    - "Evicted"
)");
  const ConditionsView conditions(object);
  const std::optional<Condition> reserved = conditions.Find("QuotaReserved");
  ASSERT_TRUE(reserved.has_value());
  EXPECT_FALSE(reserved->IsTrue());
  EXPECT_EQ(reserved->reason, "Pending");
  EXPECT_EQ(reserved->message, "team-a uses 8/8");
  EXPECT_EQ(reserved->last_transition_time, "2026-01-01T00:00:00Z");
  EXPECT_TRUE(conditions.IsTrue("Admitted"));
  EXPECT_FALSE(conditions.IsTrue("Finished"));
  EXPECT_FALSE(conditions.Find("Evicted").has_value());  // a string is not a condition
  EXPECT_EQ(conditions.All().size(), 3u);
}

// Conditions that are not a list, or a status that is not an object, read as none.
TEST(ObjectViewsTest, ConditionsOfTheWrongShapeReadAsNone) {
  for (const char* text : {R"({})", R"({"status": "Ready"})", R"({"status": {"conditions": {"type": "Ready"}}})",
                           R"({"status": {"conditions": null}})", R"([1, 2])"}) {
    const json object = json::parse(text);
    const ConditionsView conditions(object);
    EXPECT_FALSE(conditions.Find("Ready").has_value()) << text;
    EXPECT_FALSE(conditions.IsTrue("Ready")) << text;
    EXPECT_TRUE(conditions.All().empty()) << text;
  }
}

// A Workload admitted to a ClusterQueue, named to a queue, switched off.
TEST(ObjectViewsTest, WorkloadReadsQueueAdmissionAndActive) {
  const json workload = FromYaml(R"(
spec: {queueName: team-a, priorityClassName: training, priority: 100, active: false}
status:
  admission: {clusterQueue: cq-a}
  conditions: [{type: Admitted, status: "True"}]
)");
  const WorkloadView view(workload);
  EXPECT_EQ(view.QueueName(), "team-a");
  EXPECT_EQ(view.PriorityClassName(), "training");
  EXPECT_EQ(view.Priority(), 100);
  EXPECT_FALSE(view.Active());
  EXPECT_TRUE(view.HasAdmission());
  EXPECT_EQ(view.AdmittedClusterQueue(), "cq-a");
  EXPECT_TRUE(view.Conditions().IsTrue("Admitted"));
}

// A Workload with nothing set is active (Kueue's default), unadmitted and in no queue;
// fields of the wrong type read the same.
TEST(ObjectViewsTest, WorkloadDefaultsWhenFieldsAreMissingOrWrong) {
  const json empty = json::object();
  const WorkloadView view(empty);
  EXPECT_EQ(view.QueueName(), "");
  EXPECT_FALSE(view.Priority().has_value());
  EXPECT_TRUE(view.Active());
  EXPECT_FALSE(view.HasAdmission());
  EXPECT_EQ(view.AdmittedClusterQueue(), "");

  const json wrong = json::parse(R"({"spec": {"queueName": 1, "priority": "100", "active": "false"},
                                     "status": {"admission": "cq-a"}})");
  const WorkloadView wrong_view(wrong);
  EXPECT_EQ(wrong_view.QueueName(), "");
  EXPECT_FALSE(wrong_view.Priority().has_value());
  EXPECT_TRUE(wrong_view.Active());
  EXPECT_FALSE(wrong_view.HasAdmission());
}

// A batch/v1 Job with every lifecycle field set, and a pod failure policy.
TEST(ObjectViewsTest, JobReadsLifecycleFieldsAndPodFailurePolicy) {
  const json job = FromYaml(R"(
spec:
  parallelism: 4
  completions: 8
  completionMode: Indexed
  backoffLimit: 2
  activeDeadlineSeconds: 3600
  ttlSecondsAfterFinished: 600
  suspend: true
  podFailurePolicy:
    rules:
      - action: FailJob
        onExitCodes: {containerName: main, operator: In, values: [42, 43]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget, status: "True"}]
  template: {spec: {containers: [{name: main}], restartPolicy: Never}}
)");
  const JobView view(job);
  EXPECT_EQ(view.Parallelism(), 4);
  EXPECT_EQ(view.Completions(), 8);
  EXPECT_TRUE(view.Indexed());
  EXPECT_EQ(view.BackoffLimit(), 2);
  EXPECT_EQ(view.ActiveDeadlineSeconds(), 3600);
  EXPECT_EQ(view.TtlSecondsAfterFinished(), 600);
  EXPECT_TRUE(view.Suspend());
  ASSERT_NE(view.Template(), nullptr);
  EXPECT_TRUE(view.Template()->contains("spec"));
  const std::vector<PodFailurePolicyRule> rules = view.PodFailurePolicyRules();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].action, "FailJob");
  EXPECT_EQ(rules[0].exit_codes_operator, "In");
  EXPECT_EQ(rules[0].container_name, "main");
  EXPECT_EQ(rules[0].exit_codes, (std::vector<int64_t>{42, 43}));
  EXPECT_EQ(rules[1].action, "Ignore");
  ASSERT_EQ(rules[1].pod_conditions.size(), 1u);
  EXPECT_EQ(rules[1].pod_conditions[0].first, "DisruptionTarget");
  EXPECT_EQ(rules[1].pod_conditions[0].second, "True");
  EXPECT_EQ(rules[1].exit_codes_operator, "");
}

// A Job with no spec reads Kubernetes' defaults: parallelism 1, backoffLimit 6,
// NonIndexed, not suspended, no deadline, no TTL, no policy, no template.
TEST(ObjectViewsTest, JobWithoutSpecReadsKubernetesDefaults) {
  const json job = json::object();
  const JobView view(job);
  EXPECT_EQ(view.Parallelism(), 1);
  EXPECT_FALSE(view.Completions().has_value());
  EXPECT_EQ(view.CompletionMode(), "NonIndexed");
  EXPECT_FALSE(view.Indexed());
  EXPECT_EQ(view.BackoffLimit(), 6);
  EXPECT_FALSE(view.ActiveDeadlineSeconds().has_value());
  EXPECT_FALSE(view.TtlSecondsAfterFinished().has_value());
  EXPECT_FALSE(view.Suspend());
  EXPECT_TRUE(view.PodFailurePolicyRules().empty());
  EXPECT_EQ(view.Template(), nullptr);
}

// Job fields of the wrong type read as the defaults: quoted numbers, a fraction, a
// boolean in quotes, a policy whose rules are not a list, exit codes that are not integers.
TEST(ObjectViewsTest, JobFieldsOfTheWrongTypeReadAsDefaults) {
  const json job = json::parse(R"({"spec": {
    "parallelism": "4", "completions": 2.5, "backoffLimit": null, "activeDeadlineSeconds": "1h",
    "ttlSecondsAfterFinished": true, "suspend": "true", "completionMode": 1, "template": "pod",
    "podFailurePolicy": {"rules": {"action": "FailJob"}}}})");
  const JobView view(job);
  EXPECT_EQ(view.Parallelism(), 1);
  EXPECT_FALSE(view.Completions().has_value());
  EXPECT_EQ(view.BackoffLimit(), 6);
  EXPECT_FALSE(view.ActiveDeadlineSeconds().has_value());
  EXPECT_FALSE(view.TtlSecondsAfterFinished().has_value());
  EXPECT_FALSE(view.Suspend());
  EXPECT_EQ(view.CompletionMode(), "NonIndexed");
  EXPECT_EQ(view.Template(), nullptr);
  EXPECT_TRUE(view.PodFailurePolicyRules().empty());

  const json codes = json::parse(R"({"spec": {"podFailurePolicy": {"rules": [
    "FailJob", {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, "2", 3.5, 18446744073709551615]},
                "onPodConditions": "DisruptionTarget"}]}}})");
  const std::vector<PodFailurePolicyRule> rules = JobView(codes).PodFailurePolicyRules();
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].action, "Count");
  EXPECT_EQ(rules[0].exit_codes, (std::vector<int64_t>{1}));  // "2", 3.5 and 2^64-1 are not exit codes
  EXPECT_TRUE(rules[0].pod_conditions.empty());
}

}  // namespace
}  // namespace tessera
