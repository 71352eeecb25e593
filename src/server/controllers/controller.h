// Controller: one piece of the scheduler loop's pass that makes the stored
// objects agree with what they imply (DESIGN.md section 3), as a
// kube-controller-manager controller does, but run in the loop's thread.
//
// Each controller is one file in this folder: a class that implements
// Reconcile(PassContext&). A pass runs every controller in the order the loop
// registered them (scheduler_loop.cc), flushing the pass's writes after each,
// then builds the snapshot for the scheduler core. A controller:
//   - reads the loop's ObjectCache (never the store directly), through
//     `pass.cache`, the Pods of each Workload (`pass.pods`) and the unfinished
//     Workloads' subsets (`pass.workloads`);
//   - writes only through `pass.writer` (few transactions, each with its
//     expected revision: a conflict is retried by the next pass) and records
//     Events through `pass.events`;
//   - keeps what it learnt between passes in its own members, so a pass costs
//     what changed;
//   - never blocks: no network, no sleeping (a controller that touches files,
//     such as the claim reclaimer, does only small local work).
//
// Thread-safety: every member runs on the loop's thread only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/cluster_gauges.h"
#include "server/event_recorder.h"
#include "server/object_cache.h"
#include "server/pod_index.h"
#include "server/workload_subsets.h"

namespace tessera {

class ServiceTraffic;

// What a pass gives each controller. Valid for one pass; the cache (and so
// every StoredObject pointer) changes when the writer flushes.
class PassContext {
 public:
  PassContext(const ObjectCache& cache, const PodIndex& pods, const WorkloadSubsets& workloads, Timestamp now,
              BatchedWriter& writer, EventRecorder& events);

  const ObjectCache& cache;
  const PodIndex& pods;
  const WorkloadSubsets& workloads;
  const Timestamp now;
  const std::string now_text;  // RFC 3339, as objects store times
  BatchedWriter& writer;
  EventRecorder& events;

  // The services proxy's in-flight requests (server/api/service_traffic.h);
  // nullptr when the loop runs without an API server (tests, the simulator).
  const ServiceTraffic* traffic = nullptr;

  // The GPUs' utilisation as the Nodes report it (read the first time it is
  // asked for in a pass).
  const GpuUsageByDevice& gpu_usage();

  // Asks for a pass no later than `t` (a deadline, the end of a back-off);
  // without it the next pass comes when something changes, or within seconds.
  void WakeAt(Timestamp t) {
    if (!wake_at_ || t < *wake_at_) wake_at_ = t;
  }
  std::optional<Timestamp> wake_at() const { return wake_at_; }

 private:
  std::optional<GpuUsageByDevice> gpu_usage_;
  std::optional<Timestamp> wake_at_;
};

class Controller {
 public:
  virtual ~Controller() = default;
  // Its name, as kube-controller-manager names its controllers ("job-controller"),
  // in logs and in the tessera_controller_duration_seconds metric.
  virtual std::string_view name() const = 0;
  // Adds this pass's writes to pass.writer.
  virtual void Reconcile(PassContext& pass) = 0;
};

}  // namespace tessera
