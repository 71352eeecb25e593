// Typed, read-only views over the JSON documents that controllers and the CLI
// read: ObjectMeta, conditions, Pods, Workloads and batch/v1 Jobs. Instead of
// `obj["status"]["phase"]` chains (undefined behaviour on a const document that
// lacks a key, in a release build) a caller writes PodView(obj).Phase().
//
// Rules, for every accessor:
//   - safe on anything: a missing key, null, or a value of the wrong type reads
//     as absent: "" for text, std::nullopt for an optional number, the
//     Kubernetes default where the API has one (said at each accessor), empty
//     lists; nothing throws;
//   - no copies of the document: text comes back as std::string_view into it.
//
// Lifetime: a view holds a pointer to the document it was made from (and the
// string_views it returns point into it); the document must outlive them and
// not change while they are read. Views are small values: copy them freely.
//
// Thread-safety: a view only reads; many threads may read one document through
// views at once, as long as no one writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

struct OwnerReference {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

// metadata of any object.
class ObjectMetaView {
 public:
  explicit ObjectMetaView(const nlohmann::json& object);  // reads object.metadata

  std::string_view Name() const;
  std::string_view Namespace() const;
  std::string_view Uid() const;
  std::string_view ResourceVersion() const;
  std::string_view CreationTimestamp() const;  // RFC 3339 text, "" when absent
  std::string_view DeletionTimestamp() const;
  bool IsBeingDeleted() const { return !DeletionTimestamp().empty(); }

  // One label's (or annotation's) value; nullopt when absent or not a string.
  std::optional<std::string_view> Label(std::string_view key) const;
  std::optional<std::string_view> Annotation(std::string_view key) const;
  // All of them, by key (string values only).
  std::vector<std::pair<std::string_view, std::string_view>> Labels() const;
  std::vector<std::pair<std::string_view, std::string_view>> Annotations() const;

  // The references that are objects; missing fields read "" / false.
  std::vector<OwnerReference> OwnerReferences() const;
  // The reference with controller: true (Kubernetes allows at most one).
  std::optional<OwnerReference> ControllerRef() const;

 private:
  const nlohmann::json* metadata_;  // nullptr when absent or not an object
};

struct Condition {
  std::string_view type;
  std::string_view status;  // "True", "False", "Unknown"
  std::string_view reason;
  std::string_view message;
  std::string_view last_transition_time;
  bool IsTrue() const { return status == "True"; }
};

// status.conditions of any object.
class ConditionsView {
 public:
  explicit ConditionsView(const nlohmann::json& object);  // reads object.status.conditions

  // The first condition of `type`; nullopt when none (or it is not an object).
  std::optional<Condition> Find(std::string_view type) const;
  bool IsTrue(std::string_view type) const;  // false when absent
  std::vector<Condition> All() const;        // those that are objects, in order

 private:
  const nlohmann::json* conditions_;  // nullptr when absent or not a list
};

struct ContainerTermination {
  std::optional<int64_t> exit_code;
  std::optional<int64_t> signal;
  std::string_view reason;  // "Completed", "Error", "OOMKilled"
  std::string_view message;
};

struct ContainerStatus {
  std::string_view name;
  bool ready = false;
  int64_t restart_count = 0;
  std::string_view waiting_reason;                     // state.waiting.reason: "CrashLoopBackOff"
  std::optional<ContainerTermination> terminated;      // state.terminated
  std::optional<ContainerTermination> last_terminated;  // lastState.terminated: the run before a restart
};

// A v1 Pod.
class PodView {
 public:
  explicit PodView(const nlohmann::json& pod);

  ObjectMetaView Metadata() const { return ObjectMetaView(*pod_); }
  ConditionsView Conditions() const { return ConditionsView(*pod_); }
  std::string_view Phase() const;     // status.phase; "" when the server has not said
  std::string_view NodeName() const;  // spec.nodeName; "" while unbound
  std::string_view PodIp() const;     // status.podIP
  std::string_view RestartPolicy() const;  // spec.restartPolicy; Kubernetes' default "Always"
  // status.containerStatuses, those that are objects, in order.
  std::vector<ContainerStatus> ContainerStatuses() const;
  int64_t RestartCount() const;  // the sum over the containers

 private:
  const nlohmann::json* pod_;
};

// A kueue.x-k8s.io/v1beta1 Workload.
class WorkloadView {
 public:
  explicit WorkloadView(const nlohmann::json& workload);

  ObjectMetaView Metadata() const { return ObjectMetaView(*workload_); }
  ConditionsView Conditions() const { return ConditionsView(*workload_); }
  std::string_view QueueName() const;          // spec.queueName
  std::string_view PriorityClassName() const;  // spec.priorityClassName
  std::optional<int64_t> Priority() const;     // spec.priority
  // spec.active: false suspends it; Kueue's default true when absent.
  bool Active() const;
  // status.admission is set: quota is reserved for it.
  bool HasAdmission() const;
  std::string_view AdmittedClusterQueue() const;  // status.admission.clusterQueue

 private:
  const nlohmann::json* workload_;
};

// One rule of a Job's spec.podFailurePolicy.
struct PodFailurePolicyRule {
  std::string_view action;  // "FailJob", "Ignore", "Count", "FailIndex"
  // onExitCodes: operator "In" or "NotIn" ("" when the rule has none), the
  // container it is limited to ("" for any), the codes (integers only).
  std::string_view exit_codes_operator;
  std::string_view container_name;
  std::vector<int64_t> exit_codes;
  // onPodConditions: (type, status) pairs.
  std::vector<std::pair<std::string_view, std::string_view>> pod_conditions;
};

// A batch/v1 Job.
class JobView {
 public:
  explicit JobView(const nlohmann::json& job);

  ObjectMetaView Metadata() const { return ObjectMetaView(*job_); }
  ConditionsView Conditions() const { return ConditionsView(*job_); }
  int64_t Parallelism() const;                       // spec.parallelism; Kubernetes' default 1
  std::optional<int64_t> Completions() const;        // spec.completions; nullopt: not set
  std::string_view CompletionMode() const;           // spec.completionMode; default "NonIndexed"
  bool Indexed() const { return CompletionMode() == "Indexed"; }
  int64_t BackoffLimit() const;                      // spec.backoffLimit; Kubernetes' default 6
  std::optional<int64_t> ActiveDeadlineSeconds() const;
  std::optional<int64_t> TtlSecondsAfterFinished() const;
  bool Suspend() const;                              // spec.suspend; default false
  std::vector<PodFailurePolicyRule> PodFailurePolicyRules() const;  // empty without a policy
  // spec.template as it is (a PodTemplateSpec); nullptr when absent or not an object.
  const nlohmann::json* Template() const;

 private:
  const nlohmann::json* job_;
};

}  // namespace tessera
