// Idle reclaim: interactive workloads (Jobs annotated tessera.dev/type: notebook,
// as `tessera submit --type notebook` writes them) whose GPUs all stay under 5 %
// utilisation for longer than their idle timeout are suspended: their GPUs are
// freed (the workload is evicted and made inactive, spec.active: false, as
// Kueue's deactivation), their checkpoint directory is kept, and an event says
// why. `tessera resume` sets spec.active back to true and they queue again.
//
// The timeout: the workload's annotation tessera.dev/idle-timeout (from its Job
// or Notebook; "30m", "2h"; "0": never idle), else its ClusterQueue's, else
// kDefaultIdleTimeout. The idle clock (annotation tessera.dev/idle-since) starts
// at the first pass that sees every device of the workload idle in its agent's
// last sample, and resets when one is busy or a sample is missing.
//
// Idle by GPU and kernel: a notebook whose pod reports its kernels' activity
// (annotation tessera.dev/last-activity, from Jupyter's /api/status, as the
// agent polls it) is idle only when that activity, too, is older than the
// timeout: the quiet time is counted from the later of the two. A pod that
// reports none (not Jupyter, or it does not answer) is judged by its GPUs alone.
#pragma once

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/cluster_gauges.h"
#include "server/event_recorder.h"
#include "server/controllers/job_controller.h"
#include "server/object_cache.h"
#include "server/workload_subsets.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr Duration kDefaultIdleTimeout = Duration::Seconds(3600);
inline constexpr double kIdleUtilization = 0.05;
inline constexpr const char* kIdleTimeoutAnnotation = "tessera.dev/idle-timeout";
inline constexpr const char* kIdleSinceAnnotation = "tessera.dev/idle-since";

// Inactive (spec.active: false): suspended, not to be admitted until resumed.
bool WorkloadInactive(const nlohmann::json& workload);

class IdleReclaimer final : public Controller {
 public:
  std::string_view name() const override { return "idle-reclaimer"; }
  // Acts on the pass's unfinished Workloads: admitted notebooks, and suspended
  // workloads that may have been resumed. Wakes the loop when an idle clock runs out.
  void Reconcile(PassContext& pass) override;
};

}  // namespace tessera
