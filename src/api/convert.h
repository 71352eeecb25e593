// Conversions between API objects (JSON, as stored) and the domain types the
// scheduler core works on, and the Job -> Workload translation of the job
// controller.
//
// Contract:
//   - Objects passed in have passed ValidateObject (validation.h): spec fields have
//     the right types and their quantities parse. The conversions still check
//     every type they read (a slip is an error, never an exception), and they read
//     `status` and annotation contents, which validation does not check, as
//     untrusted: errors there are InvalidArgument naming the field
//     ("status.admission.podSetAssignments[0].placements[1].node: node \"n9\" does
//     not exist").
//   - Names of other objects are resolved through the caller's functions, which
//     return an invalid id for a name they do not know. What an unknown name means
//     is per field and documented below.
//   - Only the resources the scheduler tracks (domain/resources.h: cpu, memory,
//     nvidia.com/gpu, tessera.dev/gpu-memory, pods) are converted; other resource
//     names (ephemeral-storage, example.com/fpga) are ignored.
//   - No exception escapes; nothing here does I/O or reads a clock.
//
// The admission format (status.admission of a Workload): Kueue's, with the
// placements Tessera's scheduler decides added:
//   {clusterQueue: "cq", admittedAt: "2026-11-29T16:15:31Z",
//    podSetAssignments: [{name: "main", flavors: {"nvidia.com/gpu": "a100-spot", ...},
//                         count: 2,
//                         placements: [{node: "n1", devices: [{index: 0, milli: 250}]}, ...]}]}
// One assignment per pod set, in the pod sets' order; `flavors` maps every resource
// the pod set requests (nvidia.com/gpu when it requests none) to the pod set's one
// flavor, and read back must name one flavor; `index` is the device's
// position in the node's GPU list, which NodeFromJson sorts by CUDA index (so it
// is the CUDA index whenever a node reports devices 0..n-1, as NVML does).
//
// Thread-safety: pure functions; safe to call from any thread if the resolvers are.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "domain/admission.h"
#include "domain/cluster_queue.h"
#include "domain/ids.h"
#include "domain/node.h"
#include "domain/priority_class.h"
#include "domain/resource_flavor.h"
#include "domain/resource_quota.h"
#include "domain/uid_range.h"
#include "domain/workload.h"

namespace tessera {

// Annotations and labels Tessera reads or writes on API objects.
inline constexpr std::string_view kGpusAnnotation = "tessera.dev/gpus";
// On a PriorityClass: "false" marks work of that class never preempted (DESIGN.md
// section 12): never a victim, and admitted only within its queue's nominal
// quota, so that no reclaim can touch it. tessera.dev/non-preemptible: "true"
// is the older spelling, still read.
inline constexpr std::string_view kPreemptibleAnnotation = "tessera.dev/preemptible";
inline constexpr std::string_view kNonPreemptibleAnnotation = "tessera.dev/non-preemptible";
inline constexpr std::string_view kMaxRunSecondsAnnotation = "tessera.dev/max-run-seconds";
inline constexpr std::string_view kLastCheckpointAnnotation = "tessera.dev/last-checkpoint";
// A placeholder Workload ("true") holds room and runs no pods: an elastic
// TrainingJob's claim on the room it will grow into. It never preempts.
inline constexpr std::string_view kPlaceholderAnnotation = "tessera.dev/placeholder";
inline constexpr std::string_view kTopologyAnnotation = "tessera.dev/topology";
// With topology "spread": a comma-separated list of nodes to avoid where
// another fits (the nodes of the other Workloads of one service).
inline constexpr std::string_view kSpreadFromNodesAnnotation = "tessera.dev/spread-from-nodes";
inline constexpr std::string_view kJobNameLabel = "tessera.dev/job-name";
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kRackLabel = "topology.kubernetes.io/rack";
// Who created an object, as the API server authenticated them (it sets this
// annotation on every create and keeps it on updates; no client can set it).
// A Job's is copied to its Workload, and usage records count by it.
inline constexpr std::string_view kCreatedByAnnotation = "tessera.dev/created-by";
// The label the API server sets on every Namespace to its name, as Kubernetes does.
inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";
// The annotations the server writes and keeps: who created an object, and a
// Namespace's block of uids (kUidRangeAnnotation, domain/uid_range.h; an
// update that leaves it out keeps it, and only an admin may change it).
// `tessera apply` leaves them out when it compares a manifest with the object.
inline constexpr std::string_view kServerAnnotations[] = {kCreatedByAnnotation, kUidRangeAnnotation};
// On a ResourceFlavor: the price of one GPU-hour in it ("2.10"), for usage reports.
inline constexpr std::string_view kPricePerGpuHourAnnotation = "tessera.dev/price-per-gpu-hour";

// spec.nodeLabels and spec.tolerations; spec.nodeTaints is ignored (nodes carry
// their own taints); the price per GPU-hour from tessera.dev/price-per-gpu-hour.
Result<ResourceFlavor> ResourceFlavorFromJson(const nlohmann::json& obj);
// The flavor's price per GPU-hour in micro-units; 0 without (or with a bad) annotation.
int64_t FlavorPriceMicro(const nlohmann::json& obj);

// A ClusterQueue with its resource groups in order (flavors are tried in that
// order), quotas in domain units (16 GPUs -> 16000 milli), borrowing and lending
// limits (absent: unlimited), cohort, preemption, queueingStrategy, fairSharing
// weight (in thousandths), namespaceSelector (absent: every namespace) and
// stopPolicy (Hold, HoldAndDrain: stopped).
// A flavor `flavor_id` does not know makes the queue inactive, not an error:
//   inactive_reason = "flavor a100-spot does not exist; create the ResourceFlavor"
// and so does a namespaceSelector expression the domain cannot represent (only
// matchLabels and `In` with one value can be). `cohort_id` is asked only for a
// non-empty spec.cohort.
Result<ClusterQueue> ClusterQueueFromJson(const nlohmann::json& obj,
                                          const std::function<FlavorId(std::string_view)>& flavor_id,
                                          const std::function<CohortId(std::string_view)>& cohort_id);

// namespace, name and cluster_queue_name; cluster_queue is left invalid (the
// snapshot builder resolves it).
Result<LocalQueue> LocalQueueFromJson(const nlohmann::json& obj);

// value, preemptionPolicy, globalDefault; the annotation
// tessera.dev/preemptible: "false" (or tessera.dev/non-preemptible: "true") sets
// non_preemptible.
Result<PriorityClass> PriorityClassFromJson(const nlohmann::json& obj);

// spec.hard: requests.<r> and limits.<r> for the tracked resources, the bare
// "cpu" and "memory" (which mean requests, as in Kubernetes) and "pods". Other
// keys are not the scheduler's: persistentvolumeclaims and requests.storage are
// charged by the API server when a claim is made (server/claim_admission.h);
// count/jobs.batch and the like are ignored.
Result<ResourceQuota> ResourceQuotaFromJson(const nlohmann::json& obj);

// labels; spec.taints; spec.unschedulable; ready when the Ready condition is
// "True"; cpu and memory from status.allocatable (status.capacity where
// allocatable lacks them); the GPUs from the annotation tessera.dev/gpus (a JSON
// array of {index, uuid, model, memoryBytes, nvlinkDomain}, sorted here by index),
// or, without it, status.allocatable nvidia.com/gpu generic devices of 80Gi in
// NVLink domain 0; rack from the label topology.kubernetes.io/rack.
Result<Node> NodeFromJson(const nlohmann::json& obj);

// A kueue.x-k8s.io/v1beta1 Workload as the scheduler sees it:
//   - namespace_name, name, local_queue_name (spec.queueName);
//   - the priority class: the one spec.priorityClassName names (`priority_class`
//     returns nullptr for a missing one), else `default_class` (the globalDefault
//     class; may be nullptr). priority is spec.priority when set, else the class's
//     value, else 0; preemption_policy and non_preemptible come from the class;
//   - creation_time from metadata.creationTimestamp (absent: the epoch);
//   - max_run from the annotation tessera.dev/max-run-seconds and
//     spec.maximumExecutionTimeSeconds (both set: the smaller; neither: infinite);
//   - last_checkpoint from the annotation tessera.dev/last-checkpoint;
//   - pod sets from spec.podSets: name, count, minCount; per pod the resources
//     Kubernetes charges a pod (containers' requests summed, a limit standing in
//     for a missing request; init containers' maximum; sidecars; overhead),
//     limits alike (a missing limit is the request), kPods = 1; nodeSelector;
//     tolerations; topology from the pod template annotation tessera.dev/topology
//     (spread, node, rack or nvlink);
//   - admission from status.admission (format above): an unknown flavor or node
//     is an error naming it; an unknown clusterQueue stays an invalid id (the
//     workload still holds its nodes' resources); start_time from admittedAt
//     (absent: creation_time);
//   - evicting when the condition Evicted is "True" or metadata.deletionTimestamp
//     is set.
Result<Workload> WorkloadFromJson(const nlohmann::json& obj,
                                  const std::function<const PriorityClass*(std::string_view)>& priority_class,
                                  const PriorityClass* default_class,
                                  const std::function<ClusterQueueId(std::string_view)>& cluster_queue_id,
                                  const std::function<FlavorId(std::string_view)>& flavor_id,
                                  const std::function<NodeId(std::string_view)>& node_id);

// The status.admission JSON (format above) for what the scheduler decided, with
// the ids named back through the functions given.
// REQUIRES: admission.pod_sets.size() == w.pod_sets.size().
nlohmann::json AdmissionToJson(const Admission& admission, const Workload& w,
                               const std::function<std::string(ClusterQueueId)>& cluster_queue_name,
                               const std::function<std::string(FlavorId)>& flavor_name,
                               const std::function<std::string(NodeId)>& node_name,
                               const std::string& admitted_at);

// The kueue.x-k8s.io/v1beta1 Workload that stands for a batch/v1 Job or a
// batch.volcano.sh/v1alpha1 Job (the job controller creates it; the scheduler
// admits it):
//   - name "job-<job>" (Volcano: "vcjob-<job>"), the job's namespace, an owner
//     reference to the job (controller: true; the job needs metadata.uid), the
//     label tessera.dev/job-name: <job>;
//   - spec.queueName: batch/v1 the label kueue.x-k8s.io/queue-name; Volcano
//     spec.queue, else that label; neither: "default";
//   - spec.priorityClassName: the pod template's (Volcano: the job's, else the
//     first task template's that sets one);
//   - spec.podSets: batch/v1 one pod set "main", count = min(parallelism,
//     completions) (parallelism defaults to 1), minCount = count (all or
//     nothing); Volcano one pod set per task (name, count = replicas) with the
//     gang spec.minAvailable (default: every replica) spread over the first pod
//     sets' minCount. A pod set cannot need zero pods (minCount 0 means all), so a
//     pod set past the gang gets minCount 1: the smallest gang the domain can
//     express that contains Volcano's;
//   - the pod templates copied unchanged;
//   - the Job's annotations tessera.dev/type, tessera.dev/idle-timeout and
//     tessera.dev/created-by, copied;
//   - the annotation tessera.dev/max-run-seconds from spec.activeDeadlineSeconds
//     (batch/v1) or from the job's own tessera.dev/max-run-seconds annotation
//     (the smaller when both are set).
Result<nlohmann::json> WorkloadForJob(const nlohmann::json& job);

// The name of the Workload WorkloadForJob makes: "job-NAME" for a batch/v1 Job,
// "vcjob-NAME" for a Volcano Job.
std::string WorkloadNameForJob(bool volcano, std::string_view job_name);

}  // namespace tessera
