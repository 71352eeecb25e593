// The InferenceService controller (tessera.dev/v1 InferenceService): for each
// InferenceService NAME of namespace NS
//   - its replicas, each its own Workload (kueue.x-k8s.io, one pod set
//     "replica" of one pod) named NAME-REVISION-xxxxx, so that every scale-up
//     goes through the scheduler (quota, priority; `tessera describe` of a
//     pending replica's Workload says why it waits). Each is labelled
//     tessera.dev/inferenceservice=NAME and tessera.dev/revision=REVISION, the
//     hash of spec.template and spec.port (as a ReplicaSet's
//     pod-template-hash). The pod runs spec.template's one container with a
//     port named http (spec.port, 8080, unless the container names one) and
//     PORT set to it, restartPolicy Never, at spec.priorityClassName or, when
//     that is empty and the PriorityClass exists, "production" (never
//     preempted: its class is non-preemptible);
//   - a replica whose pod failed or ended (its Workload Finished) is deleted
//     and replaced by a new one; a lost node's replicas are requeued by the
//     node lifecycle controller and placed again by the scheduler;
//   - a headless Service NAME (port http) over every replica, and one per
//     revision, NAME-REVISION, over that revision's; the endpoints are the
//     ready pods (pod condition Ready). status.url is the proxy's path,
//     /api/v1/namespaces/NS/services/NAME:http/proxy/;
//   - rolling update when the revision changes, as a Deployment's: new
//     replicas up to replicas + maxSurge in all, old ones removed as new ones
//     turn Ready, keeping replicas - maxUnavailable ready (both default 25%,
//     surge rounded up, unavailability down);
//   - canary: while 0 < spec.canaryTrafficPercent < 100 and a stable revision
//     (the last one that was fully ready) differs from the current one, the
//     stable revision keeps its replicas, the current one gets
//     max(1, ceil(replicas * pct / 100)), and the Service NAME carries the
//     annotation tessera.dev/traffic-split ({"NAME-REV": weight, ...}) that the
//     server's proxy honours (server/api/traffic_split.h);
//   - rollback: the annotation tessera.dev/rollback (any value; `tessera
//     rollout undo isvc/NAME` writes it) sets spec.template back to the stable
//     revision's (or, when the current revision is the stable one, to the one
//     before it), kept in status.stableTemplate / status.previousTemplate;
//   - status: replicas (wanted), readyReplicas, revision, stableRevision, url,
//     revisions [{name, replicas, readyReplicas, trafficPercent}], a Ready
//     condition, and the message of a replica that waits (its Workload's).
// Replicas wanted: spec.replicas (1 when neither form is given); with
// minReplicas/maxReplicas, Knative KPA's rule on the proxy's in-flight
// requests (PassContext::traffic): ceil(in-flight / targetConcurrency (10)),
// within [min, max], lowered only after it was lower for scaleDownDelay (30s).
// At minReplicas 0 the first request is held by the proxy (in flight, so it
// scales to 1) and forwarded once the replica is ready.
// A deleted InferenceService's Workloads, Pods and Services are deleted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/uuid.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kInferenceServiceKind = "tessera.dev/InferenceService";
inline constexpr const char* kInferenceServiceLabel = "tessera.dev/inferenceservice";
inline constexpr const char* kRevisionLabel = "tessera.dev/revision";
inline constexpr const char* kRollbackAnnotation = "tessera.dev/rollback";
inline constexpr int kInferencePort = 8080;

// The path the server's proxy serves InferenceService `name` of `ns` on.
std::string InferenceServiceUrl(const std::string& ns, const std::string& name);

// The revision of an InferenceService's spec: a hash of spec.template and
// spec.port, 10 characters of Kubernetes' generated-name alphabet.
std::string InferenceRevision(const nlohmann::json& spec);

// A Workload `name` for one replica of `isvc`'s current revision, as the
// controller makes them (spread across nodes; its priority class and queue).
nlohmann::json InferenceReplicaWorkload(const ObjectCache& cache, const StoredObject& isvc, const std::string& name,
                                        const std::string& now_text);

// maxSurge / maxUnavailable `value` (an int or "N%") of `replicas`, a
// percentage rounded up (`round_up`) or down, as Kubernetes' intstr does;
// `fallback` when absent or not valid.
int64_t ResolveIntOrPercent(const nlohmann::json* value, int64_t replicas, bool round_up, int64_t fallback);

class InferenceServiceController final : public Controller {
 public:
  std::string_view name() const override { return "inferenceservice-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  // spec.replicas; with minReplicas/maxReplicas, the autoscaler's count.
  int64_t WantedReplicas(PassContext& pass, const StoredObject& isvc);
  void DeleteOrphans(PassContext& pass);
  void UpdateRequestStats(PassContext& pass, const StoredObject& isvc, nlohmann::json& status);
  // Per InferenceService (NS/NAME), when the autoscaler last needed its current count.
  std::map<std::string, Timestamp> needed_at_;
  // Per InferenceService, when its status.requests was last brought up to date.
  std::map<std::string, Timestamp> requests_at_;
  std::optional<uint64_t> orphans_checked_at_;  // ObjectCache::removals of the kind at the last scan
  UuidGenerator uuids_;                          // the replicas' name suffixes
};

}  // namespace tessera
