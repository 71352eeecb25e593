// The node lifecycle controller: a node whose agent stops renewing its Lease
// turns NotReady, and once the agent must have fenced itself, its Pods are
// declared lost and their Workloads go back to their queues.
//
// Timeline for a lease of D seconds (tessera agent --lease-duration, 40 s by
// default as for kubelets), the agent renewing every D/4:
//   t0            the last renewal the server stored (spec.renewTime)
//   t0 + D        the server marks the Node Ready=False (NodeStatusUnknown);
//                 the scheduler places nothing new there. The agent, which has
//                 not managed to renew since t0 either, SIGKILLs its pods
//                 (fencing) at the latest D after its last successful renewal.
//   t0 + D + F    (F = the fencing margin, 5 s) the server deletes the node's
//                 Pods as lost and evicts their Workloads (NodeLost), which then
//                 requeue and are placed on other nodes.
// So a pod is never running on two nodes at once: its copy elsewhere can only
// start after t0 + D + F, by when the fenced agent has killed the original.
// A node that renews again turns Ready again.
//
// Nodes that never had a Lease (registered by hand or by a test) are left alone.
#pragma once

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/event_recorder.h"
#include "server/controllers/job_controller.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kLeaseKind = "coordination.k8s.io/Lease";
inline constexpr const char* kNodeLeaseNamespace = "tessera-node-lease";
inline constexpr Duration kFencingMargin = Duration::Seconds(5);

// Adds the controller's writes to `writer`.
void ReconcileNodeLifecycle(const ObjectCache& cache, const PodIndex& pods, Timestamp now, BatchedWriter& writer,
                            EventRecorder& events);

class NodeLifecycleController final : public Controller {
 public:
  std::string_view name() const override { return "node-lifecycle-controller"; }
  void Reconcile(PassContext& pass) override {
    ReconcileNodeLifecycle(pass.cache, pass.pods, pass.now, pass.writer, pass.events);
  }
};

}  // namespace tessera
